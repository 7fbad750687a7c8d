#!/bin/bash
# The Node binding with usdtkit-helperd (its own instance, tests/lib/
# daemon.sh): enable() registers the provider, so `dtrace -l -p PID` lists
# its probes and tracefs has its events sdt_<provider>/<probe>; perf stat
# and perf record by those names, system-wide, count the firings and decode
# the int and string arguments (the callback runs for them: perf attached
# sets the semaphore too); disable() removes the events and enable() brings
# them back; the process's exit removes them.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_node_addon
need_tracefs
command -v perf >/dev/null || fail "perf is not installed (scripts/deps.sh installs it)"

PROV=$(node_unique nodedl)
G="sdt_$PROV"
cleanup_events() {
	local ev
	for ev in $(uprobe_events_in_group "$G"); do remove_uprobe_event "$ev"; done
}
at_exit cleanup_events
at_exit "daemon_stop TERM 5"
daemon_start "$T/daemon.log" "$HELPERD" -f --socket "$T/helper.sock" --linger 0
export USDTKIT_HELPER_SOCKET="$T/helper.sock" USDTKIT_HELPER_TIMEOUT_MS=5000

events() { uprobe_events_in_group "$G" | sort | tr '\n' ' '; }
has_events() { [ "$(events)" = "$G/client__error $G/req " ]; }
no_events() { [ -z "$(events)" ]; }

node_start
js_expect "D.p = d.createDTraceProvider('$PROV', 'dlmod');
	D.e = D.p.addProbe('client-error', 'int', 'char *');
	D.r = D.p.addProbe('req', 'json');
	D.p.enable(); 1" 'ok 1'
wait_until 10 "the events of $PROV" has_events

"$DTRACE" -l -p "$NODE_PID" >"$T/list" || fail "dtrace -l -p exited $?"
awk -v p="$PROV$NODE_PID" '$2 == p { print $2, $3, $4, $5 }' "$T/list" >"$T/got"
# (the module column: the memfd's name)
cat >"$T/want" <<OUT
$PROV$NODE_PID memfd:usdtkit:dlmod client-error client-error
$PROV$NODE_PID memfd:usdtkit:dlmod req req
OUT
diff -u "$T/want" "$T/got" >&2 || { cat "$T/list" >&2; fail "dtrace -l -p: other probes"; }

# Firing every 10 ms from the driver's event loop; perf attached system-wide.
js_expect 'D.n = 0; D.timer = setInterval(() => {
		D.e.fire(() => [++D.n, "e" + D.n]);
		D.r.fire(() => [{n: D.n, s: "x y"}]);
	}, 10); 1' 'ok 1'
js_expect 'D.n' 'ok 0'
perf stat -x, -e "$G:client__error" -a -- sleep 1 2>"$T/stat" || { cat "$T/stat" >&2; fail "perf stat"; }
count=$(awk -F, -v e="$G:client__error" '$3 == e { print $1 }' "$T/stat")
[ -n "$count" ] && [ "$count" -ge 20 ] || { cat "$T/stat" >&2; fail "perf stat counted '$count' firings in 1 s"; }
perf record -q -e "$G:client__error" -e "$G:req" -a -o "$T/perf.data" -- sleep 1 \
	>"$T/perf.out" 2>&1 || { cat "$T/perf.out" >&2; fail "perf record"; }
js_expect 'clearInterval(D.timer); D.n > 0' 'ok true'
perf script -i "$T/perf.data" >"$T/perf.txt" 2>"$T/perf.err" || { cat "$T/perf.err" >&2; fail "perf script"; }
n=$(grep -oE "$G:client__error: \((0x)?[0-9a-f]+\) arg1=[0-9]+ " "$T/perf.txt" | head -1 |
	sed 's/.*arg1=\([0-9]*\) /\1/')
[ -n "$n" ] || { head "$T/perf.txt" >&2; fail "perf record: no client-error sample"; }
expect_grep "$G:client__error: \((0x)?[0-9a-f]+\) arg1=$n arg2=\"e$n\"\$" "$T/perf.txt" "perf: client-error's values"
expect_grep "$G:req: \((0x)?[0-9a-f]+\) arg1=\"\{\"n\":$n,\"s\":\"x y\"\}\"\$" "$T/perf.txt" "perf: req's JSON"
# Detached: no more calls.
wait_until 10 "the callback to stop being called" \
	eval '[ "$(js "D.e.fire(counted(\"off\", [1, \"\"]))")" = "ok undefined" ]'

# disable() unregisters; enable() registers again.
js_expect 'D.p.disable(); 1' 'ok 1'
wait_until 10 "disable() to remove the events" no_events
js_expect 'D.p.enable(); 1' 'ok 1'
wait_until 10 "enable() to create the events again" has_events
node_stop
wait_until 10 "the events to go with the process" no_events
echo PASS
