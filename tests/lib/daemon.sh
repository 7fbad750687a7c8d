# Starting and stopping usdtkit-helperd in a test: its own instance, in the
# foreground, on a private socket. Source after tests/lib/common.sh; the
# suites' own helpers (tests/helperd/lib.sh, ...) build their start_daemon
# and stop_daemon on these two.
#
#   daemon_start LOG COMMAND...   runs COMMAND (the daemon's command line,
#       possibly under a wrapper: env, strace, valgrind) in the background,
#       its stderr appended to LOG, and waits until LOG says ": ready"
#       (DAEMON_START_S seconds, default 10); fails the test, with the log,
#       when the daemon dies or is not ready by then. Sets DAEMON_PID.
#   daemon_stop [SIGNAL] [SECONDS]   sends SIGCONT (a test may have stopped
#       it) and SIGNAL (default TERM), waits at most SECONDS (default 120)
#       for the exit, then SIGKILL; sets DAEMON_STATUS to its exit status.
#
# The command's other descriptors: the test's pipes to its programs
# (close_prog_fds) are closed, so the daemon never holds one open.

# (a test may name another build of it)
HELPERD=${HELPERD:-$USDTKIT_BUILDDIR/kernel-helper/helperd/usdtkit-helperd}
DAEMON_PID=""
DAEMON_STATUS=""

# Background children must not keep the programs' command pipes open
# (FD_<name>, tests/helperd/lib.sh's prog_start): a program's EOF on stdin
# is its exit.
close_prog_fds() {
	local v
	for v in ${!FD_@}; do eval "exec ${!v}>&-"; done
}

daemon_start() { # LOG COMMAND...
	local log=$1 from
	shift
	[ -x "$HELPERD" ] || fail "no $HELPERD: build first"
	from=$(($(stat -c %s "$log" 2>/dev/null || echo 0) + 1))
	(
		close_prog_fds
		exec "$@"
	) 2>>"$log" &
	DAEMON_PID=$!
	_DAEMON_LOG=$log _DAEMON_FROM=$from
	poll_until "${DAEMON_START_S:-10}" _daemon_ready && return 0
	cat "$log" >&2
	fail "the daemon did not become ready in ${DAEMON_START_S:-10} s"
}
_daemon_ready() {
	tail -c "+$_DAEMON_FROM" "$_DAEMON_LOG" 2>/dev/null | grep -q ': ready' && return 0
	running "$DAEMON_PID" || { cat "$_DAEMON_LOG" >&2; fail "the daemon died at start"; }
	return 1
}

daemon_stop() { # [SIGNAL] [SECONDS]
	local sig=${1:-TERM} secs=${2:-120}
	[ -n "$DAEMON_PID" ] || return 0
	kill -CONT "$DAEMON_PID" 2>/dev/null || true
	kill "-$sig" "$DAEMON_PID" 2>/dev/null || true
	if ! poll_until "$secs" eval '! running "$DAEMON_PID"'; then
		kill -KILL "$DAEMON_PID" 2>/dev/null || true
		echo "the daemon ignored SIG$sig for $secs s: killed" >&2
	fi
	DAEMON_STATUS=0
	wait "$DAEMON_PID" 2>/dev/null || DAEMON_STATUS=$?
	DAEMON_PID=""
}
