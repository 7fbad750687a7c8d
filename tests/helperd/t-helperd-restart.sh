#!/bin/bash
# usdtkit-helperd killed with SIGKILL and restarted rebuilds its registry:
# processes already running (registered before the crash, or started while
# no daemon ran) are found by the /proc scan, their events adopted (not
# duplicated, and removed when they exit: they are ours), events of
# processes that died meanwhile are removed, and a foreign event in our
# group is never touched. A stopped daemon only delays a program by its drti
# timeout. Socket activation as systemd does it.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
start_daemon

# A foreign event (made by hand, as perf probe would) in a group of ours, on
# liblib.so: the daemon must never remove it.
lib_off=$("$USDTKIT_BUILDDIR/kernel-helper/tools/usdtkit-probes" list "$LIB" |
	awk '/^probe/ {for (i = 1; i <= NF; i++) if ($i ~ /^pc_off=/) print substr($i, 8)}')
echo "p:sdt_${P}lib/foreign $LIB:$lib_off" >>"$TRACEFS/uprobe_events" || fail "creating the foreign event"

prog_start a
wait_events 3 "a registered (plus the foreign event)"
cp "$PROG" "$T/prog2"
prog_start c "$T/prog2"
wait_events 3 "c registered (the same events names, another file)"
expect_eq "$(grep -c "^p:sdt_${P}app/start " <(uprobe_events))" 2 "start sites of a and c"
pid_a=$(awk '/^ready/ {print $2}' "$T/a.out")
pid_c=$(awk '/^ready/ {print $2}' "$T/c.out")

stop_daemon KILL
[ -s "$SOCK.state" ] || fail "no state file beside the socket"
expect_eq "$(grep -c "^p:sdt_${P}app/" <(uprobe_events))" 4 "events after SIGKILL (left for the restart)"

# While no daemon runs: b starts (its drti finds no daemon), c exits.
USDTKIT_HELPER_TIMEOUT_MS=100 prog_start b
pid_b=$(awk '/^ready/ {print $2}' "$T/b.out")
prog_stop c

start_daemon
grep -q 'start-up: 2 process registrations found running, 2 stale events removed' "$DLOG.new" ||
	{ cat "$DLOG.new" >&2; fail "the start-up summary"; }
"$HDCLIENT" list >"$T/list"
expect_grep "^entry $pid_a 2 .* $PROG\$" "$T/list" "a re-registered"
expect_grep "^entry $pid_b 2 .* $PROG\$" "$T/list" "b registered by the scan"
expect_no_grep "^entry $pid_c " "$T/list" "c (exited)"
expect_eq "$(grep -c "^p:sdt_${P}app/start " <(uprobe_events))" 1 "start sites after the restart (c's removed, a's kept once)"
our_events | grep -qx "sdt_${P}lib/foreign" || fail "the foreign event was removed"

# The adopted events are ours: they go when their last process does.
prog_stop a
# (the daemon has handled a's exit once a's registry entry is gone)
wait_until 10 "a's registry entry to go after its exit" eval '! "$HDCLIENT" list | grep -q "^entry $pid_a "'
expect_eq "$(grep -c "^p:sdt_${P}app/" <(uprobe_events))" 2 "events while b still runs"
prog_stop b
wait_events 1 "after a and b exited (only the foreign event left)"

# A stopped daemon (SIGSTOP) delays a program's start by its drti timeout at
# most; once continued, it still registers the process from the queued request.
kill -STOP "$DAEMON_PID"
t0=$(date +%s%N)
USDTKIT_HELPER_TIMEOUT_MS=200 prog_start s
ms=$((($(date +%s%N) - t0) / 1000000))
echo "start with the daemon stopped: $ms ms (timeout 200 ms)"
[ "$ms" -ge 190 ] || fail "the program did not wait for the stopped daemon ($ms ms)"
[ "$ms" -le "$(bound_ms 2000)" ] || fail "the program waited $ms ms for a stopped daemon (timeout 200 ms)"
kill -CONT "$DAEMON_PID"
wait_events 3 "the late registration after SIGCONT (plus the foreign event)"
prog_stop s
wait_events 1 "after the late-registered program exited"

# A clean stop leaves an empty state; a SIGKILL with nothing registered too.
stop_daemon
expect_eq "$(grep -c '^site ' "$SOCK.state")" 0 "sites in the state file after a clean stop"
remove_uprobe_event "sdt_${P}lib/foreign"
wait_events 0 "after removing the foreign event"
# Socket activation (what usdtkit-helperd.socket does): the socket is made by
# the activator, the daemon starts on the first connection, takes fd 3.
command -v systemd-socket-activate >/dev/null || fail "systemd-socket-activate missing (systemd)"
rm -f "$SOCK" "$SOCK.state"
(
	close_prog_fds
	exec systemd-socket-activate --seqpacket -l "$SOCK" "$HELPERD" -f --debug --socket "$SOCK" --linger 0
) 2>"$T/act.log" &
act_pid=$!
at_exit "kill $act_pid 2>/dev/null"
for i in $(seq 250); do [ -S "$SOCK" ] && break; sleep 0.02; done
prog_start v
wait_events 2 "a program whose connection started the daemon"
grep -q 'listening on the socket systemd passed' "$T/act.log" || { cat "$T/act.log" >&2; fail "the daemon did not take the passed socket"; }
prog_stop v
wait_events 0 "after exit, socket-activated daemon"
kill "$act_pid"
wait "$act_pid" 2>/dev/null || true
HD_OK=1
exit 0
