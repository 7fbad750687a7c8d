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
set -eu
userns=""
[ "$(id -u)" -eq 0 ] || userns="--user --map-root-user"
# shellcheck disable=SC2086
exec unshare $userns --mount --pid --fork --kill-child --mount-proc --propagation private -- \
	sh -c 'mount -t tmpfs -o mode=0755 usdtkit-private /run &&
		mkdir -m 0755 /run/usdtkit &&
		USDTKIT_IN_PRIVATE_RUN=1 exec "$@"' sh "$@"
