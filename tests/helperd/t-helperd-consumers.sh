#!/bin/bash
# The daemon's events with real consumers at the same time: perf record on
# the tracefs event (decoded arguments, the string included), bpftrace on
# the same USDT probes through the perf uprobe PMU (same ref_ctr), and a
# tracefs instance. Then an event still enabled when the last process exits
# (EBUSY): kept, retried, removed once disabled.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
# The waits below are upper bounds for something that comes, in wall-clock
# seconds scaled by TIME_FACTOR (bpftrace alone takes half a minute to
# attach on the emulated arm64 machine, tests/arm64).
tf=$TIME_FACTOR
need_bpftrace
command -v perf >/dev/null || fail "perf is not installed (scripts/deps.sh installs it)"
build_progs gcc
start_daemon
prog_start a
wait_events 2 "a registered"

# bpftrace on the same probes (it reads the notes itself).
bpftrace -e "usdt:$PROG:${P}app:start { printf(\"B %d %s\n\", arg0, str(arg1)); }" \
	>"$T/bt.out" 2>"$T/bt.err" &
bt_pid=$!
at_exit "kill $bt_pid 2>/dev/null"
poll_until $((10 * tf)) grep -q '^Attaching' "$T/bt.out" || { cat "$T/bt.out" "$T/bt.err" >&2; fail "bpftrace did not attach"; }

# perf record on the tracefs event, system-wide; its workload runs once
# recording is on, until the firings are seen (perf.done), at most 4 s
# (scaled).
perf record -q -e "sdt_${P}app:start" -a -o "$T/perf.data" -- \
	sh -c "echo on >'$T/perf.ready'; i=0
		while [ ! -e '$T/perf.done' ] && [ \$i -lt $((80 * tf)) ]; do sleep 0.05; i=\$((i + 1)); done" \
	>"$T/perf.out" 2>&1 &
perf_pid=$!
at_exit "kill $perf_pid 2>/dev/null"
poll_until $((10 * tf)) test -e "$T/perf.ready" || { cat "$T/perf.out" >&2; fail "perf record did not start"; }

prog_cmd a "fire 5"
prog_wait a 'fired 5'
_bt_has5() { [ "$(grep -c '^B ' "$T/bt.out")" -ge 5 ]; }
poll_until $((5 * tf)) _bt_has5 || true
touch "$T/perf.done"
kill "$bt_pid"
wait "$bt_pid" 2>/dev/null || true
wait "$perf_pid" || { cat "$T/perf.out" >&2; fail "perf record failed"; }
perf script -i "$T/perf.data" >"$T/perf.txt" 2>"$T/perf.err" || { cat "$T/perf.err" >&2; fail "perf script"; }
for i in 1 2 3 4 5; do
	expect_grep "sdt_${P}app:start: \((0x)?[0-9a-f]+\) count=$i label=\"str-$i\"" "$T/perf.txt" "perf, firing $i"
	expect_grep "^B $i str-$i\$" "$T/bt.out" "bpftrace, firing $i"
done
expect_eq "$(grep -c "sdt_${P}app:start:" "$T/perf.txt")" 5 "perf samples"

# An event enabled when the last process exits: EBUSY, kept, retried.
inst="$TRACEFS/instances/$P"
mkdir "$inst"
at_exit "echo 0 >'$inst/events/sdt_${P}app/enable' 2>/dev/null; rmdir '$inst' 2>/dev/null"
echo 1 >"$inst/events/sdt_${P}app/tick/enable"
prog_stop a
wait_log 'EBUSY' "the daemon's EBUSY retry of the enabled event"
our_events | grep -qx "sdt_${P}app/tick" || fail "the enabled event was removed under its consumer"
grep -q 'EBUSY' "$DLOG.new" || fail "no EBUSY retry logged"
echo 0 >"$inst/events/sdt_${P}app/tick/enable"
rmdir "$inst"
_no_events() { [ "$(our_events | wc -l)" -eq 0 ]; }
poll_until $((15 * tf)) _no_events || true
expect_eq "$(our_events | wc -l)" 0 "events after the consumer let go (retry within 5 s)"
daemon_healthy
HD_OK=1
exit 0
