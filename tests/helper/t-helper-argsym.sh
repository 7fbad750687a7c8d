#!/bin/bash
# Arguments at a symbol, as gcc writes a global with SystemTap's "nor"
# constraint, read from the notes of cross-compiled arm64 programs and of an
# x86-64 one by core/argspec's one parser (usdt_argspec_symbol()) and
# core/elfsym (test_helper_units --symbols): arm64's `[xN, #:lo12:sym]`
# (adrp put the symbol's page in xN) gives the register and the symbol's low
# 12 bits, x86-64's `sym(%rip)` its address; both as nm reads the symbol. A
# section anchor (`.LANCHOR0`, gcc's default at -O1 and above for a global
# of the same file) is in no symbol table: reported absent (the engine
# refuses it, naming -fno-section-anchors).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"
require_stap_sdt
command -v aarch64-linux-gnu-gcc >/dev/null || fail "aarch64-linux-gnu-gcc is not installed (scripts/deps.sh)"
UNITS="$USDTKIT_BUILDDIR/tests/helper/test_helper_units"
[ -x "$UNITS" ] || fail "no $UNITS: build first"
cat >"$T/m.c" <<'C'
#include <sys/sdt.h>
long g_var = 5;
extern long e_var;
void f(void) { DTRACE_PROBE2(p, one, g_var, e_var); }
int main(void) { f(); return 0; }
C
echo 'long e_var = 7;' >"$T/e.c"
# The cross compiler does not search x86-64's multiarch directory, where SystemTap's header lives.
STAP_INC=$(dirname "$(dirname "$STAP_SDT_H")")

# sym VALUE-OF-nm PROGRAM SYMBOL: nm's value of SYMBOL, in hex without leading zeros.
sym() { printf '0x%x' "0x$(nm "$1" | awk -v s="$2" '$3 == s { print $1 }')"; }
lo12() { printf '0x%x' $(($(sym "$1" "$2") & 0xfff)); }

# arm64, position-independent and not, without section anchors: g_var, and
# (not PIE) the other file's e_var, each [xN, #:lo12:sym].
aarch64-linux-gnu-gcc -O2 -fno-section-anchors -I"$STAP_INC" "$T/m.c" "$T/e.c" -o "$T/pie" ||
	fail "aarch64-linux-gnu-gcc: PIE"
readelf -n "$T/pie" | grep -q 'Arguments: -8@\[x[0-9]*, #:lo12:g_var\]' ||
	{ readelf -n "$T/pie" >&2; fail "gcc wrote no [xN, #:lo12:g_var] (PIE)"; }
"$UNITS" --symbols "$T/pie" >"$T/out" || fail "--symbols of the PIE"
r=$(readelf -n "$T/pie" | sed -n 's/.*Arguments: -8@\[\(x[0-9]*\), #:lo12:g_var\].*/\1/p')
printf 'p:one arg0 g_var+0 %s %s\n' "$r" "$(lo12 "$T/pie" g_var)" >"$T/want"
diff "$T/want" "$T/out" || fail "arm64 PIE: g_var's operand"

aarch64-linux-gnu-gcc -O2 -fno-pie -no-pie -fno-section-anchors -I"$STAP_INC" "$T/m.c" "$T/e.c" \
	-o "$T/exec" || fail "aarch64-linux-gnu-gcc: not PIE"
args=$(readelf -n "$T/exec" | sed -n 's/.*Arguments: //p')
[[ $args =~ ^-8@\[(x[0-9]+),\ \#:lo12:g_var\]\ -8@\[(x[0-9]+),\ \#:lo12:e_var\]$ ]] ||
	fail "not PIE: gcc wrote '$args', not two [xN, #:lo12:sym]"
"$UNITS" --symbols "$T/exec" >"$T/out" || fail "--symbols of the executable"
printf 'p:one arg0 g_var+0 %s %s\np:one arg1 e_var+0 %s %s\n' "${BASH_REMATCH[1]}" \
	"$(lo12 "$T/exec" g_var)" "${BASH_REMATCH[2]}" "$(lo12 "$T/exec" e_var)" >"$T/want"
diff "$T/want" "$T/out" || fail "arm64 executable: g_var's and e_var's operands"

# gcc's default: a section anchor, in no symbol table.
aarch64-linux-gnu-gcc -O2 -I"$STAP_INC" "$T/m.c" "$T/e.c" -o "$T/anchor" || fail "aarch64-linux-gnu-gcc: anchors"
"$UNITS" --symbols "$T/anchor" >"$T/out" || fail "--symbols with an anchor"
grep -qx 'p:one arg0 \.LANCHOR[0-9]*+0 x[0-9]* absent' "$T/out" ||
	{ cat "$T/out" >&2; fail "a section anchor not reported absent"; }

# x86-64: sym(%rip), the symbol's address.
cc -O2 "$T/m.c" "$T/e.c" -o "$T/x86" || fail "cc"
"$UNITS" --symbols "$T/x86" >"$T/out" || fail "--symbols of the x86-64 program"
printf 'p:one arg0 g_var+0 rip %s\np:one arg1 e_var+0 rip %s\n' "$(sym "$T/x86" g_var)" \
	"$(sym "$T/x86" e_var)" >"$T/want"
diff "$T/want" "$T/out" || fail "x86-64: the operands at g_var(%rip) and e_var(%rip)"
echo "ok: arguments at a symbol, arm64 ([xN, #:lo12:sym]) and x86-64 (sym(%rip))"
