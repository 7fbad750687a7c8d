#!/bin/bash
# Retained enablings: the delay from a new file's registration to its
# probes firing in `dtrace -Z -n 'prov*:::tick'` started before it, and the
# firings lost after the first one seen (there must be none). A private
# helper daemon; RUNS programs, each a copy of one binary under a new name
# (a new inode: a new registration, a new bpftrace instance). Each fires
# tick(seq, t_registered, t_now) every millisecond for 4 s, t_registered
# being CLOCK_MONOTONIC at main() (drti's constructor has registered by
# then). Prints the table; see README.md. Needs root, bpftrace, a build.
# Usage: bench/consumer/retain.sh [BUILDDIR] [RUNS]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd)
RUNS=${2:-10}
DTRACE=$B/dtrace/dtrace
HELPERD=$B/kernel-helper/helperd/usdtkit-helperd
[ -x "$DTRACE" ] && [ -x "$HELPERD" ] || { echo "no $DTRACE or $HELPERD: build first" >&2; exit 1; }
W=$(mktemp -d)
DPID="" DT=""
trap '[ -n "$DT" ] && kill "$DT" 2>/dev/null; [ -n "$DPID" ] && kill "$DPID" 2>/dev/null; sleep 1; rm -rf "$W"' EXIT
P=bret$(tr -dc a-z </dev/urandom | head -c 6)

cat >"$W/p.d" <<EOF
provider $P { probe tick(long seq, long t_registered, long t_now); };
EOF
cat >"$W/tick.c" <<EOF
#include <time.h>
#include "p.h"
static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}
int main(void)
{
	long t0 = now_ns(), seq;
	struct timespec ms = {0, 1000000};

	for (seq = 0; seq < 4000; seq++) {
		${P^^}_TICK(seq, t0, now_ns());
		nanosleep(&ms, NULL);
	}
	return 0;
}
EOF
(cd "$W" && "$DTRACE" -h -s p.d -o p.h && cc -O2 -I"$SRC/include" -I. -c tick.c -o tick.o &&
	"$DTRACE" -G -s p.d -o pp.o tick.o && cc -o tick tick.o pp.o)

export USDTKIT_HELPER_SOCKET="$W/helper.sock"
"$HELPERD" -f --socket "$USDTKIT_HELPER_SOCKET" --linger 0 2>"$W/daemon.log" &
DPID=$!
for i in $(seq 100); do grep -q ': ready' "$W/daemon.log" && break; sleep 0.1; done

"$DTRACE" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%d %d %d %d\\n\", pid, arg0, arg1, arg2); }" >"$W/out" 2>"$W/err" &
DT=$!
for i in $(seq 300); do grep -q ready "$W/out" && break; sleep 0.1; done
for i in $(seq "$RUNS"); do
	cp "$W/tick" "$W/tick$i"
	"$W/tick$i"
done
sleep 1
kill -INT "$DT"
wait "$DT" || true
DT=""
[ -s "$W/err" ] && cat "$W/err" >&2

# Per process: the delay of its first firing seen, the firings lost after it.
awk 'NF == 4 && $1 ~ /^[0-9]+$/ {
	if (!($1 in first)) { first[$1] = $2; delay[$1] = ($4 - $3) / 1e6; n++ }
	last[$1] = $2; seen[$1]++
}
END {
	for (p in first) print delay[p], last[p] - first[p] + 1 - seen[p]
}' "$W/out" | sort -n >"$W/per"
traced=$(wc -l <"$W/per")
lost=$(awk '{ s += $2 } END { print s + 0 }' "$W/per")
# For scale: bpftrace alone, from its start to its BEGIN, on the same probe.
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
for i in 1 2 3; do
	t0=$(now_us)
	bpftrace -e "usdt:$W/tick:$P:tick { } BEGIN { printf(\"go\n\"); exit(); }" >/dev/null 2>&1
	echo $((($(now_us) - t0) / 1000))
done | sort -n | sed -n 2p >"$W/bt"
pct() { awk -v q="$1" '{ a[NR] = $1 } END { if (!NR) { print "-"; exit } i = int(q * NR + 0.999); if (i < 1) i = 1; printf "%.0f", a[i] }' "$W/per"; }
printf '%-52s %s\n' "$RUNS new programs, one firing per ms" "registration to first firing seen"
printf '%-52s %s ms\n' "  median" "$(pct 0.5)"
printf '%-52s %s ms\n' "  p99 (the maximum under 100 runs)" "$(pct 0.99)"
printf '%-52s %s of %s\n' "programs traced" "$traced" "$RUNS"
printf '%-52s %s\n' "firings lost after the first one seen" "$lost"
printf '%-52s %s ms\n' "bpftrace alone, start to BEGIN (median of 3)" "$(cat "$W/bt")"
