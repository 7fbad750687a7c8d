#!/bin/bash
# Tracing what the helper daemon knows (no -p, no -c): a provider glob over
# the processes it registered, matched with their pids; a process started
# after dtrace from a file that was known at the start is traced too (the
# probes are attached to the file). A private daemon, a provider name of
# this test's own.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"

PROV=dtcd$(tr -dc a-z </dev/urandom | head -c 6)
build_quickstart "$T/qs" "$PROV"
DSOCK="$T/helper.sock"
daemon_start "$T/daemon.log" "$HELPERD" -f --socket "$DSOCK" --linger 0
at_exit "daemon_stop TERM 30"
export USDTKIT_HELPER_SOCKET="$DSOCK"

"$T/qs/quickstart" 100000 20 >/dev/null &
P1=$!
at_exit "kill $P1 2>/dev/null"
wait_until 20 "the daemon to register $P1" \
	bash -c "'$DTRACE' -l -n '$PROV$P1:::request-start' >/dev/null 2>&1"

# 1. No -p: the daemon's processes; probeprov is the provider with the pid;
# two clauses of one probe, in order.
dt 0 -q -n "$PROV*:::request-start { n++; } $PROV*:::request-start /n == 2/ { printf(\"%s %s\\n\", probeprov, probename); exit(0); }"
same "$T/out" "$PROV$P1 request-start\n\n" "a glob over the daemon's processes"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }

# 2. A process started after dtrace, from the same file: traced.
taskset -c 0 "$DTRACE" -q -n "BEGIN { printf(\"ready\\n\"); } $PROV*:::request-start /pid != $P1/ { printf(\"%d\\n\", pid); exit(0); }" \
	>"$T/out" 2>"$T/err" &
DT=$!
at_exit "kill $DT 2>/dev/null"
wait_until 30 "dtrace to start" grep -q ready "$T/out"
"$T/qs/quickstart" 3 20 >/dev/null &
P2=$!
rc=0
wait "$DT" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "dtrace exited $rc"; }
same "$T/out" "ready\n$P2\n\n" "a new process of a known file"
wait "$P2" || true

# 3. No daemon, no -p/-c: one line that says what to do.
rc=0
USDTKIT_HELPER_SOCKET="$T/none.sock" "$DTRACE" -n "$PROV*:::request-start { }" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "no daemon: exit $rc"
same "$T/err" "dtrace: error: the usdtkit helper daemon is not running (nothing listens on $T/none.sock): without it only one process can be listed, with -p PID\n" "no daemon"
