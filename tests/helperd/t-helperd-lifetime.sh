#!/bin/bash
# Event lifetime under load: 1,000 short-lived processes of a -G program,
# first each alone (register, then remove at exit every time), then while
# one long-lived process keeps the file registered (the cheap path), leave
# zero stale events and an empty registry; and each process's exit is seen.
# Parts 1 and 2 run with --no-board, so that every process asks (the
# REGISTER path under load); part 3 runs them with the board, where a
# process of a known file asks nothing and the daemon still ends clean.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
start_daemon --no-board

# 1. 500 in a row, 2 at a time, nobody else mapping the file.
seq 500 | xargs -P 2 -n 50 sh -c 'for i in "$@"; do "$0"; done' "$SHORT" ||
	fail "the short-lived program failed"
wait_events 0 "after 500 lone short-lived processes"

# 2. 500 more while a long-lived process holds the same file registered.
prog_start h
wait_events 2 "the holder registered"
seq 500 | xargs -P 2 -n 50 sh -c 'for i in "$@"; do "$0" </dev/null; done' "$PROG" ||
	fail "the short-lived programs failed"
# Each exited one is gone from the registry: only the holder remains.
for i in $(seq 250); do
	"$HDCLIENT" list >"$T/list"
	[ "$(grep -c '^entry' "$T/list")" -eq 1 ] && break
	sleep 0.02
done
expect_eq "$(grep -c '^entry' "$T/list")" 1 "registered processes besides the holder"
expect_eq "$(our_events | wc -l)" 2 "events while the holder lives"
prog_stop h
wait_events 0 "after the holder exited"
"$HDCLIENT" list >"$T/list"
expect_grep '^status=0 count=0 entries=0$' "$T/list" "the registry at the end"
daemon_healthy
n_reg=$(grep -c 'debug: REGISTER pid' "$DLOG.new")
n_short=$(grep -c "info: registered $SHORT " "$DLOG.new")
n_unreg=$(grep -c "info: unregistered $SHORT " "$DLOG.new")
[ "$n_reg" -ge 1000 ] || fail "only $n_reg registrations logged for 1,001 processes"
echo "registrations: $n_reg; the lone program's file registered and removed $n_short times"
# Two run at a time: when one exits, the retirement scan (--linger 0) often
# finds the other still mapping the file and adopts it, so the file is
# registered again only when both happened to be gone.
[ "$n_short" -ge 1 ] || fail "the lone short-lived program's file was never registered"
expect_eq "$n_unreg" "$n_short" "removals of the lone program's events"

# 3. The same 500 with the board: while the holder keeps the file
# registered, none of them asks (at most a few that started before the
# holder's file was published), and nothing is left once the holder exits.
stop_daemon
start_daemon
prog_start h
wait_events 2 "the holder registered (board)"
n0=$(grep -c 'debug: REGISTER pid' "$DLOG.new")
seq 500 | xargs -P 2 -n 50 sh -c 'for i in "$@"; do "$0" </dev/null; done' "$PROG" ||
	fail "the short-lived programs failed (board)"
n1=$(grep -c 'debug: REGISTER pid' "$DLOG.new")
[ $((n1 - n0)) -le 5 ] || fail "$((n1 - n0)) of 500 processes of a known file asked despite the board"
echo "board: $((n1 - n0)) of 500 processes of a known file asked"
expect_eq "$(our_events | wc -l)" 2 "events while the holder lives (board)"
prog_stop h
wait_events 0 "after the holder exited (board)"
daemon_healthy

# 4. exec into a program without the module: the pid lives on (its pidfd never
# fires), the sweep (--sweep 1) sees the module gone from its maps.
stop_daemon
start_daemon --sweep 1
prog_start e
wait_events 2 "before exec"
prog_cmd e "exec /bin/cat"
for i in $(seq 100); do [ "$(our_events | wc -l)" -eq 0 ] && break; sleep 0.1; done
expect_eq "$(our_events | wc -l)" 0 "events 10 s after the process exec'ed /bin/cat"
kill -0 "$PID_e" || fail "the exec'ed process is not running (the test proves nothing)"
grep -q "no longer maps .*(exec)" "$DLOG.new" || fail "the sweep did not log the exec"
prog_stop e
HD_OK=1
exit 0
