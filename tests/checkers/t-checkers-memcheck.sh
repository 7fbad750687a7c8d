#!/bin/bash
# drti and libusdtkit-runtime under valgrind memcheck, as a user's test
# suite runs its program (valgrind --error-exitcode, leaks checked): on
# every path drti takes (tests/checkers/lib.sh: no daemon, a stale socket,
# a live daemon, first-seen and known files, each at a private and at the
# default socket path), with a fork, a dlopen and a dlclose in every run,
# and the same output as with registration off. valgrind 3.19 does not know
# the PROCMAP_QUERY ioctl drti asks the maps with: its name buffer was left
# undefined, and every program with a -G object reported "Conditional jump
# or move depends on uninitialised value(s)" at start-up wherever a socket
# file existed (issue: a packaged daemon, or a stale socket, turned users'
# valgrind runs red).
# The -G programs are built here with gcc, so they run under valgrind in
# the sanitizer run too; libusdtkit-runtime (rtprog: a provider loaded,
# registered, fired, unloaded) only in the plain run, where it is not
# sanitized (valgrind cannot run ASan's programs).
[ -n "${USDTKIT_IN_PRIVATE_RUN:-}" ] || exec "$USDTKIT_SRCDIR/tests/lib/private-run.sh" bash "$0" "$@"
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/checkers/lib.sh"
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/deps.sh installs it)"
RTPROG="$USDTKIT_BUILDDIR/tests/runtime/rtprog"
export RTPROG_NAME="${P}rt"

build_progs gcc
# (no "fds": valgrind's own descriptors show there; tests/drti checks them)
CMDS=(errno probe dlopen LIB probe fork probe \; dlclose errno)
baseline

# valgrind as a user's test suite would run it; its log per process: LOG.PID.
vg() { # LOG-PREFIX
	VG=(valgrind --tool=memcheck --leak-check=full --error-exitcode=9 --log-file="$1.%p")
}
# Every valgrind log of the run says 0 errors (the fork child has its own).
vg_clean() { # LABEL LOG-PREFIX
	local f n=0
	for f in "$2".*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		grep -q 'ERROR SUMMARY: 0 errors' "$f" || { cat "$f" >&2; fail "$1: memcheck errors (above)"; }
	done
	[ "$n" -ge 1 ] || fail "$1: no valgrind log"
}

memcheck() { # LABEL VAR=VALUE...
	local label=$1 st=0
	shift
	mapfile -t _cmds < <(cmds)
	vg "$T/vg.$label"
	drti_env "$@" -- "${VG[@]}" "$PROG" "${_cmds[@]}" >"$T/$label.out" 2>"$T/$label.err" || st=$?
	vg_clean "$label" "$T/vg.$label"
	[ "$st" -eq 0 ] || fail "$label: exit status $st under valgrind"
	check_same "$label" "$T/$label.out" "$T/$label.err"
	# (not sanitized only: see the head comment)
	if [ -z "${USDTKIT_SANITIZE:-}" ]; then
		st=0
		vg "$T/vgrt.$label"
		drti_env "$@" -- "${VG[@]}" "$RTPROG" load >"$T/rt.$label.out" 2>"$T/rt.$label.err" || st=$?
		vg_clean "runtime $label" "$T/vgrt.$label"
		[ "$st" -eq 0 ] || { cat "$T/rt.$label.out" "$T/rt.$label.err" >&2; fail "runtime $label: exit status $st"; }
		expect_grep '^loaded$' "$T/rt.$label.out" "runtime $label"
		[ ! -s "$T/rt.$label.err" ] || { cat "$T/rt.$label.err" >&2; fail "runtime $label: printed on stderr"; }
	fi
	echo "ok: $label: memcheck clean"
}

every_path memcheck
exit 0
