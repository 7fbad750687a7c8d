#!/bin/bash
# Fault: truncated and oversized messages. Each kind is sent on its own
# connection: shorter than a header, a header alone, shorter than its type's
# size, longer than it, more than the daemon's 128-byte read, 64 KiB, a size
# field that lies (larger, smaller, zero, huge), and a valid request followed
# by junk in the same packet; then a stream of all of them from 16 clients
# at once. (t-helperd-hostile covers wrong magic, version and type, and
# random packets, one client at a time.)
# Guarantees: each is refused (-EPROTO) or the connection dropped, and
# changes nothing (the LIST, the events and the state file are as before);
# the daemon keeps serving (a program registers during the stream, its
# output unchanged).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc

cat >"$T/bad.py" <<'EOF'
# bad.py SOCKET LIB MODE: maps LIB (its drti off) and builds every kind
# around the address of its lib_call, so a malformed REGISTER taken for a
# valid one would register LIB. MODE "each" sends every kind once and
# prints "KIND refused|dropped|ANSWER", then "control ANSWER" for a valid
# REGISTER; "stream SEED N" sends N random kinds.
import ctypes, os, random, socket, struct, sys
path, lib, mode = sys.argv[1], sys.argv[2], sys.argv[3]
os.environ["USDTKIT_DISABLE"] = "1"
addr = ctypes.cast(ctypes.CDLL(lib).lib_call, ctypes.c_void_p).value
import usdtproto
from usdtproto import REGISTER as REG, reply_status
def hdr(t, size, seq=5):
    return usdtproto.hdr(t, size, seq)
reg = usdtproto.module(REG, addr, seq=5)            # a valid REGISTER: 24 bytes
lst = usdtproto.list_req(0, seq=5)                  # a valid LIST
kinds = {
    "empty": b"",
    "tiny3": reg[:3],
    "under-header15": reg[:15],
    "header-only16": reg[:16],
    "header+1": reg[:17],
    "short23": reg[:23],
    "long25": reg + b"\0",
    "long32": reg + b"\0" * 8,
    "over-read200": reg + b"\xaa" * 176,
    "64KiB": reg + b"\x55" * (65536 - 24),
    "size-larger": hdr(REG, 1000) + struct.pack("=Q", addr),
    "size-smaller": hdr(REG, 16) + struct.pack("=Q", addr),
    "size-zero": hdr(REG, 0) + struct.pack("=Q", addr),
    "size-huge": hdr(REG, 0xffffffff) + struct.pack("=Q", addr),
    "list-short": lst[:20],
    "list-long": lst + b"junk",
    "valid+junk": reg + b"\x00" * 8 + reg,
    "size-matches-long": hdr(REG, 40) + struct.pack("=Q", addr) + b"\0" * 16,
}
def send(data):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    try:
        s.send(data)
        ans = s.recv(128)
    except (ConnectionResetError, BrokenPipeError):
        ans = b""
    except socket.timeout:
        return "timeout"
    finally:
        s.close()
    if not ans:
        return "dropped"
    if len(ans) == 24:
        st = reply_status(ans)
        return "refused" if st == -71 else "status=%d" % st
    return "answer of %d bytes" % len(ans)
if mode == "each":
    for k, d in kinds.items():
        print(k, send(d), flush=True)
    print("control", send(reg), flush=True)
else:
    random.seed(int(sys.argv[4]))
    bad = 0
    for i in range(int(sys.argv[5])):
        k = random.choice(list(kinds))
        r = send(kinds[k])
        if r not in ("refused", "dropped"):
            print("stream", k, r, flush=True)
            bad += 1
    print("stream done, bad", bad, flush=True)
EOF

# --no-board: every start asks (REGISTER is what this test puts under fault)
start_daemon --no-board
prog_start a
wait_events 2 "the program"
USDTKIT_DISABLE=1 run_prog >"$T/expected"
expect_grep '^fired 3$' "$T/expected" "the program's own output"
snapshot() { "$HDCLIENT" list | sort; our_events; sha256sum <"$SOCK.state"; }
# (The events are written by the daemon's writer thread, the state file by
# its loop after them: the snapshot once the state file has them.)
_state_has() { [ "$(grep -c '^site ' "$SOCK.state")" -eq "$1" ]; }
poll_until 20 _state_has 2 || fail "the state file does not list the program's 2 sites"
snapshot >"$T/before"

python3 "$T/bad.py" "$SOCK" "$LIB" each >"$T/each.out"
cat "$T/each.out"
expect_eq "$(grep -cE ' (refused|dropped)$' "$T/each.out")" 18 "malformed messages refused or dropped"
# (the control shows that the same address, well-formed, would have changed something)
expect_grep '^control status=0$' "$T/each.out" "a valid REGISTER of the same address"
wait_events 2 "after the control client exited"
daemon_healthy
poll_until 20 _state_has 2 || true
snapshot >"$T/after"
cmp -s "$T/before" "$T/after" || { diff "$T/before" "$T/after" >&2; fail "malformed messages changed something"; }

# A stream from 16 clients at once, while a program starts and registers.
pids=""
for c in $(seq 16); do
	python3 "$T/bad.py" "$SOCK" "$LIB" stream "$c" 200 >"$T/stream$c.out" &
	pids="$pids $!"
done
for i in 1 2 3; do
	USDTKIT_DEBUG=1 run_prog >"$T/got"
	cmp -s "$T/expected" "$T/got" || { diff "$T/expected" "$T/got" >&2; fail "run $i: output differs"; }
	grep -q 'done, 2 probes' "$T/prog.err" || { cat "$T/prog.err" >&2; fail "run $i: not registered"; }
done
for p in $pids; do wait_bg "$p" 120; done
for c in $(seq 16); do
	expect_grep '^stream done, bad 0$' "$T/stream$c.out" "client $c's stream"
done
daemon_healthy
poll_until 20 _state_has 2 || true
snapshot >"$T/after"
cmp -s "$T/before" "$T/after" || { diff "$T/before" "$T/after" >&2; fail "the stream changed something"; }
echo "16 clients x 200 malformed packets: all refused or dropped; 3 programs registered meanwhile"
prog_stop a
wait_events 0 "after the program"
HD_OK=1
exit 0
