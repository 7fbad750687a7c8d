# Helpers for the usdtkit-helperd tests (suite helperd). Source after
# tests/lib/common.sh.
#
# Every test starts its own daemon, in the foreground, on a private socket
# ($SOCK under $T, given to programs as USDTKIT_HELPER_SOCKET), and stops it
# at exit. Providers are unique per run ($P), so tracefs groups
# (sdt_${P}app, sdt_${P}lib) never collide between concurrent tests, and
# the exit handler removes any event of those groups still there.

HDCLIENT="$USDTKIT_BUILDDIR/tests/helperd/hdclient"
HPROGS="$USDTKIT_SRCDIR/tests/helperd/progs"
P="hd$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
PU=$(echo "$P" | tr a-z A-Z)
SOCK="$T/helper.sock"
DLOG="$T/daemon.log"
export USDTKIT_HELPER_SOCKET="$SOCK"
unset USDTKIT_DISABLE DTRACE_DOF_INIT_DISABLE USDTKIT_DEBUG DTRACE_DOF_INIT_DEBUG
# Generous: the machine is shared and a registration forks a parser.
export USDTKIT_HELPER_TIMEOUT_MS=3000

. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
[ -x "$HELPERD" ] || fail "no $HELPERD: build first"

# Starts the daemon (extra arguments passed on) and waits until it serves.
# HD_WRAP (e.g. "strace -f -o FILE") runs it under a tool; HD_DEBUG= (empty)
# starts it without --debug (benchmarks). Events are removed as soon as
# nobody maps the file (--linger 0) unless HD_LINGER says otherwise. Its log
# is $DLOG.new while it runs, appended to $DLOG when it stops.
start_daemon() {
	# shellcheck disable=SC2086
	daemon_start "$DLOG.new" ${HD_WRAP:-} "$HELPERD" -f ${HD_DEBUG---debug} --socket "$SOCK" \
		--linger "${HD_LINGER:-0}" "$@"
}

# Stops it with SIGTERM (or the given signal) and waits.
stop_daemon() { # [SIGNAL]
	daemon_stop "${1:-TERM}"
	[ -e "$DLOG.new" ] && cat "$DLOG.new" >>"$DLOG" && rm -f "$DLOG.new"
	# A sanitizer build (-Db_sanitize=address,undefined) reports into the log.
	if grep -qE 'runtime error|Sanitizer|ERROR: ' "$DLOG" 2>/dev/null; then
		grep -E -A20 'runtime error|Sanitizer|ERROR: ' "$DLOG" | head -60 >&2
		HD_OK=1 # the log is shown above
		fail "the daemon reported a memory or undefined-behaviour error"
	fi
	return 0
}

# Runs $PROG once ("fire 3", then "exit"): its stdout with its pid left out
# of "ready PID", its stderr in $T/prog.err.
run_prog() { printf 'fire 3\nexit\n' | "$PROG" 2>"$T/prog.err" | sed 's/^ready [0-9]*$/ready/'; }

# The daemon is alive and answers a LIST.
daemon_healthy() {
	kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$DLOG.new" >&2; fail "the daemon died"; }
	"$HDCLIENT" list | grep -q '^status=0 ' || fail "the daemon does not answer a LIST"
}

# Every event of this run's groups, as group/event lines (sorted, unique).
our_events() { uprobe_events_in_group "sdt_${P}"; }

cleanup_events() {
	local e
	for e in $(our_events); do remove_uprobe_event "$e"; done
}
# On failure, the daemon's last words (tests set HD_OK=1 when they pass).
dump_log() {
	[ -n "${HD_OK:-}" ] && return 0
	echo "--- daemon log (last 60 lines) ---" >&2
	cat "$DLOG" "$DLOG.new" 2>/dev/null | tail -60 >&2
}
at_exit cleanup_events
at_exit stop_daemon
at_exit dump_log

# Lines of the running daemon's log so far matching PATTERN (an ERE).
count_log() { grep -cE -- "$1" "$DLOG.new" 2>/dev/null || true; }
_log_has() { [ "$(count_log "$1")" -ge "$2" ]; }
# Waits (up to 10 s, scaled by TIME_FACTOR: an upper bound for something
# that comes) until the daemon's log has a line matching PATTERN.
wait_log() { # PATTERN what
	poll_until $((10 * TIME_FACTOR)) _log_has "$1" 1 && return 0
	tail -30 "$DLOG.new" >&2
	fail "$2: no daemon log line matches '$1'"
}
# Waits (up to 10 s, scaled) until the daemon's log has N lines matching PATTERN.
wait_log_count() { # PATTERN N what
	poll_until $((10 * TIME_FACTOR)) _log_has "$1" "$2" && return 0
	tail -30 "$DLOG.new" >&2
	fail "$3: fewer than $2 daemon log lines match '$1'"
}
# The daemon's retirement passes that found processes still mapping a file
# whose last registered process went ("retire: N files checked, M processes
# still map them"): count before, then wait for the next one.
RETIRED_KEPT='retire: [0-9]+ files checked, [0-9]+ processes still map them'

# Waits (up to 10 s) until our_events has exactly N lines.
wait_events() { # N what
	local i
	for i in $(seq 500); do
		[ "$(our_events | wc -l)" -eq "$1" ] && return 0
		sleep 0.02
	done
	our_events >&2
	fail "$2: expected $1 events, have $(our_events | wc -l)"
}

# Builds into $B: prog (app.c + ${P}app -G object), liblib.so (${P}lib), short.
build_progs() { # [CC]
	local cc=${1:-gcc}
	B="$T/build-$cc"
	mkdir -p "$B"
	cat >"$B/app.d" <<EOF
provider ${P}app {
	probe start(int count, char *label);
	probe tick(int n);
};
EOF
	cat >"$B/lib.d" <<EOF
provider ${P}lib {
	probe call(int x);
};
EOF
	cat >"$B/names.h" <<EOF
#include "app.h"
#include "lib.h"
#define APP_START ${PU}APP_START
#define APP_TICK ${PU}APP_TICK
#define LIB_CALL ${PU}LIB_CALL
EOF
	(
		cd "$B"
		"$DTRACE" -h -s app.d -o app.h
		"$DTRACE" -h -s lib.d -o lib.h
		$cc -I"$SDT_INC" -I. -O2 -c "$HPROGS/app.c" -o app.o
		$cc -I"$SDT_INC" -I. -O2 -c "$HPROGS/short.c" -o short.o
		$cc -I"$SDT_INC" -I. -O2 -fPIC -c "$HPROGS/lib.c" -o lib.o
		CC="$cc" "$DTRACE" -G -s app.d -o app-prov.o app.o
		CC="$cc" "$DTRACE" -G -s app.d -o short-prov.o short.o
		CC="$cc" "$DTRACE" -G -s lib.d -o lib-prov.o lib.o
		$cc app.o app-prov.o -ldl -o prog
		$cc short.o short-prov.o -o short
		$cc -shared lib.o lib-prov.o -o liblib.so
	) || fail "building the test programs with $cc"
	PROG="$B/prog"
	LIB="$B/liblib.so"
	SHORT="$B/short"
}

# Waits for a background child to end by itself, at most SECONDS; then kills it (a failure).
wait_bg() { # pid seconds
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		running "$1" || break
		sleep 0.05
	done
	running "$1" && { kill -9 "$1"; fail "process $1 still running after $2 s"; }
	wait "$1" 2>/dev/null || true
}

# Starts $PROG (or the given file) in the background, commands through a fifo:
#   prog_start NAME [FILE [ARGS]]; prog_cmd NAME "fire 3"; prog_wait NAME 'fired 3'; prog_stop NAME
prog_start() { # NAME [FILE [ARGS...]]
	local n=$1 f=${2:-$PROG}
	shift 2 || shift
	rm -f "$T/$n.in"
	mkfifo "$T/$n.in"
	(
		close_prog_fds
		exec "$f" "$@"
	) <"$T/$n.in" >"$T/$n.out" 2>"$T/$n.err" &
	eval "PID_$n=$!"
	eval "exec {FD_$n}>\"$T/$n.in\""
	prog_wait "$n" '^ready'
	at_exit "kill -9 $(eval echo \$PID_$n) 2>/dev/null"
}
prog_cmd() { # NAME LINE
	local fd
	fd=$(eval echo "\$FD_$1")
	echo "$2" >&"$fd"
}
prog_wait() { # NAME PATTERN [COUNT]: at least COUNT (1) lines match
	local i
	for i in $(seq 500); do
		[ "$(grep -cE "$2" "$T/$1.out" 2>/dev/null)" -ge "${3:-1}" ] && return 0
		sleep 0.02
	done
	cat "$T/$1.out" "$T/$1.err" >&2
	fail "$1: no output line matching '$2'"
}
prog_stop() { # NAME
	local fd pid
	fd=$(eval echo "\$FD_$1")
	pid=$(eval echo "\$PID_$1")
	eval "exec $fd>&-"
	wait "$pid" 2>/dev/null || true
}
