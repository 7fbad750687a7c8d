#!/bin/bash
# Probes of a generated header fire with the values the program passed, as
# gdb sees them (break -probe-stap, $_probe_argN), for C and C++ built with
# gcc and clang against both <sys/sdt.h>; a probe guarded by _ENABLED()
# fires because gdb raises its semaphore (defined by the dtrace -G object).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
command -v gdb >/dev/null || fail "gdb is not installed (scripts/deps.sh installs it)"
cd "$T"

cat >fire.d <<'D'
provider fire {
	probe event(int id, char *name, long delta, uint64_t big);
	probe guarded__probe(int seven);
};
D
"$DTRACE" -h -s fire.d -o fire.h || fail "dtrace -h failed"
"$DTRACE" -G -s fire.d -o fire-prov.o || fail "dtrace -G failed"
cat >fire.c <<'P'
#include "fire.h"
static volatile int sink;
int main(void)
{
	char name[] = "hello";
	volatile long delta = -7;
	if (FIRE_GUARDED_PROBE_ENABLED())
		FIRE_GUARDED_PROBE(sink + 7);
	FIRE_EVENT(42, name, delta, 0x123456789aULL);
	return 0;
}
P
cp fire.c fire.cc
cat >cmds <<'G'
set pagination off
break -probe-stap fire:guarded__probe
break -probe-stap fire:event
run
printf "GUARDED %d\n", $_probe_arg0
continue
printf "ARGC %d\n", $_probe_argc
printf "ID %d\n", $_probe_arg0
printf "NAME %s\n", (char *)$_probe_arg1
printf "DELTA %ld\n", $_probe_arg2
printf "BIG %#lx\n", $_probe_arg3
continue
G
for lang in c c++; do
	ext=$(src_ext $lang)
	for cc in $COMPILERS; do
		for sdt in $SDT_VARIANTS; do
			drv=$(driver $cc $lang)
			for opt in -O0 -O2; do
				what="$drv $opt ($sdt sdt.h)"
				# shellcheck disable=SC2046
				$drv $WFLAGS -g $opt $(sdt_flags $sdt) -I. -c fire.$ext -o fire.o ||
					fail "$what: does not compile"
				$drv -o fire fire.o fire-prov.o || fail "$what: does not link with the -G object"
				gdb -nx -batch -x cmds ./fire >gdb.out 2>&1 || true
				for want in "GUARDED 7" "ARGC 4" "ID 42" "NAME hello" "DELTA -7" "BIG 0x123456789a"; do
					grep -qx "$want" gdb.out || { cat gdb.out >&2; fail "$what: gdb did not see '$want'"; }
				done
			done
		done
	done
done
echo "probes fire with the right values under gdb"
