#!/bin/bash
# examples/runtime-python as its README says: worker.py serving requests,
# traced by pid with worker.bt. bpftrace shows request-start and
# request-done with the same id and path, and the time between them
# (worker.py works 50 to 150 ms a request).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-python/lib.sh"
need_bpftrace
EX="$USDTKIT_SRCDIR/examples/runtime-python"

py_start "$T/worker" "$EX/worker.py"
py_wait "$T/worker" "worker $PYPID: serving"
bpftrace -p "$PYPID" "$EX/worker.bt" >"$T/bt" 2>&1 &
BT_PID=$!
BT_OUT="$T/bt"
wait_until 30 "worker.bt to attach" grep -q "^tracing the worker's requests; Ctrl-C to stop\$" "$T/bt"
# Two requests seen whole (a start, then its done): the first done may be
# of a request already under way when bpftrace attached, and on a loaded or
# sanitized run a request takes longer, so count pairs, not done lines.
pairs_seen() {
	awk '$1 == "start" { s[$2] = 1; next } $1 == "done" && s[$2] { n++ } END { exit n < 2 }' "$T/bt"
}
wait_until 60 "two request-start/request-done pairs" pairs_seen
bt_stop '^done ' 2
stop_bg "$PYPID" TERM
PYPID=""

grep -E '^(start|done) ' "$T/bt" >"$T/events" || true
bad=$(grep -vcE '^(start [0-9]+ (/|/index\.html|/api/users)|done  [0-9]+ (/|/index\.html|/api/users) [0-9]+ ms)$' \
	"$T/events" || true)
[ "$bad" -eq 0 ] || { cat "$T/bt" >&2; fail "$bad event lines not in worker.bt's format"; }
# Every request-done after the first request-start pairs with its start.
awk '
	$1 == "start" { started[$2] = $3; seen = 1; next }
	$1 == "done" && seen {
		if (started[$2] != $3) { print "done " $2 " " $3 " without its start"; bad = 1 }
		if ($4 < 40 || $4 > 5000) { print "done " $2 ": " $4 " ms"; bad = 1 }
		pairs++
	}
	END { if (pairs < 2) { print "only " pairs + 0 " start/done pairs"; bad = 1 } exit bad }
' "$T/events" >"$T/check" || { cat "$T/bt" "$T/check" >&2; fail "request-start/request-done pairs"; }
