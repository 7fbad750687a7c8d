#!/bin/bash
# dtrace -G cross-checks of its input objects (issue 4, item 3), each with
# the object (or archive member) and the probe named in the message, exit
# status 1 and no output; and the cases that must pass: sites of providers
# not declared here, warnings for declared probes without sites. Probe sites
# are made with SystemTap's own <sys/sdt.h> (the reference producer of the
# notes), so the expectations do not depend on our header.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
STAP_SDT=/usr/include/x86_64-linux-gnu/sys/sdt.h
[ -f "$STAP_SDT" ] || fail "systemtap-sdt-dev is not installed (scripts/deps.sh installs it)"
# A copy usable by every target (Debian installs it in the x86-64 multiarch dir).
mkdir -p "$T/inc/sys"
cp "$STAP_SDT" "${STAP_SDT%/*}/sdt-config.h" "$T/inc/sys/"
cd "$T"

cat >shop.d <<'D'
provider shop {
	probe order__start(int, char *);
	probe idle();
	probe never__fired(long);
};
D
cat >good.c <<'C'
#include <sys/sdt.h>
void good(int a, char *b)
{
	DTRACE_PROBE2(shop, order__start, a, b);
	DTRACE_PROBE(shop, idle);
	DTRACE_PROBE3(otherlib, anything, a, b, a); /* not ours: ignored */
}
C
cat >undeclared.c <<'C'
#include <sys/sdt.h>
void undeclared(int a) { DTRACE_PROBE1(shop, order__ended, a); }
C
cat >argcount.c <<'C'
#include <sys/sdt.h>
void argcount(int a) { DTRACE_PROBE3(shop, order__start, a, a, a); }
C
cat >illumos.c <<'C'
/* What an illumos/Oracle `dtrace -h` header turns a probe into. */
extern void __dtrace_shop___order__start(int, char *);
extern int __dtraceenabled_shop___idle(void);
void illumos(int a, char *b)
{
	if (__dtraceenabled_shop___idle())
		__dtrace_shop___order__start(a, b);
}
C
for f in good undeclared argcount illumos; do
	gcc -I"$T/inc" -O2 -fPIC -c $f.c -o $f.o
done
gcc -m32 -I"$T/inc" -O2 -fPIC -c good.c -o good32.o
aarch64-linux-gnu-gcc -I"$T/inc" -O2 -fPIC -c good.c -o good-aarch64.o
ar rcs libmixed.a good.o argcount.o
gcc -I"$T/inc" -O2 -flto -c argcount.c -o lto-gcc.o
clang -I"$T/inc" -O2 -flto -c argcount.c -o lto-clang.o
ar rcs liblto.a lto-gcc.o lto-clang.o
sha256sum ./*.o ./*.a >sums

# expect_fail NAME PATTERN... -- ARGS: -G must exit 1, leave no out.o, and
# print a line matching each pattern.
expect_fail() {
	local name=$1
	shift
	local pats=()
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	rm -f out.o
	local rc=0
	"$DTRACE" -G -s shop.d -o out.o "$@" 2>"$name.err" || rc=$?
	[ $rc -eq 1 ] || { cat "$name.err" >&2; fail "$name: exit status $rc, expected 1"; }
	[ ! -e out.o ] || fail "$name: output left behind after an error"
	for p in "${pats[@]}"; do
		expect_grep "$p" "$name.err" "$name"
	done
	echo "ok: $name"
}

expect_fail undeclared "undeclared\.o.*error.*shop:order__ended.*not declared" -- good.o undeclared.o
expect_fail argcount "argcount\.o.*error.*shop:order__start.*3 arguments.*declared with 2" \
	"shop\.d:2:[0-9]+: note" -- argcount.o
expect_fail archive-member "libmixed\.a\(argcount\.o\).*error.*shop:order__start" -- libmixed.a
expect_fail illumos "illumos\.o.*error.*__dtrace_shop___order__start.*dtrace -h" \
	"illumos\.o.*error.*__dtraceenabled_shop___idle.*dtrace -h" -- illumos.o
expect_fail class "good32\.o.*error.*32-bit i386.*64-bit x86-64" -- -64 good.o good32.o
expect_fail machine "good-aarch64\.o.*error.*aarch64.*x86-64" -- good.o good-aarch64.o
expect_fail missing "nosuch\.o.*error" -- nosuch.o
cp good.o self.o
sha256sum self.o >self.sum
rm -f out.o
"$DTRACE" -G -s shop.d -o self.o self.o 2>self.err && fail "-o naming an input object succeeded"
expect_grep "self\.o.*is the input object" self.err "output is input"
sha256sum -c --quiet self.sum || fail "the input named by -o was overwritten"
echo "ok: output-is-input"
printf 'not an object\n' >text.o
expect_fail not-elf "text\.o.*error.*not an ELF" -- text.o

# Success: other providers' sites ignored, and nothing said of the probe no
# object fires (as DTrace's and SystemTap's -G) unless asked for.
"$DTRACE" -G -s shop.d -o out.o good.o 2>quiet.err || { cat quiet.err >&2; fail "good objects rejected"; }
[ -s out.o ] || fail "no output for good objects"
[ ! -s quiet.err ] || { cat quiet.err >&2; fail "-G printed something for good objects by default"; }
"$DTRACE" -G -x unusedprobes -s shop.d -o out.o good.o 2>good.err || { cat good.err >&2; fail "good objects rejected"; }
expect_grep "shop\.d:4:[0-9]+: warning: .*shop:never__fired.*no site" good.err "unused probe warning (-x unusedprobes)"
USDTKIT_WARN_UNUSED=1 "$DTRACE" -G -s shop.d -o out.o good.o 2>env.err || { cat env.err >&2; fail "good objects rejected"; }
expect_eq "$(cat env.err)" "$(cat good.err)" "USDTKIT_WARN_UNUSED=1 is -x unusedprobes"
expect_no_grep "otherlib|error" good.err "sites of other providers"
expect_no_grep "order__start|idle" good.err "used probes"
# No warning without objects: the object must stand alone.
"$DTRACE" -G -s shop.d -o out.o 2>alone.err || fail "-G without objects failed"
[ ! -s alone.err ] || { cat alone.err >&2; fail "-G without objects printed something"; }
# Same objects, from an archive (members other than those with errors).
ar rcs libgood.a good.o
"$DTRACE" -G -s shop.d -o out.o libgood.a 2>ar.err || { cat ar.err >&2; fail "archive rejected"; }
expect_no_grep "order__start" ar.err "archive member sites read"

# LTO objects have no notes to check: a warning each, no "no site" warnings, success.
"$DTRACE" -G -x unusedprobes -s shop.d -o out.o lto-gcc.o lto-clang.o liblto.a 2>lto.err ||
	{ cat lto.err >&2; fail "LTO objects rejected"; }
for o in lto-gcc.o lto-clang.o "liblto\.a\(lto-gcc\.o\)" "liblto\.a\(lto-clang\.o\)"; do
	expect_grep "^$o: warning: probe sites not checked" lto.err "LTO warning for $o"
done
expect_no_grep "no site" lto.err "unused-probe warnings with unchecked objects"
echo "ok: LTO objects"

# Thin archives (`ar T`, and meson's internal static libraries): members are
# files named relative to the archive's directory, read as objects of their own.
mkdir -p thin/objects-with-long-names
cp good.o thin/objects-with-long-names/good-object-file.o
cp argcount.o thin/ac.o
(cd thin && ar rcsT libthinbad.a objects-with-long-names/good-object-file.o ac.o &&
	ar rcsT libthingood.a objects-with-long-names/good-object-file.o)
head -c 8 thin/libthingood.a | grep -q '^!<thin>' || fail "ar did not make a thin archive"
sha256sum thin/*.a thin/*.o thin/*/*.o >thin.sums
expect_fail thin-member "thin/libthinbad\.a\(ac\.o\).*error.*shop:order__start" -- thin/libthinbad.a
"$DTRACE" -G -x unusedprobes -s shop.d -o out.o thin/libthingood.a 2>thin.err || { cat thin.err >&2; fail "thin archive rejected"; }
# Its member's sites were read: the probes good.c fires get no "no site" warning.
expect_no_grep "order__start|idle" thin.err "thin archive member sites read"
expect_grep "never__fired" thin.err "thin archive: unused probe still warned about"
printf '!<thin>\nthis is not an archive header at all, not sixty bytes of one...........\n' >thin/junk.a
expect_fail thin-malformed "thin/junk\.a.*error.*malformed thin archive" -- thin/junk.a
sha256sum -c --quiet thin.sums || fail "a thin archive or its member was modified"
echo "ok: thin archives"

sha256sum -c --quiet sums || fail "an input object or archive was modified"
echo "ok: inputs unchanged"
