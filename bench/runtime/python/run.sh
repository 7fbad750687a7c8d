#!/bin/bash
# What usdtkit's Python Probe.fire() costs, disabled and traced, beside a
# method that reads one attribute (the floor for any Python call) and a
# binding that makes a ctypes call on every fire (python-stapsdt's shape):
# one table of ns per call with ratios (bench.py says what each case is).
#   bench/runtime/python/run.sh [BUILDDIR]     N, N_ENABLED, REPEAT, PYTHON may be set
# The traced half needs root and bpftrace (bpftrace -p counts the hits);
# without them only the disabled half is printed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-py.XXXXXX")
bt=""
py=""
cleanup() {
	for pid in $bt $py; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
B=${1:-}
if [ -z "$B" ]; then
	B="$tmp/build"
	meson setup "$B" "$top" >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; exit 1; }
fi
ninja -C "$B" runtime/libusdtkit-runtime.so.0.1.0 >"$tmp/ninja.log" 2>&1 ||
	{ cat "$tmp/ninja.log" >&2; exit 1; }
PY=${PYTHON:-/usr/bin/python3}
export PYTHONPATH="$top/bindings/python" USDTKIT_RUNTIME_LIB="$B/runtime/libusdtkit-runtime.so.0"
# Never a daemon of the system: registration is not what is measured.
export USDTKIT_HELPER_SOCKET="$tmp/none.sock"
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree

# The reference: a compiled probe built with SystemTap's <sys/sdt.h> (systemtap-sdt-dev),
# behind its semaphore guard, in C (bench/runtime/fire.c, mode compiled).
grep -qs 'Systemtap static probe' /usr/include/x86_64-linux-gnu/sys/sdt.h /usr/include/sys/sdt.h ||
	{ echo "run.sh: SystemTap's sys/sdt.h (systemtap-sdt-dev) is missing" >&2; exit 1; }
cc -O2 -I"$top/runtime" "$top/bench/runtime/fire.c" -L"$B/runtime" -lusdtkit-runtime \
	-Wl,-rpath,"$B/runtime" -o "$tmp/fire"
c_dis=$("$tmp/fire" compiled 100000000 5 | cut -d' ' -f1)
c_en=""

"$PY" "$here/bench.py" disabled >"$tmp/disabled"
# traced OUT BTOUT PROBES COMMAND...: COMMAND in the background, bpftrace counting
# PROBES on it once it prints "ready PID", until it ends (it waits for the tracer).
traced() {
	local out=$1 btout=$2 probes=$3 pid
	shift 3
	"$@" >"$out" &
	py=$!
	for _ in $(seq 500); do grep -q '^ready' "$out" && break; sleep 0.02; done
	pid=$(awk '/^ready/ { print $2 }' "$out")
	[ -n "$pid" ] || { echo "run.sh: $* did not start" >&2; exit 1; }
	bpftrace -p "$pid" -e "$probes { @hits[probe] = count(); }" >"$btout" 2>&1 &
	bt=$!
	wait "$py" || { echo "run.sh: $* failed" >&2; exit 1; }
	py=""
	kill -INT "$bt"
	wait "$bt" || true
	bt=""
}
if [ "$(id -u)" -eq 0 ] && command -v bpftrace >/dev/null; then
	traced "$tmp/enabled" "$tmp/bt" 'usdt:*:pybench:*' \
		env N="${N_ENABLED:-200000}" "$PY" "$here/bench.py" enabled
	traced "$tmp/c_en" "$tmp/bt.c" 'usdt:*:benchc:hit' env BENCH_WAIT=1 "$tmp/fire" compiled 200000 1
	c_en=$(sed -n '2p' "$tmp/c_en" | cut -d' ' -f1)
fi

val() { awk -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f", a / b }'; }
base=$(val "$tmp/disabled" baseline)
row() { # label file key
	local v
	v=$(val "$2" "$3")
	[ -n "$v" ] || return 0
	echo "| $1 | $v | $(ratio "$v" "$base") | $(ratio "$(val "$2" ctypes)" "$v") |"
}
echo "Python $("$PY" -c 'import platform; print(platform.python_version())'), $(uname -r), $(nproc) CPUs"
echo
echo "| fire(path, 7) | ns/call | x baseline | ctypes-per-fire / this |"
echo "|---|---:|---:|---:|"
echo "| baseline: a method returning self._x | $base | 1.00 | $(ratio "$(val "$tmp/disabled" ctypes)" "$base") |"
row "usdtkit fire(), no tracer" "$tmp/disabled" usdtkit
row "usdtkit \`if p.enabled: p.fire()\`, no tracer" "$tmp/disabled" guard
row "ctypes call per fire (python-stapsdt's shape), no tracer" "$tmp/disabled" ctypes
row "usdtkit fire(), bpftrace attached" "$tmp/enabled" usdtkit
row "usdtkit \`if p.enabled: p.fire()\`, bpftrace attached" "$tmp/enabled" guard
row "ctypes call per fire, bpftrace attached" "$tmp/enabled" ctypes
echo "| reference: compiled C, \`if (ENABLED()) STAP_PROBE2\` (SystemTap's sdt.h), no tracer | $c_dis | | |"
[ -n "$c_en" ] && echo "| reference: the same, bpftrace attached | $c_en | | |"
if [ -s "$tmp/bt" ]; then
	echo
	echo "bpftrace counted: $(grep -o '\[.*\]: [0-9]*' "$tmp/bt" | tr '\n' ' ')"
fi
