#!/bin/bash
# Whatever the other end of the socket does, the program behaves exactly as
# with registration disabled (exit code, stdout, stderr empty, errno, open
# descriptors, fork children), never gets SIGPIPE, and is delayed at most by
# the timeout per request: a server that never answers, answers garbage,
# closes at once, is SIGSTOPped, has a full backlog, is of the wrong socket
# type, or is not a socket at all.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
build_progs gcc
cmds=(errno fds probe dlopen "$LIB" fds dlclose fork fds probe \; fds)
run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- "${cmds[@]}"
echo $? >"$T/base.rc"

same_as_base() { # what [env...]
	local what=$1 rc=0 t0 t1
	shift
	t0=$(date +%s%N)
	run_prog "$T/out" "$T/err" "$@" -- "${cmds[@]}" || rc=$?
	t1=$(date +%s%N)
	ELAPSED_MS=$(((t1 - t0) / 1000000))
	expect_eq "$rc" "$(cat "$T/base.rc")" "$what: exit status"
	cmp -s "$T/base.out" "$T/out" || { diff "$T/base.out" "$T/out" >&2; fail "$what: stdout differs"; }
	[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "$what: stderr not empty"; }
}

# Upper bounds on a run's wall time hold for drti, not for a loaded
# machine's scheduler: a run over its bound is tried again, three runs in
# all, and fails only if all three are over (a drti that waits too long
# does so every time). Lower bounds (a wait did happen) need no retry.
within_ms() { # MAX WHAT ENV... : same_as_base until ELAPSED_MS <= MAX
	local max=$1 what=$2 try
	shift 2
	for try in 1 2 3; do
		same_as_base "$what" "$@"
		[ "$ELAPSED_MS" -le "$max" ] && return 0
		echo "$what: run $try took $ELAPSED_MS ms, over $max" >&2
	done
	fail "$what: the run took $ELAPSED_MS ms, over $max three times"
}

# 4 requests wait for an answer in this run: program, library, dlclose, fork child.
TMO=300
for mode in noreply close garbage badmagic badseq big flood refuse stream; do
	start_fake "$mode"
	within_ms $((4 * TMO + $(bound_ms 1500))) "$mode (4 waits of $TMO ms at most)" \
		USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=$TMO
	[ "$mode" = stream ] || [ "$(nmsgs)" -ge 1 ] || [ "$mode" = close ] ||
		fail "$mode: the server received nothing (the case was not exercised)"
	echo "ok: server mode $mode: unchanged behaviour, $ELAPSED_MS ms"
	stop_fake
done

# Not a socket, nothing listening, a path too long for sun_path.
: >"$T/regular"
mkdir "$T/dir"
start_fake reply
stop_fake # leaves a stale socket file behind
[ -S "$SOCK" ] || fail "no stale socket file"
long="$T/$(printf 'x%.0s' $(seq 150)).sock"
for p in "$T/regular" "$T/dir" "$SOCK" "$long"; do
	same_as_base "socket path ${p:0:60}" USDTKIT_HELPER_SOCKET="$p"
done
echo "ok: regular file, directory, stale socket, overlong path"

# A SIGSTOPped server: connect and send succeed (the kernel queues them), the
# answer never comes; the program's start is delayed by the timeout, no
# more. Lower bounds show the wait happened; upper bounds allow 500 ms of
# scheduling slack on a loaded machine.
start_fake reply
kill -STOP "$FAKE_PID"
start_ms() { # env... : ms from exec to exit of a program doing nothing
	local t0 t1
	t0=$(date +%s%N)
	run_prog /dev/null "$T/err" "$@" -- say hi || fail "stopped server: the program failed ($*)"
	t1=$(date +%s%N)
	[ ! -s "$T/err" ] || fail "stopped server: stderr not empty ($*)"
	echo $(((t1 - t0) / 1000000))
}
check_delay() { # min max env... (over max: tried again, as within_ms)
	local min=$1 max=$2 ms try
	shift 2
	max=$(bound_ms "$max")
	for try in 1 2 3; do
		ms=$(start_ms "$@")
		echo "stopped server, $*: $ms ms"
		[ "$ms" -ge "$min" ] || fail "stopped server, $*: $ms ms, under $min: no wait"
		[ "$ms" -le "$max" ] && return 0
	done
	fail "stopped server, $*: $ms ms, over $max three times"
}
check_delay 95 600 USDTKIT_HELPER_SOCKET="$SOCK"
check_delay 480 1000 USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=500
check_delay 95 600 USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=12x
check_delay 4980 5600 USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=99999999999999999999
# 0: send, do not wait. Against the same start with registration off, best
# of 5 each, interleaved: a wait would add the default's 100 ms at least,
# whatever a loaded machine adds to both (an absolute bound of 90 ms failed
# where a start alone took more).
best=999999
base=999999
for i in 1 2 3 4 5; do
	ms=$(start_ms USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=0)
	[ "$ms" -lt "$best" ] && best=$ms
	ms=$(start_ms USDTKIT_DISABLE=1)
	[ "$ms" -lt "$base" ] && base=$ms
done
echo "stopped server, timeout 0: best $best ms; registration off: best $base ms"
[ "$((best - base))" -lt 80 ] || fail "timeout 0 still waited ($best ms, $base ms without registration)"
# the whole command list against the stopped server: output unchanged
same_as_base "stopped server" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=$TMO
stop_fake
echo "ok: a stopped server delays by the timeout only"

# A full backlog: a server with listen(0) that never accepts, whose one
# queue slot another client holds. A blocking connect() would wait until
# that client goes away; drti's fails at once.
start_fake backlog
python3 - "$SOCK" "$T/holder.ready" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.setblocking(False)
held = []
for i in range(4):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
        held.append(c)
    except BlockingIOError:
        break
open(sys.argv[2], 'w').write('%d\n' % len(held))
time.sleep(60)
PY
holder=$!
at_exit "kill $holder 2>/dev/null"
for i in $(seq 200); do [ -s "$T/holder.ready" ] && break; sleep 0.01; done
[ -s "$T/holder.ready" ] || fail "the backlog holder did not start"
# drti retries a full backlog (the daemon sheds load) until the deadline:
# 4 waiting requests of 300 ms at most, where a blocking connect would hang
# until the holder goes (60 s).
within_ms $((4 * TMO + $(bound_ms 1500))) "full backlog (4 waits of $TMO ms at most)" \
	USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=$TMO
echo "full backlog: $ELAPSED_MS ms (4 waits of $TMO ms at most)"
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=$TMO USDTKIT_DEBUG=1 -- say x
expect_grep "^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: connect: EAGAIN \($SOCK\) \(after [0-9]+ attempts\)\$" \
	"$T/err" "full backlog: retried, then given up"
kill "$holder" 2>/dev/null || true
stop_fake
echo "ok: a full backlog does not block beyond the timeout"

# A daemon shedding connections (closing them unread, as usdtkit-helperd
# does past its per-user cap) and then answering: drti retries within the
# deadline and registers.
start_fake closefirst:3
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=3000 USDTKIT_DEBUG=1 -- say x ||
	fail "closefirst: the program failed"
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: done, 3 probes \(after 4 attempts\)$' \
	"$T/err" "closefirst: registered at the 4th attempt"
expect_eq "$(grep -c closed-at-accept "$FLOG")" 3 "connections shed"
stop_fake
# A daemon refusing for now (-EAGAIN: the user's share of its parse queue
# full, issue 33), then answering: drti retries within the deadline.
start_fake eagainfirst:3
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=3000 USDTKIT_DEBUG=1 -- say x ||
	fail "eagainfirst: the program failed"
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: done, 3 probes \(after 4 attempts\)$' \
	"$T/err" "eagainfirst: registered at the 4th attempt"
stop_fake
# and within the deadline only: always -EAGAIN costs the timeout, no more
start_fake eagainfirst:1000000
t0=$(_now_us)
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=300 USDTKIT_DEBUG=1 -- say x ||
	fail "eagain: the program failed"
ms=$((($(_now_us) - t0) / 1000))
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: (refused by the helper: EAGAIN|no answer before the timeout) \(after [0-9]+ attempts\)$' \
	"$T/err" "eagain: refused after retries (the last one may be cut by the deadline)"
[ "$ms" -ge 300 ] || fail "eagain: gave up after $ms ms, before its 300 ms deadline"
[ "$ms" -lt "$(bound_ms 3000)" ] || fail "eagain: $ms ms, far past its 300 ms deadline"
stop_fake
# but a stale socket (nobody listening) is not retried: one attempt
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' "$T/stale2.sock"
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$T/stale2.sock" USDTKIT_DEBUG=1 -- say x
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: connect: ECONNREFUSED \([^)]*\)$' "$T/err" \
	"stale socket: one attempt"
echo "ok: shed connections and -EAGAIN are retried within the deadline, refused ones are not"
