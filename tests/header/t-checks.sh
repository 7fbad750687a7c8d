#!/bin/bash
# What the generated macros check at compile time, in C and C++, with gcc
# and clang, against both <sys/sdt.h>: a wrong argument count is an error; an
# argument of an incompatible type is a warning (an error under -Werror) in
# a header made with -x typecheck or where USDTKIT_TYPE_CHECKS is defined,
# and nothing at all in a plain `dtrace -h` header (as SystemTap's), whose
# count check stays; compatible ones are silent; every argument is evaluated exactly once; a
# probe with 13 arguments compiles as long as it is unused, and using it is
# an error naming the probe.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
cd "$T"

cat >chk.d <<'D'
provider chk {
	probe str(char *s, int n);
	probe cstr(const char *s);
	probe ptr(long *p);
	probe wide(uint64_t v, unsigned char c, double d);
	probe thirteen(int, int, int, int, int, int, int, int, int, int, int, int, int);
};
D
"$DTRACE" -h -x typecheck -s chk.d -o chk.h 2>dtrace.err || { cat dtrace.err >&2; fail "dtrace -h failed"; }
expect_grep "chk:thirteen.*13 arguments" dtrace.err "dtrace -h warns about the 13-argument probe"
"$DTRACE" -h -s chk.d -o chk-plain.h 2>/dev/null || fail "plain dtrace -h failed"

hdrtest semaphores chk.d >chk-sem.c
cat >prog.c <<'P'
#include "chk.h"
unsigned short chk_str_semaphore, chk_cstr_semaphore, chk_ptr_semaphore, chk_wide_semaphore,
	chk_thirteen_semaphore;
static int calls;
static int next(void) { return ++calls; }
int main(void)
{
	char buf[8] = "abc";
	const char *cs = buf;
	long l = 5;
	int i = 0;

	/* Compatible arguments: no diagnostic at all. */
	CHK_STR(buf, i++);
	CHK_STR(0, next());
	CHK_CSTR(buf);
	CHK_CSTR(cs);
	CHK_CSTR("literal");
	CHK_PTR(&l);
	CHK_WIDE(l, 'x', 1);
	CHK_WIDE(i++ + next(), (unsigned char)next(), 2.5f);
#if defined(BAD_COUNT)
	CHK_STR(buf);
#elif defined(BAD_COUNT_MORE)
	CHK_CSTR(buf, 1);
#elif defined(BAD_INT_FOR_STRING)
	CHK_STR(i, 1);
#elif defined(BAD_CONST_STRING)
	CHK_STR(cs, 1);
#elif defined(BAD_POINTER_TYPE)
	CHK_PTR(&i);
#elif defined(BAD_POINTER_FOR_INT)
	CHK_WIDE(&l, 1, 1.0);
#elif defined(USE_THIRTEEN)
	CHK_THIRTEEN(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
#endif
	if (CHK_STR_ENABLED())
		i += 100;
	/* Each argument once: i++ twice, next() three times. */
	return (i == 2 && calls == 3) ? 0 : 1;
}
P
cp prog.c prog.cc
sed 's/"chk.h"/"chk-plain.h"/' prog.c >plain.c
cp plain.c plain.cc

for lang in c c++; do
	ext=$(src_ext $lang)
	for cc in $COMPILERS; do
		for sdt in $SDT_VARIANTS; do
			drv=$(driver $cc $lang)
			what="$drv ($sdt sdt.h)"
			for opt in -O0 -O2; do
				# shellcheck disable=SC2046
				$drv $WFLAGS $opt $(sdt_flags $sdt) -I. prog.$ext -o prog ||
					fail "$what $opt: compatible arguments were diagnosed"
				./prog || fail "$what $opt: arguments not evaluated exactly once"
			done
			for bad in BAD_COUNT BAD_COUNT_MORE USE_THIRTEEN; do
				# shellcheck disable=SC2046
				if $drv $(sdt_flags $sdt) -D$bad -I. -c prog.$ext -o bad.o 2>bad.err; then
					fail "$what: $bad compiled (without -Werror)"
				fi
				grep -q 'error' bad.err || fail "$what: $bad gave no error"
			done
			expect_grep 'usdt_error_probe_chk_thirteen_has_13_arguments' bad.err \
				"$what: the 13-argument error names the probe"
			for bad in BAD_INT_FOR_STRING BAD_CONST_STRING BAD_POINTER_TYPE BAD_POINTER_FOR_INT; do
				# shellcheck disable=SC2046
				$drv -Wall $(sdt_flags $sdt) -D$bad -I. -c prog.$ext -o bad.o 2>bad.err ||
					{ cat bad.err >&2; fail "$what: $bad is an error without -Werror, expected a warning"; }
				grep -q 'warning' bad.err || fail "$what: $bad gave no warning"
				# shellcheck disable=SC2046
				if $drv $WFLAGS $(sdt_flags $sdt) -D$bad -I. -c prog.$ext -o bad.o 2>/dev/null; then
					fail "$what: $bad compiled under -Werror"
				fi
				# A plain dtrace -h header: silent, unless the program asks
				# (-Wpedantic with ours: SystemTap's sdt.h fails clang's).
				ped=""
				[ $sdt = ours ] && ped=-Wpedantic
				# shellcheck disable=SC2046
				$drv $WFLAGS $ped $(sdt_flags $sdt) -D$bad -I. -c plain.$ext -o bad.o 2>bad.err ||
					{ cat bad.err >&2; fail "$what: $bad diagnosed in a plain dtrace -h header"; }
				[ ! -s bad.err ] || { cat bad.err >&2; fail "$what: $bad: output from a plain header"; }
				# shellcheck disable=SC2046
				$drv -Wall $(sdt_flags $sdt) -DUSDTKIT_TYPE_CHECKS -D$bad -I. -c plain.$ext \
					-o bad.o 2>bad.err || { cat bad.err >&2; fail "$what: $bad with USDTKIT_TYPE_CHECKS"; }
				expect_grep 'warning.*does not match the declared type' bad.err \
					"$what: USDTKIT_TYPE_CHECKS turns a plain header's check of $bad on"
			done
			for bad in BAD_COUNT BAD_COUNT_MORE USE_THIRTEEN; do
				# shellcheck disable=SC2046
				if $drv $(sdt_flags $sdt) -D$bad -I. -c plain.$ext -o bad.o 2>bad.err; then
					fail "$what: $bad compiled with a plain dtrace -h header"
				fi
				grep -q 'error' bad.err || fail "$what: $bad gave no error with a plain header"
			done
		done
	done
done
# Where the header is included from.
"$DTRACE" -h -s "$PROVIDERS/multi.d" -o multi.h || fail "dtrace -h multi.d failed"
hdrtest semaphores "$PROVIDERS/multi.d" >multi-sem.c
# After the standard headers, in a program with its own bool (PostgreSQL did
# `typedef char bool;` until v16): the header must not pull in <stdbool.h>.
cat >ctx-std.c <<'P'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
typedef char bool;
#include "chk.h"
#include "multi.h" /* a second generated header in the same unit */
int main(void)
{
	bool b = 1;
	CHK_STR((char *)"x", b);
	FIRST_ONE(2);
	if (CHK_STR_ENABLED() || FIRST_ONE_ENABLED())
		puts("enabled");
	return 0;
}
P
# C++: included inside extern "C" { }, as C headers often are.
cat >ctx-externc.cc <<'P'
#include <cstdio>
extern "C" {
#include "chk.h"
#include "multi.h"
}
int main()
{
	CHK_CSTR("x");
	FIRST_TWO(1, const_cast<char *>("y"), 3L);
	return CHK_CSTR_ENABLED() ? 1 : 0;
}
P
# <sys/sdt.h> included first, without semaphores: the probe sites then carry
# none, so _ENABLED() must not read one (it is 1), and nothing needs -G.
cat >ctx-sdtfirst.c <<'P'
#include <sys/sdt.h>
#include "multi.h"
int main(void)
{
	if (FIRST_ONE_ENABLED())
		FIRST_ONE(1);
	return FIRST_ONE_ENABLED() ? 0 : 1;
}
P
cat >sdtfirst.d <<'D'
provider first {
	probe one(int);
};
D
for cc in $COMPILERS; do
	for sdt in $SDT_VARIANTS; do
		what="$cc ($sdt sdt.h)"
		# shellcheck disable=SC2046
		$(driver $cc c) $WFLAGS $(sdt_flags $sdt) -I. ctx-std.c chk-sem.c multi-sem.c -o ctx ||
			fail "$what: after the standard headers, with a program's own bool, two headers"
		# shellcheck disable=SC2046
		$(driver $cc c++) $WFLAGS $(sdt_flags $sdt) -I. -c ctx-externc.cc -o ctx.o ||
			fail "$what: inside extern \"C\" { } in C++"
		# shellcheck disable=SC2046
		$(driver $cc c) $WFLAGS $(sdt_flags $sdt) -I. ctx-sdtfirst.c -o sdtfirst ||
			fail "$what: <sys/sdt.h> first: does not build without semaphores"
		./sdtfirst || fail "$what: <sys/sdt.h> first: _ENABLED() is false"
		hdrtest check-notes sdtfirst.d sdtfirst --no-semaphores >/dev/null ||
			fail "$what: <sys/sdt.h> first: the notes are wrong"
	done
done
echo "count, type and evaluation checks ok"
