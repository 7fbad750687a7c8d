#!/bin/bash
# Runtime providers under load, with a private usdtkit-helperd: 65 providers
# and 2,280 probes (one provider of 1,000) registered from one process and
# listed by `dtrace -l -p`; four threads firing while another loads and
# unloads 300 times (no crash, no failure but "not loaded"); a fork child
# firing the parent's probes into the same system-wide event.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime/lib.sh"
need_tracefs
start_daemon

# Many: every provider registered (events are per probe name and provider).
prog_start many "$RTPROG" many
pid=$(awk '$1 == "pid" { print $2 }' "$T/many.out")
"$DTRACE" -l -p "$pid" >"$T/l.out" 2>"$T/l.err" || { cat "$T/l.err" >&2; fail "dtrace -l -p"; }
expect_eq "$(grep -c " memfd:usdtkit:" "$T/l.out")" 2280 "probes listed by dtrace -l -p"
expect_grep "^ *[0-9]+ +big$pid +memfd:usdtkit:big +probe-999 +probe-999\$" "$T/l.out" "the 1,000th probe"
prog_stop many

# Threads fire while the main thread loads and unloads (rtprog checks each fire's result).
"$RTPROG" threads >"$T/threads.out" 2>"$T/threads.err" ||
	{ cat "$T/threads.out" "$T/threads.err" >&2; fail "rtprog threads"; }
expect_grep '^threads ok: 300 loads$' "$T/threads.out" "threads"

# Fork: the child fires the parent's probe; one system-wide event sees both.
prog_start fk "$RTPROG" fork
wait_events 1 "the fork provider registered"
inst="$TRACEFS/instances/$RP"
mkdir "$inst"
at_exit "echo 0 >'$inst/events/sdt_$RP/enable' 2>/dev/null; rmdir '$inst' 2>/dev/null"
echo 1 >"$inst/events/sdt_$RP/hit/enable"
prog_cmd fk go
prog_wait fk '^child [0-9]+ done$'
cpid=$(awk '$1 == "child" { print $2 }' "$T/fk.out")
sleep 0.3
echo 0 >"$inst/events/sdt_$RP/hit/enable"
expect_eq "$(grep -cE "hit: \((0x)?[0-9a-f]+\) arg1=1[0-9]{3} arg2=\"parent\"" "$inst/trace")" 50 "parent firings"
expect_eq "$(grep -cE "\-$cpid +\[.*hit: \((0x)?[0-9a-f]+\) arg1=2[0-9]{3} arg2=\"child\"" "$inst/trace")" 50 "child firings"
rmdir "$inst"
prog_stop fk
for i in $(seq 150); do [ "$(our_events | wc -l)" -eq 0 ] && break; sleep 0.1; done
expect_eq "$(our_events | wc -l)" 0 "events left"
grep -h 'FAIL' "$T/many.err" "$T/fk.err" && fail "rtprog's own checks failed"
daemon_healthy
HD_OK=1
exit 0
