#!/bin/sh
# with-default-daemon.sh BUILDDIR COMMAND...: COMMAND on a machine as the
# packages leave it, without touching this one's: in a private mount
# namespace (private-run.sh --keep-pids), usdtkit-helperd of BUILDDIR runs as the
# packaged units run it, socket-activated on /run/usdtkit/helper.sock (mode
# 0666, bound before the daemon starts and passed as descriptor 3 with
# LISTEN_FDS, as usdtkit-helperd.socket does), then COMMAND runs beside it:
#   sh tests/lib/with-default-daemon.sh build meson test -C build --suite drti
# proves that the suites' outcome does not depend on a system daemon
# (tests/README.md, "The machine's state steers no test"). Like a system
# daemon it sees every process (at its start-up scan it registers those that
# name no other socket); it is stopped (SIGTERM: its events go) after
# COMMAND. Exit: COMMAND's.
set -eu
[ -n "${USDTKIT_IN_PRIVATE_RUN:-}" ] ||
	exec "$(dirname "$0")/private-run.sh" --keep-pids sh "$0" "$@"
# COMMAND's tests that want a private run of their own must still get one.
unset USDTKIT_IN_PRIVATE_RUN
helperd=$1/kernel-helper/helperd/usdtkit-helperd
shift
[ -x "$helperd" ] || { echo "with-default-daemon: no $helperd" >&2; exit 1; }
log=/run/usdtkit/helperd.log
env -u USDTKIT_HELPER_SOCKET python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind("/run/usdtkit/helper.sock")
os.chmod("/run/usdtkit/helper.sock", 0o666)
s.listen(128)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
os.execve(sys.argv[1], [sys.argv[1], "-f"], env)
' "$helperd" 2>"$log" &
daemon=$!
i=0
until grep -q ': ready' "$log"; do
	i=$((i + 1))
	[ "$i" -lt 500 ] || { cat "$log" >&2; echo "with-default-daemon: the daemon did not start" >&2; exit 1; }
	sleep 0.02
done
echo "with-default-daemon: usdtkit-helperd serves /run/usdtkit/helper.sock (socket-activated)"
rc=0
"$@" || rc=$?
# SIGTERM: it removes the events it created (the namespace's end would SIGKILL it).
kill -TERM "$daemon"
wait "$daemon" || true
# The daemon's view of the run: a test that let a program register with it.
grep -E 'registered ' "$log" | head -20 || true
exit $rc
