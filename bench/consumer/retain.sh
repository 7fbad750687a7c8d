#!/bin/bash
# Retained enablings: the delay from a new file's registration to its
# probes firing in `dtrace -Z -n 'prov*:::tick'` started before it, the
# firings lost, and what the daemon's hold (kernel-helper/README.md, WATCH)
# costs the program's start. A private helper daemon; RUNS programs per
# mode, each a copy of one binary under a new name (a new inode: a new
# registration, new uprobe links in the running dtrace). Each fires
# tick(seq, t_registered, t_now) every millisecond for 4 s, t_registered
# being CLOCK_MONOTONIC at main() (drti's constructor has registered by
# then), and prints its pid and the wall-clock time at main(), so that
# exec -> main() (the hold) is known.
# Four modes: drti's defaults (told HELD, it waits up to 2000 ms for
# dtrace to attach), USDTKIT_HELPER_HOLD_MS=0 (held at most its 100 ms
# timeout), USDTKIT_HELPER_HOLD_MS=5000 (the daemon's bound), and restarts:
# a copy run once (briefly) before dtrace starts, its file's events
# lingering in the daemon (--linger 600), run again under dtrace with
# drti's defaults (core/protocol.h, WATCH, "Restarted programs").
# Prints the tables; see README.md. Needs root, bpftrace, a build.
# Usage: bench/consumer/retain.sh [BUILDDIR] [RUNS]
set -eu
# shellcheck source=bench/consumer/lib.sh
. "$(dirname "$0")/lib.sh"
bc_init "${1:-}" helperd bpftrace
RUNS=${2:-10}
P=$(bc_provider bret)

cat >"$W/p.d" <<EOF
provider $P { probe tick(long seq, long t_registered, long t_now); };
EOF
cat >"$W/tick.c" <<EOF
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "p.h"
static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}
int main(int argc, char **argv)
{
	long t0 = now_ns(), seq;
	struct timespec ms = {0, 1000000}, wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	printf("%d %ld\\n", (int)getpid(), wall.tv_sec * 1000000L + wall.tv_nsec / 1000);
	fflush(stdout);
	(void)argv;
	if (argc > 1) /* a first run, before dtrace: registered, then gone */
		return 0;
	for (seq = 0; seq < 4000; seq++) {
		${P^^}_TICK(seq, t0, now_ns());
		nanosleep(&ms, NULL);
	}
	return 0;
}
EOF
bc_build p.d tick.c tick
bc_daemon 600
# the restart mode's files: run once, they linger
for i in $(seq "$RUNS"); do
	cp "$W/tick" "$W/tickr$i"
	"$W/tickr$i" first >/dev/null
done

"$DTRACE" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%d %d %d %d\\n\", pid, arg0, arg1, arg2); }" >"$W/out" 2>"$W/err" &
DT=$!
bc_bg "$DT"
for _ in $(seq 300); do grep -q ready "$W/out" && break; sleep 0.1; done
# MODE NAME [VAR=VALUE]: one new program; "MODE PID EXEC_TO_MAIN_US" in starts.
run_one() {
	local t0 pid tmain
	[ "$1" = restart ] || cp "$W/tick" "$W/$2"
	t0=$(now_us)
	env ${3:+"$3"} "$W/$2" >"$W/$2.main"
	read -r pid tmain <"$W/$2.main"
	echo "$1 $pid $((tmain - t0))" >>"$W/starts"
}
for i in $(seq "$RUNS"); do
	run_one default "tickd$i"
	run_one nohold "tickn$i" USDTKIT_HELPER_HOLD_MS=0
	run_one held "tickh$i" USDTKIT_HELPER_HOLD_MS=5000
	run_one restart "tickr$i"
done
sleep 1
kill -INT "$DT"
wait "$DT" || true
bc_unbg "$DT"
[ -s "$W/err" ] && cat "$W/err" >&2

# Per process: its mode, the delay of its first firing seen (from main()),
# the firings lost before it (its seq) and after it, exec -> main().
awk 'FNR == NR { mode[$2] = $1; start[$2] = $3 / 1000; next }
NF == 4 && $1 ~ /^[0-9]+$/ {
	if (!($1 in first)) { first[$1] = $2; delay[$1] = ($4 - $3) / 1e6 }
	last[$1] = $2; seen[$1]++
}
END {
	for (p in mode)
		if (p in first)
			print mode[p], delay[p], first[p], last[p] - first[p] + 1 - seen[p], start[p]
		else
			print mode[p], "-", "-", "-", start[p]
}' "$W/starts" "$W/out" >"$W/per"
# For scale: bpftrace alone, from its start to its BEGIN, on the same probe.
for i in 1 2 3; do
	t0=$(now_us)
	bpftrace -e "usdt:$W/tick:$P:tick { } BEGIN { printf(\"go\n\"); exit(); }" >/dev/null 2>&1
	echo $((($(now_us) - t0) / 1000))
done | sort -n | sed -n 2p >"$W/bt"
# pct MODE COLUMN Q: that quantile of the column over the mode's traced programs
pct() {
	awk -v m="$1" -v c="$2" '$1 == m && $c != "-" { print $c }' "$W/per" | sort -n |
		awk -v q="$3" '{ a[NR] = $1 } END { if (!NR) { print "-"; exit } i = int(q * NR + 0.999); if (i < 1) i = 1; printf "%.0f", a[i] }'
}
sum() { awk -v m="$1" -v c="$2" '$1 == m && $c != "-" { s += $c } END { print s + 0 }' "$W/per"; }
for m in default nohold held restart; do
	case $m in
	default) title="$RUNS new programs, drti's defaults (hold 2000 ms)" ;;
	nohold) title="$RUNS new programs, USDTKIT_HELPER_HOLD_MS=0" ;;
	restart) title="$RUNS restarted programs (lingering files), defaults" ;;
	*) title="$RUNS new programs, USDTKIT_HELPER_HOLD_MS=5000" ;;
	esac
	printf '%-52s %s\n' "$title" "registration (main) to first firing seen"
	printf '%-52s %s ms\n' "  median" "$(pct $m 2 0.5)"
	printf '%-52s %s ms\n' "  p99 (the maximum under 100 runs)" "$(pct $m 2 0.99)"
	printf '%-52s %s of %s\n' "programs traced" "$(awk -v m=$m '$1 == m && $2 != "-"' "$W/per" | wc -l)" "$RUNS"
	printf '%-52s %s\n' "firings lost before the first one seen" "$(sum $m 3)"
	printf '%-52s %s\n' "firings lost after the first one seen" "$(sum $m 4)"
	printf '%-52s %s / %s ms\n' "exec -> main() (the hold), median / max" "$(pct $m 5 0.5)" "$(pct $m 5 1)"
	echo
done
printf '%-52s %s ms\n' "bpftrace alone, start to BEGIN (median of 3)" "$(cat "$W/bt")"
