#!/bin/bash
# dtrace -n (the D consumer) against bpftrace running the same program
# written by hand: the time from the command to the probes attached (the
# first line BEGIN prints), and events per second at saturation (the
# quickstart example with no pause between requests, counted in an
# aggregation). Prints a table; see README.md. Needs root and bpftrace.
# Usage: bench/consumer/run.sh [BUILDDIR] [RUNS]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd)
RUNS=${2:-5}
DTRACE=$B/dtrace/dtrace
[ -x "$DTRACE" ] || { echo "no $DTRACE: build first" >&2; exit 1; }
W=$(mktemp -d)
trap '[ -n "$QS" ] && kill "$QS" 2>/dev/null; rm -rf "$W"' EXIT
QS=""
export USDTKIT_HELPER_SOCKET="$W/no-daemon.sock"

EX=$SRC/examples/quickstart
(cd "$W" && "$DTRACE" -h -s "$EX/quickstart.d" -o quickstart_probes.h &&
	cc -O2 -I"$SRC/include" -I. -c "$EX/quickstart.c" -o quickstart.o &&
	"$DTRACE" -G -s "$EX/quickstart.d" -o qp.o quickstart.o &&
	cc -o quickstart quickstart.o qp.o)
Q=$W/quickstart
# fire N: request-start N times without a pause (saturation).
cat >"$W/fire.c" <<'C'
#include <stdlib.h>
#include "quickstart_probes.h"
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;

	for (i = 0; i < n; i++)
		QUICKSTART_REQUEST_START((int)i, "/bench");
	return 0;
}
C
(cd "$W" && cc -O2 -I"$SRC/include" -I. -c fire.c -o fire.o &&
	"$DTRACE" -G -s "$EX/quickstart.d" -o fp.o fire.o && cc -o fire fire.o fp.o)
F=$W/fire

now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# until_go CMD...: microseconds from starting CMD to its first line "go".
until_go() {
	local t0 line pid
	rm -f "$W/fifo"
	mkfifo "$W/fifo"
	t0=$(now_us)
	"$@" >"$W/fifo" 2>/dev/null &
	pid=$!
	read -r line <"$W/fifo"
	echo $(($(now_us) - t0))
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

"$Q" 100000000 50 >/dev/null &
QS=$!
sleep 0.5
D_PROG="quickstart\$target:::request-start { printf(\"%d %s\\n\", arg0, copyinstr(arg1)); } BEGIN { printf(\"go\\n\"); }"
B_PROG="usdt:$Q:quickstart:request__start /pid == $QS/ { printf(\"%d %s\\n\", arg0, str(arg1)); } BEGIN { printf(\"go\\n\"); }"
for i in $(seq "$RUNS"); do until_go "$DTRACE" -q -p "$QS" -n "$D_PROG"; done | median >"$W/d_start"
for i in $(seq "$RUNS"); do until_go bpftrace -e "$B_PROG"; done | median >"$W/b_start"
kill "$QS"
QS=""

# Saturation: N firings without pause, each counted in an aggregation.
N=500000
rate() { # CMD...: events per second over the traced program's whole run
	local t0 t1
	t0=$(now_us)
	"$@" >/dev/null 2>&1
	t1=$(now_us)
	echo $((N * 1000000 / (t1 - t0)))
}
for i in $(seq "$RUNS"); do
	rate "$DTRACE" -q -c "$F $N" -n 'quickstart$target:::request-start { @n = count(); }'
done | median >"$W/d_rate"
for i in $(seq "$RUNS"); do
	rate bpftrace -c "$F $N" -e "usdt:$F:quickstart:request__start { @n = count(); }"
done | median >"$W/b_rate"
for i in $(seq "$RUNS"); do rate "$F" "$N"; done | median >"$W/u_rate"

ds=$(cat "$W/d_start") bs=$(cat "$W/b_start") dr=$(cat "$W/d_rate") br=$(cat "$W/b_rate") ur=$(cat "$W/u_rate")
printf '%-44s %14s %14s %8s\n' "median of $RUNS runs" "dtrace -n" "bpftrace" "ratio"
printf '%-44s %11d ms %11d ms %8.2f\n' "command to probes attached" $((ds / 1000)) $((bs / 1000)) \
	"$(echo "$ds / $bs" | bc -l)"
printf '%-44s %14d %14d %8.2f\n' "events/s, $N firings (untraced: $ur/s)" "$dr" "$br" \
	"$(echo "$dr / $br" | bc -l)"
