#!/bin/bash
# A runtime provider registered like a compiled one, with a private
# usdtkit-helperd: at load its tracefs events sdt_<provider>/<probe> exist,
# typed, strings decoded (a tracefs instance reads exact values of all
# twelve arguments); `dtrace -l -p` and `dtrace -l` list its probes with a
# module that says what it is; perf records it by the event name,
# system-wide; an unload while a consumer has an event enabled is the
# daemon's EBUSY case (kept, then removed once let go); the events go at
# unload and at exit.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime/lib.sh"
need_tracefs
command -v perf >/dev/null || fail "perf is not installed (scripts/deps.sh installs it)"
start_daemon

# Registered at load: both events, typed as declared, before "ready".
# Its lifetime is a bound (stdin ends it): scaled, as under the emulated arm64
# machine the steps below took longer than 120 s and the events were gone.
prog_start rt "$RTPROG" fire $((120 * TIME_FACTOR))
pid=$(awk '$1 == "pid" { print $2 }' "$T/rt.out")
expect_eq "$(our_events | tr '\n' ' ')" "sdt_$RP/all__types sdt_$RP/hit " "events at load"
grep "^p:sdt_$RP/hit " <(uprobe_events) >"$T/hit.def"
# The argument array's register as tracefs spells it: rdi, or arm64's x0.
a0=%di
[ "$(uname -m)" = aarch64 ] && a0=%x0
expect_grep " arg1=\+0\($a0\):s32 arg2=\+0\(\+8\($a0\)\):ustring\$" "$T/hit.def" "hit's argument types"
grep "^p:sdt_$RP/all__types " <(uprobe_events) >"$T/all.def"
expect_grep " arg1=\+0\($a0\):s8 arg2=\+8\($a0\):u8 arg3=\+16\($a0\):s16 arg4=\+24\($a0\):u16 arg5=\+32\($a0\):s32 arg6=\+40\($a0\):u32 arg7=\+48\($a0\):s64 arg8=\+56\($a0\):u64 arg9=\+64\($a0\):u64 arg10=\+0\(\+72\($a0\)\):ustring arg11=\+80\($a0\):s32 arg12=\+88\($a0\):u64\$" \
	"$T/all.def" "all-types' argument types"

# dtrace -l -p PID: the probes, DTrace's names, the memfd object as module.
"$DTRACE" -l -p "$pid" >"$T/l-p.out" 2>&1 || { cat "$T/l-p.out" >&2; fail "dtrace -l -p"; }
expect_grep "^ *[0-9]+ +$RP$pid +memfd:usdtkit:$RP +all-types +all-types\$" "$T/l-p.out" "dtrace -l -p: all-types"
expect_grep "^ *[0-9]+ +$RP$pid +memfd:usdtkit:$RP +hit +hit\$" "$T/l-p.out" "dtrace -l -p: hit"
"$DTRACE" -l -v -p "$pid" >"$T/l-v.out" 2>&1 || { cat "$T/l-v.out" >&2; fail "dtrace -l -v -p"; }
expect_grep 'args\[9\]: char \*' "$T/l-v.out" "dtrace -l -v: the string argument's type"
expect_grep 'args\[0\]: int8_t' "$T/l-v.out" "dtrace -l -v: int8_t"
# dtrace -l: the daemon's registered probes, system-wide.
"$DTRACE" -l -n "$RP*:::" >"$T/l.out" 2>&1 || { cat "$T/l.out" >&2; fail "dtrace -l -n"; }
expect_grep "$RP.* hit\$" "$T/l.out" "dtrace -l: hit"

# perf by the registered event name, system-wide.
perf record -q -e "sdt_$RP:hit" -a -o "$T/perf.data" -- sleep 1 >"$T/perf.out" 2>&1 ||
	{ cat "$T/perf.out" >&2; fail "perf record -e sdt_$RP:hit -a"; }
perf script -i "$T/perf.data" >"$T/perf.txt" 2>"$T/perf.err" || { cat "$T/perf.err" >&2; fail "perf script"; }
expect_grep "sdt_$RP:hit: \((0x)?[0-9a-f]+\) arg1=[0-9]+ arg2=\"hello from rtc\"" "$T/perf.txt" "perf: hit"
[ "$(grep -c "sdt_$RP:hit:" "$T/perf.txt")" -ge 20 ] || fail "perf: fewer than 20 hits in 1 s"

# Exact values of all twelve arguments, through a tracefs instance.
inst="$TRACEFS/instances/$RP"
mkdir "$inst"
at_exit "echo 0 >'$inst/events/sdt_$RP/enable' 2>/dev/null; rmdir '$inst' 2>/dev/null"
echo 1 >"$inst/events/sdt_$RP/all__types/enable"
echo 1 >"$inst/events/sdt_$RP/hit/enable"
prog_wait rt '^enabled 1$'
wait_until 10 "all-types events in the instance" eval "grep -q 'all__types:' '$inst/trace'"
sleep 0.3
grep 'all__types:' "$inst/trace" | head -3 >"$T/all.trace"
n=$(sed -n 's/.* arg11=\([0-9]*\) .*/\1/p' "$T/all.trace" | head -1)
[ -n "$n" ] || { cat "$T/all.trace" >&2; fail "no arg11 in the trace"; }
expect_grep "all__types: \((0x)?[0-9a-f]+\) $(all_types_tracefs "$n" | sed 's/[()]/\\&/g')\$" "$T/all.trace" \
	"tracefs: all twelve values"
expect_grep "hit: \((0x)?[0-9a-f]+\) arg1=[0-9]+ arg2=\"hello from rtc\"\$" "$inst/trace" "tracefs: hit"

# Unload while the instance has the events enabled: EBUSY, kept, retried.
prog_cmd rt unload
prog_wait rt '^unloaded$'
wait_log "UNREGISTER pid $pid" "the unload's UNREGISTER"
wait_log 'EBUSY' "the daemon's EBUSY retry of the enabled events"
our_events | grep -qx "sdt_$RP/hit" || fail "an enabled event was removed under its consumer"
echo 0 >"$inst/events/sdt_$RP/enable"
rmdir "$inst"
for i in $(seq 150); do [ "$(our_events | wc -l)" -eq 0 ] && break; sleep 0.1; done
expect_eq "$(our_events | wc -l)" 0 "events after the consumer let go"
prog_stop rt

# An unload with no consumer: the events go (the daemon removes them just
# after it answers the UNREGISTER), while the process lives on.
prog_start rt2 "$RTPROG" fire $((120 * TIME_FACTOR))
wait_events 2 "registered again"
prog_cmd rt2 unload
prog_wait rt2 '^unloaded$'
wait_events 0 "events after an unload"
running "$(eval echo \$PID_rt2)" || fail "rtprog ended with its unload"
prog_stop rt2

# Events go at exit too (the daemon sees the process end).
prog_start rt3 "$RTPROG" fire $((120 * TIME_FACTOR))
wait_events 2 "registered a third time"
prog_stop rt3
for i in $(seq 150); do [ "$(our_events | wc -l)" -eq 0 ] && break; sleep 0.1; done
expect_eq "$(our_events | wc -l)" 0 "events after the process exited"
grep -h 'FAIL' "$T/rt.err" "$T/rt2.err" "$T/rt3.err" && fail "rtprog's own checks failed"
daemon_healthy
HD_OK=1
exit 0
