#!/bin/bash
# The D language beyond what bpftrace 0.17 does by itself: arguments past the
# sixth (the stapsdt note's operands decoded by dtrace: registers, stack
# memory, constants, a global through %rip, several sites placing them
# differently; gcc and clang, -O0 and -O2), strings up to DTrace's 256
# bytes, copyin()+stringof(), strlen/strstr/substr, llquantize, stddev,
# ustack. Expected outputs are written from DTrace's documented formats.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_bpftrace
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v readelf >/dev/null || fail "readelf is not installed (binutils)"

mkdir -p "$T/g" && cd "$T/g" || fail "no scratch directory"
cat >lang.d <<'D'
provider langt {
	probe many(int, int, long, long, int, int, int, long, char *, int, long, unsigned char);
	probe text(char *, int);
};
D
cat >lang.c <<'C'
#include <stdlib.h>
#include <string.h>
#include "lang_probes.h"

long g_var = 123456789012;
static int s_small = -77;

__attribute__((noinline)) static void fire(int a, long b, const char *s)
{
	volatile int local = -20;
	int c = a * 3;

	LANGT_MANY(a, local, 5, g_var, c, -3, s_small, b, (char *)s, local + 1, g_var, 200);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	char big[256];

	for (int i = 1; i <= n; i++)
		fire(i, -1000000000000L * i, "twelve");
	/* a second site, placing the arguments otherwise */
	LANGT_MANY(n, 7, 5, g_var, 0, -3, s_small, 0L, argv[0], 8, g_var + 1, 9);
	for (int i = 0; i < 255; i++)
		big[i] = (char)('a' + i % 26);
	big[255] = '\0';
	for (int i = 0; i < n; i++)
		LANGT_TEXT(big, 255);
	return 0;
}
C
# SystemTap's constraint ("nor"): the compiler may pick memory operands.
"$DTRACE" -h -s lang.d -o lang_probes.h || fail "dtrace -h"
for cc in $COMPILERS; do
	for o in 0 2; do
		$cc -O$o -DSTAP_SDT_ARG_CONSTRAINT=nor -I"$SDT_INC" -I. -c lang.c -o l-$cc-$o.o &&
			"$DTRACE" -G -s lang.d -o p-$cc-$o.o l-$cc-$o.o &&
			$cc -o lang-$cc-$o l-$cc-$o.o p-$cc-$o.o || fail "building lang with $cc -O$o"
	done
done
# Every operand kind is there somewhere, past the sixth argument too.
readelf -n lang-* | sed -n 's/^ *Arguments: //p' >notes.txt
for kind in '@%[a-z0-9]+( |$)' '@\$-?[0-9]+' '@-?[0-9]+\(%rbp\)' '@-?[0-9]*\(%rsp\)' '@g_var\(%rip\)'; do
	grep -qE -- "$kind" notes.txt || { cat notes.txt >&2; fail "no operand like $kind in the test's notes"; }
done

# 1. All twelve arguments, exact, from every build: args[] typed, argN raw.
prog='langt$target:::many { printf("%d %d %d %d %d %d %d %d %s %d %d %d|%d %d %d %d\n", args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], arg6, arg7, arg9, arg11); }'
for cc in $COMPILERS; do
	for o in 0 2; do
		dt 0 -q -c "./lang-$cc-$o 2" -n "$prog"
		want="1 -20 5 123456789012 3 -3 -77 -1000000000000 twelve -19 123456789012 200|-77 -1000000000000 -19 200\n"
		want+="2 -20 5 123456789012 6 -3 -77 -2000000000000 twelve -19 123456789012 200|-77 -2000000000000 -19 200\n"
		want+="2 7 5 123456789012 0 -3 -77 0 ./lang-$cc-$o 8 123456789013 9|-77 0 8 9\n\n"
		same "$T/out" "$want" "twelve arguments, $cc -O$o"
	done
done
