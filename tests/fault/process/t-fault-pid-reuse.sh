#!/bin/bash
# A process's pid reused by another process before the daemon acts on the
# first one's request or exit. Made deterministic in a private pid namespace
# (the test, its daemon and its programs all run in it, so they agree on pid
# numbers) by writing /proc/sys/kernel/ns_last_pid just before the fork that
# becomes B, while the daemon is SIGSTOPped. Programs run under setarch -R
# (no address randomisation), so that B maps its own probed module exactly
# where A's was: a daemon that trusted the pid would find a probed module at
# A's address in B.
#
#   1. A sends REGISTER and exits; B, another probed program, gets A's pid
#      and registers itself: A's request is refused, B's module is registered
#      for B, A's never.
#   2. The same with B unprobed: nothing is registered.
#   3. A is registered and exits; B, another probed program, gets the pid:
#      A's events go, B's module is B's alone.
#   4. The same with B the same program as A (the same module): the module
#      stays registered for B, once, and goes when B exits.
#   5. The same with B unprobed: A's events go, the registry is empty.
# The daemon serves others throughout; A's and B's outputs are those of
# disabled runs. The daemon may learn of A's end from its pidfd or, when its
# sweep runs first after the SIGCONT, from the maps it then reads (B's):
# either way A's registration must go and B's be B's own.
if [ -z "${FAULT_PIDNS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (a pid namespace, ns_last_pid, tracefs)"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: no unshare (util-linux)"; exit 77; }
	command -v setarch >/dev/null || { echo "SKIP: no setarch (util-linux)"; exit 77; }
	# --kill-child=TERM: a timeout stopping unshare stops the namespace's bash
	# through its TERM trap, which stops the daemon and removes our events.
	exec unshare --pid --fork --mount-proc --kill-child=TERM env FAULT_PIDNS=1 bash "$0" "$@"
fi
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/fault/process/lib.sh"
[ "$$" -eq 1 ] || fail "not pid 1 of a new pid namespace (pid $$)"
[ -w /proc/sys/kernel/ns_last_pid ] || skip "/proc/sys/kernel/ns_last_pid is not writable"
need_tracefs
build_progs gcc
build_other gcc
# --no-board: every start asks (REGISTER is what this test puts under fault)
start_daemon --no-board
served_ok "at start"

# A's programs wait only briefly for the stopped daemon.
TMO=USDTKIT_HELPER_TIMEOUT_MS=300
app_events() { our_events | grep -c "^sdt_${P}app/" || true; }
oth_events() { our_events | grep -c "^sdt_${P}oth/" || true; }

# The registry's entries as "PID PATH" lines.
entries() { list_entries | awk '{print $2, $7}'; }

# The address A's REGISTER named (the daemon's log) lies in B's mapping of FILE.
check_same_place() { # pid file what
	local addr
	addr=$(grep -oE "REGISTER pid $1 uid [0-9]+ addr 0x[0-9a-f]+: No such process" "$DLOG.new" |
		head -1 | sed -E 's/.*addr (0x[0-9a-f]+).*/\1/')
	[ -n "$addr" ] || fail "$3: no refused REGISTER of pid $1 in the log"
	python3 - "$addr" "/proc/$1/maps" "$2" <<'PY' || fail "$3: A's address is not in B's module (layout differs: the case is not exercised)"
import os, sys
addr, want = int(sys.argv[1], 16), os.path.realpath(sys.argv[3])
for line in open(sys.argv[2]):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    if lo <= addr < hi:
        sys.exit(0 if len(f) >= 6 and os.path.realpath(f[5]) == want else 1)
sys.exit(1)
PY
}

# --- 1. A sends REGISTER and exits; B, another probed program, takes its pid.
kill -STOP "$DAEMON_PID"
pstart A1 setarch "$TMO" -- -R "$PROG"
a=$PID_A1
pcmd A1 "fire 1"
prog_wait A1 '^fired 1'
pstop A1
running "$a" && fail "A is still running"
PSTART_PID=$a pstart B1 setarch "$TMO" -- -R "$PROG2"
kill -CONT "$DAEMON_PID"
served_ok "1: pid $a reused"
wait_log "REGISTER pid $a ${REG_AT}/.*prog2\$" "1: B registers itself"
wait_log "REGISTER pid $a ${REG_AT}No such process" "1: A's request refused"
check_same_place "$a" "$PROG2" "1"
expect_eq "$(count_log "REGISTER pid $a ${REG_AT}/")" 1 "1: registrations for pid $a"
wait_events 2 "1: B's module (start, tick)"
expect_eq "$(oth_events)" 2 "1: B's events"
expect_eq "$(entries)" "$a $PROG2" "1: the registry"
pcmd B1 "fire 2"
prog_wait B1 '^fired 2'
pstop B1
wait_events 0 "1: B exited"
[ -z "$(list_entries)" ] || fail "1: registry entries left"
same_as_disabled A1
same_as_disabled B1
echo "ok: 1. REGISTER of an exited pid reused by another probed program: refused; B registered for itself"

# --- 2. The same, B unprobed.
kill -STOP "$DAEMON_PID"
pstart A2 setarch "$TMO" -- -R "$PROG"
a=$PID_A2
pstop A2
echo $((a - 1)) >/proc/sys/kernel/ns_last_pid
setarch -R sleep 60 &
[ "$!" -eq "$a" ] || fail "2: B started as pid $!, not $a"
b=$!
at_exit "kill $b 2>/dev/null"
kill -CONT "$DAEMON_PID"
served_ok "2: pid $a reused by an unprobed program"
wait_log "REGISTER pid $a $DONE" "2: A's request handled"
expect_eq "$(count_log "REGISTER pid $a ${REG_AT}/")" 0 "2: registrations for pid $a"
# (A's request is handled, logged above: what it could have created exists by now)
wait_events 0 "2: nothing registered"
[ -z "$(list_entries)" ] || fail "2: registry entries"
kill "$b"
wait "$b" 2>/dev/null || true
same_as_disabled A2
echo "ok: 2. REGISTER of an exited pid reused by an unprobed program: nothing registered"

# --- 3, 4. A registered, exits; B (another program, then the same) takes the pid.
for c in 3:"$PROG2" 4:"$PROG"; do
	n=${c%%:*} bfile=${c#*:}
	pstart "A$n" setarch "$TMO" -- -R "$PROG"
	a=$(eval echo "\$PID_A$n")
	wait_events 2 "$n: A registered"
	expect_eq "$(entries)" "$a $PROG" "$n: the registry holds A"
	kill -STOP "$DAEMON_PID"
	pcmd "A$n" "fire 1"
	prog_wait "A$n" '^fired 1'
	pstop "A$n"
	PSTART_PID=$a pstart "B$n" setarch "$TMO" -- -R "$bfile"
	kill -CONT "$DAEMON_PID"
	served_ok "$n: pid $a reused"
	wait_log "pid $a (exited|no longer maps)" "$n: A's exit seen"
	# A's REGISTER and B's (the same line when B is the same program)
	want=$((n == 4 ? 2 : 1))
	wait_log_count "REGISTER pid $a ${REG_AT}/.*/$(basename "$bfile")\$" $want \
		"$n: B registers itself"
	# (the daemon has seen both, logged above; wait_events below polls for the rest)
	if [ "$n" = 3 ]; then
		wait_events 2 "3: A's events gone, B's there"
		expect_eq "$(oth_events)" 2 "3: B's events"
	else
		wait_events 2 "4: the module, still mapped by B"
		expect_eq "$(app_events)" 2 "4: the module's events"
	fi
	expect_eq "$(entries)" "$a $bfile" "$n: the registry holds B alone"
	expect_eq "$(list_entries | wc -l)" 1 "$n: one registry entry"
	pcmd "B$n" "fire 2"
	prog_wait "B$n" '^fired 2'
	pstop "B$n"
	wait_events 0 "$n: B exited"
	[ -z "$(list_entries)" ] || fail "$n: registry entries left"
	same_as_disabled "A$n"
	same_as_disabled "B$n"
	echo "ok: $n. a registered pid exited and reused by $(basename "$bfile"): A's registration gone, B's its own"
done

# --- 5. A registered, exits; an unprobed program takes the pid.
pstart A5 setarch "$TMO" -- -R "$PROG"
a=$PID_A5
wait_events 2 "5: A registered"
kill -STOP "$DAEMON_PID"
pstop A5
echo $((a - 1)) >/proc/sys/kernel/ns_last_pid
setarch -R sleep 60 &
[ "$!" -eq "$a" ] || fail "5: B started as pid $!, not $a"
b=$!
at_exit "kill $b 2>/dev/null"
kill -CONT "$DAEMON_PID"
served_ok "5: pid $a reused by an unprobed program"
wait_log "pid $a (exited|no longer maps)" "5: A's exit seen"
wait_events 0 "5: A's events removed"
[ -z "$(list_entries)" ] || fail "5: registry entries left"
kill "$b"
wait "$b" 2>/dev/null || true
same_as_disabled A5
echo "ok: 5. a registered pid exited and reused by an unprobed program: A's events removed"
HD_OK=1
