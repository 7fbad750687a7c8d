#!/bin/bash
# A 1,000-probe provider with 12 arguments each (SPEC item 16) parses fully:
# every probe, in order, with the argument types the generator wrote.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

dump="$USDTKIT_BUILDDIR/tests/provider/dump-model"
python3 "$USDTKIT_SRCDIR/tests/provider/gen-provider.py" 1000 12 >"$T/big.d"
"$dump" "$T/big.d" >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "parse failed"; }
[ ! -s "$T/err" ] || { cat "$T/err"; fail "unexpected diagnostics"; }

expect_eq "$(grep -c '^  probe ' "$T/out")" 1000 "probe count"
expect_eq "$(grep -c '^  probe .* nargs=12$' "$T/out")" 1000 "probes with 12 arguments"
expect_eq "$(grep -c '^    arg' "$T/out")" 12000 "argument count"
# Order and names: probe N is pN__event, whose DTrace name is pN-event.
awk '/^  probe /{print $2, $4}' "$T/out" >"$T/names"
for n in 0 1 499 998 999; do
	sed -n "$((n + 1))p" "$T/names" | grep -qx "p${n}__event dtrace=p${n}-event" ||
		fail "probe #$n is '$(sed -n "$((n + 1))p" "$T/names")'"
done
# Types: argument a of probe p is TYPES[(p + a) % 12] as the generator cycles them.
types=("int" "char *" "uint64_t" "const char *" "long" "void *" "uint8_t" "int32_t" "size_t"
	"unsigned short" "double" "bool")
for p in 0 7 999; do
	for a in 0 5 11; do
		want=${types[$(((p + a) % 12))]}
		line=$(awk -v p="p${p}__event" -v a="arg$a" '
			/^  probe /{cur = $2} cur == p && $1 == a {print; exit}' "$T/out")
		case "$line" in
		*"a$a \"$want\" "*) ;;
		*) fail "p$p arg$a: expected type '$want', got: $line" ;;
		esac
	done
done
echo "ok: 1000 probes x 12 arguments"
