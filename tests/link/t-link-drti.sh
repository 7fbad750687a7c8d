#!/bin/bash
# drti, the registration constructor in every -G object (placeholder until
# the helper daemon exists): silent by default; USDTKIT_DISABLE and DTrace's
# DTRACE_DOF_INIT_DISABLE turn it off; with USDTKIT_DEBUG it reports the
# address it will hand the daemon, and that address must lead, through
# /proc/PID/maps, to this module's own metadata note in the mapped file.
# Checked for an executable and a shared library, each with its -G object.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
cd "$T"
cat >m.d <<'D'
provider drtim { probe run(int); };
D
cat >l.d <<'D'
provider drtil { probe call(); };
D
"$DTRACE" -h -s m.d -o m.h
"$DTRACE" -h -s l.d -o l.h
cat >lib.c <<'C'
#include "l.h"
void lib_call(void) { DRTIL_CALL(); }
C
cat >main.c <<'C'
#include <stdio.h>
#include "m.h"
void lib_call(void);
int main(int argc, char **argv)
{
	char line[4096];
	FILE *in = fopen("/proc/self/maps", "r"), *out = fopen(argv[1], "w");

	(void)argc;
	DRTIM_RUN(1);
	lib_call();
	while (in && out && fgets(line, sizeof(line), in))
		fputs(line, out);
	return !(in && out) || fclose(out) != 0;
}
C
gcc -I"$SDT_INC" -I. -O2 -fPIC -c lib.c -o lib.o
gcc -I"$SDT_INC" -I. -O2 -c main.c -o main.o
"$DTRACE" -G -s l.d -o l-prov.o lib.o
"$DTRACE" -G -s m.d -o m-prov.o main.o
gcc -shared lib.o l-prov.o -o libdrti.so
gcc main.o m-prov.o -L. -ldrti -Wl,-rpath,"$T" -o prog

run() { # env... : runs prog with exactly the given environment additions
	env -u USDTKIT_DEBUG -u USDTKIT_DISABLE -u DTRACE_DOF_INIT_DISABLE \
		-u DTRACE_DOF_INIT_DEBUG "$@" ./prog "$T/maps" 2>"$T/err" || fail "prog failed with $*"
}

run
[ ! -s err ] || { cat err >&2; fail "drti printed without being asked"; }

run USDTKIT_DEBUG=1
expect_eq "$(grep -c 'usdtkit drti: register module, metadata note at 0x' err)" 2 "register lines"
# Each address is in a mapping of a file holding, at that file offset, a note
# of owner "usdtkit" and type 1; the executable's and the library's differ.
python3 - "$T/maps" "$T/err" "$T/prog" "$T/libdrti.so" <<'PY' || fail "the reported addresses do not lead to the modules' notes"
import os, re, struct, sys
maps, err, prog, lib = sys.argv[1:5]
addrs = [int(a, 16) for a in re.findall(r'note at 0x([0-9a-f]+)', open(err).read())]
files = set()
for a in addrs:
    for line in open(maps):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split('-'))
        if lo <= a < hi and len(f) >= 6:
            path, off = f[5], int(f[2], 16) + a - lo
            with open(path, 'rb') as fh:
                fh.seek(off)
                namesz, descsz, ntype = struct.unpack('<III', fh.read(12))
                name = fh.read(8)
            if (namesz, ntype, name) != (8, 1, b'usdtkit\0'):
                sys.exit('%s+%#x: not a usdtkit note' % (path, off))
            files.add(os.path.realpath(path))
            break
    else:
        sys.exit('%#x is in no file mapping' % a)
want = {os.path.realpath(prog), os.path.realpath(lib)}
if files != want:
    sys.exit('notes found in %s, expected %s' % (files, want))
PY
echo "ok: debug report leads to the notes"

for v in USDTKIT_DISABLE=1 DTRACE_DOF_INIT_DISABLE=1 DTRACE_DOF_INIT_DISABLE=; do
	run USDTKIT_DEBUG=1 "$v"
	expect_eq "$(grep -c 'registration disabled by the environment' err)" 2 "$v: disabled lines"
	expect_no_grep register err "$v"
done
run USDTKIT_DEBUG=1 USDTKIT_DISABLE=0
expect_eq "$(grep -c 'register module' err)" 2 "USDTKIT_DISABLE=0 does not disable"
run DTRACE_DOF_INIT_DEBUG=1
expect_eq "$(grep -c 'register module' err)" 2 "DTRACE_DOF_INIT_DEBUG"
run USDTKIT_DISABLE=1
[ ! -s err ] || fail "drti printed when disabled without debug"
echo "ok: environment switches"

# The constructor runs in a static program too (no libdl, no ld.so).
gcc -static main.o m-prov.o lib.o l-prov.o -o prog-static 2>/dev/null || skip "no static libc"
USDTKIT_DEBUG=1 ./prog-static "$T/maps" 2>err || fail "static program failed"
expect_eq "$(grep -c 'register module' err)" 2 "static program register lines"
echo "ok: static"

# drti compiles cleanly under the strictest flags users may put in CFLAGS.
printf 'static const int test_note = 1;\n#define USDT_DRTI_NOTE ((const void *)&test_note)\n#include "%s"\n' \
	"$USDTKIT_SRCDIR/kernel-helper/drti/drti.c" >strict.c
for c in gcc clang; do
	for std in c89 c99 gnu11 c17; do
		$c -std=$std -pedantic -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes \
			-Wmissing-prototypes -Werror -fPIC -c strict.c -o strict.o ||
			fail "drti does not compile warning-free with $c -std=$std"
	done
done
echo "ok: strict flags"
