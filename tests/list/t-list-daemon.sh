#!/bin/bash
# dtrace -l without -p: the processes and modules come from the helper
# daemon (USDT_MSG_LIST over USDTKIT_HELPER_SOCKET).
#
# 1. Against a protocol peer (listpeer.py, which answers as
#    core/protocol.h specifies) on a private socket: two live
#    processes are listed exactly as `dtrace -l -p` lists them; entries for
#    a process that is gone and for a range now holding another file are
#    dropped; a refusal, a malformed answer and a closed connection are
#    clear errors (exit 1).
# 2. Against the real usdtkit-helperd (its path is this script's first
#    argument when the build has it), started in the foreground on a private
#    socket: programs that register with it at start-up are listed, as with
#    -p, and a program that exited is no longer listed.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"
HELPERD=${1:-}
PEER="$USDTKIT_SRCDIR/tests/list/listpeer.py"

run() { # expected-rc args...
	local want=$1 rc=0
	shift
	"$DTRACE" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$T/err" >&2; fail "dtrace $* exited $rc, expected $want"; }
}

# start_peer MODE TARGET...: a listpeer on a fresh socket; sets SOCK.
start_peer() {
	local i
	SOCK="$T/peer.$RANDOM$RANDOM"
	python3 "$PEER" "$SOCK.sock" "$@" >"$SOCK.out" 2>"$SOCK.err" &
	at_exit "kill $! 2>/dev/null"
	for i in $(seq 200); do
		grep -q ready "$SOCK.out" 2>/dev/null && { SOCK="$SOCK.sock"; return 0; }
		sleep 0.05
	done
	cat "$SOCK.err" >&2
	fail "listpeer did not start"
}

build_app "$T/app" gcc -O2 -g
start_prog "$T/app/app"
P1=$PID
start_prog "$T/app/app"
P2=$PID
# The daemon's listing is in pid order.
[ "$P1" -lt "$P2" ] || { P=$P1; P1=$P2; P2=$P; }
"$DTRACE" -l -p "$P1" -p "$P2" >"$T/by-pid" || fail "dtrace -l -p exited $?"
[ "$(wc -l <"$T/by-pid")" -gt 4 ] || fail "dtrace -l -p listed too little"

for mode in ok stale; do
	start_peer $mode "$P1:app" "$P1:libltlib.so" "$P2:app" "$P2:libltlib.so"
	USDTKIT_HELPER_SOCKET="$SOCK" run 0 -l
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "peer $mode: unexpected stderr"; }
	diff -u "$T/by-pid" "$T/out" >&2 || fail "peer $mode: the daemon's listing is not -p's"
done
expect_no_grep WRONG "$T/out" "a stale entry (another inode at that range) was listed"

# Only the modules the daemon names are read.
start_peer ok "$P2:libltlib.so"
USDTKIT_HELPER_SOCKET="$SOCK" run 0 -l
grep -E "^ +[0-9]+ +ltlib$P2 " "$T/by-pid" | cut -c7- >"$T/want"
tail -n +2 "$T/out" | cut -c7- | diff -u "$T/want" - >&2 || fail "one module named: one module listed"

# Filters apply to the daemon's listing too.
USDTKIT_HELPER_SOCKET="$SOCK" run 1 -l -n request-start
expect_grep '^dtrace: failed to match :::request-start: No probe matches description$' "$T/err" \
	"no-match message with the daemon"

for mode in refuse garbage close; do
	start_peer $mode "$P1:app"
	USDTKIT_HELPER_SOCKET="$SOCK" run 1 -l
	expect_grep 'helper daemon' "$T/err" "peer $mode: the error names the daemon"
	[ -s "$T/out" ] && fail "peer $mode: a listing was printed"
done
expect_grep 'closed the connection' "$T/err" "peer close: message"

kill "$P1" "$P2"

# 2. The real daemon.
if [ -z "$HELPERD" ]; then
	echo "NOTE: usdtkit-helperd is not part of this build: only the protocol-peer part ran"
	echo "PASS"
	exit 0
fi
[ -x "$HELPERD" ] || fail "no $HELPERD: build first"
need_tracefs
LT_SUFFIX=$(printf 'x%s' "$$" | tr 0-9 a-j)
cleanup_events() {
	local ev
	for ev in $(uprobe_events_in_group "sdt_ltapp$LT_SUFFIX") \
		$(uprobe_events_in_group "sdt_ltlib$LT_SUFFIX"); do
		remove_uprobe_event "$ev"
	done
}
at_exit cleanup_events
DSOCK="$T/helper.sock"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
at_exit "daemon_stop TERM 5"
daemon_start "$T/daemon.log" "$HELPERD" -f --socket "$DSOCK" --linger 0
build_app "$T/dapp" gcc -O2 -g
export USDTKIT_HELPER_TIMEOUT_MS=3000
PROG_SOCK="$DSOCK" start_prog "$T/dapp/app"
Q1=$PID
PROG_SOCK="$DSOCK" start_prog "$T/dapp/app"
Q2=$PID
[ "$Q1" -lt "$Q2" ] || { P=$Q1; Q1=$Q2; Q2=$P; }
"$DTRACE" -l -p "$Q1" -p "$Q2" >"$T/by-pid" || fail "dtrace -l -p exited $?"
grep -E "ltapp$LT_SUFFIX" "$T/by-pid" >/dev/null || fail "the unique provider is not listed by -p"

# Our two processes' lines, ID column cut (the daemon may know other processes).
ours() { tail -n +2 "$1" | cut -c7- | grep -E "^ *lt(app|lib)$LT_SUFFIX($Q1|$Q2) " || true; }
ours "$T/by-pid" >"$T/want"
for i in $(seq 100); do
	USDTKIT_HELPER_SOCKET="$DSOCK" run 0 -l
	ours "$T/out" >"$T/got"
	cmp -s "$T/want" "$T/got" && break
	sleep 0.1
done
diff -u "$T/want" "$T/got" >&2 || {
	cat "$T/out" "$T/err" "$T/daemon.log" >&2
	fail "dtrace -l via the daemon differs from -p"
}
check_ids "$T/out"

# A process that exited is no longer listed.
kill "$Q1"
wait "$Q1" 2>/dev/null || true
for i in $(seq 100); do
	USDTKIT_HELPER_SOCKET="$DSOCK" run 0 -l
	grep -qE "lt(app|lib)$LT_SUFFIX$Q1 " "$T/out" || break
	sleep 0.1
done
expect_no_grep "lt(app|lib)$LT_SUFFIX$Q1 " "$T/out" "an exited process is still listed"
expect_grep "ltapp$LT_SUFFIX$Q2 " "$T/out" "the live process is listed"
kill "$Q2"
echo "PASS"
