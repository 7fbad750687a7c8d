#!/bin/bash
# drti trusts only a root daemon's HELD (issue 33, item 4; docs/SECURITY.md
# invariant 13). A HELD moves a registrant's deadline from the plain
# timeout (100 ms) to the hold (up to USDTKIT_HELPER_HOLD_MS). A server run
# by nobody on the socket path that answers every REGISTER with a HELD and
# then nothing must not delay a root program's start past the plain
# timeout; before the fix it delayed it by the whole hold.
#  1. Control: the same server run by root does hold the program (at least
#     HOLD_MS less a margin): the HELD is well formed and honoured.
#  2. The server run by nobody: root's program starts within a bound far
#     below the hold (tried 3 times: one start that quick is the proof; a
#     held start cannot be quicker than the hold), and drti's debug line
#     says it refused the peer.
#  3. A program of nobody's own, the server nobody's: the hold is honoured
#     (a peer of the program's own uid could stop it anyway).
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
id nobody >/dev/null 2>&1 || fail "no user nobody"
[ -x "$FAKE" ] || fail "no $FAKE: build first"
HOLD_MS=3000
# Far below the hold, far above a plain start (about the 100 ms timeout):
# tells a held start from one that is not; not scaled (it must still tell).
BOUND_MS=2000

build_progs gcc
chmod 711 "$T" "$B"
chmod 755 "$PROG"
install -d -o nobody -m 0755 "$T/squat"
SOCK="$T/squat/helper.sock"
FLOG="$T/squat/fake.log"

# Starts fakehelperd held:HOLD_MS on $SOCK as USER (root or nobody).
squat() { # USER
	rm -f "$SOCK" "$FLOG"
	if [ "$1" = root ]; then
		"$FAKE" "$SOCK" "$FLOG" "held:$HOLD_MS" &
	else
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
			"$FAKE" "$SOCK" "$FLOG" "held:$HOLD_MS" &
	fi
	FAKE_PID=$!
	poll_until 10 grep -q '^listening' "$FLOG" || fail "fakehelperd did not start as $1"
}

# Milliseconds one start of $PROG takes (as USER), its debug output in $T/err.
start_ms() { # USER
	local t0 t1 pre=()
	[ "$1" = root ] || pre=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	t0=$(_now_us)
	env -u USDTKIT_DISABLE -u DTRACE_DOF_INIT_DISABLE USDTKIT_DEBUG=1 \
		USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=100 \
		USDTKIT_HELPER_HOLD_MS=$HOLD_MS "${pre[@]}" "$PROG" say hi >"$T/out" 2>"$T/err" ||
		fail "the program failed: $(cat "$T/err")"
	t1=$(_now_us)
	echo $(((t1 - t0) / 1000))
}

# 1. Root's server holds root's program.
squat root
ms=$(start_ms root)
[ "$ms" -ge $((HOLD_MS - 500)) ] ||
	fail "control: a HELD from root's server did not hold the program ($ms ms; $(cat "$T/err"))"
grep -q 'held for a tracer' "$T/err" || fail "control: drti did not report the hold: $(cat "$T/err")"
stop_fake
echo "ok: root's server holds a program ($ms ms)"

# 2. nobody's server: no hold for root's program.
squat nobody
for try in 1 2 3; do
	ms=$(start_ms root)
	[ "$ms" -lt "$BOUND_MS" ] && break
	echo "try $try: $ms ms"
	[ "$try" -lt 3 ] || fail "nobody's HELD held root's program: $ms ms, 3 times (the hold is $HOLD_MS ms)"
done
grep -q 'a HELD from a peer neither root nor ours: not a daemon (uid 65534)' "$T/err" ||
	fail "drti did not say it refused nobody's HELD: $(cat "$T/err")"
[ "$(grep -c '^msg ' "$FLOG")" -ge 1 ] || fail "the squatter never received a REGISTER"
echo "ok: nobody's HELD does not hold root's program ($ms ms)"

# 3. nobody's server, nobody's program: the hold stands.
ms=$(start_ms nobody)
[ "$ms" -ge $((HOLD_MS - 500)) ] ||
	fail "a HELD from the program's own uid was not honoured ($ms ms; $(cat "$T/err"))"
stop_fake
echo "ok: a server of the program's own uid holds it ($ms ms)"
