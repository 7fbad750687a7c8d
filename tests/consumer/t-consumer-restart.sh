#!/bin/bash
# A retained enabling traces a restarted program from its first firing
# (issue 32, item 4; core/protocol.h, WATCH, "Restarted programs"): a
# program runs and ends before `dtrace -Z` starts, its file's events linger
# in the daemon (on its board: the next start of the program sends no
# REGISTER by itself), then it runs again. The daemon keeps SOCKET.watched
# while dtrace watches, so drti asks although the board knows the file; the
# daemon holds that registration as a new file's and tells dtrace (NOTICE),
# which traces the file before the program goes on. The program fires its
# probe exactly once, first thing in main(): that firing is in the output,
# for the restart and for a second one (the file then traced already).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_engine
command -v cc >/dev/null || fail "no C compiler"

P=dtrs$(tr -dc a-z </dev/urandom | head -c 6)
mkdir -p "$T/b"
echo "provider $P { probe tick(int n); };" >"$T/b/p.d"
printf '#include "p.h"\nint main(int argc, char **argv)\n{\n\t(void)argv;\n\t%s_TICK(argc + 6);\n\treturn 0;\n}\n' "${P^^}" >"$T/b/once.c"
(
	cd "$T/b" || exit 1
	"$DTRACE" -h -s p.d -o p.h &&
		cc -O2 -I"$SDT_INC" -I. -c once.c -o once.o &&
		"$DTRACE" -G -s p.d -o p.o once.o &&
		cc -o once once.o p.o
) || fail "building the test program"

DSOCK="$T/helper.sock"
daemon_start "$T/daemon.log" "$HELPERD" -f --debug --socket "$DSOCK" --linger 600
at_exit "daemon_stop TERM 30"
export USDTKIT_HELPER_SOCKET="$DSOCK"

# the first run: the file's events are made, and linger after it ends (5 s
# for the daemon's answer: under load 23 drti's 100 ms ran out before a busy
# daemon read the request of a process that had already gone)
USDTKIT_HELPER_TIMEOUT_MS=5000 "$T/b/once" || fail "the program failed"
wait_until 20 "the daemon to register the program" grep -q "REGISTER pid [0-9]* .*once$" "$T/daemon.log"
[ -e "$DSOCK.known" ] || fail "the daemon has no board"
[ -e "$DSOCK.watched" ] && fail "SOCKET.watched with no watcher"
# with nobody watching, a known file's start asks nothing (the board)
n0=$(grep -c "\bREGISTER pid" "$T/daemon.log")
"$T/b/once" || fail "the program failed"
sleep 0.2
[ "$(grep -c "\bREGISTER pid" "$T/daemon.log")" = "$n0" ] || fail "a board file was registered with no watcher"

timeout 100 "$DTRACE" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%s %s %d\\n\", probemod, probename, arg0); }" >"$T/out" 2>"$T/err" &
DT=$!
at_exit "kill $DT 2>/dev/null"
wait_until 40 "dtrace to start" grep -q ready "$T/out"
grep -q "pid [0-9]* watches new files" "$T/daemon.log" || fail "dtrace does not watch the daemon"
[ -f "$DSOCK.watched" ] || fail "no SOCKET.watched while dtrace watches"

# the restart: its one firing is traced (arg0 7), then a second start (8)
USDTKIT_HELPER_TIMEOUT_MS=5000 USDTKIT_HELPER_HOLD_MS=5000 "$T/b/once" || fail "the program failed"
poll_until 10 grep -q "^once tick 7$" "$T/out" || true
USDTKIT_HELPER_TIMEOUT_MS=5000 USDTKIT_HELPER_HOLD_MS=5000 "$T/b/once" x || fail "the program failed"
poll_until 10 grep -q "^once tick 8$" "$T/out" || true
kill -INT "$DT"
rc=0
wait "$DT" || rc=$?
[ "$rc" = 0 ] || { cat "$T/out" "$T/err" >&2; fail "dtrace exited $rc"; }
same "$T/out" "ready\nonce tick 7\nonce tick 8\n\n" "the first firing of each restart"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }
poll_until 10 test ! -e "$DSOCK.watched" || fail "SOCKET.watched outlived its watcher"
exit 0
