#!/bin/bash
# What registration costs a program, and what the daemon sustains.
#   bench/helper/run.sh [BUILDDIR] [ROUNDS]   (default: build-drti, 2001)
#
# Start-up latency: exec -> main() of one small program with one probe,
# measured by startlat.c (posix_spawn, the program writes CLOCK_MONOTONIC at
# the top of main to a pipe), in rounds that run every variant once in
# random order; "added" is the median of the per-round differences with
# the same program under USDTKIT_DISABLE=1. Variants: our -G object with no
# daemon (no socket), with a stale socket and no board (nobody listens),
# with a crashed daemon's socket and board (SIGKILLed: its board's liveness
# lock gone), with the stand-in tests/drti/fakehelperd (answers at
# once: what drti itself costs when the daemon is fast), with the real
# usdtkit-helperd (module already known: a warm-up round registers it first)
# when it is built and we are root; and SystemTap's `dtrace -G` object, which
# registers nothing, for scale. Process start-up varies by hundreds of µs on
# a shared machine, so drti is also timed inside one process: ctorbench.c,
# appended to the provider source `dtrace -G -k` generated, calls drti's own
# (static) functions N times: what a module load, a dlclose and an exit
# cost, without a line added to the product.
# Throughput: REGISTER requests per second from 2 clients (each request a
# new connection, as drti does); processes per second started, registered
# and exited by 2 spawners. Memory: the daemon's RSS growth per registered
# process, over 500 live processes.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-build-drti}
rounds=${2:-2001}
case $builddir in /*) ;; *) builddir="$top/$builddir" ;; esac
dtrace="$builddir/dtrace/dtrace"
fake="$builddir/tests/drti/fakehelperd"
helperd="$builddir/kernel-helper/helperd/usdtkit-helperd"
stap=/usr/bin/dtrace
for f in "$dtrace" "$fake"; do
	[ -x "$f" ] || { echo "build usdtkit first: $f missing (ninja -C $builddir)" >&2; exit 1; }
done
[ -x "$stap" ] || { echo "SystemTap's dtrace is not installed (systemtap-sdt-dev)" >&2; exit 1; }

w=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-helper.XXXXXX")
pids=""
cleanup() {
	local p
	exec 8>&- 9>&- 2>/dev/null || true
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w"

# A provider unique to this run (the real daemon creates sdt_<provider> events).
prov="bp$$"x
PROVU=$(echo "$prov" | tr a-z A-Z)
printf 'provider %s { probe tick(int); };\n' "$prov" >p.d
"$dtrace" -h -s p.d -o p.h
printf '#include "p.h"\n#define BENCHPROV_TICK %s_TICK\n' "$PROVU" >bp.h
gcc -O2 -I"$top/include" -I. -c "$top/bench/helper/target.c" -o target.o
"$dtrace" -G -s p.d -o prov.o target.o
gcc target.o prov.o -o target
# the same program with its probe in a shared library (DT_NEEDED) with its own -G object
gcc -O2 -fPIC -I"$top/include" -I. -c "$top/bench/helper/libprobe.c" -o libprobe.o
"$dtrace" -G -s p.d -o libprobe-prov.o libprobe.o
gcc -shared libprobe.o libprobe-prov.o -o libprobe.so
gcc -O2 -DBENCH_LIB -c "$top/bench/helper/target.c" -o libtarget.o
gcc libtarget.o -L. -lprobe -Wl,-rpath,"$w" -o libtarget
# SystemTap: its header (the system <sys/sdt.h>) and its -G object
"$stap" -h -s p.d -o stap/p.h 2>/dev/null || { mkdir -p stap && "$stap" -h -s p.d -o stap/p.h; }
printf '#include "p.h"\n#define BENCHPROV_TICK %s_TICK\n' "$PROVU" >stap/bp.h
gcc -O2 -Istap -c "$top/bench/helper/target.c" -o stap/target.o
(cd stap && "$stap" -G -s ../p.d -o prov.o target.o)
gcc stap/target.o stap/prov.o -o target-stap
# the harness, with a probe and a -G object of its own (reqs sends its note's address)
gcc -O2 -I"$top/include" -I"$top/core" -DBENCH_PROVIDER="$prov" -c "$top/bench/helper/startlat.c" -o startlat.o
"$dtrace" -G -s p.d -o sl-prov.o startlat.o
gcc startlat.o sl-prov.o -o startlat
SL() { env USDTKIT_DISABLE=1 ./startlat "$@"; }
# drti timed inside one process: the generated provider source (-k keeps it)
# with ctorbench.c appended, calling drti's static functions
# shellcheck source=bench/helper/daemonbench.sh
. "$top/bench/helper/daemonbench.sh"
bh_ctorbench "$dtrace" p.d "$prov" "$PWD/ctorbench" || exit 1

wait_socket() { # path pid
	local i
	for i in $(seq 500); do
		[ -S "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

"$fake" "$w/fake.sock" "$w/fake.log" reply &
fakepid=$!
pids="$pids $fakepid"
wait_socket "$w/fake.sock" "$fakepid" || { echo "fakehelperd did not start" >&2; exit 1; }
grep -q listening "$w/fake.log" 2>/dev/null || sleep 0.1
# A stale socket: the file a crashed daemon leaves, nobody listening.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' "$w/stale.sock"

daemon=""
if [ -x "$helperd" ] && [ "$(id -u)" -eq 0 ] && [ -e /sys/kernel/tracing/uprobe_events ]; then
	"$helperd" -f --socket "$w/d.sock" --state "$w/d.state" 2>"$w/d.log" &
	daemon=$!
	pids="$pids $daemon"
	wait_socket "$w/d.sock" "$daemon" || { echo "usdtkit-helperd did not start:" >&2; cat "$w/d.log" >&2; daemon=""; }
fi
# A crashed daemon: socket and board left, the board's liveness lock gone
# (core/protocol.h): drti asks nothing.
crashed=""
if [ -n "$daemon" ]; then
	"$helperd" -f --socket "$w/crashed.sock" --state "$w/c.state" 2>"$w/c.log" &
	cpid=$!
	if wait_socket "$w/crashed.sock" "$cpid" && sleep 0.2 && [ -f "$w/crashed.sock.known" ]; then
		kill -KILL "$cpid"
		wait "$cpid" 2>/dev/null || true
		crashed=1
	else
		kill "$cpid" 2>/dev/null || true
	fi
fi
[ -n "$daemon" ] || echo "note: usdtkit-helperd not run (not built, not root or no tracefs): its rows are absent" >&2

# One process keeps the module registered with the daemon throughout, so that
# every measured start finds it known (the daemon drops a file's events when
# its last process exits).
mkfifo keep
exec 8<>keep
if [ -n "$daemon" ]; then
	USDTKIT_HELPER_SOCKET="$w/d.sock" ./target wait <keep >/dev/null 8>&- &
	pids="$pids $!"
	USDTKIT_HELPER_SOCKET="$w/d.sock" ./ctorbench hold <keep >/dev/null 8>&- &
	pids="$pids $!"
	sleep 0.5
fi
specs=("disabled|USDTKIT_DISABLE=1|$w/target"
	"stap||$w/target-stap"
	"nodaemon|USDTKIT_HELPER_SOCKET=$w/absent.sock|$w/target"
	"stale|USDTKIT_HELPER_SOCKET=$w/stale.sock|$w/target"
	"fake|USDTKIT_HELPER_SOCKET=$w/fake.sock|$w/target")
specs+=("libdisabled|USDTKIT_DISABLE=1|$w/libtarget"
	"libnodaemon|USDTKIT_HELPER_SOCKET=$w/absent.sock|$w/libtarget")
[ -z "$crashed" ] || specs+=("crashed|USDTKIT_HELPER_SOCKET=$w/crashed.sock|$w/target")
[ -z "$daemon" ] || specs+=("daemon|USDTKIT_HELPER_SOCKET=$w/d.sock|$w/target"
	"firstseen|USDTKIT_HELPER_SOCKET=$w/d.sock|+$w/target"
	"libdaemon|USDTKIT_HELPER_SOCKET=$w/d.sock|$w/libtarget")
SL lat "$rounds" "${specs[@]}" >lat.txt

# in-process: N calls each
ctor() { # label env...
	local l=$1
	shift
	env -u USDTKIT_DISABLE "$@" ./ctorbench "$ctor_n" | sed "s/^/$l /"
}
ctor_n=$(((rounds * 5) > 100000 ? 100000 : rounds * 5))
{
	ctor disabled USDTKIT_DISABLE=1 | grep ' load '
	ctor nodaemon USDTKIT_HELPER_SOCKET="$w/absent.sock"
	ctor stale USDTKIT_HELPER_SOCKET="$w/stale.sock"
	[ -z "$crashed" ] || ctor crashed USDTKIT_HELPER_SOCKET="$w/crashed.sock"
	ctor fake USDTKIT_HELPER_SOCKET="$w/fake.sock"
	[ -z "$daemon" ] || ctor daemon USDTKIT_HELPER_SOCKET="$w/d.sock"
} >ctor.txt
# cold: the constructor itself, once per fresh process (first PLT calls,
# untouched pages), as a program start pays it
cold() { # label env...
	local l=$1 i
	shift
	for i in $(seq "$cold_n"); do
		env "$@" USDTKIT_DISABLE=1 ./ctorbench cold
	done | sort -n | awk -v l="$l" '{ a[NR] = $1 } END { printf "%s cold %s %s\n", l, a[int((NR + 1) / 2)], a[int(NR * 0.9)] }'
}
cold_n=$(((rounds / 2) | 1))
{
	for i in $(seq "$cold_n"); do env USDTKIT_DISABLE=1 ./ctorbench cold keep; done | sort -n |
		awk '{ a[NR] = $1 } END { printf "disabled cold %s %s\n", a[int((NR + 1) / 2)], a[int(NR * 0.9)] }'
	cold nodaemon USDTKIT_HELPER_SOCKET="$w/absent.sock"
	cold stale USDTKIT_HELPER_SOCKET="$w/stale.sock"
	[ -z "$crashed" ] || cold crashed USDTKIT_HELPER_SOCKET="$w/crashed.sock"
	cold fake USDTKIT_HELPER_SOCKET="$w/fake.sock"
	[ -z "$daemon" ] || cold daemon USDTKIT_HELPER_SOCKET="$w/d.sock"
} >>ctor.txt

# requests per second: 2 clients for 2 s
rate() { # socket
	local a b
	SL reqs 2 "$1" >r1.txt &
	a=$!
	SL reqs 2 "$1" >r2.txt &
	b=$!
	wait "$a" "$b"
	awk '{ n += $2; s += $4; f += $6 } END { if (f) printf "%d (%d failed)", n / (s / 2), f; else printf "%d", n / (s / 2) }' r1.txt r2.txt
}
# processes per second: 2 spawners, 1,000 runs each
procs() { # env...
	local t0 t1 a b
	t0=$(date +%s%N)
	env "$@" ./startlat spawn 1000 "$w/target" >/dev/null &
	a=$!
	env "$@" ./startlat spawn 1000 "$w/target" >/dev/null &
	b=$!
	wait "$a" "$b"
	t1=$(date +%s%N)
	echo $((2000 * 1000000000 / (t1 - t0)))
}
req_fake=$(rate "$w/fake.sock")
proc_off=$(procs USDTKIT_DISABLE=1)
proc_fake=$(procs USDTKIT_HELPER_SOCKET="$w/fake.sock")
req_d="-" proc_d="-" mem_d="-"
if [ -n "$daemon" ]; then
	req_d=$(rate "$w/d.sock")
	proc_d=$(procs USDTKIT_HELPER_SOCKET="$w/d.sock")
	# memory: 500 live registered processes, each waiting on a pipe
	rss() { awk '/^VmRSS/ { print $2 }' "/proc/$daemon/status"; }
	sleep 1
	before=$(rss)
	fds_before=$(ls "/proc/$daemon/fd" | wc -l)
	mkfifo hold
	exec 9<>hold
	tpids=""
	for i in $(seq 500); do
		USDTKIT_HELPER_SOCKET="$w/d.sock" ./target wait <hold >/dev/null 8>&- 9>&- &
		tpids="$tpids $!"
	done
	# each registered process holds one pidfd in the daemon: wait for all 500
	for i in $(seq 100); do
		[ $(($(ls "/proc/$daemon/fd" | wc -l) - fds_before)) -ge 500 ] && break
		sleep 0.1
	done
	sleep 0.5
	after=$(rss)
	fds_after=$(ls "/proc/$daemon/fd" | wc -l)
	exec 9>&-
	# shellcheck disable=SC2086
	wait $tpids
	rm -f hold
	nreg=$((fds_after - fds_before))
	[ "$nreg" -gt 0 ] || nreg=1
	mem_d=$(awk -v a="$after" -v b="$before" -v n="$nreg" 'BEGIN { printf "%.2f", (a - b) / n }')
	mem_d="$mem_d (${nreg} pidfds)"
fi

echo
printf 'Registration cost: exec -> main() of a one-probe program, %d rounds, µs\n\n' "$rounds"
row() { printf '| %-64s | %10s | %10s | %10s | %12s |\n' "$@"; }
row variant "median" "p10" "p90" "added (med)"
printf '|%s|%s|%s|%s|%s|\n' "------------------------------------------------------------------" \
	"------------" "------------" "------------" "--------------"
label() {
	case $1 in
	disabled) echo "usdtkit -G, USDTKIT_DISABLE=1 (reference)" ;;
	stap) echo "SystemTap dtrace -G (registers nothing)" ;;
	nodaemon) echo "usdtkit -G, no daemon (no socket)          target <= 3" ;;
	stale) echo "usdtkit -G, stale socket, no board (refused connect)" ;;
	crashed) echo "usdtkit -G, a crashed daemon's socket and board" ;;
	fake) echo "usdtkit -G, stand-in server (answers at once)" ;;
	daemon) echo "usdtkit -G, usdtkit-helperd, module known  target <= 30" ;;
	firstseen) echo "usdtkit -G, usdtkit-helperd, first-seen file  target <= 150" ;;
	libdisabled) echo "probes in a .so, USDTKIT_DISABLE=1 (reference of lib rows)" ;;
	libnodaemon) echo "probes in a .so, no daemon                 target <= 3" ;;
	libdaemon) echo "probes in a .so, usdtkit-helperd, known     target <= 30" ;;
	esac
}
# The lib rows' "added" is against the same program with registration off.
libref=$(awk '$1 == "libdisabled" { print $6 }' lat.txt)
while read -r l med p10 p90 emed dm de; do
	case $l in lib*) dm=$(awk -v a="$dm" -v b="$libref" 'BEGIN { printf "%.1f", a - b }') ;; esac
	row "$(label "$l")" "$med" "$p10" "$p90" "$dm"
done <lat.txt
echo
awk '$1 == "stap" { s = $2 } $1 == "nodaemon" { n = $2 } END { if (s && n) printf "ratio (usdtkit no daemon median / SystemTap median): %.3fx\n", n / s }' lat.txt
echo
printf 'drti timed inside the process, µs: cold = the constructor once in each of %d fresh\nprocesses; warm = %d calls in one process (ctorbench)\n\n' "$cold_n" "$ctor_n"
row3() { printf '| %-64s | %10s | %10s |\n' "$@"; }
row3 "what drti does" median p90
printf '|%s|%s|%s|\n' "------------------------------------------------------------------" "------------" "------------"
label3() {
	case "$1 $2" in
	"disabled cold") echo "constructor, cold, USDTKIT_DISABLE=1" ;;
	"nodaemon cold") echo "constructor, cold, no daemon            target <= 3" ;;
	"stale cold") echo "constructor, cold, stale socket, no board (refused connect)" ;;
	"crashed cold") echo "constructor, cold, crashed daemon's socket + board (no lock)" ;;
	"fake cold") echo "constructor, cold, stand-in server" ;;
	"daemon cold") echo "constructor, cold, usdtkit-helperd, module known  target <= 30" ;;
	"disabled load") echo "load, USDTKIT_DISABLE=1 (environment scan only)" ;;
	"nodaemon load") echo "load, warm, no daemon: access() of the socket path" ;;
	"nodaemon dlclose"|"nodaemon board"|"fake board"|"stale dlclose"|"stale board"|"crashed dlclose"|"crashed board") echo "" ;;
	"stale load") echo "load, warm, stale socket, no board: refused connect" ;;
	"crashed load") echo "load, warm, crashed daemon's board: no lock, nothing asked" ;;
	"fake load") echo "load, warm, stand-in server (no board): REGISTER + answer" ;;
	"fake dlclose") echo "dlclose, stand-in server: UNREGISTER + answer" ;;
	"daemon load") echo "load, warm, usdtkit-helperd, module known (board hit)" ;;
	"daemon board") echo "the board check alone (executable: stat + pread), warm" ;;
	"daemon dlclose") echo "dlclose, usdtkit-helperd: UNREGISTER + answer" ;;
	esac
}
while read -r l what med p90; do
	t=$(label3 "$l" "$what")
	[ -z "$t" ] || row3 "$t" "$med" "$p90"
done <ctor.txt
echo
printf 'Throughput (2 clients / 2 spawners on %d cores)\n\n' "$(nproc)"
row2() { printf '| %-64s | %16s |\n' "$@"; }
row2 measure value
printf '|%s|%s|\n' "------------------------------------------------------------------" "------------------"
row2 "REGISTER requests/s, stand-in server" "$req_fake"
row2 "REGISTER requests/s, usdtkit-helperd (target >= 2000)" "$req_d"
row2 "processes/s started+exited, registration disabled" "$proc_off"
row2 "processes/s started+registered+exited, stand-in server" "$proc_fake"
row2 "processes/s started+registered+exited, usdtkit-helperd" "$proc_d"
row2 "usdtkit-helperd RSS KiB per registered process (<= 2)" "$mem_d"
