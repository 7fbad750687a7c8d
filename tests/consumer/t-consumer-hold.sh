#!/bin/bash
# Retained enablings lose no firing (kernel-helper/README.md, "WATCH"): a
# `dtrace -Z` started before a program watches the daemon, which holds the
# program's registration of its new file until dtrace has attached its
# sites. A program that fires its probe exactly once, first thing in
# main(): that one firing is in the output. The daemon tells the program's
# drti that it is held (HELD), and drti waits past its 100 ms timeout, up to
# USDTKIT_HELPER_HOLD_MS (2000 by default; 5000 here, the daemon's bound, so
# that an attach on a loaded CI machine fits; USDTKIT_HELPER_TIMEOUT_MS 5000
# too, so that the daemon's HELD itself, late on a loaded machine, is waited
# for). (Without the hold the
# program may end before its sites are attached: the firing is lost.)
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_engine
command -v cc >/dev/null || fail "no C compiler"

P=dthd$(tr -dc a-z </dev/urandom | head -c 6)
mkdir -p "$T/b"
echo "provider $P { probe tick(int n); };" >"$T/b/p.d"
printf '#include "p.h"\nint main(void)\n{\n\t%s_TICK(7);\n\treturn 0;\n}\n' "${P^^}" >"$T/b/once.c"
(
	cd "$T/b" || exit 1
	"$DTRACE" -h -s p.d -o p.h &&
		cc -O2 -I"$SDT_INC" -I. -c once.c -o once.o &&
		"$DTRACE" -G -s p.d -o p.o once.o &&
		cc -o once once.o p.o
) || fail "building the test program"

DSOCK="$T/helper.sock"
daemon_start "$T/daemon.log" "$HELPERD" -f --debug --socket "$DSOCK" --linger 0
at_exit "daemon_stop TERM 30"
export USDTKIT_HELPER_SOCKET="$DSOCK"

timeout 100 "$DTRACE" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%s %s %d\\n\", probemod, probename, arg0); }" >"$T/out" 2>"$T/err" &
DT=$!
at_exit "kill $DT 2>/dev/null"
wait_until 40 "dtrace to start" grep -q ready "$T/out"
grep -q "pid [0-9]* watches new files" "$T/daemon.log" || fail "dtrace does not watch the daemon"

USDTKIT_HELPER_TIMEOUT_MS=5000 USDTKIT_HELPER_HOLD_MS=5000 "$T/b/once" || fail "the program failed"
poll_until 10 grep -q "^once tick 7$" "$T/out" || true
kill -INT "$DT"
rc=0
wait "$DT" || rc=$?
[ "$rc" = 0 ] || { cat "$T/out" "$T/err" >&2; fail "dtrace exited $rc"; }
# (the blank line: the exit dump, with no aggregation)
same "$T/out" "ready\nonce tick 7\n\n" "the one firing of a held program"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }
exit 0
