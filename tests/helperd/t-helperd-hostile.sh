#!/bin/bash
# usdtkit-helperd against lying and broken clients: an address in no
# mapping, in an anonymous mapping, in a file without notes; every kind of
# malformed packet; idle and piled-up connections; a parser that overruns its
# time. Each is refused with the errno protocol.h and the README promise,
# and the daemon stays healthy and still registers an honest client.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
chmod 755 "$T" # the socket is reachable by another uid (the held-connections check)
start_daemon

errno_of() { python3 -c "import errno,sys; print(-errno.$1)"; }

# 1. Lies about the address.
"$HDCLIENT" register unmapped >"$T/out"
expect_grep "^status=$(errno_of EFAULT) nprobes=0\$" "$T/out" "an address in no mapping"
"$HDCLIENT" register anon >"$T/out"
expect_grep "^status=$(errno_of ENXIO) nprobes=0\$" "$T/out" "an address in an anonymous mapping"
"$HDCLIENT" register self >"$T/out"
expect_grep "^status=$(errno_of ENODATA) nprobes=0\$" "$T/out" "an address in a file without notes"
"$HDCLIENT" unregister self >"$T/out"
expect_grep "^status=$(errno_of ENOENT)\$" "$T/out" "unregistering what was never registered"
daemon_healthy
expect_eq "$(our_events | wc -l)" 0 "events after the lies"

# 2. Garbage: every malformed packet is answered -EPROTO (or the connection
# dropped) and changes nothing.
for kind in short long magic version type size reply tiny empty; do
	"$HDCLIENT" garbage "$kind" >"$T/out"
	grep -qxE "status=$(errno_of EPROTO)|closed" "$T/out" ||
		{ cat "$T/out" >&2; fail "garbage $kind: not refused"; }
	daemon_healthy
done
# Random packets of random sizes.
python3 - "$SOCK" <<'PYEOF' || fail "random packets"
import os, socket, sys, random
import usdtproto
random.seed(5)
for i in range(300):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    n = random.choice([0, 1, 8, 15, 16, 23, 24, 25, 31, 32, 64, 200, 5000])
    b = bytearray(os.urandom(n))
    if n >= 16 and random.random() < 0.5:
        typ = random.choice([usdtproto.REGISTER, usdtproto.UNREGISTER, usdtproto.LIST, usdtproto.REPLY])
        b[0:8] = usdtproto.hdr(typ, 0)[0:8]  # a valid magic, version and type
    try:
        s.send(bytes(b))
        s.settimeout(2)
        s.recv(64)
    except (socket.timeout, ConnectionResetError, BrokenPipeError):
        pass
    s.close()
PYEOF
daemon_healthy

# 3. A connection that never sends is dropped after the idle limit (1 s).
"$HDCLIENT" idle >"$T/out"
expect_grep "^closed after [0-9]+ ms\$" "$T/out" "an idle connection"
ms=$(awk '{print $3}' "$T/out")
[ "$ms" -ge 900 ] && [ "$ms" -le "$(bound_ms 5000)" ] || fail "idle connection closed after $ms ms, not about 1000"

# 4. Connections piled up by another uid cannot lock root's clients out.
mkfifo "$T/hold.in"
setpriv --reuid=65534 --regid=65534 --clear-groups "$HDCLIENT" hold 300 <"$T/hold.in" >"$T/hold.out" &
hold_pid=$!
exec {hold_fd}>"$T/hold.in"
for i in $(seq 250); do grep -q '^held' "$T/hold.out" && break; sleep 0.02; done
expect_grep '^held [0-9]+$' "$T/hold.out" "the held connections"
daemon_healthy
prog_start a
wait_events 2 "an honest program while another uid holds connections"
exec {hold_fd}>&-
kill "$hold_pid" 2>/dev/null || true
wait "$hold_pid" || true
prog_stop a
wait_events 0 "after the honest program"

# 5. Hostile files: mutants of a -G module (random bytes flipped in the ELF
# header, program and section headers and the note sections), each mapped by
# a client that registers it. Every one is answered, nothing crashes the
# daemon, and every event one of them obtained is gone once it is unmapped.
mkdir "$T/mut"
python3 - "$LIB" "$T/mut" <<'PYEOF' || fail "making the mutants"
import random, subprocess, sys
src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
ranges = [(0, 64)]
for line in subprocess.run(["readelf", "-SW", src], capture_output=True, text=True).stdout.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] in (".note.stapsdt", ".note.usdtkit", ".stapsdt.base"):
        ranges.append((int(f[4], 16), int(f[5], 16)))
e_phoff = int.from_bytes(data[32:40], "little"); e_shoff = int.from_bytes(data[40:48], "little")
ranges += [(e_phoff, 56 * 8), (e_shoff, 64 * 8)]
random.seed(1234)
for i in range(150):
    b = bytearray(data)
    for _ in range(random.choice([1, 2, 4, 8, 16])):
        off, size = random.choice(ranges)
        p = off + random.randrange(max(size, 1))
        if p < len(b):
            b[p] = random.choice([0, 0xff, random.randrange(256), b[p] ^ (1 << random.randrange(8))])
    open(f"{out}/m{i:03d}", "wb").write(bytes(b))
PYEOF
"$HDCLIENT" mapreg "$T"/mut/m* >"$T/mut.out"
expect_eq "$(grep -c ' status=' "$T/mut.out")" 150 "mutants answered"
expect_no_grep 'status=-100[01]' "$T/mut.out" "a mutant left without a valid answer"
# A file the worker refuses whole (libelf, its headers) comes back as an
# answer of its own, with its reason: never a stream the daemon cannot read.
expect_no_grep "status=$(errno_of EPROTO) " "$T/mut.out" "a mutant whose worker's answer was unreadable"
expect_no_grep "answer is (incomplete|malformed)" "$DLOG.new" "the daemon's log of the mutants"
echo "mutants: $(grep -c 'status=0 ' "$T/mut.out") registered, the others refused:" \
	"$(grep -o 'status=-[0-9]*' "$T/mut.out" | sort | uniq -c | tr '\n' ' ')"
daemon_healthy
# (named by their path or their alias: both looked for)
for f in "$T"/mut/*; do
	# shellcheck disable=SC2046
	grep -qF $(event_names "$f") <(uprobe_events) && fail "events of the mutant $f left behind"
done

# 6. A parser that takes too long costs that registration only.
stop_daemon
# (--test-worker-delay makes the worker sleep before parsing: a hung parser)
start_daemon --parse-timeout 300 --test-worker-delay 5000
t0=$(date +%s%N)
prog_start b
t1=$(date +%s%N)
expect_eq "$(our_events | wc -l)" 0 "events when the parser was killed"
grep -q 'the parser took more than 300 ms: killed' "$DLOG.new" ||
	fail "no log of the parser being killed"
# (not scaled by bound_ms: 3000 ms is the drti timeout it must not reach)
[ $(((t1 - t0) / 1000000)) -lt 3000 ] || fail "a hung parser delayed the program by $(((t1 - t0) / 1000000)) ms"
daemon_healthy
prog_stop b
stop_daemon

# 7. Per-uid rate (every request): another uid over --rate is refused (-EAGAIN), root is not.
start_daemon --rate 5
setpriv --reuid=65534 --regid=65534 --clear-groups "$HDCLIENT" bench 40 "$LIB" >"$T/rate.out" 2>&1 || true
expect_grep 'failed [1-9][0-9]*$' "$T/rate.out" "REGISTERs over the rate, uid 65534"
refused=$(grep -c "request of pid [0-9]* uid 65534: over the rate" "$DLOG.new" || true)
[ "$refused" -ge 20 ] || fail "only $refused of 40 REGISTERs at 5/s (burst 10) were refused"
"$HDCLIENT" bench 40 "$LIB" >"$T/rate.out" 2>&1 || fail "root was limited: $(cat "$T/rate.out")"
daemon_healthy
stop_daemon

# 8. After all that, an ordinary daemon still works end to end.
start_daemon
prog_start c
wait_events 2 "an honest program at the end"
prog_stop c
wait_events 0 "after exit"
HD_OK=1
exit 0
