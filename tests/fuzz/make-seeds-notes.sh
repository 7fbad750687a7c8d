#!/bin/bash
# make-seeds-notes.sh [DTRACE]: regenerates the seed-* files of corpus-notes/,
# the note reader's seed corpus, from the test programs themselves:
#   - tests/helper/progs (probes with and without semaphores, 8 argument
#     types) with SystemTap's <sys/sdt.h> and with ours, by gcc and clang,
#     PIE, non-PIE, -m32, as a shared library, and for aarch64;
#   - tests/link/e2e (app.d, shared.d) through our `dtrace -G` (DTRACE, default
#     build-fuzz/dtrace/dtrace): executables and libraries carrying our
#     metadata note next to the SystemTap notes, gcc and clang, x86-64,
#     -m32 and aarch64, and the bare -G object (ET_REL: refused by the reader,
#     a seed for its header check);
#   - the same providers through SystemTap's /usr/bin/dtrace -G (semaphores,
#     no metadata note);
#   - the aarch64 ones rewritten big-endian (elf-to-be.py);
#   - the raw desc of one metadata note (non-ELF inputs are also fed to the
#     metadata and argument parsers directly, see fuzz-notes.c).
# Every file is stripped (notes are kept: strip never removes SHT_NOTE) and
# linked with -z noseparate-code to stay small. Files whose name does not
# start with seed- (regression inputs) are left alone. Run it again after a
# change to sdt.h, drti or the note formats and commit the result.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
DTRACE=${1:-$top/build-fuzz/dtrace/dtrace}
out="$here/corpus-notes"
[ -x "$DTRACE" ] || { echo "no $DTRACE: build first (meson setup build-fuzz)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-seeds.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
rm -f "$out"/seed-*

progs="$top/tests/helper/progs"
e2e="$top/tests/link/e2e"
ours="$top/include"
# SystemTap's header for every target (Debian installs it for x86-64 only).
mkdir -p "$work/stap/sys"
for h in sdt.h sdt-config.h; do
	ln -s "/usr/include/x86_64-linux-gnu/sys/$h" "$work/stap/sys/$h"
done
LDSMALL="-Wl,-z,noseparate-code"

keep() { # file name [strip]
	local s=${3:-strip}
	cp "$1" "$out/seed-$2"
	"$s" "$out/seed-$2"
	echo "seed-$2 $(stat -c %s "$out/seed-$2")"
}

# 1. The helper test program (sdt.h only, no -G): probes.c has semaphores.
helper_prog() { # name cc strip header flags...
	local n=$1 cc=$2 s=$3 hdr=$4
	shift 4
	# shellcheck disable=SC2068
	$cc -O2 -I"$hdr" -DPROV=fzh $@ $LDSMALL -o "$work/$n" "$progs/probes.c" "$progs/nosema.c" \
		"$progs/main.c"
	keep "$work/$n" "$n" "$s"
}
helper_prog stap-gcc-pie gcc strip "$work/stap" -fPIE -pie
helper_prog stap-clang-nopie clang strip "$work/stap" -fno-pie -no-pie
helper_prog stap-gcc-m32 gcc strip "$work/stap" -m32
helper_prog ours-gcc-O0 gcc strip "$ours" -O0
helper_prog ours-clang-m32 clang strip "$ours" -m32
helper_prog ours-aarch64 aarch64-linux-gnu-gcc aarch64-linux-gnu-strip "$ours" -Wl,-z,max-page-size=4096
gcc -O2 -I"$work/stap" -DPROV=fzh -fPIC -shared $LDSMALL -o "$work/libh.so" "$progs/probes.c" \
	"$progs/nosema.c"
keep "$work/libh.so" stap-gcc-so

# Names at the limits: a provider and a probe longer than tracefs takes
# (shortened with a hash), and a probe name over 255 bytes (rejected).
long_prov=long_provider_name_$(printf 'p%.0s' $(seq 60))
long_probe=long_probe_name_$(printf 'q%.0s' $(seq 60))
huge_probe=huge_probe_name_$(printf 'h%.0s' $(seq 250))
cat >"$work/names.c" <<EOC
#include <sys/sdt.h>
int main(int argc, char **argv)
{
	STAP_PROBE2($long_prov, $long_probe, argc, argv);
	STAP_PROBE1(fzh, $huge_probe, argc);
	return 0;
}
EOC
gcc -O2 -I"$work/stap" $LDSMALL -o "$work/names" "$work/names.c"
keep "$work/names" stap-long-names

# 2. The -G end-to-end sources through our dtrace -G (metadata note + drti).
ours_g() { # name cc strip flags...
	local n=$1 cc=$2 s=$3 d="$work/$1"
	shift 3
	mkdir -p "$d"
	(
		cd "$d"
		"$DTRACE" -h -s "$e2e/app.d" -o app.h
		"$DTRACE" -h -s "$e2e/shared.d" -o shared.h
		# shellcheck disable=SC2068
		$cc -I"$ours" -I. -O2 -fPIC $@ -c "$e2e/app.c" -o app.o
		# shellcheck disable=SC2068
		$cc -I"$ours" -I. -O2 -fPIC $@ -DPOLL_FN=lib_poll -c "$e2e/lib.c" -o lib.o
		CC="$cc $*" "$DTRACE" -G -s "$e2e/app.d" -o app-prov.o app.o
		CC="$cc $*" "$DTRACE" -G -s "$e2e/shared.d" -o lib-prov.o lib.o
		# shellcheck disable=SC2068
		$cc $@ -shared $LDSMALL lib.o lib-prov.o -o libe2e.so
		# shellcheck disable=SC2068
		$cc $@ -pie $LDSMALL app.o app-prov.o -L. -le2e -ldl -o app
	)
	keep "$d/app" "G-$n-app" "$s"
	keep "$d/libe2e.so" "G-$n-lib.so" "$s"
}
ours_g gcc gcc strip
ours_g clang clang strip
ours_g gcc-m32 gcc strip -m32
ours_g aarch64 aarch64-linux-gnu-gcc aarch64-linux-gnu-strip -Wl,-z,max-page-size=4096
# The -G object itself (ET_REL): what dtrace -G writes.
cp "$work/gcc/app-prov.o" "$out/seed-G-object.o"
echo "seed-G-object.o $(stat -c %s "$out/seed-G-object.o")"

# 3. SystemTap's dtrace -G: the same provider, its header and object.
(
	d="$work/stapG"
	mkdir -p "$d"
	cd "$d"
	cp "$e2e/shared.d" .
	/usr/bin/dtrace -h -s shared.d -o shared.h
	/usr/bin/dtrace -G -s shared.d -o shared-prov.o
	gcc -I"$work/stap" -I. -O2 -DPOLL_FN=lib_poll -c "$e2e/lib.c" -o lib.o
	printf 'int lib_poll(int);\nint main(int c, char **v) { (void)v; return lib_poll(c); }\n' >m.c
	gcc -O2 -c m.c -o m.o
	gcc $LDSMALL m.o lib.o shared-prov.o -o prog
)
keep "$work/stapG/prog" stapdtrace-G-gcc

# 4. Big-endian aarch64 (no such toolchain here): the aarch64 seeds with
# their data rewritten big-endian (elf-to-be.py; instructions stay
# little-endian on aarch64_be too).
for f in G-aarch64-app ours-aarch64; do
	python3 "$here/elf-to-be.py" "$out/seed-$f" "$out/seed-be-$f"
	echo "seed-be-$f $(stat -c %s "$out/seed-be-$f")"
done

# 5. One metadata desc on its own (non-ELF input: the metadata parser directly).
python3 - "$work/gcc/app" "$out/seed-meta-desc" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
i = b.find(b"usdtkit\0")
namesz, descsz, typ = struct.unpack_from("<III", b, i - 12)
assert namesz == 8 and typ == 1, "no usdtkit note found"
open(sys.argv[2], "wb").write(b[i + 8:i + 8 + descsz])
EOF
echo "seed-meta-desc $(stat -c %s "$out/seed-meta-desc")"
du -sh "$out"
