#!/bin/bash
# Runtime providers' costs beside a compiled <sys/sdt.h> probe (SystemTap's
# header, Debian's systemtap-sdt-dev, the reference), in one run:
#   1. a disabled fire: instructions per loop iteration (callgrind, the Ir
#      difference between N and 2N iterations over N) and ns per iteration
#      (best of REPEAT loops, ROUNDS rounds alternating the programs), for
#      the loop alone, `if (ENABLED()) STAP_PROBE2(...)`, usdtkit_probe_fire()
#      and usdtkit_probe_enabled();
#   2. an enabled fire, with bpftrace attached to both probes (ns per fire:
#      the uprobe trap dominates both);
#   3. load time for 1, 100 and 1,000 probes (median of RUNS create + add +
#      load, microseconds), without a helper and with a private
#      usdtkit-helperd (what registration adds).
#   bench/runtime/run.sh [BUILDDIR]   ITERS, REPEAT, ROUNDS, CG_ITERS, RUNS may be set
# The Python and Node bindings have their own: bench/runtime/python/run.sh,
# bench/runtime/node/run.sh.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
ITERS=${ITERS:-100000000}
REPEAT=${REPEAT:-5}
ROUNDS=${ROUNDS:-3}
CG_ITERS=${CG_ITERS:-1000000}
RUNS=${RUNS:-21}
lib="$build/runtime/libusdtkit-runtime.so"
[ -e "$lib" ] || { echo "run.sh: no $lib: build first (meson setup build && ninja -C build)" >&2; exit 1; }
for tool in gcc valgrind; do
	command -v $tool >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done
grep -qs 'Systemtap static probe' /usr/include/x86_64-linux-gnu/sys/sdt.h /usr/include/sys/sdt.h ||
	{ echo "run.sh: SystemTap's sys/sdt.h (systemtap-sdt-dev) is missing" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-rt.XXXXXX")
hd_pid=""
bt_pid=""
cleanup() {
	[ -n "$bt_pid" ] && kill "$bt_pid" 2>/dev/null
	[ -n "$hd_pid" ] && kill "$hd_pid" 2>/dev/null && wait "$hd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# SystemTap's <sys/sdt.h> from the default include path; ours only for <usdtkit/runtime.h>.
gcc -O2 -I"$top/runtime" "$top/bench/runtime/fire.c" -L"$build/runtime" -lusdtkit-runtime \
	-Wl,-rpath,"$build/runtime" -o "$tmp/fire"

ir() { # MODE: instructions per loop iteration
	local a b
	a=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.1" "$tmp/fire" "$1" $CG_ITERS 1 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	b=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.2" "$tmp/fire" "$1" $((2 * CG_ITERS)) 1 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	awk -v a="$a" -v b="$b" -v n=$CG_ITERS 'BEGIN { printf "%.2f", (b - a) / n }'
}
min() { echo "$@" | tr ' ' '\n' | sort -g | head -1; }

modes=(none compiled rt rt-enabled)
declare -A IR NS
for m in "${modes[@]}"; do IR[$m]=$(ir "$m"); NS[$m]=""; done
for r in $(seq "$ROUNDS"); do
	for m in "${modes[@]}"; do NS[$m]="${NS[$m]} $("$tmp/fire" "$m" "$ITERS" "$REPEAT" | cut -d' ' -f1)"; done
done
for m in "${modes[@]}"; do NS[$m]=$(min ${NS[$m]}); done
echo "## Disabled: per loop iteration (loop body: one multiply-add)"
echo
echo "| what | Ir/iter | ns/iter | ns over the loop | ns over compiled ENABLED() |"
echo "|---|---:|---:|---:|---:|"
for m in "${modes[@]}"; do
	case $m in
	none) what="the loop alone" ;;
	compiled) what="compiled: if (ENABLED()) STAP_PROBE2 (SystemTap's sdt.h)" ;;
	rt) what="runtime: usdtkit_probe_fire(q, i, \"x\")" ;;
	rt-enabled) what="runtime: usdtkit_probe_enabled(q)" ;;
	esac
	awk -v w="$what" -v ir="${IR[$m]}" -v ns="${NS[$m]}" -v base="${NS[none]}" -v c="${NS[compiled]}" \
		'BEGIN { printf "| %s | %s | %.2f | %+.2f | %+.2f |\n", w, ir, ns, ns - base, ns - c }'
done

# 2. Enabled: bpftrace on both probes, an empty action.
if command -v bpftrace >/dev/null && [ "$(id -u)" -eq 0 ]; then
	en() { # MODE: the program waits until bpftrace has raised the probe's semaphore
		local out="$tmp/en.$1"
		BENCH_WAIT=1 "$tmp/fire" "$1" 200000 3 >"$out" &
		local fp=$!
		while ! grep -qs '^ready' "$out"; do sleep 0.05; done
		bpftrace -p "$fp" -e "usdt:*:benchc:hit {} usdt:*:benchrt:hit {}" >"$tmp/bt.$1" 2>&1 &
		bt_pid=$!
		wait "$fp"
		kill "$bt_pid"
		wait "$bt_pid" 2>/dev/null || true
		bt_pid=""
		sed -n '2p' "$out" | cut -d' ' -f1
	}
	c=$(en compiled)
	r=$(en rt)
	echo
	echo "## Enabled: bpftrace attached (an empty action), ns per fire"
	echo
	echo "| compiled STAP_PROBE2 | usdtkit_probe_fire | ratio |"
	echo "|---:|---:|---:|"
	awk -v c="$c" -v r="$r" 'BEGIN { printf "| %.0f | %.0f | %.2f |\n", c, r, r / c }'
fi

# 3. Load time, without and with the helper.
lt() { "$tmp/fire" load "$1" "$2"; }
declare -A L0 L1
for n in 1 100 1000; do L0[$n]=$(USDTKIT_HELPER_SOCKET="$tmp/none.sock" lt $n "$RUNS"); done
hd="$build/kernel-helper/helperd/usdtkit-helperd"
if [ -x "$hd" ] && [ "$(id -u)" -eq 0 ]; then
	"$hd" -f --socket "$tmp/hd.sock" --linger 0 2>"$tmp/hd.log" &
	hd_pid=$!
	while ! grep -q ': ready' "$tmp/hd.log"; do sleep 0.05; done
	for n in 1 100 1000; do
		L1[$n]=$(USDTKIT_HELPER_SOCKET="$tmp/hd.sock" USDTKIT_HELPER_TIMEOUT_MS=5000 lt $n \
			$((RUNS > 7 ? 7 : RUNS)))
	done
fi
echo
echo "## Load: create + add + load, median microseconds"
echo
echo "| probes | no helper | with usdtkit-helperd | what the helper adds |"
echo "|---:|---:|---:|---:|"
for n in 1 100 1000; do
	awk -v n=$n -v a="${L0[$n]}" -v b="${L1[$n]:-}" 'BEGIN {
		if (b == "") printf "| %d | %.0f | (not run: needs root and the daemon) | |\n", n, a
		else printf "| %d | %.0f | %.0f | %+.0f |\n", n, a, b, b - a }'
done
