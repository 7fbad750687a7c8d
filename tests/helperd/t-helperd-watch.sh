#!/bin/bash
# WATCH (core/protocol.h): a watcher holds the registrations of new files
# until it says READY. Only root may watch. The daemon tells a held
# registrant so (HELD), and drti then waits past its timeout
# (USDTKIT_HELPER_TIMEOUT_MS) up to its hold (USDTKIT_HELPER_HOLD_MS,
# default 2000) or the daemon's bound, whichever comes first; with a hold of
# 0, its timeout. One whose watcher answers, or dies, or misbehaves goes on
# at once. A process of a file already registered is not held (no new
# events).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
eperm=$(python3 -c 'import errno; print(-errno.EPERM)')
ms_now() { echo $(($(date +%s%N) / 1000000)); }
start_daemon --test-hold-ms 2000

# A new file (a copy: a new inode), started with drti's timeout MS and hold
# (empty: drti's defaults, 100 and 2000); sets START_MS to how long it took
# to be ready (its constructor registered it).
start_new() { # NAME TIMEOUT_MS [HOLD_MS]
	local t0
	cp "$PROG" "$T/$1"
	t0=$(ms_now)
	USDTKIT_HELPER_TIMEOUT_MS=$2 USDTKIT_HELPER_HOLD_MS=${3-} prog_start "$1" "$T/$1"
	START_MS=$(($(ms_now) - t0))
}

# 1. Not root: refused (it would hold every user's programs).
chmod 755 "$T"
setpriv --reuid=65534 --regid=65534 --clear-groups "$HDCLIENT" watch ready </dev/null >"$T/nobody.out"
expect_eq "$(cat "$T/nobody.out")" "ready status=$eperm" "WATCH as nobody"

# 2. A watcher that answers: the registrant is told, and goes on, at once.
prog_start w1 "$HDCLIENT" watch ready
expect_eq "$(head -1 "$T/w1.out")" "ready status=0" "WATCH as root"
start_new a 5000
prog_wait w1 "^notice 1 pid $PID_a\$"
[ "$START_MS" -le "$(bound_ms 2000)" ] || fail "held $START_MS ms by a watcher that answered"
prog_stop w1

# 3. A watcher that never answers: a program that allows no hold
# (USDTKIT_HELPER_HOLD_MS=0) is held until drti's own timeout (not scaled: a
# lower bound), then goes on, its probes registered; a client that waits
# longer is answered at the daemon's bound (--test-hold-ms 2000; beside it,
# so that it costs no time of its own).
prog_start w2 "$HDCLIENT" watch never
cp "$LIB" "$T/libheld.so"
t_held=$(ms_now)
HDCLIENT_WAIT_MS=8000 "$HDCLIENT" dlreg "$T/libheld.so" >"$T/held.out" &
HELD=$!
start_new b 1000 0
[ "$START_MS" -ge 950 ] || fail "not held: ready after $START_MS ms"
[ "$START_MS" -le "$(bound_ms 3000)" ] || fail "held $START_MS ms, beyond drti's 1000 ms"
prog_wait w2 " pid $PID_b\$"
prog_wait w2 " pid $HELD\$"
wait_log "notice [0-9]+: pid $PID_b's new file" "the hold of b"
# A second process of b's file finds its events: not held, no notice.
start_new_same() { local t0; t0=$(ms_now); USDTKIT_HELPER_TIMEOUT_MS=5000 prog_start b2 "$T/b"; START_MS=$(($(ms_now) - t0)); }
start_new_same
[ "$START_MS" -le "$(bound_ms 1000)" ] || fail "a known file's process held $START_MS ms"
prog_stop b2
expect_eq "$(grep -c '^notice' "$T/w2.out")" 2 "notices (b and libheld.so: b2 is none)"

wait "$HELD" || fail "hdclient dlreg failed"
ms=$(($(ms_now) - t_held))
expect_grep '^status=0 nprobes=1$' "$T/held.out" "the held registration's answer"
[ "$ms" -ge 1950 ] || fail "the daemon's bound: answered after $ms ms, not 2000"
[ "$ms" -le "$(bound_ms 4000)" ] || fail "the daemon's bound: answered after $ms ms"
# 3b. Told HELD, drti waits past its timeout: with the default hold (2000)
# until the daemon's bound (2000 ms), with a hold of 900 about 900 ms. (Their
# timeouts, 500 and 300 ms, leave a loaded daemon time to send the HELD;
# drti's default is 100.)
start_new e 500
[ "$START_MS" -ge 1900 ] || fail "the default hold: ready after $START_MS ms, not held until the daemon's 2000"
[ "$START_MS" -le "$(bound_ms 4000)" ] || fail "the default hold: held $START_MS ms"
start_new f 300 900
[ "$START_MS" -ge 850 ] || fail "a hold of 900 ms: ready after $START_MS ms"
[ "$START_MS" -le "$(bound_ms 2000)" ] || fail "a hold of 900 ms: held $START_MS ms"

# 4. Killing the watcher mid-hold lets the registrant go at once (unscaled:
# it must tell the kill from the daemon's 2000 ms bound).
cp "$PROG" "$T/c"
(
	close_prog_fds
	exec env USDTKIT_HELPER_TIMEOUT_MS=5000 "$T/c"
) <&- >"$T/c.out" 2>"$T/c.err" &
C=$!
at_exit "kill -9 $C 2>/dev/null"
prog_wait w2 " pid $C\$"
t0=$(ms_now)
kill "$PID_w2"
wait_until 5 "c to start" grep -q '^ready' "$T/c.out"
ms=$(($(ms_now) - t0))
[ "$ms" -le 1500 ] || fail "c went on $ms ms after its watcher died"
wait_log "watcher pid $PID_w2 gone" "the watcher's end"

# 5. A READY for a notice never sent: the watcher is dropped, not waited on.
prog_start w3 "$HDCLIENT" watch bad
start_new d 5000
prog_wait w3 '^closed$'
[ "$START_MS" -le "$(bound_ms 2000)" ] || fail "held $START_MS ms by a watcher that was dropped"
expect_grep "watcher pid $PID_w3: not a READY for a notice it was sent: dropped" "$DLOG.new" \
	"the misbehaving watcher"
for n in a b d e f; do prog_stop "$n"; done
daemon_healthy
HD_OK=1
