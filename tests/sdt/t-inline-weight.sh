#!/bin/bash
# GCC decides what to inline, clone and split from its size estimate of each function, in which
# an asm statement weighs as many lines as its template has. A function holding a probe must
# weigh the same with our header as with SystemTap's, or a real build gets a different number of
# probe sites than with SystemTap's tools (GLib's quark__new: 3 sites instead of 1). Checked two
# ways against SystemTap's header on the default include path:
#   - GCC's own estimate (-fdump-ipa-fnsummary "self size") of a function with STAP_PROBE0..12,
#     C and C++, x86-64 and aarch64, with and without semaphores;
#   - the site count of a small probed function called from four places, -O2/-O3/-Os.
# Clang's inliner does not count asm lines; it is checked on the site counts alone.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"
require_stap_sdt
OURS=(-I"$USDTKIT_SRCDIR/include")

# self_size CC FLAGS... SRC: GCC's size estimate of the first function in SRC.
self_size() {
	local dump="$T/fnsummary"
	rm -f "$dump"
	"$@" -O2 -c -o /dev/null -fdump-ipa-fnsummary="$dump" || fail "compile failed: $*"
	awk '/self size:/ { print $3; exit }' "$dump"
}

# probe_src N SEMAPHORES: a function whose body is one STAP_PROBE with N arguments.
probe_src() {
	local n=$1 sem=$2 params="long x0" args="" i
	for ((i = 1; i <= n; i++)); do
		params="$params, long x$i"
		args="$args, x$i"
	done
	[ "$sem" = yes ] && printf '#define _SDT_HAS_SEMAPHORES 1\nextern unsigned short p_n_semaphore;\n'
	printf '#include <sys/sdt.h>\nvoid f(%s) { STAP_PROBE%s(p, n%s); }\n' \
		"$params" "$([ "$n" -gt 0 ] && echo "$n")" "$args"
}

checked=0
for target in gcc g++ aarch64-linux-gnu-gcc; do
	command -v $target >/dev/null || fail "$target is not installed (scripts/deps.sh)"
	lang=c
	[ $target = g++ ] && lang=c++
	# The cross compiler does not search x86-64's multiarch directory, where SystemTap's
	# header lives; the sources include nothing else.
	stap_inc=()
	[ $target = aarch64-linux-gnu-gcc ] && stap_inc=(-I"$(dirname "$(dirname "$STAP_SDT_H")")")
	for sem in no yes; do
		for n in $(seq 0 12); do
			src="$T/w$n.$lang"
			probe_src "$n" $sem >"$src"
			ours=$(self_size $target "${OURS[@]}" "$src")
			stap=$(self_size $target "${stap_inc[@]}" "$src")
			[ -n "$ours" ] && [ -n "$stap" ] || fail "$target: no size estimate for STAP_PROBE$n"
			[ "$ours" -eq "$stap" ] ||
				fail "$target STAP_PROBE$n (semaphores: $sem): GCC weighs the function $ours with our header, $stap with SystemTap's"
			checked=$((checked + 1))
		done
	done
done
echo "ok: $checked size estimates equal to SystemTap's header's (gcc, g++, aarch64; 0..12 arguments)"

# A probed helper with four callers: GCC at -O2 keeps it out of line with SystemTap's header
# (one site); a lighter asm makes it inline into every caller (four).
cat >"$T/callers.c" <<'SRC'
#include <sys/sdt.h>
static int seq;
static int bump(const char *s) { seq++; STAP_PROBE2(t, bump, s, seq); return seq; }
int a(const char *s) { return bump(s); }
int b(const char *s) { return bump(s) * 3; }
int c(const char *s) { return bump(s) + 1; }
int d(const char *s) { return bump(s) - 7; }
SRC
sites() { readelf -n "$1" | grep -c 'NT_STAPSDT' || true; }
for cc in gcc "g++ -x c++" clang "clang++ -x c++"; do
	for opt in -O2 -O3 -Os; do
		$cc $opt "${OURS[@]}" -c "$T/callers.c" -o "$T/ours.o" || fail "$cc $opt: ours failed to build"
		$cc $opt -c "$T/callers.c" -o "$T/stap.o" || fail "$cc $opt: SystemTap's failed to build"
		o=$(sites "$T/ours.o")
		s=$(sites "$T/stap.o")
		[ "$o" -eq "$s" ] || fail "$cc $opt: $o probe sites with our header, $s with SystemTap's"
		echo "ok: $cc $opt: $o site(s), as with SystemTap's header"
	done
done
