#!/bin/sh
# The main job, end to end, on a fresh Debian 12 machine:
# install what is missing, build usdtkit, build the quickstart example with
# `dtrace -h` and `dtrace -G`, and watch its probes fire in bpftrace.
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh
builddir=${BUILDDIR:-build}
[ -f "$builddir/build.ninja" ] || meson setup "$builddir" >/dev/null
ninja -C "$builddir" >/dev/null
DTRACE="$top/$builddir/dtrace-G/dtrace"

work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
ex="$top/examples/quickstart"
step() { printf '\n$ %s\n' "$*"; "$@"; }

cd "$work"
step "$DTRACE" -h -s "$ex/quickstart.d" -o quickstart_probes.h
step "$DTRACE" -G -s "$ex/quickstart.d" -o quickstart_provider.o
step cc -O2 -I "$top/include" -I . -c "$ex/quickstart.c" -o quickstart_main.o
step cc -o quickstart quickstart_main.o quickstart_provider.o
printf '\n$ readelf -n quickstart   # the probes every Linux tracer reads\n'
readelf -n quickstart | grep -E 'Provider|Name:|Arguments' | sed 's/^ */  /'

if [ ! -e /sys/kernel/tracing/uprobe_events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
printf '\n$ bpftrace -c "./quickstart 5 100" -e ...   # the probes firing\n'
rc=0
bpftrace -c "./quickstart 5 100" -e '
usdt:./quickstart:quickstart:request__start { printf("request %d start  %s\n", arg0, str(arg1)); }
usdt:./quickstart:quickstart:request__done { printf("request %d done   status=%d latency=%dus\n", arg0, arg1, arg2); }
usdt:./quickstart:quickstart:request__summary { printf("summary: %s\n", str(arg0)); }' >trace.out 2>&1 || rc=$?
# bpftrace 0.17 warns about RLIMIT_MEMLOCK needlessly on kernels >= 5.11.
grep -v 'RLIMIT_MEMLOCK' trace.out || true
exit $rc
