#!/bin/bash
# The parse of a new file does not stall the daemon. With the worker hung on
# one file (--test-worker-delay MS:GLOB, test-only), the daemon meanwhile
# answers a program registering a known module and a LIST promptly, parses a
# second new file concurrently, joins a second REGISTER of the hung file to
# the same parse, kills a parse nobody waits for any more, and at the deadline
# kills the hung worker and answers its clients -ETIMEDOUT, leaving no event
# and no worker behind (but the spare, which a last part checks: forked
# ahead, it takes the next new file; killed, it is replaced).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc

ms_now() { echo $(($(date +%s%N) / 1000000)); }
etimedout=$(python3 -c 'import errno; print(-errno.ETIMEDOUT)')
mkdir "$T/hang" "$T/gone" "$T/other"
cp "$LIB" "$T/hang/liblib.so"
cp "$LIB" "$T/gone/liblib.so"
cp "$LIB" "$T/other/liblib.so"
TIMEOUT=8000
start_daemon --parse-timeout $TIMEOUT --test-worker-delay "600000:$T/[hg]*/*"

# A registered program: its module is known from now on.
prog_start a
wait_events 2 "the first program"

# Two clients register the hung file, one after the other: one parse.
export HDCLIENT_WAIT_MS=30000
t_hang=$(ms_now)
"$HDCLIENT" dlreg "$T/hang/liblib.so" >"$T/hang1.out" &
hang1=$!
for i in $(seq 250); do grep -q "hang/liblib.so: parse started" "$DLOG.new" && break; sleep 0.02; done
"$HDCLIENT" dlreg "$T/hang/liblib.so" >"$T/hang2.out" &
hang2=$!
# A client that gives up while its parse hangs: that parse is killed at once.
"$HDCLIENT" dlreg "$T/gone/liblib.so" >/dev/null &
gone=$!
for i in $(seq 250); do grep -q "gone/liblib.so: parse started" "$DLOG.new" && break; sleep 0.02; done
grep -q "gone/liblib.so: parse started" "$DLOG.new" || fail "no parse of the abandoned file started"
kill -9 "$gone"
wait "$gone" 2>/dev/null || true
for i in $(seq 250); do grep -q "gone/liblib.so: nobody waits for its parse" "$DLOG.new" && break; sleep 0.02; done
expect_grep "gone/liblib.so: nobody waits for its parse any more: worker killed" "$DLOG.new" \
	"the parse of a client that went away"

# Meanwhile: a second program of the known module, a LIST, a second new file.
t0=$(ms_now)
prog_start b
t1=$(ms_now)
"$HDCLIENT" list "$PID_b" >"$T/list.out"
t2=$(ms_now)
expect_grep "^entry $PID_b 2 " "$T/list.out" "the second program registered during the hung parse"
"$HDCLIENT" dlreg "$T/other/liblib.so" >"$T/other.out"
t3=$(ms_now)
expect_grep '^status=0 nprobes=1$' "$T/other.out" "a second new file parsed during the hung one"
expect_grep "registered $T/other/liblib.so \(.*\): 1 probe sites, 1 events created" "$DLOG.new" \
	"the second new file's event"
echo "during the hung parse: program registered in $((t1 - t0)) ms, LIST in $((t2 - t1)) ms," \
	"a new file parsed and registered in $((t3 - t2)) ms"
# Bounds far below the hung parse's 8 s, far above what they take (a few ms).
# (not scaled by bound_ms: 3000 ms is the clients' own timeout, which they must not reach)
[ $((t1 - t0)) -lt 3000 ] || fail "a known module waited $((t1 - t0)) ms behind the hung parse"
[ $((t2 - t1)) -lt 3000 ] || fail "a LIST waited $((t2 - t1)) ms behind the hung parse"
[ $((t3 - t2)) -lt 3000 ] || fail "a new file waited $((t3 - t2)) ms behind the hung parse"
running "$hang1" || fail "the hung file's client was answered before its parse ended"

# The daemon's children settle to one: the spare. (One just started is
# "usdtkit-helperd" until its exec and its first call, which names it.)
children_are_only_the_spare() {
	[ "$(ps -o comm= --ppid "$DAEMON_PID" | grep -vcx usdtkit-spare)" = 0 ] &&
		[ "$(ps -o comm= --ppid "$DAEMON_PID" | grep -cx usdtkit-spare)" = 1 ]
}
only_the_spare() {
	wait_until 10 "no worker left running but the spare" children_are_only_the_spare
}

# The deadline: the worker is killed, both clients answered -ETIMEDOUT.
wait_bg "$hang1" 20
wait_bg "$hang2" 20
t4=$(ms_now)
expect_grep "^status=$etimedout nprobes=0\$" "$T/hang1.out" "the hung parse's client"
expect_grep "^status=$etimedout nprobes=0\$" "$T/hang2.out" "the second client of the hung file"
[ $((t4 - t_hang)) -ge $((TIMEOUT - 500)) ] || fail "answered after $((t4 - t_hang)) ms, before the deadline"
[ $((t4 - t_hang)) -lt $((TIMEOUT + 8000)) ] || fail "answered after $((t4 - t_hang)) ms"
expect_eq "$(grep -c "hang/liblib.so: parse started" "$DLOG.new")" 1 "parses of the hung file"
expect_grep "hang/liblib.so: the parser took more than $TIMEOUT ms: killed" "$DLOG.new" "the kill"
for f in "$T/hang/liblib.so" "$T/gone/liblib.so"; do
	# shellcheck disable=SC2046
	grep -qF $(event_names "$f") <(uprobe_events) && fail "events of $f, whose parse failed"
done
# (The spare, started ahead and waiting for a file, is no parse.)
only_the_spare
daemon_healthy

# Everything ordinary still works and is cleaned up.
prog_stop a
prog_stop b
wait_events 0 "after the programs"
stop_daemon

# The bound: 4 workers per uid (root aside); a 5th new file of that uid waits
# its turn in the queue and is parsed when a worker is done.
chmod 755 "$T"
for i in 1 2 3 4 5; do mkdir "$T/q$i" && cp "$LIB" "$T/q$i/liblib.so"; done
start_daemon --parse-timeout 1500 --test-worker-delay "600000:$T/q*/*"
qp=""
for i in 1 2 3 4 5; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$HDCLIENT" dlreg "$T/q$i/liblib.so" \
		>"$T/q$i.out" 2>&1 &
	qp="$qp $!"
done
for p in $qp; do wait_bg "$p" 30; done
for i in 1 2 3 4 5; do
	expect_grep "^status=$etimedout nprobes=0\$" "$T/q$i.out" "queued parse $i"
done
expect_eq "$(grep -c 'parse started' "$DLOG.new")" 5 "parses started"
expect_eq "$(grep -c 'parse queued' "$DLOG.new")" 1 "parses queued behind the per-uid bound"
# (The spare, started ahead and waiting for a file, is no parse.)
only_the_spare
daemon_healthy

# The spare: a worker forked ahead, while the daemon is idle, takes the next
# new file, so that parse begins without a fork; another is forked after it.
# One killed from outside is replaced by a worker forked on the spot.
stop_daemon
start_daemon
spare_pid() { ps -o pid=,comm= --ppid "$DAEMON_PID" | awk '$2 == "usdtkit-spare" { print $1 }'; }
wait_spare() { # [not this pid]
	local i s
	for i in $(seq 250); do
		s=$(spare_pid)
		[ -n "$s" ] && [ "$s" != "${1:-}" ] && { echo "$s"; return 0; }
		sleep 0.02
	done
	return 1
}
s1=$(wait_spare) || fail "no spare worker after the start"
# The spare is the daemon's binary executed anew, not a forked copy of the
# daemon with its threads' locks (worker_child.c): the same file, its own
# arguments, and (under ASLR) its own address layout, which a fork shares.
expect_eq "$(readlink "/proc/$s1/exe")" "$(readlink "/proc/$DAEMON_PID/exe")" "the spare's program"
tr '\0' ' ' <"/proc/$s1/cmdline" | grep -q -- ' --usdtkit-parse-worker ' ||
	fail "the spare's arguments: $(tr '\0' ' ' <"/proc/$s1/cmdline")"
# (Where the program's headers are, AT_PHDR of its auxv: no path to parse,
# which may have spaces: the fresh check's clone is at `/tmp/usdt kit`.)
at_phdr() { od -An -v -tu8 -w16 "/proc/$1/auxv" | awk '$1 == 3 { print $2; exit }'; }
if [ "$(cat /proc/sys/kernel/randomize_va_space)" != 0 ]; then
	[ -n "$(at_phdr "$s1")" ] || fail "no AT_PHDR in the spare's auxv"
	[ "$(at_phdr "$s1")" != "$(at_phdr "$DAEMON_PID")" ] ||
		fail "the spare's program is loaded where the daemon's is: a forked copy, not a new program"
fi
for d in s1 s2 s3; do mkdir "$T/$d" && cp "$LIB" "$T/$d/liblib.so"; done
"$HDCLIENT" dlreg "$T/s1/liblib.so" >"$T/s1.out"
expect_grep "^status=0 nprobes=1\$" "$T/s1.out" "a new file, the spare ready"
expect_grep "s1/liblib.so: parse started \(worker $s1, the spare\)" "$DLOG.new" "the spare's parse"
s2=$(wait_spare "$s1") || fail "no new spare after the first one was used"
# Killed after it was handed the file (stopped first, so it has not read it):
# the daemon sees the answer's socket reset with nothing read, and forks a
# worker for that parse.
kill -STOP "$s2"
"$HDCLIENT" dlreg "$T/s2/liblib.so" >"$T/s2.out" &
cl=$!
for i in $(seq 250); do
	grep -q "s2/liblib.so: parse started (worker $s2, the spare)" "$DLOG.new" && break
	sleep 0.02
done
kill -KILL "$s2"
wait_bg "$cl" 10
expect_grep "^status=0 nprobes=1\$" "$T/s2.out" "a new file, the spare killed while it had it"
expect_grep "s2/liblib.so: the spare died before its parse: worker [0-9]+ forked for it" "$DLOG.new" \
	"the parse given a worker of its own"
# Killed before: the daemon finds it dead when it hands it the file, or just
# after (either way the file gets a worker of its own).
s3=$(wait_spare "$s2") || fail "no spare after the second one"
kill -KILL "$s3"
"$HDCLIENT" dlreg "$T/s3/liblib.so" >"$T/s3.out"
expect_grep "^status=0 nprobes=1\$" "$T/s3.out" "a new file, the spare killed from outside"
expect_grep "s3/liblib.so: (parse started \(worker [0-9]+\)|the spare died before its parse: worker [0-9]+ forked)" \
	"$DLOG.new" "a worker forked for it"
wait_spare "$s3" >/dev/null || fail "no spare again after that"
wait_events 0 "after the spare's files (their clients exited)"
daemon_healthy
HD_OK=1
exit 0
