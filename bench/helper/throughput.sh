#!/bin/bash
# Throughput kept with usdtkit-helperd running, paired in one run:
#   bench/helper/throughput.sh [BUILDDIR] [ROUNDS] [N]   (build, 7, 300)
#
# spawn: N runs in a row of a one-probe program with its -G object
#        (posix_spawn + waitpid: a shell loop, a build running a probed tool);
# fork:  a probed server (its own -G object) forking N children that each
#        fire its probe and _exit (PostgreSQL's connection model).
# Each ROUND measures every variant once, in an order that alternates:
#   disabled  USDTKIT_DISABLE=1 (registration off: the reference)
#   daemon    usdtkit-helperd with its defaults (+ HELPERD_OPTS), the file
#             already registered (one warm-up run before the rounds)
#   linger0   a second daemon with --linger 0 and nothing else mapping the
#             file: every spawned run finds no events and registers anew (the
#             worst case; not a target, shown for scale)
# and prints, per workload and variant, the median µs per run over the
# rounds and "kept" = disabled / variant (target >= 95% for daemon), and
# "paired": the median of the per-round ratios, which a load drifting over
# the run moves less (the figure to read on a shared machine).
# Needs root and tracefs (the daemons run on private sockets, stopped with
# SIGTERM at the end: they remove their events). About a minute.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-build}
rounds=${2:-7}
n=${3:-300}
case $builddir in /*) ;; *) builddir="$top/$builddir" ;; esac
dtrace="$builddir/dtrace/dtrace"
helperd="$builddir/kernel-helper/helperd/usdtkit-helperd"
for f in "$dtrace" "$helperd"; do
	[ -x "$f" ] || { echo "build usdtkit first: $f missing (ninja -C $builddir)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] && [ -e /sys/kernel/tracing/uprobe_events ] ||
	{ echo "needs root and tracefs at /sys/kernel/tracing" >&2; exit 1; }

w=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-tput.XXXXXX")
pids=""
cleanup() {
	local p
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w"
prov="tp$$"x
printf 'provider %s { probe tick(int); };\n' "$prov" >p.d
"$dtrace" -h -s p.d -o p.h
printf '#include "p.h"\n#define BENCHPROV_TICK %s_TICK\n' "$(echo "$prov" | tr a-z A-Z)" >bp.h
gcc -O2 -I"$top/include" -I. -c "$top/bench/helper/target.c" -o target.o
"$dtrace" -G -s p.d -o target-prov.o target.o
gcc target.o target-prov.o -o target
gcc -O2 -I"$top/include" -I. -c "$top/bench/helper/spawnfork.c" -o spawnfork.o
"$dtrace" -G -s p.d -o sf-prov.o spawnfork.o
gcc spawnfork.o sf-prov.o -o spawnfork

start() { # SOCKET OPTS...
	local s=$1 i
	shift
	# shellcheck disable=SC2086
	"$helperd" -f --socket "$s" --state "$s.state" "$@" 2>"$s.log" &
	pids="$pids $!"
	for i in $(seq 250); do [ -S "$s" ] && [ -e "$s.known" ] && return 0; sleep 0.02; done
	cat "$s.log" >&2
	exit 1
}
# shellcheck disable=SC2086
start "$w/d.sock" ${HELPERD_OPTS:-}
start "$w/z.sock" --linger 0
envs_disabled="USDTKIT_DISABLE=1"
envs_daemon="USDTKIT_HELPER_SOCKET=$w/d.sock"
envs_linger0="USDTKIT_HELPER_SOCKET=$w/z.sock"
# warm-up: both files registered with the default daemon (they then linger)
env $envs_daemon ./target >/dev/null
env $envs_daemon ./spawnfork fork 1 >/dev/null

measure() { # VARIANT ROUND
	local e
	e=$(eval echo "\$envs_$1")
	echo "spawn $1 $(env $e ./spawnfork spawn "$n" "$w/target" </dev/null | tail -1) $2" >>res
	echo "fork $1 $(env $e ./spawnfork fork "$n" </dev/null | tail -1) $2" >>res
}
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		order="disabled daemon linger0"
	else
		order="linger0 daemon disabled"
	fi
	for v in $order; do measure "$v" "$r" >/dev/null; done
done
med() { awk -v w="$1" -v v="$2" '$1 == w && $2 == v { print $3 }' res | sort -n |
	awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# paired: the median over the rounds of disabled / variant within one round
# (the variants of a round run back to back: a load that drifts over the
# run moves both), the figure to read on a shared machine
paired() { awk -v w="$1" -v v="$2" '$1 == w && $2 == "disabled" { d[$4] = $3 }
	$1 == w && $2 == v { x[$4] = $3 } END { for (r in x) if (d[r] && x[r]) print d[r] / x[r] }' res |
	sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", 100 * a[int((NR + 1) / 2)] }'; }
echo "Throughput with usdtkit-helperd, $rounds rounds of $n runs per variant (median µs per run)"
for wl in spawn fork; do
	off=$(med "$wl" disabled)
	for v in disabled daemon linger0; do
		m=$(med "$wl" "$v")
		p=$(paired "$wl" "$v")
		awk -v wl="$wl" -v v="$v" -v m="$m" -v off="$off" -v p="$p" 'BEGIN {
			t = (v == "daemon") ? "  (target >= 95%)" : ""
			printf "%-5s %-8s %8.1f µs  kept %5.1f%%  paired %5.1f%%%s\n", wl, v, m, 100 * off / m, p, t }'
	done
done
