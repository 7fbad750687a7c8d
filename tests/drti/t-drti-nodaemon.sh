#!/bin/bash
# With no helper daemon (no socket), a program with -G objects runs exactly
# as with registration disabled: same stdout, nothing on stderr, same exit
# code, errno and descriptors; drti's only system call is one access() per
# module load, none in a fork child (socket/connect/close when a socket file
# exists but nobody listens); and the start-up cost is tiny (measured here only against a generous bound
# that catches a hang; bench/helper measures it).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
command -v strace >/dev/null || fail "strace is not installed"
build_progs gcc
cmds=(errno fds probe dlopen "$LIB" fds dlclose fork fds probe \; fds)

run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- "${cmds[@]}" || fail "baseline run failed"
[ ! -s "$T/base.err" ] || fail "baseline printed on stderr"

run_prog "$T/a.out" "$T/a.err" USDTKIT_HELPER_SOCKET="$T/absent.sock" -- "${cmds[@]}" ||
	fail "the program failed with no daemon"
cmp -s "$T/base.out" "$T/a.out" || { diff "$T/base.out" "$T/a.out" >&2; fail "stdout differs with no daemon"; }
[ ! -s "$T/a.err" ] || { cat "$T/a.err" >&2; fail "drti printed with no daemon"; }
echo "ok: no socket: same output, silent"

# The default path, absent: in a private namespace whose /run/usdtkit is
# empty (tests/lib/private-run.sh), whatever the host has there.
unset_drti=()
for v in $DRTI_ENV_VARS; do unset_drti+=(-u "$v"); done
"$USDTKIT_SRCDIR/tests/lib/private-run.sh" env "${unset_drti[@]}" "$PROG" "${cmds[@]}" \
	>"$T/d.out" 2>"$T/d.err" || { cat "$T/d.err" >&2; fail "the program failed with the default path"; }
cmp -s "$T/base.out" "$T/d.out" || { diff "$T/base.out" "$T/d.out" >&2; fail "stdout differs with the default (absent) socket"; }
[ ! -s "$T/d.err" ] || { cat "$T/d.err" >&2; fail "drti printed with the default (absent) socket"; }
echo "ok: default socket path absent: same output, silent"

# The system calls drti makes, for each of the 2 module loads (program,
# library at dlopen; a fork child makes none): with no socket file, one access() of the
# path failing with ENOENT and no socket at all; with a socket file nobody
# listens on, one socket(AF_UNIX, SOCK_SEQPACKET with SOCK_CLOEXEC|
# SOCK_NONBLOCK), one connect() failing with ECONNREFUSED and a close() of
# that descriptor. Nothing sent either way, no unregistration owed.
straced() { # socket-path
	strace -f -qq -e trace=access,faccessat,faccessat2,socket,connect,sendto,sendmsg,recvfrom,close \
		-o "$T/strace" env USDTKIT_HELPER_SOCKET="$1" "$PROG" "${cmds[@]}" >/dev/null 2>&1 ||
		fail "the program failed under strace"
	expect_no_grep 'sendto|sendmsg|recvfrom' "$T/strace" "nothing sent or received"
}
straced "$T/absent.sock"
expect_eq "$(grep -cE "access(at2?)?\((AT_FDCWD, )?\"$T/absent.sock\", F_OK.*= -1 ENOENT" "$T/strace")" 2 \
	"access() of the absent socket"
expect_eq "$(grep -c 'socket(' "$T/strace" || true)" 0 "socket() calls with no socket file"
echo "ok: no socket file: one access() per registration, no socket"

python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' "$T/stale.sock"
straced "$T/stale.sock"
socks=$(grep -c 'socket(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = [0-9]' "$T/strace" || true)
expect_eq "$socks" 2 "socket() calls"
expect_eq "$(grep -c 'socket(' "$T/strace")" 2 "all socket() calls are drti's"
expect_eq "$(grep -c "connect(.*\"$T/stale.sock\".*= -1 ECONNREFUSED" "$T/strace")" 2 "refused connects"
# every descriptor socket() returned is closed by the same process
python3 - "$T/strace" <<'PY' || fail "a drti socket was not closed"
import re, sys
open_fds = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\d+)\s+socket\(.*\)\s+=\s+(\d+)', line)
    if m:
        open_fds.setdefault(m.group(1), set()).add(m.group(2))
        continue
    m = re.match(r'(\d+)\s+close\((\d+)\)\s+=\s+0', line)
    if m:
        open_fds.get(m.group(1), set()).discard(m.group(2))
left = {p: f for p, f in open_fds.items() if f}
sys.exit('left open: %s' % left if left else 0)
PY
echo "ok: nobody listening: socket/connect/close only, each socket closed"

# Start-up: median of 41 runs each, registration disabled vs no daemon. The
# bound (2 ms added) is 200 times the target: it only catches a wait or a
# hang; bench/helper/run.sh measures the real cost.
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
times() {
	local i
	for i in $(seq 41); do
		elapsed_ns env -u USDTKIT_DEBUG "$@" "$PROG" say hi >/dev/null
	done | med
}
off=$(times USDTKIT_DISABLE=1)
on=$(times USDTKIT_HELPER_SOCKET="$T/absent.sock")
echo "median run: disabled ${off} ns, no daemon ${on} ns"
[ $((on - off)) -lt $(($(bound_ms 2) * 1000000)) ] ||
	fail "no-daemon start-up adds $(((on - off) / 1000)) us (bound $(($(bound_ms 2) * 1000)) us)"
echo "ok: start-up with no daemon within bound"
