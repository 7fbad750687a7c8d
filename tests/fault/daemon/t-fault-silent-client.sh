#!/bin/bash
# Fault: clients that connect and never send, many at once, of two uids
# (nobody and the traced program's own, root), each below its connection
# cap so that only the idle deadline (1 s, kernel-helper/README.md) can end
# them. Guarantees: every one is dropped after the deadline, none before;
# meanwhile the daemon serves everyone else (programs register with output
# unchanged, LIST answers); afterwards its descriptors are back.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
chmod 755 "$T"
K=60 # connections per uid: below the per-uid cap of 64
nfds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }

# K silent connections; prints, for each, after how many ms the daemon closed
# it ("open" if it did not within 10 s).
cat >"$T/silent.py" <<'EOF'
import select, socket, sys, time
path, k = sys.argv[1], int(sys.argv[2])
socks = []
for i in range(k):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    socks.append((s, time.monotonic()))
print("connected", k, flush=True)
left = {s.fileno(): (s, t0) for s, t0 in socks}
p = select.poll()
for fd in left:
    p.register(fd, select.POLLIN)
end = time.monotonic() + 10
while left and time.monotonic() < end:
    for fd, ev in p.poll(100):
        s, t0 = left.pop(fd)
        p.unregister(fd)
        data = s.recv(64) if ev & select.POLLIN else b""
        print("closed" if not data else "answered", round((time.monotonic() - t0) * 1000), flush=True)
for fd in left:
    print("open", flush=True)
EOF

# --no-board: every start asks (REGISTER is what this test puts under fault)
start_daemon --no-board
prog_start a
wait_events 2 "the program"
USDTKIT_DISABLE=1 run_prog >"$T/expected"
expect_grep '^fired 3$' "$T/expected" "the program's own output"
fds0=$(nfds)

setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$T/silent.py" "$SOCK" $K >"$T/nobody.out" &
s1=$!
python3 "$T/silent.py" "$SOCK" $K >"$T/root.out" &
s2=$!
for f in nobody root; do
	for i in $(seq 250); do grep -q '^connected' "$T/$f.out" && break; sleep 0.02; done
	expect_grep "^connected $K\$" "$T/$f.out" "the silent connections of $f"
done
# Served meanwhile (within the first second of silence and after).
for i in 1 2 3 4 5; do
	USDTKIT_DEBUG=1 run_prog >"$T/got"
	cmp -s "$T/expected" "$T/got" || { diff "$T/expected" "$T/got" >&2; fail "run $i: output differs"; }
	grep -q 'done, 2 probes' "$T/prog.err" || { cat "$T/prog.err" >&2; fail "run $i: not registered"; }
	"$HDCLIENT" list "$PID_a" >"$T/list"
	expect_grep "^entry $PID_a 2 " "$T/list" "LIST during the silence"
done
wait_bg "$s1" 30
wait_bg "$s2" 30
for f in nobody root; do
	expect_eq "$(grep -c '^closed ' "$T/$f.out")" $K "$f's silent connections closed by the daemon"
	min=$(awk '/^closed/ {print $2}' "$T/$f.out" | sort -n | head -1)
	max=$(awk '/^closed/ {print $2}' "$T/$f.out" | sort -n | tail -1)
	echo "$f: $K silent connections closed after $min to $max ms (idle limit 1000 ms)"
	[ "$min" -ge 900 ] || fail "$f: a silent connection was closed after $min ms, before the idle limit"
	[ "$max" -le "$(bound_ms 5000)" ] || fail "$f: a silent connection lived $max ms"
done
for i in $(seq 100); do [ "$(nfds)" -le "$fds0" ] && break; sleep 0.05; done
expect_eq "$(nfds)" "$fds0" "the daemon's descriptors after the silent clients"
daemon_healthy
prog_stop a
wait_events 0 "after the program"
HD_OK=1
exit 0
