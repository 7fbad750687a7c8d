#!/bin/bash
# A hostile host for runtime providers: every failure of the in-memory object
# is reported (a non-zero return, errno, the reason in the provider's
# message) and never a crash, and what need not fail does not.
#   - memfd_create refused (seccomp: ENOSYS): no fallback to a file;
#   - /proc hidden (the loader cannot open /proc/PID/fd/N): the loader's words;
#   - no descriptors left (RLIMIT_NOFILE): the failing call named;
#   - /tmp and /dev/shm mounted noexec, vm.memfd_noexec=2: loads anyway
#     (a memfd is no file system's, and MFD_NOEXEC_SEAL is asked for),
#     wherever the build directory is (under /tmp too);
#   - a helper socket that is no socket, and nonsense timeouts: loads.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
RTPROG="$USDTKIT_BUILDDIR/tests/runtime/rtprog"
export RTPROG_NAME="rthost$$"
# (with /proc hidden the loader cannot expand rtprog's $ORIGIN run path)
export LD_LIBRARY_PATH="$USDTKIT_BUILDDIR/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ "$(id -u)" -eq 0 ] || fail "needs root (suite kernel): namespaces and mounts"

# Runs rtprog load; expects status $1 (0 loaded, 2 a reported failure) and output matching $2.
load_expect() { # STATUS PATTERN WHAT COMMAND...
	local want=$1 pat=$2 what=$3 st=0
	shift 3
	"$@" >"$T/load.out" 2>"$T/load.err" || st=$?
	[ "$st" -eq "$want" ] || { cat "$T/load.out" "$T/load.err" >&2; fail "$what: exit status $st, want $want"; }
	grep -qE -- "$pat" "$T/load.out" || { cat "$T/load.out" >&2; fail "$what: no output line matching '$pat'"; }
	[ ! -s "$T/load.err" ] || { cat "$T/load.err" >&2; fail "$what: printed to stderr"; }
}

load_expect 0 '^loaded$' "a plain load" "$RTPROG" load

if "$RTPROG" nomemfd >/dev/null 2>&1 || [ $? -ne 77 ]; then
	load_expect 2 "^load failed: errno 38: usdtkit: provider '$RTPROG_NAME': cannot create the in-memory object \(memfd_create: Function not implemented\)\$" \
		"memfd_create refused" "$RTPROG" nomemfd
else
	fail "rtprog was built without libseccomp (scripts/deps.sh installs libseccomp-dev)"
fi
# Nothing was written anywhere instead.
[ -z "$(find /tmp /var/tmp /dev/shm -maxdepth 1 -newer "$T" -name "*$RTPROG_NAME*" 2>/dev/null)" ] ||
	fail "a file named after the provider appeared"

# (not on the sanitizer build: its runtime dies without /proc whatever its options say; the
# plain run covers this case)
[ -n "${USDTKIT_SANITIZE:-}" ] ||
	load_expect 2 "^load failed: errno [0-9]+: usdtkit: provider '$RTPROG_NAME': the dynamic loader refused the object: /proc/[0-9]+/fd/[0-9]+: cannot open shared object file" \
	"/proc hidden" unshare -m -- sh -c "mount -t tmpfs none /proc && exec '$RTPROG' load"

load_expect 2 "^load failed: errno [0-9]+: usdtkit: provider '$RTPROG_NAME': (the dynamic loader refused the object: .*|cannot create the in-memory object .*)" \
	"no descriptors left" sh -c "ulimit -n 4 && exec '$RTPROG' load"

# /tmp itself made noexec in place (a bind mount of itself: its files stay,
# so a build directory under /tmp is still there to copy from), a fresh
# noexec /dev/shm, and the program with its library copied into a tmpfs of
# their own that may execute: a checkout under /tmp must not be what fails.
mkdir "$T/exec"
load_expect 0 '^loaded$' "noexec /tmp and /dev/shm" unshare -m --propagation private -- sh -c '
	set -e
	mount --bind /tmp /tmp
	mount -o remount,bind,noexec /tmp
	mount -t tmpfs -o noexec none /dev/shm
	mount -t tmpfs -o exec,mode=0755 none "$1/exec"
	cp -L "$2" "$3/libusdtkit-runtime.so.0" "$1/exec/"
	LD_LIBRARY_PATH="$1/exec" exec "$1/exec/rtprog" load' sh "$T" "$RTPROG" "$USDTKIT_BUILDDIR/runtime"

if [ -e /proc/sys/vm/memfd_noexec ]; then
	load_expect 0 '^loaded$' "vm.memfd_noexec=2" unshare -p -f --mount-proc -- sh -c \
		"echo 2 >/proc/sys/vm/memfd_noexec && exec '$RTPROG' load"
fi

load_expect 0 '^loaded$' "a helper socket that is a directory" \
	env USDTKIT_HELPER_SOCKET=/ "$RTPROG" load
load_expect 0 '^loaded$' "a nonsense timeout" \
	env USDTKIT_HELPER_SOCKET="$T/none" USDTKIT_HELPER_TIMEOUT_MS=99999999999999999999 "$RTPROG" load
exit 0
