#!/bin/bash
# Caps that hold (issue 21, item 3), attacked as nobody: 280 processes of
# one uid against a daemon limited to 256 descriptors.
#
#   A. The defaults: --max-fds-per-uid is a quarter of the descriptor limit
#      (64 here), so nobody gets at most that many processes watched; every
#      other one is refused -EDQUOT at once (no hang, no closed connection),
#      a process of another uid is still registered, a real drti program of
#      nobody over its cap runs exactly as with registration disabled (same
#      output, nothing on stderr, no wait beyond drti's bound), and the
#      daemon's CPU time stays small.
#   B. The caps lifted past the descriptor limit: descriptors run out.
#      accept() then fails with EMFILE and leaves the connection queued; the
#      daemon must neither spin (its CPU time is measured while clients keep
#      connecting) nor hang them (each is refused), and serves again once
#      descriptors are free.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
command -v prlimit >/dev/null || fail "prlimit missing (util-linux)"
CLIENT="$USDTKIT_BUILDDIR/tests/crash/crashclient"
[ -x "$CLIENT" ] || fail "no $CLIENT: build first"
chmod 755 "$T" # the socket and the programs are reachable by uid nobody
build_progs gcc
N=280
NOFILE=256
HD_DEBUG=
DAEMON_START_S=60
HD_WRAP="prlimit --nofile=$NOFILE:$NOFILE --"

# The daemon's CPU time so far, in clock ticks (utime + stime).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$DAEMON_PID/stat"; }
TICKS=$(getconf CLK_TCK)

# N holders of LIB as uid U, each registering once and staying.
HOLDERS=()
holders_start() { # U N TAG [LIB]
	local i lib=${4:-$LIB}
	for ((i = 0; i < $2; i++)); do
		(
			close_prog_fds
			exec setpriv --reuid="$1" --regid="$1" --clear-groups "$CLIENT" hold-quiet "$lib"
		) >"$T/$3.$i.out" 2>&1 &
		HOLDERS+=($!)
	done
	at_exit "kill -9 ${HOLDERS[*]} 2>/dev/null"
	for ((i = 0; i < $2; i++)); do
		poll_until 120 grep -q '^ready' "$T/$3.$i.out" || { cat "$T/$3.$i.out" >&2; fail "$3 holder $i did not register"; }
	done
}
# One process of uid U registers LIB: its status line.
one_reg() { # U [LIB]
	local p
	setpriv --reuid="$1" --regid="$1" --clear-groups "$CLIENT" hold-quiet "${2:-$LIB}" >"$T/one.out" 2>&1 &
	p=$!
	poll_until 120 grep -q '^ready' "$T/one.out" || true
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	head -1 "$T/one.out"
}
holders_stop() {
	kill -9 "${HOLDERS[@]}" 2>/dev/null || true
	wait "${HOLDERS[@]}" 2>/dev/null || true
	HOLDERS=()
}
# How many holders of TAG got each answer, as "status count" lines.
statuses() { cat "$T/$1".*.out | sed -n 's/^status=\([^ ]*\).*/\1/p' | sort | uniq -c | awk '{print $2, $1}'; }
count_status() { statuses "$1" | awk -v s="$2" '$1 == s {print $2}' | grep . || echo 0; }

# --- A: the default caps ---
# Two copies of one library (two files, one event each, sdt_${P}lib/call).
cp "$LIB" "$T/liblib2.so"
LIB2="$T/liblib2.so"
calls() { grep -c "^p:sdt_${P}lib/call " <(uprobe_events) || true; }
HD_DEBUG=--debug start_daemon
expect_grep "^Max open files +$NOFILE +$NOFILE" "/proc/$DAEMON_PID/limits" "the daemon's descriptor limit"
# A process of uid 4242 maps LIB first and registers it.
(
	close_prog_fds
	exec setpriv --reuid=4242 --regid=4242 --clear-groups "$CLIENT" hold-quiet "$LIB"
) >"$T/u4242.out" 2>&1 &
P4242=$!
at_exit "kill -9 $P4242 2>/dev/null"
poll_until 60 grep -q '^ready' "$T/u4242.out" || fail "A: uid 4242's process"
expect_grep '^status=0 ' "$T/u4242.out" "A: uid 4242's registration"
c0=$(cpu_ticks)
t0=$(_now_us)
# The flood: 280 processes of nobody mapping LIB2.
holders_start 65534 $N a "$LIB2"
statuses a
ok=$(count_status a 0)
refused=$(count_status a -122)
echo "A: $ok of $N processes of nobody registered, $refused refused -EDQUOT"
[ "$ok" -ge 1 ] && [ "$ok" -le $((NOFILE / 4)) ] || fail "A: $ok registered (cap: $((NOFILE / 4)) descriptors)"
expect_eq "$((ok + refused))" $N "A: every holder answered 0 or -EDQUOT"
grep -q "uid 65534: at its cap" "$DLOG.new" || fail "A: the refusal is not logged"
# Once a minute at most, however many refusals (216 here).
nwarn=$(grep -c 'at its cap' "$DLOG.new")
[ "$nwarn" -le $((($(_now_us) - t0) / 60000000 + 1)) ] || fail "A: $nwarn log lines about the cap in $((($(_now_us) - t0) / 1000000)) s (once a minute)"
# Another uid is still served.
out=$(one_reg 4243 "$LIB2")
echo "uid 4243: $out"
grep -q '^status=0 ' <<<"$out" || fail "A: a process of another uid was not registered: $out"
# nobody, at its cap, maps LIB too: refused, not watched. When LIB's only
# known process (uid 4242's) exits, the retirement finds nobody's process
# mapping LIB and cannot adopt it: LIB keeps its event until it is gone.
(
	close_prog_fds
	exec setpriv --reuid=65534 --regid=65534 --clear-groups "$CLIENT" hold-quiet "$LIB"
) >"$T/nl.out" 2>&1 &
PNL=$!
at_exit "kill -9 $PNL 2>/dev/null"
poll_until 120 grep -q '^ready' "$T/nl.out" || fail "A: nobody's process of LIB"
expect_grep '^status=-122 ' "$T/nl.out" "A: nobody's process of LIB, at the cap"
expect_eq "$(calls)" 2 "A: the events of LIB and LIB2"
kill -9 $P4242
wait_log 'could not be adopted: kept' "A: LIB's retirement"
expect_eq "$(calls)" 2 "A: LIB's event, mapped by a process the daemon could not adopt"
kill -9 $PNL
wait $PNL 2>/dev/null || true
poll_until 30 eval '[ "$(calls)" -eq 1 ]' || fail "A: LIB's event, once nobody maps it ($(calls) call events)"
# A real drti program of nobody, over its cap: as if registration were off.
cp "$PROG" "$T/prog-a" && chmod 755 "$T/prog-a"
runas() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
s0=$(_now_us)
want=$(printf 'fire 3\nexit\n' | USDTKIT_DISABLE=1 runas "$T/prog-a" 2>"$T/off.err" | sed 's/^ready [0-9]*$/ready/')
off_ms=$((($(_now_us) - s0) / 1000))
s0=$(_now_us)
got=$(printf 'fire 3\nexit\n' | runas "$T/prog-a" 2>"$T/on.err" | sed 's/^ready [0-9]*$/ready/')
ms=$((($(_now_us) - s0) / 1000))
expect_eq "$got" "$want" "A: the over-cap program's output"
[ -s "$T/on.err" ] && { cat "$T/on.err" >&2; fail "A: the over-cap program wrote to stderr"; }
echo "A: the over-cap drti program ran in $ms ms, $off_ms ms with registration off (drti's timeout: $USDTKIT_HELPER_TIMEOUT_MS ms)"
# Refused at once: it did not wait for drti's timeout.
[ $((ms - off_ms)) -lt "$USDTKIT_HELPER_TIMEOUT_MS" ] || fail "A: the over-cap program took $ms ms ($off_ms ms with registration off)"
grep -q "registered $T/prog-a" "$DLOG.new" && fail "A: the over-cap program's file was registered"
nfd=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
cpu=$(($(cpu_ticks) - c0))
wall=$((($(_now_us) - t0) / 1000))
echo "A: daemon: $nfd descriptors open; CPU $((cpu * 1000 / TICKS)) ms over $wall ms"
[ "$nfd" -lt $NOFILE ] || fail "A: the daemon ran out of descriptors ($nfd)"
[ $((cpu * 1000 / TICKS)) -le $((wall / 2)) ] || fail "A: the daemon used $((cpu * 1000 / TICKS)) ms of CPU in $wall ms"
holders_stop
wait_events 0 "A: after every holder exited"
stop_daemon

# --- B: the caps lifted: descriptors run out ---
start_daemon --max-fds-per-uid 100000 --max-procs-per-uid 100000
holders_start 65534 $N b
statuses b
ok=$(count_status b 0)
echo "B: $ok of $N processes registered before the descriptors ran out"
[ "$ok" -lt $N ] || fail "B: all $N registered: the descriptors did not run out"
for s in $(statuses b | awk '{print $1}'); do
	case $s in 0 | -24 | closed) ;; *) fail "B: a holder got status=$s" ;; esac
done
# Registrations need 3 descriptors for a moment and keep 1, so they stop
# with 2 free: connections that say nothing (held until the idle limit, then
# opened again) take those, and every other client meets EMFILE at accept().
exec {HR}> >(exec setpriv --reuid=65534 --regid=65534 --clear-groups "$HDCLIENT" hold-renew 4 >"$T/hr.out" 2>&1)
at_exit "exec $HR>&-"
poll_until 10 grep -q '^held' "$T/hr.out" || fail "B: the held connections"
# While exhausted, clients keep coming: the daemon must sleep between them.
c0=$(cpu_ticks)
t0=$(_now_us)
end=$(($(_now_us) + 3000000))
n=0
while [ "$(_now_us)" -lt "$end" ]; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CLIENT" hold-quiet "$LIB" >"$T/late.out" 2>&1 &
	lp=$!
	sleep 0.02
	kill -9 $lp 2>/dev/null
	wait $lp 2>/dev/null || true
	n=$((n + 1))
done
cpu=$(($(cpu_ticks) - c0))
wall=$((($(_now_us) - t0) / 1000))
echo "B: exhausted: $n clients in $wall ms, daemon CPU $((cpu * 1000 / TICKS)) ms"
exec {HR}>&-
grep -q 'out of descriptors: connections refused' "$DLOG.new" || fail "B: no shedding logged"
[ $((cpu * 1000 / TICKS)) -le $((wall / 16)) ] || fail "B: the daemon used $((cpu * 1000 / TICKS)) ms of CPU in $wall ms while out of descriptors (a spin)"
kill -0 "$DAEMON_PID" || fail "B: the daemon died"
holders_stop
wait_events 0 "B: after every holder exited"
# Descriptors free again: served.
out=$(one_reg 0)
grep -q '^status=0 ' <<<"$out" || fail "B: not served once descriptors were free: $out"
stop_daemon
HD_OK=1
exit 0
