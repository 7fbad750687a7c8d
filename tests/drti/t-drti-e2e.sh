#!/bin/bash
# drti with the real usdtkit-helperd (its own instance on a private socket,
# in the foreground): a program's probes appear in tracefs when it starts
# and are gone after it exits; a dlopen'ed library's appear at dlopen and go
# at dlclose, and dlopen/dlclose cycles leave no events; a module with two
# -G objects gets both providers' events; a fork child, which sends
# nothing, keeps its events when its parent exits first (the daemon finds
# it in /proc and adopts it) and loses them when it exits; a SIGSTOPped daemon delays a
# program's start by the timeout, no more, and changes nothing else.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
need_tracefs
build_progs gcc

DLOG="$T/daemon.log"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
start_daemon() {
	daemon_start "$DLOG" "$HELPERD" -f --debug --socket "$SOCK" --state "$T/state" --linger 0
}
stop_daemon() { daemon_stop TERM; }
# this run's events, "group/event" sorted
events() { uprobe_events_in_group "sdt_${P}$1/"; } # group-suffix (app|lib)
cleanup_events() {
	local e
	for e in $(events app) $(events lib); do remove_uprobe_event "$e"; done
}
at_exit cleanup_events
at_exit stop_daemon
at_exit '[ -n "${E2E_OK:-}" ] || tail -40 "$DLOG" >&2'

# The events each provider must get: its probes in the .d file.
want_app=$(printf 'sdt_%sapp/start\nsdt_%sapp/tick\n' "$P" "$P")
want_lib=$(printf 'sdt_%slib/call\n' "$P")
wait_events() { # app|lib "expected lines" what
	local i
	for i in $(seq 250); do
		[ "$(events "$1")" = "$2" ] && return 0
		sleep 0.02
	done
	echo "events now: $(events "$1" | tr '\n' ' ')" >&2
	fail "$3"
}
# A path in the kernel's definition of each event is the program's (or the library's).
event_paths() { # app|lib
	grep -E "^[pr]:sdt_${P}$1/" <(uprobe_events) | awk '{ sub(/:0x.*/, "", $2); print $2 }' | sort -u
}

start_daemon
export USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=3000
unset USDTKIT_DISABLE DTRACE_DOF_INIT_DISABLE USDTKIT_DEBUG DTRACE_DOF_INIT_DEBUG

# 1. Start, exit.
[ -z "$(events app)" ] || fail "events before the program started"
"$PROG" probe waitfor "$T/go1" >"$T/out1" 2>"$T/err1" &
prog=$!
wait_events app "$want_app" "the program's events did not appear"
expect_eq "$(event_paths app)" "$(event_path "$PROG")" "the events' file"
touch "$T/go1"
wait "$prog" || fail "the program failed"
[ ! -s "$T/err1" ] || fail "the program printed on stderr"
wait_events app "" "the program's events are still there after it exited"
echo "ok: the program's events appear at start, go at exit"

# 2. dlopen/dlclose: the library's events while it is loaded, none after;
# 5 cycles leave nothing.
"$PROG" dlopen "$LIB" waitfor "$T/go2a" dlclose waitfor "$T/go2b" \
	dlopen "$LIB" dlclose dlopen "$LIB" dlclose dlopen "$LIB" dlclose dlopen "$LIB" dlclose \
	waitfor "$T/go2c" >"$T/out2" 2>"$T/err2" &
prog=$!
wait_events lib "$want_lib" "the library's events did not appear at dlopen"
expect_eq "$(event_paths lib)" "$(event_path "$LIB")" "the library events' file"
touch "$T/go2a"
wait_events lib "" "the library's events are still there after dlclose"
[ "$(events app)" = "$want_app" ] || fail "the program's events went with the library's"
touch "$T/go2b"
sleep 0.3
wait_events lib "" "dlopen/dlclose cycles left library events"
touch "$T/go2c"
wait "$prog" || fail "the dlopen program failed"
expect_eq "$(grep -c 'dlopen: ok' "$T/out2")" 5 "dlopen calls"
wait_events app "" "events left after the dlopen program exited"
echo "ok: dlopen/dlclose: events while loaded, none after 5 cycles"

# 2b. A module with two -G objects (two drti copies, one file): both
# providers' events, gone at exit.
(cd "$B" && gcc prog.o app-prov.o lib.o lib-prov.o -ldl -o prog2) || fail "linking two -G objects"
"$B/prog2" waitfor "$T/go2d" >/dev/null 2>"$T/err2d" &
prog=$!
wait_events app "$want_app" "two -G objects: the program provider's events did not appear"
wait_events lib "$want_lib" "two -G objects: the second provider's events did not appear"
expect_eq "$(event_paths lib)" "$(event_path "$B/prog2")" "two -G objects: the second provider's file"
touch "$T/go2d"
wait "$prog" || fail "the two-provider program failed"
wait_events app "" "two -G objects: events left after exit"
wait_events lib "" "two -G objects: second provider's events left after exit"
echo "ok: one module with two -G objects: both providers, gone at exit"

# 3. A fork child (no exec) sends nothing; when its parent exits first, the
# daemon adopts it (its --debug log says so) and the events stay for the
# child, and go when it exits.
rm -f "$T/pids"
"$PROG" pid "$T/pids" forkbg pid "$T/pids" waitfor "$T/go3" \; >"$T/out3" 2>"$T/err3" &
prog=$!
wait_events app "$want_app" "events did not appear for the forking program"
wait "$prog" || fail "the forking parent failed"
wait_until 5 "the fork child's pid in $T/pids" eval '[ "$(wc -l <"$T/pids")" -ge 2 ]'
child=$(sed -n 2p "$T/pids" | sed 's/^pid //')
[ -n "$child" ] && kill -0 "$child" 2>/dev/null || fail "the fork child is not running"
# the daemon has seen the parent exit: it adopted the child
wait_until 10 "the daemon's adoption of the fork child $child" grep -qE "pid $child maps .*: adopted" "$DLOG"
[ "$(events app)" = "$want_app" ] || fail "the events went with the parent while its fork child runs"
# the child asked nothing; the daemon adopted it when its parent exited
grep -qE "REGISTER pid $child( |$)" "$DLOG" && fail "the fork child $child sent a REGISTER"
grep -qE "pid $child maps .*: adopted" "$DLOG" || fail "the daemon's log shows no adoption of the child $child"
touch "$T/go3"
wait_until 5 "the fork child $child to exit" eval '! kill -0 "$child" 2>/dev/null'
wait_events app "" "the events stayed after the fork child exited"
echo "ok: a fork child sends nothing, is adopted: events outlive its parent, go with it"

# 4. A SIGSTOPped daemon: a start is delayed by the timeout, no more; the
# program's behaviour is unchanged; the daemon resumes healthy.
t0=$(date +%s%N)
USDTKIT_DISABLE=1 "$PROG" errno fds probe >"$T/base4" 2>&1
base=$((($(date +%s%N) - t0) / 1000000))
kill -STOP "$DAEMON_PID"
t0=$(date +%s%N)
USDTKIT_HELPER_TIMEOUT_MS=400 "$PROG" errno fds probe >"$T/out4" 2>&1 || fail "the program failed (stopped daemon)"
ms=$((($(date +%s%N) - t0) / 1000000))
echo "stopped daemon, timeout 400 ms: started and exited in $ms ms (without drti: $base ms)"
# Not scaled by bound_ms: 900 ms tells one 400 ms timeout from more. Only the
# program's own run time, measured just before (a few ms here; a second and
# more under an emulated machine), is allowed on top, once for its jitter.
[ "$ms" -ge 380 ] && [ "$ms" -le $((900 + 2 * base)) ] ||
	fail "a stopped daemon delayed the program $ms ms (timeout 400; the run without drti took $base ms)"
cmp -s "$T/base4" "$T/out4" || { diff "$T/base4" "$T/out4" >&2; fail "output changed (stopped daemon)"; }
kill -CONT "$DAEMON_PID"
wait_until 5 "the daemon to run again after SIGCONT" eval '[ "$(sed "s/.*) //" "/proc/$DAEMON_PID/stat" | cut -c1)" != T ]'
kill -0 "$DAEMON_PID" || fail "the daemon died after SIGSTOP/SIGCONT"
# it still registers programs
"$PROG" waitfor "$T/go4" >/dev/null 2>&1 &
prog=$!
wait_events app "$want_app" "the daemon does not register after SIGCONT"
touch "$T/go4"
wait "$prog"
wait_events app "" "events left after SIGCONT run"
echo "ok: a stopped daemon delays the start by the timeout only"
E2E_OK=1
