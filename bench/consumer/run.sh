#!/bin/bash
# dtrace -n (the D consumer) against bpftrace running the same program
# written by hand: the time from the command to the probes attached (the
# first line BEGIN prints), and events per second at saturation (the
# quickstart example with no pause between requests, counted in an
# aggregation). Prints a table; see README.md. Needs root and bpftrace.
# Usage: bench/consumer/run.sh [BUILDDIR] [RUNS]
set -eu
# shellcheck source=bench/consumer/lib.sh
. "$(dirname "$0")/lib.sh"
bc_init "${1:-}" bpftrace
RUNS=${2:-5}

EX=$SRC/examples/quickstart
(cd "$W" && "$DTRACE" -h -s "$EX/quickstart.d" -o quickstart_probes.h &&
	cc -O2 -I"$SRC/include" -I. -c "$EX/quickstart.c" -o quickstart.o &&
	"$DTRACE" -G -s "$EX/quickstart.d" -o qp.o quickstart.o &&
	cc -o quickstart quickstart.o qp.o)
Q=$W/quickstart
# fire N FILE: request-start N times without a pause (saturation), then
# the loop's own time in nanoseconds into FILE, on the clock and in the
# process's CPU time (the kernel's work for each firing, the BPF program
# included, runs in the process's context): the rate while the probe is
# enabled, whatever the tracer's start-up and exit cost around it; the CPU
# time also leaves out the waits for a core on a loaded machine.
cat >"$W/fire.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "quickstart_probes.h"
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	struct timespec a, b, ca, cb;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	for (i = 0; i < n; i++)
		QUICKSTART_REQUEST_START((int)i, "/bench");
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (argc > 2 && (f = fopen(argv[2], "w"))) {
		fprintf(f, "%lld %lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec,
			(cb.tv_sec - ca.tv_sec) * 1000000000LL + cb.tv_nsec - ca.tv_nsec);
		fclose(f);
	}
	return 0;
}
C
(cd "$W" && cc -O2 -I"$SRC/include" -I. -c fire.c -o fire.o &&
	"$DTRACE" -G -s "$EX/quickstart.d" -o fp.o fire.o && cc -o fire fire.o fp.o)
F=$W/fire

"$Q" 100000000 50 >/dev/null &
QS=$!
bc_bg "$QS"
sleep 0.5
D_PROG="quickstart\$target:::request-start { printf(\"%d %s\\n\", arg0, copyinstr(arg1)); } BEGIN { printf(\"go\\n\"); }"
B_PROG="usdt:$Q:quickstart:request__start /pid == $QS/ { printf(\"%d %s\\n\", arg0, str(arg1)); } BEGIN { printf(\"go\\n\"); }"
# The commands take turns, run after run, so that a change in the shared
# machine's load falls on all of them alike.
# The second dtrace row uses bpftrace's own string size: DTrace's 256 bytes
# are read on bpftrace 0.17 as chunks of 63 (dtrace/consumer/translate.c,
# long_string), whose code doubles bpftrace's compile time; with
# -x strsize=64 dtrace generates the hand-written program's one str().
for _ in $(seq "$RUNS"); do
	until_go "$DTRACE" -q -p "$QS" -n "$D_PROG" >>"$W/d_starts"
	until_go "$DTRACE" -x strsize=64 -q -p "$QS" -n "$D_PROG" >>"$W/d64_starts"
	until_go bpftrace -e "$B_PROG" >>"$W/b_starts"
done
median <"$W/d_starts" >"$W/d_start"
median <"$W/d64_starts" >"$W/d64_start"
median <"$W/b_starts" >"$W/b_start"
kill "$QS"
bc_unbg "$QS"

# Saturation: N firings without pause, each counted in an aggregation.
# Two rates per run: over the traced program's whole run (the tracer's
# start-up and exit included) and over its firing loop alone (the rate at
# saturation: the probe enabled, nothing else). The hand-written program
# tests the pid as `quickstart$target` does (`cpid`, bpftrace's -c child).
N=500000
rate() { # CMD...: "whole-run-rate loop-rate loop-cpu-rate" in events per second
	local t0 t1 ns cpu
	rm -f "$W/loop"
	t0=$(now_us)
	"$@" >/dev/null 2>&1
	t1=$(now_us)
	read -r ns cpu <"$W/loop" || true
	if [ "${ns:-0}" -le 0 ] || [ "${cpu:-0}" -le 0 ]; then
		bc_fail "the traced program wrote no loop time: $*"
	fi
	echo "$((N * 1000000 / (t1 - t0))) $((N * 1000000000 / ns)) $((N * 1000000000 / cpu))"
}
for _ in $(seq "$RUNS"); do
	rate "$DTRACE" -q -c "$F $N $W/loop" -n "quickstart\$target:::request-start { @n = count(); }" >>"$W/d_rates"
	rate bpftrace -c "$F $N $W/loop" -e "usdt:$F:quickstart:request__start /pid == cpid/ { @n = count(); }" >>"$W/b_rates"
	rate "$F" "$N" "$W/loop" >>"$W/u_rates"
done
col() { cut -d' ' -f"$1" "$2" | median; }

ds=$(cat "$W/d_start") bs=$(cat "$W/b_start") d64=$(cat "$W/d64_start")
dr=$(col 1 "$W/d_rates") br=$(col 1 "$W/b_rates") ur=$(col 1 "$W/u_rates")
dl=$(col 2 "$W/d_rates") bl=$(col 2 "$W/b_rates") ul=$(col 2 "$W/u_rates")
dc=$(col 3 "$W/d_rates") bc=$(col 3 "$W/b_rates") uc=$(col 3 "$W/u_rates")
printf '%-52s %14s %14s %8s\n' "median of $RUNS runs" "dtrace -n" "bpftrace" "ratio"
printf '%-52s %11d ms %11d ms %8.2f\n' "command to probes attached" $((ds / 1000)) $((bs / 1000)) \
	"$(echo "$ds / $bs" | bc -l)"
printf '%-52s %11d ms %11d ms %8.2f\n' "  the same, dtrace -x strsize=64" $((d64 / 1000)) $((bs / 1000)) \
	"$(echo "$d64 / $bs" | bc -l)"
printf '%-52s %14d %14d %8.2f\n' "events/s, $N firings, whole run (untraced: $ur/s)" "$dr" "$br" \
	"$(echo "$dr / $br" | bc -l)"
printf '%-52s %14d %14d %8.2f\n' "events/s at saturation, the loop (untraced: $ul/s)" "$dl" "$bl" \
	"$(echo "$dl / $bl" | bc -l)"
printf '%-52s %14d %14d %8.2f\n' "  per second of its CPU time (untraced: $uc/s)" "$dc" "$bc" \
	"$(echo "$dc / $bc" | bc -l)"
