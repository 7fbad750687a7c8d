# Helpers for the drti tests (suite drti). Source after tests/lib/common.sh.
#
# build_progs [CC [CFLAGS...]]  builds into $T/$tag/ (tag from CC and CFLAGS):
#   prog      tests/drti/progs/prog.c + its -G object (provider ${P}app)
#   liblib.so tests/drti/progs/lib.c + its -G object (provider ${P}lib)
# with the built `$DTRACE -h`/`-G`. $P is unique per test run, so tracefs
# groups (sdt_${P}app) never collide between concurrent runs.
#
# start_fake MODE [NPROBES]     starts tests/drti/fakehelperd on $SOCK, logging
#                               to $FLOG; stop_fake stops it.
# run_prog OUT ERR [ENV=V...] -- ARGS...   runs $PROG under exactly the given
#                               drti environment (everything else of drti's unset).

PROGS="$USDTKIT_SRCDIR/tests/drti/progs"
FAKE="$USDTKIT_BUILDDIR/tests/drti/fakehelperd"
P="dt$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
PU=$(echo "$P" | tr a-z A-Z)
SOCK="$T/helper.sock"
FLOG="$T/fake.log"
FAKE_PID=""

build_progs() { # [CC [CFLAGS...]]
	local cc=${1:-gcc}
	shift || true
	local tag
	tag=$(echo "$cc $*" | tr -c 'A-Za-z0-9\n' '_')
	B="$T/$tag"
	mkdir -p "$B"
	cat >"$B/app.d" <<EOF
provider ${P}app {
	probe start(int, char *);
	probe tick(int);
};
EOF
	cat >"$B/lib.d" <<EOF
provider ${P}lib {
	probe call(int);
};
EOF
	cat >"$B/names.h" <<EOF
#include "app.h"
#include "lib.h"
#define APP_START ${PU}APP_START
#define APP_TICK ${PU}APP_TICK
#define LIB_CALL ${PU}LIB_CALL
EOF
	(
		cd "$B"
		"$DTRACE" -h -s app.d -o app.h
		"$DTRACE" -h -s lib.d -o lib.h
		$cc "$@" -I"$SDT_INC" -I. -O2 -c "$PROGS/prog.c" -o prog.o
		$cc "$@" -I"$SDT_INC" -I. -O2 -fPIC -c "$PROGS/lib.c" -o lib.o
		CC="$cc" CFLAGS="$*" "$DTRACE" -G -s app.d -o app-prov.o prog.o
		CC="$cc" CFLAGS="$*" "$DTRACE" -G -s lib.d -o lib-prov.o lib.o
		$cc "$@" prog.o app-prov.o -ldl -o prog
		$cc "$@" -shared lib.o lib-prov.o -o liblib.so
	) || fail "building the test programs with $cc $*"
	PROG="$B/prog"
	LIB="$B/liblib.so"
}

start_fake() { # MODE [NPROBES]
	rm -f "$SOCK" "$FLOG"
	"$FAKE" "$SOCK" "$FLOG" "$@" &
	FAKE_PID=$!
	local i
	for i in $(seq 200); do
		grep -q '^listening' "$FLOG" 2>/dev/null && return 0
		sleep 0.01
	done
	fail "fakehelperd $* did not start"
}

stop_fake() {
	if [ -n "$FAKE_PID" ]; then
		kill -CONT "$FAKE_PID" 2>/dev/null || true
		kill "$FAKE_PID" 2>/dev/null || true
		wait "$FAKE_PID" 2>/dev/null || true
	fi
	FAKE_PID=""
}
at_exit stop_fake

# Messages the fake server logged, one per line ("msg pid=... type=...").
msgs() { grep '^msg ' "$FLOG" 2>/dev/null || true; }
nmsgs() { msgs | wc -l; }

# Waits until the log has at least N messages (the server logs after reading).
wait_msgs() { # N
	local i
	for i in $(seq 300); do
		[ "$(nmsgs)" -ge "$1" ] && return 0
		sleep 0.01
	done
	return 1
}

# A field of a logged message line: field LINE NAME
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

DRTI_ENV_VARS="USDTKIT_DEBUG USDTKIT_DISABLE DTRACE_DOF_INIT_DISABLE DTRACE_DOF_INIT_DEBUG
USDTKIT_HELPER_SOCKET USDTKIT_HELPER_TIMEOUT_MS"

run_prog() { # OUT ERR [VAR=VALUE...] -- ARGS...
	local out=$1 err=$2 unset="" v
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	for v in $DRTI_ENV_VARS; do unset="$unset -u $v"; done
	# shellcheck disable=SC2086
	env $unset "${envs[@]}" "$PROG" "$@" >"$out" 2>"$err"
}

# Nanoseconds of wall-clock time a command takes.
elapsed_ns() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" || true
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

# The protocol's values, from protocol.h itself.
PH="$USDTKIT_SRCDIR/core/protocol.h"
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
