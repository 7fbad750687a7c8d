#!/bin/bash
# usdtkit's <sys/sdt.h> vs SystemTap's, disabled probes in a tight loop: instructions per
# iteration (valgrind --tool=callgrind, deterministic: the Ir difference between N and 2N
# iterations, divided by N) and ns per iteration (clock_gettime, best of REPEAT runs of
# ITERS iterations), gcc -O2 and clang -O2, one table with ratios (ours / SystemTap's).
#   bench/sdt/run.sh      ITERS=200000000 REPEAT=7 ROUNDS=3 CG_ITERS=1000000 SHOW_ASM=1 may be set
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
ITERS=${ITERS:-200000000}
REPEAT=${REPEAT:-7}
CG_ITERS=${CG_ITERS:-1000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-sdt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for tool in gcc clang valgrind; do
	command -v $tool >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done
grep -qs 'Systemtap static probe' /usr/include/x86_64-linux-gnu/sys/sdt.h /usr/include/sys/sdt.h ||
	{ echo "run.sh: SystemTap's sys/sdt.h (systemtap-sdt-dev) is missing" >&2; exit 1; }

# ir BIN: instructions per loop iteration
ir() {
	local a b
	a=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.1" "$1" $CG_ITERS 1 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	b=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.2" "$1" $((2 * CG_ITERS)) 1 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	awk -v a="$a" -v b="$b" -v n=$CG_ITERS 'BEGIN { printf "%.2f", (b - a) / n }'
}
ns() { "$1" $ITERS $REPEAT | cut -d' ' -f1; }
min() { echo "$@" | tr ' ' '\n' | sort -g | head -1; }
ratio() { echo "$1 $2" | awk '{ if ($2 == 0) print ($1 == 0 ? "1.00" : "inf"); else printf "%.2f", $1 / $2 }'; }

names=(none "reg+const" "global" "ENABLED() guard")
echo "| compiler | probe | Ir/iter ours | Ir/iter SystemTap | Ir ratio | ns/iter ours | ns/iter SystemTap | ns ratio |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for cc in gcc clang; do
	for v in 0 1 2 3; do
		$cc -O2 -I"$top/include" -DVARIANT=$v "$top/bench/sdt/bench.c" -o "$tmp/ours"
		$cc -O2 -DVARIANT=$v "$top/bench/sdt/bench.c" -o "$tmp/stap"
		io=$(ir "$tmp/ours")
		is=$(ir "$tmp/stap")
		# alternate the two programs over ROUNDS rounds: the machine is shared and noisy
		no=""
		nst=""
		for r in $(seq ${ROUNDS:-3}); do
			no="$no $(ns "$tmp/ours")"
			nst="$nst $(ns "$tmp/stap")"
		done
		no=$(min $no)
		nst=$(min $nst)
		echo "| $cc -O2 | ${names[$v]} | $io | $is | $(ratio "$io" "$is") | $no | $nst | $(ratio "$no" "$nst") |"
		# the loop's instructions, for the README
		objdump -d --no-show-raw-insn "$tmp/ours" | awk '/<bench_loop>:/,/^$/' >"$tmp/ours-$cc-$v.s"
	done
done
if [ -n "${SHOW_ASM:-}" ]; then
	for f in "$tmp"/ours-*.s; do echo "== $f"; cat "$f"; done
fi
