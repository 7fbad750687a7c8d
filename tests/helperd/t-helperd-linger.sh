#!/bin/bash
# Registration off the hot path (kernel-helper/README.md): the board and the
# event lifetime, at both ends of --linger.
#  1. --linger 6: the events outlive the last process; a new process of the
#     file finds it on the board (drti asks nothing: USDTKIT_DEBUG says so,
#     the daemon logs no REGISTER from it) and is listed by LIST all the
#     same; once nobody has mapped the file for 6 s its events go, it leaves
#     the board, and the next process asks again.
#  2. A fork child that outlives its parent (the child never sent anything):
#     listed, keeps its events, which go only after it exits (--linger 0:
#     at once).
#  3. A file deleted while its process runs does not linger (--linger 60).
#  4. --linger-max 1: a second lingering file retires the first.
#  5. The board is root's, 0644, and gone once the daemon stops.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
BOARD="$SOCK.known"
nreg() { grep -cE "debug: REGISTER pid $1 uid [0-9]+ addr" "$DLOG.new" || true; }

# --- 1. --linger 6 (long enough for the steps below on a loaded machine) ---
HD_LINGER=6 start_daemon
[ -f "$BOARD" ] || fail "no board at $BOARD"
expect_eq "$(stat -c '%u %a' "$BOARD")" "0 644" "the board's owner and mode"
prog_start a
wait_events 2 "first process registered"
expect_eq "$(nreg "$PID_a")" 1 "REGISTERs of the first process"
prog_stop a
wait_log "pid $PID_a exited" "the daemon seeing the first process exit"
sleep 0.5 # (the interval under test: events still there 0.5 s after the exit)
expect_eq "$(our_events | wc -l)" 2 "events 0.5 s after the last process exited (--linger 6)"
prog_start b
prog_cmd b "fire 1"
prog_wait b '^fired 1'
expect_eq "$(nreg "$PID_b")" 0 "REGISTERs of a process whose file is on the board"
"$HDCLIENT" list "$PID_b" >"$T/list"
expect_grep "^entry $PID_b 2 [0-9]+ [0-9]+ 0x[0-9a-f]+ $PROG\$" "$T/list" "LIST of the board-hit process"
USDTKIT_DEBUG=1 "$PROG" </dev/null 2>"$T/dbg" >/dev/null
expect_grep 'known to the helper' "$T/dbg" "drti's debug line for a board hit"
prog_stop b
# b was never a known user: the retirement scan decides, 6 s after a's exit.
wait_events 0 "after lingering 6 s"
grep -q "unregistered $PROG " "$DLOG.new" || fail "the removal is not logged"
USDTKIT_DEBUG=1 "$PROG" </dev/null 2>"$T/dbg2" >/dev/null
expect_grep 'register module, .*: done, 2 probes' "$T/dbg2" "the next process asks again"
wait_events 2 "registered again after retirement"
stop_daemon
wait_events 0 "after the daemon stopped"
[ ! -e "$BOARD" ] || fail "the board is left after the daemon stopped"
echo "ok: --linger 6: lingered, board hit listed, retired, asked again"

# --- 2. fork child outliving its parent, --linger 0 ---
start_daemon
prog_start p
wait_events 2 "parent registered"
prog_cmd p fork
prog_wait p '^child '
child=$(sed -n 's/^child //p' "$T/p.out")
expect_eq "$(nreg "$child")" 0 "messages from the fork child"
prog_stop p
wait_until 10 "the adoption of the fork child $child" grep -q "pid $child maps .*: adopted" "$DLOG.new"
expect_eq "$(our_events | wc -l)" 2 "events while the fork child outlives its parent"
grep -q "pid $child maps .*: adopted" "$DLOG.new" || fail "the child was not adopted by the retirement scan"
"$HDCLIENT" list >"$T/list"
expect_grep "^entry $child 2 " "$T/list" "LIST of the orphaned fork child"
expect_eq "$(grep -c '^entry' "$T/list")" 1 "processes listed"
kill "$child"
wait_events 0 "after the fork child exited (--linger 0)"
stop_daemon
echo "ok: a fork child that never asked keeps its file's events until it exits"

# --- 3. deleted file: no lingering ---
HD_LINGER=60 start_daemon
cp "$PROG" "$B/doomed"
prog_start d "$B/doomed"
wait_events 2 "the copy registered"
rm -f "$B/doomed"
prog_stop d
wait_events 0 "after the deleted file's last process (--linger 60)"
echo "ok: a deleted file does not linger"
stop_daemon

# --- 4. --linger-max 1 ---
HD_LINGER=60 start_daemon --linger-max 1
cp "$PROG" "$B/one"
cp "$PROG" "$B/two"
"$B/one" </dev/null >/dev/null
wait_events 2 "one lingering file"
grep -q "registered $B/one " "$DLOG.new" || fail "one was not registered"
"$B/two" </dev/null >/dev/null
for i in $(seq 250); do grep -q "unregistered $B/one " "$DLOG.new" && break; sleep 0.02; done
grep -q "unregistered $B/one " "$DLOG.new" || fail "--linger-max 1: the older lingering file was not retired"
grep -q "unregistered $B/two " "$DLOG.new" && fail "--linger-max 1: the newer lingering file was retired"
expect_eq "$(grep -c " $(event_path "$B/two"):" <(uprobe_events))" 2 "the newer file's sites"
daemon_healthy
stop_daemon
wait_events 0 "after the daemon stopped"
echo "ok: --linger-max bounds the lingering files"
HD_OK=1
