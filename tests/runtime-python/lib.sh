# Helpers for the runtime-python suite (the usdtkit Python binding over
# libusdtkit-runtime). Source after tests/lib/common.sh.
#
# PY is the interpreter (the test's first argument: the Python meson found,
# else python3). py runs it on the binding of this tree
# (bindings/python) and the library of this build, and never on a daemon
# of the system: USDTKIT_HELPER_SOCKET names a socket nobody serves unless
# the test starts its own daemon there.
#
# The sanitizer run: libusdtkit-runtime is ASan-instrumented there and
# python3 is not, so the ASan runtime is preloaded and leak detection is
# off (the interpreter's own leaks are not ours); any other report still
# lands in $T/sanitizer and fails the test (tests/lib/common.sh).

PY=${1:-python3}
command -v "$PY" >/dev/null || fail "no $PY (scripts/deps.sh installs python3)"
# The interpreter itself, not a wrapper script (a pyenv shim is bash: the
# sanitizer run must preload the ASan runtime into Python only).
PY=$("$PY" -c 'import sys; print(sys.executable)')
RTLIB="$USDTKIT_BUILDDIR/runtime/libusdtkit-runtime.so.0"
[ -e "$RTLIB" ] || fail "no $RTLIB: build first"
export USDTKIT_RUNTIME_LIB="$RTLIB"
export PYTHONPATH="$USDTKIT_SRCDIR/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export USDTKIT_HELPER_SOCKET="$T/helper.sock"
export PYTHONDONTWRITEBYTECODE=1
PY_ENV=()
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	ASAN_RT=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
	[ -e "$ASAN_RT" ] || fail "no ASan runtime ($ASAN_RT) for the sanitized library"
	PY_ENV=(env "LD_PRELOAD=$ASAN_RT" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0")
fi
py() { "${PY_ENV[@]}" "$PY" "$@"; }

# A provider name unique to this run (tracefs groups, bpftrace probes).
PROV="py$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"

# A Python program in the background, its stdout in a file: py_start FILE
# SCRIPT ARGS... sets PYPID; py_wait FILE LINE waits until FILE has a line
# starting with LINE (failing the test, with the program's output, on a
# timeout or when it exits first).
PYPID=""
at_exit 'stop_bg "$PYPID" KILL 5'
py_start() { # OUTFILE SCRIPT ARGS...
	local out=$1
	shift
	# exec: PYPID is Python's pid (bpftrace -p, dtrace -l -p), not a subshell's.
	(exec "${PY_ENV[@]}" "$PY" "$@") >"$out" 2>"$out.err" &
	PYPID=$!
}
_py_has() {
	grep -q "^$2" "$1" && return 0
	running "$PYPID" || { cat "$1" "$1.err" >&2; fail "the Python program exited before '$2'"; }
	return 1
}
py_wait() { # OUTFILE LINE [SECONDS]
	wait_until "${3:-30}" "the Python program to print '$2'" _py_has "$1" "$2"
}
# Reaps the background program; fails unless it exited 0.
py_reap() { # OUTFILE
	local rc=0
	wait "$PYPID" || rc=$?
	PYPID=""
	[ "$rc" -eq 0 ] || { cat "$1" "$1.err" >&2; fail "the Python program exited $rc"; }
}

# bpftrace: tests/install/lib.sh's bt_start (BT_ARGS="-p PID" for one
# process) and bt_stop.
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
