#!/bin/bash
# Probe costs on the emulated arm64 machine (scripts/arm64-vm.sh), as
# instruction counts: under QEMU's TCG every guest instruction is
# translated, so its wall time says nothing about an arm64 CPU, but the
# instructions a loop executes are the program's own (valgrind callgrind,
# deterministic: the Ir difference between N and 2N iterations, over N).
#   1. a disabled probe in a tight loop (bench/sdt/bench.c): our
#      <sys/sdt.h> beside SystemTap's, gcc -O2 and clang -O2;
#   2. a runtime provider's disabled fire (bench/runtime/fire.c):
#      usdtkit_probe_fire() through fire-aarch64.S beside a compiled
#      `if (ENABLED()) STAP_PROBE2`;
#   3. an enabled fire, where perf can count: instructions (user and kernel:
#      the uprobe's break, the handler, the return) per fire with a tracefs
#      event enabled on the probe, less the disabled loop's.
# Run inside the machine: sh scripts/arm64-test.sh --bench (prints the
# tables on the console). BUILDDIR (the guest's build) must be built.
#   bench/arm64/run.sh BUILDDIR     CG_ITERS (default 100000), BENCH_CCS (default "gcc clang") may be set
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?BUILDDIR}" && pwd)
CG_ITERS=${CG_ITERS:-100000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-a64.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ "$(uname -m)" = aarch64 ] || { echo "run.sh: not an arm64 machine" >&2; exit 1; }

ir() { # BIN ARGS-BEFORE-N...: instructions per iteration; N is appended, then 1
	local bin=$1 a b
	shift
	a=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.1" "$bin" "$@" $CG_ITERS 1 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	b=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.2" "$bin" "$@" $((2 * CG_ITERS)) 1 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	awk -v a="$a" -v b="$b" -v n=$CG_ITERS 'BEGIN { printf "%.2f", (b - a) / n }'
}

echo "## arm64 (emulated, TCG): a disabled probe, instructions per loop iteration"
echo
echo "| compiler | probe | Ir/iter ours | Ir/iter SystemTap |"
echo "|---|---|---:|---:|"
names=(none "reg+const" "global" "ENABLED() guard")
for cc in ${BENCH_CCS:-gcc clang}; do
	for v in 0 1 2 3; do
		$cc -O2 -I"$top/include" -DVARIANT=$v "$top/bench/sdt/bench.c" -o "$tmp/ours"
		$cc -O2 -DVARIANT=$v "$top/bench/sdt/bench.c" -o "$tmp/stap"
		echo "| $cc -O2 | ${names[$v]} | $(ir "$tmp/ours") | $(ir "$tmp/stap") |"
	done
done

gcc -O2 -I"$top/runtime" "$top/bench/runtime/fire.c" -L"$build/runtime" -lusdtkit-runtime \
	-Wl,-rpath,"$build/runtime" -o "$tmp/fire"
echo
echo "## arm64 (emulated, TCG): a runtime provider's disabled fire, instructions per loop iteration"
echo
echo "| what | Ir/iter |"
echo "|---|---:|"
for m in none compiled rt rt-enabled; do
	case $m in
	none) what="the loop alone" ;;
	compiled) what="compiled: if (ENABLED()) STAP_PROBE2 (SystemTap's sdt.h)" ;;
	rt) what="runtime: usdtkit_probe_fire(q, i, \"x\") (fire-aarch64.S)" ;;
	rt-enabled) what="runtime: usdtkit_probe_enabled(q)" ;;
	esac
	echo "| $what | $(ir "$tmp/fire" "$m") |"
done

# 3. Enabled: perf stat counts instructions of the whole system call path,
# if QEMU's emulated PMU gives the event.
echo
N=20000
if perf stat -e instructions -x, -o "$tmp/ps" true 2>/dev/null &&
	grep -qE '^[0-9]+,' "$tmp/ps"; then
	echo "## arm64 (emulated, TCG): an enabled fire, instructions (user + kernel) per fire"
	echo
	echo "| what | instructions per fire |"
	echo "|---|---:|"
	# What perf stat counted for `fire MODE N 1` with the probe enabled by
	# bpftrace, less the same run disabled, over N.
	count() { perf stat -e instructions -x, -o "$tmp/ps" "$@" >/dev/null 2>&1; cut -d, -f1 "$tmp/ps" | grep -E '^[0-9]+$' | head -1; }
	for m in compiled rt; do
		d=$(count "$tmp/fire" "$m" $N 1)
		BENCH_WAIT=1 perf stat -e instructions -x, -o "$tmp/ps" "$tmp/fire" "$m" $N 1 >"$tmp/en.$m" 2>&1 &
		fp=$!
		while ! grep -qs '^ready' "$tmp/en.$m"; do sleep 0.1; done
		pid=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$tmp/en.$m")
		bpftrace -p "$pid" -e "usdt:*:benchc:hit {} usdt:*:benchrt:hit {}" >"$tmp/bt.$m" 2>&1 &
		bp=$!
		wait "$fp" || true
		kill -INT "$bp" 2>/dev/null || true
		wait "$bp" 2>/dev/null || true
		e=$(cut -d, -f1 "$tmp/ps" | grep -E '^[0-9]+$' | head -1)
		echo "| $m (bpftrace attached, empty action) | $(awk -v e="$e" -v d="$d" -v n=$N 'BEGIN { printf "%.0f", (e - d) / n }') |"
	done
else
	echo "(enabled fire: perf stat cannot count instructions on this machine: $(head -c 200 "$tmp/ps" 2>/dev/null | tr '\n' ' '))"
fi
