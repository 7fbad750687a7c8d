#!/bin/bash
# Misused probes fail to compile, and the compiler says which probe: a struct, union,
# bit-field, __int128 or long double argument, or 13 arguments (STAP_PROBE13, DTRACE_PROBE13,
# STAP_PROBEV). C89 and C11, C++98 and C++11, gcc and clang. For all but the bit-field an
# "error:" line itself names provider and probe (static assertion text, or the name of the
# negative-size array); for a bit-field the compilers' own "sizeof applied to a bit-field"
# comes first, and the probe is named by the macro-expansion context printed with it.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

src="$SDT_DIR/misuse.c"
probes=(fineprobe structprobe unionprobe bitfieldprobe int128probe longdoubleprobe
	thirteenprobe dthirteenprobe vthirteenprobe)
for lang in "gcc -std=gnu89" "gcc -std=c11" "clang -std=gnu89" "clang -std=c11" \
	"g++ -x c++ -std=gnu++98" "g++ -x c++ -std=c++11" \
	"clang++ -x c++ -std=gnu++98" "clang++ -x c++ -std=c++11"; do
	# The correct probe builds: the failures below come from the misuse.
	$lang -I"$SDT_INC" -DBAD=0 -c "$src" -o "$T/ok.o" || fail "$lang: the correct probe fails"
	for bad in 1 2 3 4 5 6 7 8; do
		probe=${probes[$bad]}
		if $lang -I"$SDT_INC" -DBAD=$bad -c "$src" -o "$T/bad.o" 2>"$T/err"; then
			fail "$lang: misuse $bad ($probe) compiled"
		fi
		if [ $bad -eq 3 ]; then
			grep -q "$probe" "$T/err" || { cat "$T/err" >&2; fail "$lang: $probe not named"; }
			grep -q 'bit-field' "$T/err" || { cat "$T/err" >&2; fail "$lang: no bit-field error"; }
		else
			grep -E 'error' "$T/err" | grep -q "badprov.*$probe" ||
				{ cat "$T/err" >&2; fail "$lang: no error line names badprov:$probe"; }
		fi
	done
	echo "ok: $lang"
done
