#!/bin/bash
# The socket file's life (kernel-helper/README.md, "The socket"):
#   1. a daemon started by hand (only descriptors 0, 1 and 2 open, so its
#      socket is descriptor 3, as systemd's would be) removes the socket it
#      created when it stops (SIGTERM, SIGINT). It used to keep it whenever
#      its socket happened to be descriptor 3, taking it for systemd's: every
#      probed program then paid a refused connect, and valgrind runs saw drti
#      at work (tests/checkers);
#   2. one systemd passed (socket activation: LISTEN_FDS) is left: it is
#      systemd's, which listens on it again for the next start;
#   3. a crash (SIGKILL) leaves it; the next daemon replaces it, serves on
#      it, and removes it when it stops;
#   4. a crash leaves the board too, but not its liveness lock
#      (core/protocol.h). A probed program that starts meanwhile must be
#      neither slowed nor misled by it: it connects to nothing (strace
#      counts its connect calls: none) and waits for nothing, whether its
#      file is on the crashed daemon's board (a hit: its events are still
#      there, a SIGKILL leaves them, so "known" is true) or not (a miss:
#      drti then looks at the liveness lock and sees no daemon to ask).
#      Which system calls a start makes before it knows is not the
#      property: drti reads the lock on a miss only (issue 33, item 7), so
#      that a known file beside a live daemon, the common start, pays no
#      fcntl for it (checked: no F_OFD_GETLK on the live daemon's hit), nor
#      the /proc/self/maps query (checked: an executable's file is named by
#      stat() of its path, a dlopened library's by the loader's name for
#      it); a stale board lasts until the next daemon starts.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
# A daemon test like the others of its suite (helperd+kernel): on a machine
# without tracefs (the fresh check's chroot) its descriptors differ.
need_tracefs
# (start-up scans /proc: slow for a sanitized daemon on a loaded machine,
# and not what this test measures)
export DAEMON_START_S=$((60 * TIME_FACTOR))

# The daemon with nothing but 0, 1 and 2 open, as from a terminal.
by_hand() { # LOG ARGS...
	local log=$1
	shift
	daemon_start "$log" bash -c 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$@"' \
		sh "$HELPERD" -f --socket "$SOCK" --state "$T/state" --no-board "$@"
}
sock_fd3() { # pid: descriptor 3 is a socket (the daemon's listening socket)
	case $(readlink "/proc/$1/fd/3" 2>/dev/null) in socket:*) return 0 ;; esac
	ls -l "/proc/$1/fd" >&2
	fail "the daemon's descriptor 3 is not its socket"
}

for sig in TERM INT; do
	by_hand "$T/hand.log"
	sock_fd3 "$DAEMON_PID"
	[ -S "$SOCK" ] || fail "no socket at $SOCK"
	daemon_stop "$sig"
	expect_eq "$DAEMON_STATUS" 0 "exit status after SIG$sig"
	[ ! -e "$SOCK" ] || fail "SIG$sig: the daemon started by hand left its socket $SOCK"
	echo "ok: SIG$sig: the socket it created is removed"
done

# 2. Socket activation: the socket is bound and listening before the daemon
# runs, handed over as descriptor 3 with LISTEN_FDS=1 and LISTEN_PID.
daemon_start "$T/act.log" python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(16)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
os.execve(sys.argv[2], [sys.argv[2], "-f", "--socket", sys.argv[1], "--state", sys.argv[3], "--no-board"], env)
' "$SOCK" "$HELPERD" "$T/state"
expect_grep 'listening on the socket systemd passed' "$T/act.log" "socket activation taken"
daemon_stop TERM
expect_eq "$DAEMON_STATUS" 0 "exit status (socket activation)"
[ -S "$SOCK" ] || fail "the daemon removed the socket systemd passed to it"
rm -f "$SOCK"
echo "ok: a socket systemd passed is left to systemd"

# 3. A crash leaves the socket; the next start replaces it.
by_hand "$T/crash.log"
daemon_stop KILL 10
[ -S "$SOCK" ] || fail "no socket left after SIGKILL (the test expects the crash to leave it)"
"$HDCLIENT" list >/dev/null 2>&1 && fail "the stale socket answers"
# (the inode number may come back: the proof is that the path answers again)
start_daemon
daemon_healthy
stop_daemon
[ ! -e "$SOCK" ] || fail "the replacing daemon left its socket"
echo "ok: a crash's stale socket is replaced at the next start, and removed at its stop"

# 4. The board of a crashed daemon.
build_progs gcc
# (the file's events stay after the first start ends: the second finds them)
HD_LINGER=60 start_daemon
USDTKIT_DEBUG=1 "$SHORT" 2>"$T/live1.err" || fail "the probed program failed (live daemon)"
USDTKIT_DEBUG=1 strace -f -qq -e trace=fcntl,connect,openat,open -o "$T/live2.strace" "$SHORT" 2>"$T/live2.err" ||
	fail "the probed program failed (live daemon)"
expect_grep 'known to the helper' "$T/live2.err" "a second start with the live daemon finds its file on the board"
# (issue 33, item 7: the liveness lock is looked at on a miss only)
if grep -hE '^[0-9]+ +(connect\(|fcntl\(.*F_OFD_GETLK)' "$T/live2.strace"; then
	fail "a known file's start beside a live daemon connected or looked at the liveness lock (above)"
fi
# (and an executable's known file is named by stat() of its path, not by /proc)
expect_grep "$SOCK.known" "$T/live2.strace" "the start opened the board"
if grep -h '/proc/self/maps' "$T/live2.strace"; then
	fail "a known executable's start beside a live daemon opened /proc/self/maps (above)"
fi
# (a library's too, by the name the loader opened it by: a copy of prog, then
# its dlopen of lib; a copy, so that prog's own file stays unknown for the
# miss below)
cp "$PROG" "$T/prog-lib"
printf 'dlopen %s\nexit\n' "$LIB" | USDTKIT_DEBUG=1 "$T/prog-lib" >/dev/null 2>"$T/lib1.err" ||
	fail "the probed program failed (live daemon, dlopen)"
printf 'dlopen %s\nexit\n' "$LIB" | USDTKIT_DEBUG=1 strace -f -qq -e trace=connect,openat,open \
	-o "$T/lib2.strace" "$T/prog-lib" >/dev/null 2>"$T/lib2.err" ||
	fail "the probed program failed (live daemon, dlopen)"
expect_eq "$(grep -c 'known to the helper' "$T/lib2.err")" 2 "board hits of prog and its dlopened library"
if grep -hE '/proc/self/maps|^[0-9]+ +connect\(' "$T/lib2.strace"; then
	fail "a known library's load beside a live daemon opened /proc/self/maps or connected (above)"
fi
daemon_stop KILL 10
[ -S "$SOCK" ] && [ -f "$SOCK.known" ] || fail "SIGKILL left no socket or no board (the test expects a crash to leave both)"
[ -n "$(our_events)" ] || fail "SIGKILL left no events (the test expects a crash to leave them)"
# A hit: short's file is on the board, and its events exist.
USDTKIT_DEBUG=1 strace -f -qq -e trace=connect -o "$T/stale-hit.strace" "$SHORT" 2>"$T/stale-hit.err" ||
	fail "the probed program failed beside a crashed daemon's socket"
expect_grep 'known to the helper' "$T/stale-hit.err" "drti finds its file on the crashed daemon's board"
# A miss: prog's file was never registered.
USDTKIT_DEBUG=1 strace -f -qq -e trace=connect -o "$T/stale-miss.strace" "$PROG" </dev/null \
	>/dev/null 2>"$T/stale-miss.err" || fail "the probed program failed beside a crashed daemon's socket"
expect_grep "board has no daemon" "$T/stale-miss.err" "drti sees the crashed daemon's board has no daemon"
if grep -hE '^[0-9]+ +connect\(' "$T/stale-hit.strace" "$T/stale-miss.strace"; then
	fail "beside a crashed daemon's board, a program still connected (above)"
fi
cleanup_events
rm -f "$SOCK" "$SOCK.known"
echo "ok: a crashed daemon's board costs a start no connect, on a hit or a miss"
exit 0
