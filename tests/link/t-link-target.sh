#!/bin/bash
# dtrace -G target selection (issue 4, item 2): CC, CFLAGS, -32/-64, and the
# class of the input objects. Expected classes and machines come from what
# the same compiler makes of an ordinary C file, not from dtrace.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
cd "$T"
cat >p.d <<'D'
provider tgt {
	probe hit(int, long);
};
D
echo 'int x;' >ref.c

# machine_of FILE: "CLASS MACHINE" from readelf -h.
machine_of() {
	readelf -h "$1" | awk -F: '/Class:/ {gsub(/ /,"",$2); c=$2} /Machine:/ {sub(/^ +/,"",$2); m=$2} END {print c " " m}'
}

check() { # name expected-ref-cc expected-ref-cflags -- env/args for dtrace
	local name=$1 rcc=$2 rflags=$3
	shift 4
	rm -f out.o
	# shellcheck disable=SC2086
	$rcc $rflags -c ref.c -o ref.o
	env "$@" -s p.d -o out.o || fail "$name: dtrace -G failed"
	expect_eq "$(readelf -h out.o | awk '/Type:/ {print $2}')" REL "$name: object type"
	expect_eq "$(machine_of out.o)" "$(machine_of ref.o)" "$name: class and machine"
	echo "ok: $name: $(machine_of out.o)"
}

check default cc "" -- "$DTRACE" -G
check cc-aarch64 aarch64-linux-gnu-gcc "" -- CC=aarch64-linux-gnu-gcc "$DTRACE" -G
check cflags-m32 gcc -m32 -- CFLAGS=-m32 "$DTRACE" -G
check cc-with-args gcc -m32 -- "CC=gcc -m32" "$DTRACE" -G
check opt-32 gcc -m32 -- "$DTRACE" -G -32
check opt-64 gcc -m64 -- CFLAGS=-m32 "$DTRACE" -G -64
check clang clang "" -- CC=clang "$DTRACE" -G
check ccache-like gcc -m32 -- "CC=env gcc" "CFLAGS=-m32 -DQ='\"a b\"'" "$DTRACE" -G

# Instrumentation in CFLAGS stays out of the object (drti must be plain code;
# coverage would make every traced program write into a removed directory).
for c in gcc clang; do
	CC=$c CFLAGS="--coverage -fprofile-arcs -fsanitize=address,undefined -fprofile-generate -pg -O2" \
		"$DTRACE" -G -s p.d -o inst.o || fail "$c: instrumented CFLAGS"
	expect_no_grep 'gcov|asan|ubsan|prof|mcount' <(nm inst.o) "$c: instrumentation symbols"
done
echo "ok: instrumentation dropped"

# The object is compiled at -O0 -g0 after the user's flags (it holds little
# code, and optimising drti was most of -G's time: bench/dtrace-G), with the
# flags that choose the target and the ABI kept, in their order.
cat >logcc <<'S'
#!/bin/sh
printf '%s\n' "$@" >"${0%/*}/cc.args"
exec gcc "$@"
S
chmod +x logcc
CC=$PWD/logcc CFLAGS="-m32 -O3 -g3 -march=x86-64 -fsanitize=thread -mno-red-zone -fcf-protection" \
	"$DTRACE" -G -s p.d -o flags.o || fail "-G with a logging compiler"
args=$(tr '\n' ' ' <cc.args)
case $args in
*"-m32 -O3 -g3 -march=x86-64 -fsanitize=thread -mno-red-zone -fcf-protection "*"-O0 -g0 "*) ;;
*) fail "the compiler's arguments ($args): the user's flags, then -O0 -g0, expected" ;;
esac
expect_eq "$(machine_of flags.o)" "ELF32 Intel 80386" "-m32 kept with -O0"
readelf -n flags.o | grep -q 'IBT' || fail "-fcf-protection lost: no IBT property in the object"
echo "ok: -O0 -g0 after the user's flags, the target's flags kept"

# The class of the input objects decides when nothing else does.
"$DTRACE" -h -s p.d -o p.h
cat >site.c <<'C'
#include "p.h"
int fire(int a, long b)
{
	if (TGT_HIT_ENABLED()) {
		TGT_HIT(a, b);
		return 1;
	}
	return 0;
}
C
gcc -m32 -I"$SDT_INC" -I. -O2 -c site.c -o site32.o
check detect-32 gcc -m32 -- "$DTRACE" -G site32.o
# aarch64 objects and no CC: the installed aarch64 cross gcc is used.
aarch64-linux-gnu-gcc -I"$SDT_INC" -I. -O2 -c site.c -o site-a64.o
check detect-aarch64 aarch64-linux-gnu-gcc "" -- -u CC -u CFLAGS "$DTRACE" -G site-a64.o

# A -m32 program with its -G object links, runs (where the kernel runs
# 32-bit programs), and its note's semaphore address is the semaphore
# symbol's.
cat >main.c <<'C'
#include <stdio.h>
int fire(int a, long b);
int main(void)
{
	printf("%d\n", fire(1, 2));
	return 0;
}
C
CFLAGS=-m32 "$DTRACE" -G -s p.d -o prov32.o site32.o
gcc -m32 main.c site32.o prov32.o -o prog32
expect_eq "$(machine_of prog32)" "ELF32 Intel 80386" "-m32 program"
if can_exec_m32; then
	expect_eq "$(./prog32)" 0 "-m32 program runs with the probe disabled"
else
	echo "note: $M32_NO_EXEC"
fi
sem=$(nm prog32 | awk '$3 == "tgt_hit_semaphore" {print $1}')
[ -n "$sem" ] || fail "no tgt_hit_semaphore in the -m32 program"
readelf -n prog32 | grep -q "Semaphore: 0x0*$sem\$" || {
	readelf -n prog32 >&2
	fail "the note's semaphore address is not tgt_hit_semaphore ($sem)"
}
echo "ok: -m32 program"

# An aarch64 program links with its -G object (it cannot run here).
CC=aarch64-linux-gnu-gcc "$DTRACE" -G -s p.d -o prov-a64.o site-a64.o
aarch64-linux-gnu-gcc main.c site-a64.o prov-a64.o -o prog-a64
expect_eq "$(machine_of prog-a64)" "ELF64 AArch64" "aarch64 program"
echo "ok: aarch64 program links"
