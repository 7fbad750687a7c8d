#!/bin/bash
# A registered process that execs: its pid and pidfd live on, no destructor
# runs, no UNREGISTER is sent. The daemon (--sweep 1) must, within the
# documented bound (one sweep period; asserted with a wide margin, measured
# and printed), drop the old module when no other process maps it, register
# the new program's, duplicate nothing, keep serving others, and the program
# must behave as with registration disabled. Three execs:
#   a. into an unprobed program (cat): the sweep is the only way to learn it;
#   b. into another probed program: its own REGISTER (a known pid) drops the
#      old module;
#   c. into itself: t-fault-exec-self.sh (kept out of meson.build while the
#      daemon loses the module at the next sweep; see its head comment).
# Each also beside a second process that keeps the old module mapped, whose
# events must then stay.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/fault/process/lib.sh"
need_tracefs
build_progs gcc
build_other gcc
SWEEP=1
BOUND_MS=$((SWEEP * 1000 + $(bound_ms 9000))) # one period, and a loaded machine's slack
start_daemon --sweep "$SWEEP"
served_ok "at start"

oth_events() { our_events | grep -c "^sdt_${P}oth/" || true; }
# Waits (bound BOUND_MS) until COMMAND prints VALUE; prints the ms it took.
wait_value() { # what value command...
	local what=$1 want=$2 t0 got
	shift 2
	t0=$(now_ms)
	while :; do
		got=$("$@")
		[ "$got" = "$want" ] && break
		[ $(($(now_ms) - t0)) -le "$BOUND_MS" ] ||
			fail "$what: '$got' after $BOUND_MS ms, expected '$want'"
		sleep 0.05
	done
	WAITED_MS=$(($(now_ms) - t0))
}

for holder in no yes; do
	holder_start "$holder"

	# a. into cat
	pstart a "$PROG"
	pid=$PID_a
	pcmd a "fire 2"
	prog_wait a '^fired 2'
	expect_eq "$(app_events)" 2 "a: events before exec"
	t0=$(now_ms)
	pcmd a "exec /bin/cat"
	pwait_exec a /bin/cat
	wait_value "a ($beside): the old module's events" "$left" app_events
	wait_value "a ($beside): the registry" "" sh -c "'$HDCLIENT' list $pid | grep '^entry' || true"
	ms=$(($(now_ms) - t0))
	served_ok "a ($beside)"
	pcmd a "echo-through-cat"
	prog_wait a '^echo-through-cat$'
	pstop a
	same_as_disabled a
	echo "ok: a. exec into cat ($beside): dropped from the registry after $ms ms (sweep ${SWEEP}s), $left events left"

	# b. into another probed program
	pstart b "$PROG"
	pid=$PID_b
	t0=$(now_ms)
	pcmd b "exec $PROG2"
	prog_wait b '^ready' 2
	wait_value "b ($beside): the old module's events" "$left" app_events
	ms=$(($(now_ms) - t0))
	wait_events $((left + 2)) "b ($beside): the new program's events"
	expect_eq "$(oth_events)" 2 "b ($beside): the new program's events"
	expect_eq "$(entries | grep "^$pid " | cut -d' ' -f1,3)" "$pid $PROG2" "b ($beside): the registry"
	pcmd b "fire 1"
	prog_wait b '^fired 1'
	served_ok "b ($beside)"
	pstop b
	wait_events "$left" "b ($beside): exited"
	same_as_disabled b
	echo "ok: b. exec into another probed program ($beside): old module dropped after $ms ms"

	holder_done "$holder"
done
[ -z "$(list_entries)" ] || { list_entries >&2; fail "registry entries left"; }
served_ok "at the end"
HD_OK=1
