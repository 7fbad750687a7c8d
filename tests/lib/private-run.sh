#!/bin/sh
# private-run.sh COMMAND...: runs COMMAND in a private mount and PID
# namespace, where /run is an empty tmpfs holding an empty /run/usdtkit and
# /proc shows only the namespace's own processes. So a test of the default
# socket path (/run/usdtkit/helper.sock: a stale socket there, a daemon
# started there, its board, its /proc scan) has that path to itself: it
# neither reads nor touches a packaged daemon's, or another test's, and a
# daemon it starts sees no process of the host. Everything else (/tmp, the
# build, tracefs) is the host's. COMMAND runs as PID 1 of the namespace:
# when it exits, every process left in there is killed, and the mounts go
# with the namespace. Not root: a user namespace maps the caller to root
# (unprivileged user namespaces must be allowed). Exit: COMMAND's.
#   private-run.sh --keep-pids COMMAND...: a mount namespace only: COMMAND
#   and what it starts keep the host's PIDs and see all its processes (as a
#   system daemon does; tests compare the PIDs tracefs reports).
set -eu
userns=""
[ "$(id -u)" -eq 0 ] || userns="--user --map-root-user"
pid="--pid --fork --kill-child --mount-proc"
if [ "${1:-}" = --keep-pids ]; then
	pid=""
	shift
fi
# shellcheck disable=SC2086
exec unshare $userns --mount $pid --propagation private -- \
	sh -c 'mount -t tmpfs -o mode=0755 usdtkit-private /run &&
		mkdir -m 0755 /run/usdtkit &&
		USDTKIT_IN_PRIVATE_RUN=1 exec "$@"' sh "$@"
