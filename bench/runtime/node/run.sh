#!/bin/bash
# The Node binding's probe.fire(cb) in ns: disabled (no tracer: one
# typed-array read in JS) and enabled (bpftrace attached, counting), set
# against a compiled probe built with SystemTap's <sys/sdt.h> (the reference,
# systemtap-sdt-dev), behind its semaphore guard, measured in the same run
# (../fire.c, mode compiled), and, disabled, against dtrace-provider 0.8.8's
# Linux stub (its fire does nothing at all; fetched with `npm pack` when
# the registry answers). One table with ratios. README.md has the numbers.
#   bench/runtime/node/run.sh [BUILDDIR]   N=50000000 NE=200000 may be set
# Without BUILDDIR it builds the addon in a build directory of its own. The
# enabled rows need root and bpftrace; they are left out otherwise.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
N=${N:-50000000}
NE=${NE:-200000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-node.XXXXXX")
bt_pid=""
trap '[ -n "$bt_pid" ] && kill "$bt_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for tool in node cc; do
	command -v $tool >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done

build=${1:-}
if [ -z "$build" ]; then
	build="$tmp/build"
	meson setup "$build" "$top" >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; exit 1; }
fi
build=$(cd "$build" && pwd)
ninja -C "$build" bindings/node/usdtkit_dtrace_provider.node >"$tmp/ninja.log" 2>&1 ||
	{ cat "$tmp/ninja.log" >&2; echo "run.sh: no Node addon (Node headers missing?)" >&2; exit 1; }
export USDTKIT_NODE_ADDON="$build/bindings/node/usdtkit_dtrace_provider.node"
export NODE_DTRACE_PROVIDER_REQUIRE=hard USDTKIT_HELPER_SOCKET="$tmp/no-daemon.sock"

grep -qs 'Systemtap static probe' /usr/include/x86_64-linux-gnu/sys/sdt.h /usr/include/sys/sdt.h ||
	{ echo "run.sh: SystemTap's sys/sdt.h (systemtap-sdt-dev) is missing" >&2; exit 1; }
# (SystemTap's <sys/sdt.h> from the default include path; ours only for <usdtkit/runtime.h>)
cc -O2 -I"$top/runtime" "$top/bench/runtime/fire.c" -L"$build/runtime" -lusdtkit-runtime \
	-Wl,-rpath,"$build/runtime" -o "$tmp/fire"

stub=""
if (cd "$tmp" && timeout 60 npm pack --silent dtrace-provider@0.8.8 >/dev/null 2>&1) &&
	tar -xzf "$tmp/dtrace-provider-0.8.8.tgz" -C "$tmp"; then
	stub="$tmp/package"
else
	echo "(npm pack dtrace-provider@0.8.8 failed: no stub row)" >&2
fi

field() { node -e 'const o = JSON.parse(process.argv[1]); console.log(o[process.argv[2]].toFixed(2))' "$1" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

dis=$(node "$here/bench.js" disabled "$N" $stub)
c_dis=$("$tmp/fire" compiled "$N" 5 | cut -d' ' -f1)
rows=()
rows+=("| disabled | probe.fire(cb) | $(field "$dis" probe) | $c_dis | $(ratio "$(field "$dis" probe)" "$c_dis") |")
rows+=("| disabled | provider.fire(name, cb) | $(field "$dis" provider) | $c_dis | $(ratio "$(field "$dis" provider)" "$c_dis") |")
[ -n "$stub" ] && rows+=("| disabled | dtrace-provider 0.8.8 stub: probe.fire(cb) | $(field "$dis" stub) | $c_dis | $(ratio "$(field "$dis" stub)" "$c_dis") |")

# enabled: bpftrace attached to the process, counting; the program waits for it.
enabled() { # OUTFILE PROBE COMMAND...
	local out=$1 probe=$2 pid i
	shift 2
	"$@" >"$out" 2>"$out.err" &
	local prog=$!
	for i in $(seq 500); do grep -q '^ready' "$out" && break; sleep 0.02; done
	pid=$(awk '/^ready/ { print $2 }' "$out")
	bpftrace -p "$pid" -e "$probe { @n = count(); }" >"$tmp/bt.out" 2>&1 &
	bt_pid=$!
	wait "$prog" || { cat "$out.err" "$tmp/bt.out" >&2; exit 1; }
	kill -INT "$bt_pid"
	wait "$bt_pid" 2>/dev/null || true
	bt_pid=""
	tail -1 "$out"
}
if [ "$(id -u)" -eq 0 ] && command -v bpftrace >/dev/null; then
	en=$(enabled "$tmp/node.out" 'usdt:*:benchprov:hit' node "$here/bench.js" enabled "$NE")
	c_en=$(enabled "$tmp/c.out" 'usdt:*:benchc:hit' env BENCH_WAIT=1 "$tmp/fire" compiled "$NE" 1 |
		cut -d' ' -f1)
	rows+=("| enabled (bpftrace) | probe.fire(cb) | $(field "$en" probe) | $c_en | $(ratio "$(field "$en" probe)" "$c_en") |")
else
	echo "(not root, or no bpftrace: no enabled rows)" >&2
fi

echo "node $(node --version), $(uname -r), $(nproc) CPUs; N=$N disabled, NE=$NE enabled"
echo
echo "| state | call | Node ns | compiled <sys/sdt.h> ns | ratio |"
echo "|---|---|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
