#!/bin/bash
# drti against a stand-in daemon (fakehelperd) that records what it gets:
# the exact REGISTER and UNREGISTER messages (protocol.h: magic "USDT",
# version, type, size, one 24-byte packet), sent by the process itself (the
# server's SO_PEERCRED pid), for the program and a dlopen'ed library, each
# address pointing into that module's own .note.usdtkit section (checked
# through the process's /proc/PID/maps and readelf's section table); the
# library unregistered at dlclose, waiting for the answer; the program
# unregistered at exit, not waiting for it.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
build_progs gcc

# The protocol's values, from protocol.h itself.
PH="$USDTKIT_SRCDIR/kernel-helper/protocol.h"
const() { sed -n "s/^[[:space:]]*$1 = \\([0-9x]*\\),*.*/\\1/p; s/^#define $1 \\([0-9x]*\\)u*.*/\\1/p" "$PH" | head -1; }
MAGIC=$(python3 -c 'import struct; print("0x%08x" % struct.unpack("<I", b"USDT")[0])')
VERSION=$(const USDT_PROTO_VERSION)
T_REG=$(const USDT_MSG_REGISTER)
T_UNREG=$(const USDT_MSG_UNREGISTER)
[ -n "$VERSION" ] && [ -n "$T_REG" ] && [ -n "$T_UNREG" ] || fail "cannot read protocol.h"
# sizeof(struct usdt_msg_module): the hdr (4 + 2 + 2 + 4 + 4) and a uint64_t
MSGSIZE=24

check_msg() { # LINE TYPE PID ADDR-or-"" what
	local l=$1
	expect_eq "$(field "$l" magic)" "$MAGIC" "$5: magic"
	expect_eq "$(field "$l" version)" "$VERSION" "$5: version"
	expect_eq "$(field "$l" type)" "$2" "$5: type"
	expect_eq "$(field "$l" size)" "$MSGSIZE" "$5: size field"
	expect_eq "$(field "$l" len)" "$MSGSIZE" "$5: packet length"
	expect_eq "$(field "$l" pid)" "$3" "$5: sender pid (SO_PEERCRED)"
	expect_eq "$(field "$l" uid)" "$(id -u)" "$5: sender uid"
	[ -z "$4" ] || expect_eq "$(field "$l" addr)" "$4" "$5: address"
}

# Which module and where: ADDR in MAPS -> the mapped file and file offset,
# which must lie inside that file's .note.usdtkit section, and at a note
# whose owner is "usdtkit".
check_addr() { # ADDR MAPS EXPECTED-FILE what
	python3 - "$1" "$2" "$3" <<'PY' || fail "$4: the address does not lead to the module's note"
import os, re, struct, subprocess, sys
addr, maps, want = int(sys.argv[1], 16), sys.argv[2], os.path.realpath(sys.argv[3])
for line in open(maps):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    if lo <= addr < hi and len(f) >= 6:
        path, off = os.path.realpath(f[5]), int(f[2], 16) + addr - lo
        break
else:
    sys.exit('%#x is in no file mapping' % addr)
if path != want:
    sys.exit('%#x is in %s, not %s' % (addr, path, want))
out = subprocess.run(['readelf', '-SW', path], capture_output=True, text=True).stdout
m = re.search(r'\]\s+\.note\.usdtkit\s+NOTE\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)', out)
if not m:
    sys.exit('%s has no .note.usdtkit section' % path)
soff, ssize = int(m.group(1), 16), int(m.group(2), 16)
if not soff <= off < soff + ssize:
    sys.exit('file offset %#x is outside .note.usdtkit [%#x, %#x)' % (off, soff, soff + ssize))
with open(path, 'rb') as fh:
    fh.seek(off)
    namesz, descsz, ntype = struct.unpack('<III', fh.read(12))
    if (namesz, ntype, fh.read(8)) != (8, 1, b'usdtkit\0'):
        sys.exit('no usdtkit note at file offset %#x' % off)
PY
}

run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- errno fds probe dlopen "$LIB" dlclose fds ||
	fail "baseline run failed"

start_fake reply 7
rm -f "$T/pids"
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" -- errno fds probe pid "$T/pids" \
	maps "$T/maps1" dlopen "$LIB" maps "$T/maps2" dlclose fds || fail "the program failed"
cmp -s "$T/base.out" "$T/out" || { diff "$T/base.out" "$T/out" >&2; fail "stdout differs"; }
[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "drti printed without debug"; }
wait_msgs 4 || true
msgs >"$T/msgs"
cat "$T/msgs"
expect_eq "$(nmsgs)" 4 "number of messages"
pid=$(sed -n 's/^pid //p' "$T/pids")
m1=$(sed -n 1p "$T/msgs") m2=$(sed -n 2p "$T/msgs") m3=$(sed -n 3p "$T/msgs") m4=$(sed -n 4p "$T/msgs")
check_msg "$m1" "$T_REG" "$pid" "" "program REGISTER"
A=$(field "$m1" addr)
check_msg "$m2" "$T_REG" "$pid" "" "library REGISTER at dlopen"
L=$(field "$m2" addr)
check_msg "$m3" "$T_UNREG" "$pid" "$L" "library UNREGISTER at dlclose"
check_msg "$m4" "$T_UNREG" "$pid" "$A" "program UNREGISTER at exit"
[ "$A" != "$L" ] || fail "program and library sent the same address"
check_addr "$A" "$T/maps1" "$PROG" "program"
check_addr "$L" "$T/maps2" "$LIB" "library"
# the answer's probe count is what the server said (7), as debug reports it
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_DEBUG=1 -- say x
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: done, 7 probes$' "$T/err" \
	"debug line of a registration answered with 7 probes"
echo "ok: REGISTER/UNREGISTER messages, sender, addresses in the modules' notes"

# A second program in the same run registers its own module, not the first's.
stop_fake
start_fake reply
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" -- dlopen "$LIB" dlopen "$LIB" dlclose say x
wait_msgs 3 || true
# dlopen twice: one load (the constructor runs once), one REGISTER
expect_eq "$(msgs | grep -c ' type=1 ')" 2 "REGISTERs with a library dlopen'ed twice"
echo "ok: a library dlopen'ed twice registers once"

# dlclose waits for the answer, exit does not: the server answers each
# request 400 ms late, the timeout is 3 s.
stop_fake
start_fake delay:400
rm -f "$T/marks"
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=3000 -- \
	dlopen "$LIB" mark "$T/marks" dlclose mark "$T/marks" || fail "the program failed (delay)"
t_exit=$(date +%s%N)
m_before=$(sed -n 's/^mark //p' "$T/marks" | sed -n 1p)
m_after=$(sed -n 's/^mark //p' "$T/marks" | sed -n 2p)
dl=$(((m_after - m_before) / 1000000))
ex=$(((t_exit - m_after) / 1000000))
echo "dlclose took ${dl} ms, exit took ${ex} ms (server answers after 400 ms)"
[ "$dl" -ge 350 ] || fail "dlclose did not wait for the answer (${dl} ms)"
[ "$ex" -lt 300 ] || fail "exit waited for the answer (${ex} ms)"
wait_msgs 4 || true
expect_eq "$(msgs | sed -n 4p | grep -c ' type=2 ')" 1 "the exit UNREGISTER reached the server"
echo "ok: dlclose waits for the answer, exit does not"
