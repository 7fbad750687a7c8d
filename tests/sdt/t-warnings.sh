#!/bin/bash
# usdtkit's <sys/sdt.h> gives no warning that SystemTap's does not. Probe sites in shapes taken
# from real code (warn/*.c: a pointer traced after free or realloc, values set on only some
# paths, const, volatile, bit-fields, arrays, function pointers, enums, bool, _Atomic, results
# only the probe uses, struct members, string literals) are compiled with -Wall -Wextra at -O0
# and -O2, by gcc and clang, as C and C++, through bare STAP_PROBEn/DTRACE_PROBEn (warn/bare.h)
# and through the header this build's dtrace -h generates: once with usdtkit's header by -I,
# as a project that copies it or points -I at it gets it, once with SystemTap's as installed.
# Warnings are compared after normalising paths (and line:col inside either sdt.h): ours may
# have none that SystemTap's lacks, and must keep every warning SystemTap's gives about the
# caller's own code. Warnings located in the generated header are its type checks, the same
# text whichever sdt.h is used; they are left out (warnpat.d declares the types passed).
# On i386, where there is no SystemTap header to compare with: no warning located in ours.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

require_stap_sdt
export LC_ALL=C
W="$SDT_DIR/warn"
PATTERNS="gmem interp qualifiers bitfield array funcptr state atomic result member literal"
"$DTRACE" -h -s "$W/warnpat.d" -o "$T/warnpat.h" || fail "dtrace -h -s warn/warnpat.d failed"

# diags CC LANG PATTERN OUT FLAGS...: compile the pattern, append its normalised warnings to
# OUT; fails (returns 1) if the compiler does.
diags() {
	local cc=$1 lang=$2 p=$3 out=$4
	shift 4
	$cc -x "$lang" -c -Wall -Wextra "$@" -I"$T" -I"$W" "$W/$p.c" -o "$T/p.o" 2>"$T/p.err" ||
		return 1
	grep ': warning: ' "$T/p.err" |
		sed -e 's#^[^ :]*/##' -e "s#^sdt\\.h:[0-9]*:[0-9]*:#<sys/sdt.h> in $p.c:#" >>"$out" ||
		true
}

# warnings CC LANG FLAGS...: every pattern with both headers, warnings into $T/ours and $T/stap.
# A pattern SystemTap's header cannot build (clang and an _Atomic argument) is left out of the
# comparison; ours must build it.
warnings() {
	local cc=$1 lang=$2 p
	shift 2
	: >"$T/ours"
	: >"$T/stap"
	for p in $PATTERNS; do
		diags "$cc" "$lang" "$p" "$T/ours.$p" -I"$SDT_INC" "$@" ||
			{ cat "$T/p.err" >&2; fail "$p.c: $cc -x $lang $* does not build"; }
		if diags "$cc" "$lang" "$p" "$T/stap" "$@"; then
			cat "$T/ours.$p" >>"$T/ours"
		else
			echo "  ($p.c: left out, SystemTap's header does not build it with $cc -x $lang)"
		fi
		rm -f "$T/ours.$p"
	done
	# as multisets: one more of the same warning is one more
	sort -o "$T/ours" "$T/ours"
	sort -o "$T/stap" "$T/stap"
}

# compare WHAT CC LANG FLAGS...: both headers on every pattern; sets BAD on a difference.
BAD=0
N=0
compare() {
	local what=$1 cc=$2 lang=$3 extra missing
	shift 3
	warnings "$cc" "$lang" "$@"
	N=$((N + 1))
	# the generated header's type checks: not what is compared here
	grep -h '^warnpat\.h:' "$T/ours" "$T/stap" | sed "s/^/  ($what: type check left out) /" || true
	sed -i '/^warnpat\.h:/d' "$T/ours" "$T/stap"
	extra=$(comm -13 "$T/stap" "$T/ours")
	missing=$(comm -23 <(grep -v '^<sys/sdt\.h> ' "$T/stap" || true) \
		<(grep -v '^<sys/sdt\.h> ' "$T/ours" || true))
	if [ -n "$extra" ]; then
		echo "FAIL: $what: warnings only with usdtkit's sdt.h:" >&2
		printf '  %s\n' "${extra//$'\n'/$'\n  '}" >&2
		BAD=$((BAD + 1))
	fi
	if [ -n "$missing" ]; then
		echo "FAIL: $what: warnings about the caller's code only with SystemTap's sdt.h:" >&2
		printf '  %s\n' "${missing//$'\n'/$'\n  '}" >&2
		BAD=$((BAD + 1))
	fi
	[ -z "$extra$missing" ] && echo "ok: $what ($(wc -l <"$T/ours") warnings, the same)"
	return 0
}

for cc in gcc clang; do
	for lang in c c++; do
		drv=$cc
		[ $lang = c++ ] && drv=${cc/gcc/g++} && drv=${drv/clang/clang++}
		for opt in -O0 -O2; do
			compare "$drv $opt bare" "$drv" $lang $opt
			compare "$drv $opt dtrace -h" "$drv" $lang $opt -DWP_GENERATED
		done
	done
	# SystemTap's constraint knob changes nothing here
	compare "$cc -O2 STAP_SDT_ARG_CONSTRAINT=nor" "$cc" c -O2 -DSTAP_SDT_ARG_CONSTRAINT=nor
done
[ $BAD -eq 0 ] || fail "$BAD of $N comparisons differ (see above)"

# i386, where SystemTap's header is not installed to compare with and ours copies each argument
# to a local first (C: g++ has no i386 library here): no warning may be located in the header.
for drv in gcc:c clang:c; do
	: >"$T/m32"
	for p in $PATTERNS; do
		diags "${drv%:*}" "${drv#*:}" "$p" "$T/m32" -m32 -O2 -I"$SDT_INC" ||
			{ cat "$T/p.err" >&2; fail "$p.c: ${drv%:*} -m32 does not build"; }
	done
	if grep '^<sys/sdt\.h> ' "$T/m32" >&2; then
		fail "${drv%:*} -m32 -O2: warnings located in usdtkit's sdt.h (above)"
	fi
	echo "ok: ${drv%:*} -m32 -O2 ($(wc -l <"$T/m32") warnings, none in sdt.h)"
done

# The comparison can fail: SystemTap's own header by -I, not a system header, gives the
# warnings of a pointer traced after free().
mkdir -p "$T/stapcopy/sys"
cp "$STAP_SDT_H" "$T/stapcopy/sys/sdt.h"
[ -e "${STAP_SDT_H%/*}/sdt-config.h" ] && cp "${STAP_SDT_H%/*}/sdt-config.h" "$T/stapcopy/sys/"
: >"$T/copy"
diags gcc c gmem "$T/copy" -O2 -I"$T/stapcopy" || fail "gmem.c does not build with a copy of SystemTap's header"
PATTERNS=gmem
warnings gcc c -O2
sort -o "$T/copy" "$T/copy"
comm -13 "$T/stap" "$T/copy" | grep -q '^<sys/sdt\.h> in gmem\.c: warning: .*-Wuse-after-free' ||
	fail "SystemTap's header by -I gave no extra warning on gmem.c: the comparison cannot fail"
echo "ok: $N comparisons, no warning only usdtkit's header gives"
