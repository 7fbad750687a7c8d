#!/bin/bash
# A header made by a plain `dtrace -h`, as build rules written for
# SystemTap's and DTrace's dtrace run it, adds no diagnostic to a build
# (issue 34): code passing arguments of other types than its .d declares
# (libvirt passes pointers for `int`s, GLib a struct pointer for a string)
# compiles with gcc and clang, C89 to C2x and C++98 to C++20, under
# -Werror -Wall -Wextra -pedantic against our <sys/sdt.h> with no output at
# all, and against SystemTap's with no diagnostic SystemTap's own header
# does not give. The count check stays (an error, as with SystemTap's
# header). USDTKIT_TYPE_CHECKS turns the type checks on (and
# USDTKIT_TYPE_CHECK_ERRORS, as errors); a plain header
# and one made with -x typecheck in one translation unit each keep theirs.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
[ -x /usr/bin/dtrace ] || fail "SystemTap's dtrace is missing (systemtap-sdt-dev; scripts/deps.sh installs it)"
cd "$T"

cat >q.d <<'D'
provider q {
	probe handle(int watch, int fd, int events);
	probe name(char *s);
	probe cname(const char *s);
	probe lp(long *p);
	probe vp(void *p);
	probe sp(struct Thing *t);
	probe wide(uint64_t v, unsigned char c, double d);
	probe none();
};
D
"$DTRACE" -h -s q.d -o q.h 2>dtrace.err || { cat dtrace.err >&2; fail "dtrace -h failed"; }
[ ! -s dtrace.err ] || { cat dtrace.err >&2; fail "dtrace -h printed something"; }
mkdir stap
/usr/bin/dtrace -h -s q.d -o stap/q.h >/dev/null 2>&1 || fail "SystemTap's dtrace -h failed"

# Every argument but the last probe's of another type than declared, each
# kind of check (number, pointer, pointer to void) reached; C89-clean.
cat >q.c <<'P'
#include "q.h"
struct Thing {
	int x;
};
void f(struct Thing *t, const char *cs, int i, void *p);
void f(struct Thing *t, const char *cs, int i, void *p)
{
	unsigned long ul = 7;
	Q_HANDLE(p, t, cs);           /* pointers for ints (libvirt) */
	Q_NAME(cs);                   /* const char * for char * */
	Q_NAME(t);                    /* a struct pointer for a string (GLib) */
	Q_CNAME(i);                   /* an int for a string */
	Q_LP(&i);                     /* int * for long * */
	Q_VP(ul);                     /* a number for void * */
	Q_SP(cs);                     /* a string for a struct pointer */
	Q_WIDE(p, 300, t);            /* pointers for numbers */
	Q_NONE();
#ifdef BAD_COUNT
	Q_NAME(cs, 1);
#endif
	if (Q_HANDLE_ENABLED() || Q_NONE_ENABLED())
		(void)ul;
}
P
cp q.c q.cc

strict="-Wall -Wextra -pedantic"
n=0
for lang in c c++; do
	ext=$(src_ext $lang)
	stds="c89 gnu89 c99 c11 gnu11 c17 c2x"
	[ $lang = c++ ] && stds="c++98 c++11 c++17 gnu++17 c++20"
	for cc in $COMPILERS; do
		drv=$(driver $cc $lang)
		for std in $stds; do
			what="$drv -std=$std"
			# Our <sys/sdt.h>: nothing at all, even under -Werror.
			# shellcheck disable=SC2046
			$drv -std=$std -Werror $strict $(sdt_flags ours) -I. -c q.$ext -o q.o 2>q.err ||
				{ cat q.err >&2; fail "$what (our sdt.h): the plain header broke the build"; }
			[ ! -s q.err ] || { cat q.err >&2; fail "$what (our sdt.h): the plain header printed diagnostics"; }
			# SystemTap's <sys/sdt.h>: only what SystemTap's own header gives
			# (its sdt.h fails clang's -pedantic whatever includes it).
			$drv -std=$std $strict -I. -c q.$ext -o q.o 2>ours.err ||
				{ cat ours.err >&2; fail "$what (SystemTap's sdt.h): the plain header broke the build"; }
			$drv -std=$std $strict -Istap -c q.$ext -o q.o 2>stap.err ||
				{ cat stap.err >&2; fail "$what: SystemTap's header does not compile the program"; }
			grep -o '\(warning\|error\): .*' ours.err | LC_ALL=C sort -u >ours.diag || true
			grep -o '\(warning\|error\): .*' stap.err | LC_ALL=C sort -u >stap.diag || true
			extra=$(LC_ALL=C comm -23 ours.diag stap.diag)
			[ -z "$extra" ] || { cat ours.err >&2; fail "$what: diagnostics SystemTap's header does not give: $extra"; }
			[ "$(grep -c 'warning\|error' ours.err)" -le "$(grep -c 'warning\|error' stap.err)" ] ||
				fail "$what: more diagnostics than with SystemTap's header"
			n=$((n + 1))
		done
		# The count check stays, as SystemTap's header has it.
		# shellcheck disable=SC2046
		if $drv -DBAD_COUNT $(sdt_flags ours) -I. -c q.$ext -o q.o 2>q.err; then
			fail "$drv: a wrong argument count compiled with a plain header"
		fi
		grep -q 'error' q.err || fail "$drv: a wrong argument count gave no error"
		if $drv -DBAD_COUNT -Istap -c q.$ext -o q.o 2>/dev/null; then
			fail "$drv: a wrong argument count compiled with SystemTap's header (the reference moved)"
		fi
		# Asked for: USDTKIT_TYPE_CHECKS before the include reports each mismatch.
		# shellcheck disable=SC2046
		$drv -Wall -DUSDTKIT_TYPE_CHECKS $(sdt_flags ours) -I. -c q.$ext -o q.o 2>q.err ||
			{ cat q.err >&2; fail "$drv: USDTKIT_TYPE_CHECKS made an error, not a warning"; }
		for want in "q:handle argument 1 does not match the declared type 'int'" \
			"q:name argument 1 does not match the declared type 'char \*'" \
			"q:lp argument 1 does not match the declared type 'long \*'" \
			"q:wide argument 1 does not match the declared type 'uint64_t'"; do
			expect_grep "warning: .*$want" q.err "$drv: USDTKIT_TYPE_CHECKS: $want"
		done
		# USDTKIT_TYPE_CHECK_ERRORS asks for the checks too, as errors.
		# shellcheck disable=SC2046
		if $drv -DUSDTKIT_TYPE_CHECK_ERRORS $(sdt_flags ours) -I. -c q.$ext -o q.o 2>q.err; then
			fail "$drv: USDTKIT_TYPE_CHECK_ERRORS compiled a plain header's mismatches"
		fi
		expect_grep "error: .*q:handle argument 1 does not match the declared type 'int'" q.err \
			"$drv: USDTKIT_TYPE_CHECK_ERRORS: the error names the probe"
	done
done
[ $n = 24 ] || fail "only $n configurations compiled"

# One translation unit with a plain header and a -x typecheck one: only
# the latter's probes are checked, whichever is included first.
sed 's/provider q/provider r/' q.d >r.d
"$DTRACE" -h -x typecheck -s r.d -o r.h || fail "dtrace -h -x typecheck failed"
for order in "q r" "r q"; do
	set -- $order
	cat >mixed.c <<P
#include "$1.h"
#include "$2.h"
void g(const char *cs);
void g(const char *cs)
{
	Q_NAME(cs);
	R_NAME(cs);
}
P
	for cc in $COMPILERS; do
		# shellcheck disable=SC2046
		$cc -Wall $(sdt_flags ours) -I. -c mixed.c -o mixed.o 2>mixed.err ||
			{ cat mixed.err >&2; fail "$cc, $order: a mismatch was an error"; }
		expect_grep "r:name argument 1 does not match" mixed.err "$cc, $order: the -x typecheck header checks"
		if grep "q:name" mixed.err >&2; then fail "$cc, $order: the plain header checked"; fi
	done
done
echo "ok: a plain dtrace -h header adds no diagnostic ($n configurations), counts still checked"
