#!/bin/sh
# The main job, end to end, on a fresh Debian 12 machine: install what is
# missing, build usdtkit, build the C example (examples/quickstart) with
# `dtrace -h` and `dtrace -G`, start the helper daemon, run the program, list
# its probes with `dtrace -l`, watch them fire with decoded arguments in perf
# (through the tracefs events the helper registered) and in bpftrace, trace
# them with a D program as DTrace users do (`dtrace -n`, on dtrace's own BPF
# engine), and clean up. Every command it runs is printed first, so it can be copied.
#   BUILDDIR  build directory (default: build)
#   USDTKIT_DEMO_NO_BUILD=1  skip scripts/deps.sh and the build (the build must exist)
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
builddir=${BUILDDIR:-build}
case $builddir in /*) ;; *) builddir="$top/$builddir" ;; esac
# USDTKIT_DEMO_NO_BUILD=1 (tests/install/t-demo.sh): use the build as it is.
if [ -z "${USDTKIT_DEMO_NO_BUILD:-}" ]; then
	sh scripts/deps.sh
	[ -f "$builddir/build.ninja" ] || meson setup "$builddir" >/dev/null
	ninja -C "$builddir" >/dev/null
fi
# The command's name follows the dtrace_name option (default: dtrace).
name=$(python3 -c 'import json, sys
print([o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "dtrace_name"][0])' \
	"$builddir/meson-info/intro-buildoptions.json")
DTRACE="$builddir/dtrace/$name"
HELPERD="$builddir/kernel-helper/helperd/usdtkit-helperd"
[ -x "$DTRACE" ] && [ -x "$HELPERD" ] || { echo "demo: the build has no dtrace or usdtkit-helperd" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-demo.XXXXXX")
ex="$top/examples/quickstart"
daemon=""
prog=""
# Cleanup, whatever happens: the program, the daemon (which removes the
# events it created on SIGTERM), then any event still naming our files.
cleanup() {
	[ -n "$prog" ] && kill "$prog" 2>/dev/null
	if [ -n "$daemon" ]; then
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	if [ -w /sys/kernel/tracing/uprobe_events ]; then
		events_of 2>/dev/null |
			sed -n 's/^p:\([^ ]*\) .*/\1/p' | while read -r ev; do
				echo 0 >"/sys/kernel/tracing/events/$ev/enable" 2>/dev/null
				echo "-:$ev" >>/sys/kernel/tracing/uprobe_events 2>/dev/null
			done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
step() { printf '\n$ %s\n' "$*"; "$@"; }
say() { printf '\n'; printf '# %s\n' "$@"; }

cd "$work"
say "1. Build the example: a header from the provider, the program, the provider object."
step "$DTRACE" -h -s "$ex/quickstart.d" -o quickstart_probes.h
step cc -O2 -I "$top/include" -I . -c "$ex/quickstart.c" -o quickstart.o
step "$DTRACE" -G -s "$ex/quickstart.d" -o quickstart_provider.o quickstart.o
step cc -o quickstart quickstart.o quickstart_provider.o
# The daemon's events name the program by its path only when nobody but root
# can change that path; under /tmp they name the daemon's alias of the file,
# /run/usdtkit/files/DEV-INO (kernel-helper/README.md, "What uprobe_events
# shows"). Either is this program's.
alias="/run/usdtkit/files/$(stat -c %d-%i quickstart)"
events_of() { # [PATTERN-PREFIX]: this program's event lines in uprobe_events
	grep "^p:${1:-}" /sys/kernel/tracing/uprobe_events 2>/dev/null |
		grep -F -e " $work/quickstart:" -e " $alias:" || true
}

if [ ! -e /sys/kernel/tracing/uprobe_events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
[ -e /sys/kernel/tracing/uprobe_events ] ||
	{ echo "demo: this kernel has no uprobe events (CONFIG_UPROBE_EVENTS)" >&2; exit 1; }

say "2. Start the helper daemon (here in the foreground, on a private socket;" \
    "   installed, systemd starts it on /run/usdtkit/helper.sock)."
export USDTKIT_HELPER_SOCKET="$work/helper.sock"
printf '\n$ %s -f --socket %s &\n' "$HELPERD" "$USDTKIT_HELPER_SOCKET"
"$HELPERD" -f --socket "$USDTKIT_HELPER_SOCKET" 2>"$work/helperd.log" &
daemon=$!
i=0
until grep -q ': ready' "$work/helperd.log" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 250 ] || ! kill -0 "$daemon" 2>/dev/null; then
		cat "$work/helperd.log" >&2
		echo "demo: the helper daemon did not start" >&2
		exit 1
	fi
	sleep 0.02
done

say "3. Run the program: 12 requests, 250 ms apart. At start-up it registers its" \
    "   probes with the daemon, which creates tracefs events sdt_quickstart/*."
printf '\n$ USDTKIT_HELPER_SOCKET=%s ./quickstart 12 250 &\n' "$USDTKIT_HELPER_SOCKET"
./quickstart 12 250 >"$work/quickstart.out" &
prog=$!
i=0
until [ "$(events_of sdt_quickstart/ | grep -c .)" -ge 3 ]; do
	i=$((i + 1))
	if [ $i -gt 250 ]; then
		cat "$work/helperd.log" >&2
		echo "demo: the program's probes were not registered" >&2
		exit 1
	fi
	sleep 0.02
done
step "$DTRACE" -l
printf '\n$ grep sdt_quickstart /sys/kernel/tracing/uprobe_events\n'
events_of sdt_quickstart/

say "4. Record its probes by name with perf for a second, with their arguments decoded."
if command -v perf >/dev/null; then
	printf "\n\$ perf record -e 'sdt_quickstart:*' -a -- sleep 1 && perf script\n"
	perf record -q -e 'sdt_quickstart:*' -a -o "$work/perf.data" -- sleep 1 >/dev/null 2>&1 &&
		perf script -i "$work/perf.data" -F comm,pid,event,trace 2>/dev/null |
		grep -F "quickstart" | sed 's/^ *//' || echo "(perf failed)"
else
	echo "(perf is not installed: skipped)"
fi
wait "$prog" || true
prog=""
sed 's/^/  /' "$work/quickstart.out"

say "5. The same probes in bpftrace (reads the notes of the file; no daemon needed)."
printf '\n$ bpftrace -c "./quickstart 4 100" -e ...\n'
rc=0
bpftrace -c "./quickstart 4 100" -e '
usdt:./quickstart:quickstart:request__start { printf("request %d start  %s\n", arg0, str(arg1)); }
usdt:./quickstart:quickstart:request__done { printf("request %d done   status=%d latency=%dus\n", arg0, arg1, arg2); }
usdt:./quickstart:quickstart:request__summary { printf("summary: %s\n", str(arg0)); }' >trace.out 2>&1 || rc=$?
# bpftrace 0.17 warns about RLIMIT_MEMLOCK needlessly on kernels >= 5.11.
grep -v 'RLIMIT_MEMLOCK' trace.out || true

say "6. And in D, as DTrace traces them: dtrace -n compiles the program to BPF" \
	"(clang, libbpf) and prints DTrace's output, the aggregation at the end."
printf '\n$ %s\n' "$DTRACE -q -c './quickstart 4 100' -n 'quickstart\$target:::request-start { printf(\"D: request %d %s\\n\", arg0, copyinstr(arg1)); } quickstart\$target:::request-done { @status[args[1]] = count(); }'"
"$DTRACE" -q -c './quickstart 4 100' -n 'quickstart$target:::request-start { printf("D: request %d %s\n", arg0, copyinstr(arg1)); } quickstart$target:::request-done { @status[args[1]] = count(); }' >dtrace.out 2>&1 || rc=$?
cat dtrace.out

say "7. Clean up: stopping the daemon removes the events it created."
step kill "$daemon"
wait "$daemon" 2>/dev/null || true
daemon=""
left=$(events_of sdt_quickstart/ | grep -c . || true)
echo "sdt_quickstart events left for this program: $left"
exit $rc
