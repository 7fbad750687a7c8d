#!/bin/bash
# A probe argument whose type does not match the .d is a warning, never an
# error unless asked for: not under GCC 14's new default errors
# (-Werror=incompatible-pointer-types, -Werror=int-conversion, ...) nor
# clang's -Werror=incompatible-function-pointer-types, in C and C++, gcc and
# clang. The warning's first line names the probe, the argument's position
# and the declared type. USDTKIT_NO_TYPE_CHECKS turns the checks off,
# USDTKIT_TYPE_CHECK_ERRORS makes a mismatch an error. Arguments C or C++
# converts silently stay silent, also under -Wpedantic. And the header gives
# a program what DTrace's own headers do: <unistd.h> and <inttypes.h>.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
cd "$T"

cat >tc.d <<'D'
provider glib {
	probe variant__start(const char *type_info, int depth);
	probe name(char *s);
	probe counts(int i, long l, uint8_t u8, uint64_t u64, double d);
	probe ptrs(void *p, const void *cp, long *lp, char **pp);
	probe opaque(struct GSource *src);
};
D
"$DTRACE" -h -x typecheck -s tc.d -o tc.h || fail "dtrace -h failed"

# Mismatches, one per case, each named for the warning it must give.
cat >bad.c <<'P'
#include "tc.h"
typedef struct _GVariantTypeInfo GVariantTypeInfo;
void f(GVariantTypeInfo *info, const char *cs, int i, long *lp);
void f(GVariantTypeInfo *info, const char *cs, int i, long *lp)
{
#if defined STRUCT_FOR_STRING /* GLib's gvariant-core.c */
	GLIB_VARIANT_START(info, 1);
#elif defined CONST_FOR_CHAR
	GLIB_NAME(cs);
#elif defined INT_FOR_POINTER
	GLIB_PTRS(0, 0, (long *)i, 0);
	GLIB_NAME(i);
#elif defined POINTER_FOR_INT
	GLIB_COUNTS(lp, 1, 2, 3, 4);
#elif defined WRONG_POINTER
	GLIB_PTRS(0, 0, &i, 0);
#endif
	(void)info, (void)cs, (void)i, (void)lp;
}
P
cp bad.c bad.cc
# GCC 14's new defaults, spelled for gcc 12, and clang's new error.
gcc14_errors="-Werror=incompatible-pointer-types -Werror=int-conversion -Werror=implicit-function-declaration -Werror=implicit-int -Werror=return-type -Werror=discarded-qualifiers"
clang_errors="-Werror=incompatible-pointer-types -Werror=int-conversion -Werror=incompatible-function-pointer-types -Werror=incompatible-pointer-types-discards-qualifiers -Werror=implicit-function-declaration"
strict_flags() { # compiler lang
	case $1:$2 in
	gcc:c) echo "$gcc14_errors" ;;
	clang:c) echo "$clang_errors" ;;
	*) echo "" ;;
	esac
}
# case probe-name position declared-type
cases="STRUCT_FOR_STRING:glib:variant-start:1:char const *
CONST_FOR_CHAR:glib:name:1:char *
POINTER_FOR_INT:glib:counts:1:int
WRONG_POINTER:glib:ptrs:3:long *"
for lang in c c++; do
	ext=$(src_ext $lang)
	for cc in $COMPILERS; do
		drv=$(driver $cc $lang)
		for sdt in $SDT_VARIANTS; do
			what="$drv ($sdt sdt.h)"
			while IFS=: read -r def prov probe pos type; do
				# shellcheck disable=SC2046
				$drv -Wall -Wextra $(strict_flags $cc $lang) $(sdt_flags $sdt) -D$def \
					-I. -c bad.$ext -o bad.o 2>bad.err ||
					{ cat bad.err >&2; fail "$what: $def is an error under the new default errors"; }
				first=$(grep -m1 -E 'warning|error' bad.err) ||
					fail "$what: $def gave no warning"
				want="$prov:$probe argument $pos does not match the declared type '$type'"
				case $first in
				*"$want"*) ;;
				*) fail "$what: $def: the first line is \"$first\", not naming \"$want\"" ;;
				esac
				grep -q 'error' bad.err && fail "$what: $def: an error besides the warning"
				[ "$(grep -c 'warning:' bad.err)" = 1 ] ||
					{ cat bad.err >&2; fail "$what: $def: more than the one warning"; }
				# Asked for: plain -Werror, or the documented macro.
				# shellcheck disable=SC2046
				if $drv -Werror $(sdt_flags $sdt) -D$def -I. -c bad.$ext -o bad.o 2>/dev/null; then
					fail "$what: $def compiled under -Werror"
				fi
				# shellcheck disable=SC2046
				if $drv -Wall $(sdt_flags $sdt) -D$def -DUSDTKIT_TYPE_CHECK_ERRORS -I. \
					-c bad.$ext -o bad.o 2>bad.err; then
					fail "$what: $def compiled with USDTKIT_TYPE_CHECK_ERRORS"
				fi
				expect_grep "error.*$prov:$probe argument $pos does not match" bad.err \
					"$what: $def: the USDTKIT_TYPE_CHECK_ERRORS error names the probe"
				# shellcheck disable=SC2046
				$drv -Wall -Wextra -Werror $(sdt_flags $sdt) -D$def -DUSDTKIT_NO_TYPE_CHECKS \
					-I. -c bad.$ext -o bad.o 2>bad.err ||
					{ cat bad.err >&2; fail "$what: $def diagnosed with USDTKIT_NO_TYPE_CHECKS"; }
			done <<<"$cases"
		done
	done
done

# An int where a pointer is declared is C's -Wint-conversion (a GCC 14
# error) and a hard error in C++ without the check: C only.
for cc in $COMPILERS; do
	# shellcheck disable=SC2046
	$cc -Wall $(strict_flags $cc c) -I"$SDT_INC" -DINT_FOR_POINTER -I. -c bad.c -o bad.o 2>bad.err ||
		{ cat bad.err >&2; fail "$cc: an int for a pointer is an error"; }
	expect_grep "glib:name argument 1 does not match the declared type 'char \*'" bad.err \
		"$cc: an int for a pointer is reported"
done

# What C and C++ convert silently stays silent.
cat >good.c <<'P'
#include "tc.h"
#include <stdbool.h>
struct GSource;
enum colour { RED, GREEN };
static int cb(int x) { return x; }
static int calls;
static int next(void) { return ++calls; }
int main(void)
{
	char buf[8] = "abc";
	char *s = buf;
	const char *cs = buf;
	long l = 1;
	int i = 0;
	bool b = true;
	enum colour c = GREEN;
	unsigned char u8 = 200;
	short sh = -1;
	void *vp = buf;
	const void *cvp = buf;
	char *argv[2] = { buf, 0 };
	struct GSource *src = (struct GSource *)vp;
	const struct GSource *csrc = src;

	GLIB_VARIANT_START(s, i);
	GLIB_VARIANT_START(cs, c);
	GLIB_VARIANT_START("literal", b);
	GLIB_VARIANT_START(buf, u8);
	GLIB_VARIANT_START(0, sh);
	GLIB_VARIANT_START(NULL, 'x');
	GLIB_VARIANT_START(cs, next());
	GLIB_NAME(s);
	GLIB_NAME(buf);
	GLIB_NAME(0);
	GLIB_COUNTS(i++, i, u8, l, 1);
	GLIB_COUNTS(b, c, 'x', sh, 2.5f);
	GLIB_COUNTS(l, u8, i, b, c);
	GLIB_PTRS(s, cs, &l, argv);
	GLIB_PTRS(src, csrc, NULL, 0);
	GLIB_PTRS(argv, &argv, 0, NULL);
	GLIB_OPAQUE(src);
	GLIB_OPAQUE(csrc);
	GLIB_OPAQUE(NULL);
	GLIB_OPAQUE(vp);
#ifndef __cplusplus
	/* C converts void * to any object pointer, GNU C a function to void *. */
	GLIB_VARIANT_START(vp, RED);
	GLIB_VARIANT_START(cvp, 0);
	GLIB_NAME(vp);
	GLIB_PTRS(vp, vp, vp, vp);
	GLIB_PTRS(&cb, &cb, 0, 0);
#endif
	(void)cb, (void)vp, (void)cvp;
	/* Each argument evaluated once: i++ once, next() once. */
	return (i == 1 && calls == 1) ? 0 : 1;
}
P
sed 's/#include <stdbool.h>//' good.c >good.cc
hdrtest semaphores tc.d >tc-sem.c
gcc -c tc-sem.c -o tc-sem.o
for lang in c c++; do
	ext=$(src_ext $lang)
	for cc in $COMPILERS; do
		drv=$(driver $cc $lang)
		for sdt in $SDT_VARIANTS; do
			ped=""
			[ $sdt = ours ] && ped=-Wpedantic
			stds="c99 c11 c2x"
			[ $lang = c++ ] && stds="c++98 c++11 c++20"
			for std in $stds; do
				for opt in -O0 -O2; do
					# shellcheck disable=SC2046
					$drv -std=$std $WFLAGS $ped $opt $(strict_flags $cc $lang) $(sdt_flags $sdt) \
						-I. good.$ext tc-sem.o -o good ||
						fail "$drv -std=$std $opt ($sdt sdt.h): compatible arguments were diagnosed"
					./good || fail "$drv -std=$std $opt ($sdt sdt.h): arguments not evaluated once"
				done
			done
		done
	done
done

# The check's own expansion under the stricter warnings projects use (the
# program above is clean under them; SystemTap's <sys/sdt.h> fails clang's
# -Wpedantic, so ours).
strict_c="-Wshadow -Wdeclaration-after-statement -Wpointer-arith -Wcast-qual -Wbad-function-cast
	-Wconversion -Wsign-conversion -Wstrict-prototypes -Wmissing-prototypes -Wundef -Wredundant-decls
	-Wwrite-strings -Wvla -Wnull-dereference"
gcc_only="-Wc++-compat -Wduplicated-branches -Wduplicated-cond -Wlogical-op"
# shellcheck disable=SC2086
gcc -std=c99 $WFLAGS -Wpedantic $strict_c $gcc_only -I"$SDT_INC" -I. -c good.c -o good.o ||
	fail "gcc: the checks warn under stricter warnings"
# shellcheck disable=SC2086
clang -std=c99 $WFLAGS -Wpedantic $strict_c -I"$SDT_INC" -I. -c good.c -o good.o ||
	fail "clang: the checks warn under stricter warnings"

# What DTrace's headers include (<unistd.h>, <inttypes.h>), programs use
# without including it themselves.
cat >dtrace-prog.c <<'P'
#include "tc.h"
int main(void)
{
	uint64_t n = 1;
	if (sleep(0) != 0 || getpid() <= 0)
		return 1;
	return PRIu64[0] == '\0' || n != 1;
}
P
cp dtrace-prog.c dtrace-prog.cc
for cc in $COMPILERS; do
	for sdt in $SDT_VARIANTS; do
		# shellcheck disable=SC2046
		$(driver $cc c) -std=c99 $WFLAGS $(strict_flags $cc c) $(sdt_flags $sdt) -I. dtrace-prog.c \
			tc-sem.o -o dtrace-prog ||
			fail "$cc ($sdt sdt.h): sleep()/getpid()/PRIu64 need more than the header"
		./dtrace-prog || fail "$cc: the program using sleep() failed"
		# shellcheck disable=SC2046
		$(driver $cc c++) $WFLAGS $(sdt_flags $sdt) -I. -c dtrace-prog.cc -o dtrace-prog.o ||
			fail "$cc ($sdt sdt.h), C++: sleep()/getpid()/PRIu64 need more than the header"
	done
done
echo "type checks: warnings with names, never errors unless asked; DTrace's includes"
