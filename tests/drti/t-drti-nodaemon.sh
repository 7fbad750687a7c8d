#!/bin/bash
# With no helper daemon (no socket), a program with -G objects runs exactly
# as with registration disabled: same stdout, nothing on stderr, same exit
# code, errno and descriptors; drti's only system calls are one socket(),
# connect() (failing) and close() per module load and per fork child; and
# the start-up cost is tiny (measured here only against a generous bound
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

if [ ! -e /run/usdtkit/helper.sock ]; then
	run_prog "$T/d.out" "$T/d.err" -- "${cmds[@]}" || fail "the program failed with the default path"
	cmp -s "$T/base.out" "$T/d.out" || fail "stdout differs with the default (absent) socket"
	[ ! -s "$T/d.err" ] || fail "drti printed with the default (absent) socket"
	echo "ok: default socket path absent: same output, silent"
else
	echo "note: /run/usdtkit/helper.sock exists (a daemon runs); default-path case not checked"
fi

# The system calls drti makes: for each of the 3 registrations (program,
# library at dlopen, fork child), exactly one socket(AF_UNIX, SOCK_SEQPACKET
# with SOCK_CLOEXEC|SOCK_NONBLOCK), one connect() to our path failing with
# ENOENT, and a close() of that descriptor; nothing sent, no unregistration
# owed (nothing was registered).
strace -f -qq -e trace=socket,connect,sendto,sendmsg,recvfrom,close -o "$T/strace" \
	env USDTKIT_HELPER_SOCKET="$T/absent.sock" "$PROG" "${cmds[@]}" >/dev/null 2>&1 ||
	fail "the program failed under strace"
socks=$(grep -c 'socket(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = [0-9]' "$T/strace" || true)
expect_eq "$socks" 3 "socket() calls"
expect_eq "$(grep -c 'socket(' "$T/strace")" 3 "all socket() calls are drti's"
expect_eq "$(grep -c "connect(.*\"$T/absent.sock\".*= -1 ENOENT" "$T/strace")" 3 "failing connects"
expect_no_grep 'sendto|sendmsg|recvfrom' "$T/strace" "nothing sent or received"
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
echo "ok: only socket/connect/close, each socket closed"

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
[ $((on - off)) -lt 2000000 ] || fail "no-daemon start-up adds $(((on - off) / 1000)) us (bound 2000 us)"
echo "ok: start-up with no daemon within bound"
