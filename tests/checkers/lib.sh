# Helpers for the checker tests (suite checkers): drti and
# libusdtkit-runtime run under a checker a user may run their program with
# (valgrind memcheck, MemorySanitizer, ThreadSanitizer), on every path drti
# can take. Source after tests/lib/common.sh, inside tests/lib/private-run.sh
# (each test re-executes itself there first): the
# default socket path /run/usdtkit/helper.sock and the daemon started there
# are the test's own, and nothing of the host's /run is read or touched.
#
# every_path RUN   calls `RUN LABEL [VAR=VALUE...]` once per path, with the
#   drti environment that selects it; RUN runs its programs under its
#   checker and fails the test on a report. The paths:
#     nodaemon, nodaemon-default    no socket file (private path, default path)
#     stale, stale-default          a socket file nobody listens on, as a
#                                   stopped daemon used to leave
#     firstseen, known              a live usdtkit-helperd on a private
#                                   socket: a fresh copy of the programs
#                                   (REGISTER, waiting for the answer), then
#                                   the same files again (on its board:
#                                   nothing asked)
#     firstseen-default, known-default   the same with the daemon at the
#                                   default path
#   RUN's programs are $PROG (with $CHECK_PROG_DIR/...) and whatever it adds;
#   before a first-seen call every_path copies $B's programs to a new
#   directory and points PROG and LIB there.
# The programs are tests/drti's (build_progs, tests/drti/lib.sh), run with
# CMDS: errno, descriptors, probes, dlopen, fork, dlclose, compared with a
# run with registration disabled (check_same).

. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
[ -n "${USDTKIT_IN_PRIVATE_RUN:-}" ] || fail "run inside tests/lib/private-run.sh"
# $$ is 1 in the private PID namespace: a provider name unique on the host's
# tracefs must come from elsewhere.
P="ck$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
PU=$(echo "$P" | tr a-z A-Z)
DEFAULT_SOCK=/run/usdtkit/helper.sock
CMDS=(errno fds probe dlopen LIB probe fork probe fds \; dlclose fds)
# The daemon's events go when it stops; these remove any a failure left.
_ck_cleanup() {
	local e
	for e in $(uprobe_events_in_group "sdt_$P"); do remove_uprobe_event "$e"; done
}
at_exit _ck_cleanup

# CMDS with LIB replaced by the library's path.
cmds() { local c; for c in "${CMDS[@]}"; do [ "$c" = LIB ] && echo "$LIB" || echo "$c"; done; }

# Every drti variable unset, then the given ones: `drti_env VAR=V... -- CMD...`
drti_env() {
	local a=() v
	for v in $DRTI_ENV_VARS; do a+=(-u "$v"); done
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		a+=("$1")
		shift
	done
	shift
	env "${a[@]}" "$@"
}

# The baseline: $PROG's output with registration disabled, in $T/base.out.
baseline() {
	mapfile -t _cmds < <(cmds)
	drti_env USDTKIT_DISABLE=1 -- "$PROG" "${_cmds[@]}" >"$T/base.out" 2>"$T/base.err" ||
		{ cat "$T/base.err" >&2; fail "the baseline run (registration disabled) failed"; }
	[ ! -s "$T/base.err" ] || { cat "$T/base.err" >&2; fail "the baseline run printed on stderr"; }
}

# A run's stdout is the baseline's, its stderr empty: drti changed nothing.
check_same() { # LABEL OUT ERR
	cmp -s "$T/base.out" "$2" || { diff "$T/base.out" "$2" >&2; fail "$1: stdout differs from the run with registration off"; }
	[ ! -s "$3" ] || { cat "$3" >&2; fail "$1: printed on stderr"; }
}

# A socket file nobody listens on (what a stopped or crashed daemon leaves).
stale_socket() { # PATH
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' "$1" ||
		fail "cannot make a stale socket at $1"
}

_ck_n=0
# Fresh copies of the programs: files (inodes) the daemon has never seen.
fresh_copies() {
	_ck_n=$((_ck_n + 1))
	local d="$B/copy$_ck_n"
	mkdir -p "$d"
	cp "$B/prog" "$B/liblib.so" "$d/"
	PROG="$d/prog" LIB="$d/liblib.so"
	[ -z "${CHECK_EXTRA_COPY:-}" ] || $CHECK_EXTRA_COPY "$d"
}

# Proves which path a start took: a debug run outside the checker, whose
# drti lines for the program and the library must match PATTERN.
expect_path() { # LABEL PATTERN VAR=VALUE...
	local label=$1 pat=$2
	shift 2
	mapfile -t _cmds < <(cmds)
	drti_env USDTKIT_DEBUG=1 USDTKIT_HELPER_TIMEOUT_MS=5000 "$@" -- "$PROG" "${_cmds[@]}" \
		>/dev/null 2>"$T/path.err" || { cat "$T/path.err" >&2; fail "$label: the debug run failed"; }
	[ "$(grep -cE "register module.*: ($pat)" "$T/path.err")" -eq 2 ] ||
		{ cat "$T/path.err" >&2; fail "$label: drti did not take the path '$pat' for both modules"; }
}

# A usdtkit-helperd of the test's own, on SOCK (the default path: no --socket).
_ck_daemon() { # SOCK
	local args=(-f --debug)
	[ "$1" = "$DEFAULT_SOCK" ] || args+=(--socket "$1" --state "$1.state")
	daemon_start "$T/daemon.log" env -u USDTKIT_HELPER_SOCKET "$HELPERD" "${args[@]}"
}
_ck_daemon_stop() { # SOCK
	daemon_stop TERM 60
	[ "$DAEMON_STATUS" -eq 0 ] || { cat "$T/daemon.log" >&2; fail "the daemon exited $DAEMON_STATUS"; }
	[ ! -e "$1" ] || fail "the daemon left its socket $1 behind"
	if grep -qE 'runtime error|Sanitizer|ERROR: ' "$T/daemon.log"; then
		cat "$T/daemon.log" >&2
		fail "the daemon reported an error"
	fi
}

every_path() { # RUN
	local run=$1 p0=$PROG l0=$LIB sock
	"$run" nodaemon USDTKIT_HELPER_SOCKET="$T/absent.sock"
	"$run" nodaemon-default
	stale_socket "$T/stale.sock"
	expect_path stale "no answer|connect: ECONNREFUSED" USDTKIT_HELPER_SOCKET="$T/stale.sock"
	"$run" stale USDTKIT_HELPER_SOCKET="$T/stale.sock"
	stale_socket "$DEFAULT_SOCK"
	"$run" stale-default
	rm -f "$T/stale.sock" "$DEFAULT_SOCK"
	need_tracefs
	for sock in "$T/d.sock" "$DEFAULT_SOCK"; do
		local env=() sfx=""
		[ "$sock" = "$DEFAULT_SOCK" ] && sfx=-default || env=(USDTKIT_HELPER_SOCKET="$sock")
		_ck_daemon "$sock"
		fresh_copies
		"$run" "firstseen$sfx" ${env[@]+"${env[@]}"} USDTKIT_HELPER_TIMEOUT_MS=5000
		grep -qF "registered $PROG " "$T/daemon.log" ||
			{ cat "$T/daemon.log" >&2; fail "firstseen$sfx: the daemon did not register $PROG"; }
		expect_path "known$sfx" "known to the helper" ${env[@]+"${env[@]}"}
		"$run" "known$sfx" ${env[@]+"${env[@]}"}
		_ck_daemon_stop "$sock"
	done
	PROG=$p0 LIB=$l0
}
