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
#      (core/protocol.h): a probed program that starts meanwhile sees the
#      board without a daemon and asks nothing: no maps query, no refused
#      connect (strace counts its connect calls: none), while with the live
#      daemon the same program finds its file on the board.
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
USDTKIT_DEBUG=1 "$SHORT" 2>"$T/live2.err" || fail "the probed program failed (live daemon)"
expect_grep 'known to the helper' "$T/live2.err" "a second start with the live daemon finds its file on the board"
daemon_stop KILL 10
[ -S "$SOCK" ] && [ -f "$SOCK.known" ] || fail "SIGKILL left no socket or no board (the test expects a crash to leave both)"
USDTKIT_DEBUG=1 strace -f -qq -e trace=connect,ioctl -o "$T/stale.strace" "$SHORT" 2>"$T/stale.err" ||
	fail "the probed program failed beside a crashed daemon's socket"
expect_grep "board has no daemon" "$T/stale.err" "drti sees the crashed daemon's board"
if grep -E '^[0-9]+ +(connect|ioctl)\(' "$T/stale.strace" | grep -vE 'TCGETS|TIOCGWINSZ'; then
	fail "beside a crashed daemon's board, the program still queried its maps or connected (above)"
fi
cleanup_events
rm -f "$SOCK" "$SOCK.known"
echo "ok: a crashed daemon's board costs a start neither the maps query nor a refused connect"
exit 0
