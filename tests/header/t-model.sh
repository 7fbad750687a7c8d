#!/bin/bash
# The header of a hand-built model (test_emit_header.c, no parser involved):
# unchecked arguments (no C spelling, bool, function pointers) accept what a
# program passes, a struct pointer is checked as an object pointer, a
# 13-argument probe compiles as long as its macro is unused and fails,
# naming the probe, where it is used.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
emitter=$1
cd "$T"
"$emitter" hand.h >/dev/null 2>emit.err || { cat emit.err >&2; fail "test_emit_header failed"; }

cat >prog.c <<'P'
#include "hand.h"
struct conn { int x; };
unsigned short hand_plain__probe_semaphore __attribute__((section(".probes")));
unsigned short hand_unchecked_semaphore __attribute__((section(".probes")));
unsigned short hand_twelve_semaphore __attribute__((section(".probes")));
unsigned short hand_none_semaphore __attribute__((section(".probes")));
unsigned short hand_many_semaphore __attribute__((section(".probes")));
int main(void)
{
	struct conn c = { 1 };
	const uint8_t *bytes = 0;
	int i = 0;

	HAND_PLAIN_PROBE(i++, (char *)"x");
	unsigned char ub[2] = { 1, 2 };
	char *strs[2] = { 0, 0 };
	HAND_UNCHECKED(&c, &c, "lit", 2, 0L, &bytes, ub, strs);
	HAND_TWELVE(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
	HAND_NONE();
	if (HAND_NONE_ENABLED() || HAND_MANY_ENABLED())
		i += 10;
#ifdef USE_MANY
	HAND_MANY(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
#endif
#ifdef BAD_STRUCT_POINTER
	HAND_UNCHECKED(0, 5, 0, 0, 0, 0, 0, 0);
#endif
	return i == 1 ? 0 : 1;
}
P
cp prog.c prog.cc
for lang in c c++; do
	ext=$(src_ext $lang)
	for cc in $COMPILERS; do
		for sdt in $SDT_VARIANTS; do
			drv=$(driver $cc $lang)
			# shellcheck disable=SC2046
			$drv $WFLAGS $(sdt_flags $sdt) -I. prog.$ext -o prog ||
				fail "$drv ($sdt sdt.h): the hand-built header does not compile"
			./prog || fail "$drv ($sdt sdt.h): wrong result (i++ not evaluated once?)"
			# shellcheck disable=SC2046
			if $drv $WFLAGS $(sdt_flags $sdt) -DUSE_MANY -I. -c prog.$ext -o prog.o 2>many.err; then
				fail "$drv: a 13-argument probe macro compiled"
			fi
			expect_grep 'usdt_error_probe_hand_many_has_13_arguments' many.err \
				"$drv: the 13-argument error names the probe"
			# shellcheck disable=SC2046
			if $drv $WFLAGS $(sdt_flags $sdt) -DBAD_STRUCT_POINTER -I. -c prog.$ext -o prog.o 2>bad.err; then
				fail "$drv: an int passed for a struct pointer was accepted silently"
			fi
		done
	done
done
echo "hand-built model header ok"
