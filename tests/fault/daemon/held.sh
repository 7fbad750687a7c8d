# shellcheck shell=bash
# The held-connection faults (t-fault-held-connections.sh,
# t-fault-conn-global-cap.sh): source after tests/lib/common.sh and
# tests/helperd/lib.sh, once the daemon runs, with DRTI_MS (the drti timeout
# the programs run with) set.
#   held_begin                the program's module registered, its output
#                             without registration in $T/expected, fds0
#   hold NAME N [UID]         hdclient hold-renew N in the background (as UID)
#   held_wait NAME N          until it holds all N
#   served_run WHAT           a program run: registered in time, output unchanged;
#                             its wall time in RUN_MS
#   hold_end NAME...          stops the holders; CLOSED: connections the daemon
#                             closed under them, in all
#   held_end                  afterwards: back to its descriptors, healthy,
#                             registering; the program stopped

nfds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
# The program's output with the daemon's pids and ours taken out.

# The program's module is registered first: the runs below take the
# per-process path (a registry lookup), which is what a held daemon must keep.
held_begin() {
	prog_start a
	wait_events 2 "the first program"
	USDTKIT_DISABLE=1 run_prog >"$T/expected"
	expect_grep '^fired 3$' "$T/expected" "the program's own output"
	fds0=$(nfds)
}

HOLDERS=""
hold() { # NAME N [UID]
	mkfifo "$T/hold-$1.in"
	if [ -n "${3:-}" ]; then
		setpriv --reuid="$3" --regid="$3" --clear-groups \
			"$HDCLIENT" hold-renew "$2" <"$T/hold-$1.in" >"$T/hold-$1.out" 2>&1 &
	else
		"$HDCLIENT" hold-renew "$2" <"$T/hold-$1.in" >"$T/hold-$1.out" 2>&1 &
	fi
	HOLDERS="$HOLDERS $!"
	eval "exec {HOLDFD_$1}>\"$T/hold-$1.in\""
}
held_wait() { # NAME N
	local i
	# Up to 120 s: 10,000 connects by one process, beside a loaded machine
	# (what is checked is the daemon under the caps, not the holder's speed).
	for i in $(seq 6000); do grep -q "^held" "$T/hold-$1.out" && break; sleep 0.02; done
	expect_grep "^held $2\$" "$T/hold-$1.out" "$2 connections of holder $1"
}

# A run not registered within DRTI_MS is tried again, three runs in all:
# how long the daemon takes to answer depends on the machine's load, which
# a test's verdict must not; a daemon that stopped serving fails all three.
served_run() { # WHAT
	local t0 try
	for try in 1 2 3; do
		t0=$(date +%s%N)
		USDTKIT_DEBUG=1 USDTKIT_HELPER_TIMEOUT_MS=$DRTI_MS run_prog >"$T/got"
		RUN_MS=$((($(date +%s%N) - t0) / 1000000))
		cmp -s "$T/expected" "$T/got" || { diff "$T/expected" "$T/got" >&2; fail "$1: output differs"; }
		grep -q 'done, 2 probes' "$T/prog.err" && return 0
		echo "$1: run $try not registered within $DRTI_MS ms ($RUN_MS ms)" >&2
	done
	cat "$T/prog.err" >&2
	fail "$1: not registered within $DRTI_MS ms, three runs in a row"
}

hold_end() { # NAME...
	local n v c h
	for n in "$@"; do
		v="HOLDFD_$n"
		eval "exec ${!v}>&-"
	done
	for h in $HOLDERS; do wait_bg "$h" 30; done
	CLOSED=0
	for n in "$@"; do
		c=$(sed -n 's/^renewed [0-9]* closed-by-daemon \([0-9]*\)$/\1/p' "$T/hold-$n.out")
		[ -n "$c" ] || { cat "$T/hold-$n.out" >&2; fail "holder $n did not finish"; }
		CLOSED=$((CLOSED + c))
	done
}

# Afterwards: healthy, back to its descriptors, and still registering.
held_end() {
	local i
	for i in $(seq 200); do [ "$(nfds)" -le $((fds0 + 2)) ] && break; sleep 0.05; done
	[ "$(nfds)" -le $((fds0 + 2)) ] ||
		fail "the daemon holds $(nfds) descriptors after the holders left (was $fds0)"
	daemon_healthy
	served_run "after the holders left"
	prog_stop a
	wait_events 0 "after the program"
}
