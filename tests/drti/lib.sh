# Helpers for the drti tests (suite drti). Source after tests/lib/common.sh.
#
# build_progs [CC [CFLAGS...]]  builds into $T/$tag/ (tag from CC and CFLAGS):
#   prog      tests/drti/progs/prog.c + its -G object (provider ${P}app)
#   liblib.so tests/drti/progs/lib.c + its -G object (provider ${P}lib)
# with the built `$DTRACE -h`/`-G`. $P is unique per test run, so tracefs
# groups (sdt_${P}app) never collide between concurrent runs.
#
# start_fake MODE [NPROBES]     starts tests/drti/fakehelperd on $SOCK, logging
#                               to $FLOG; stop_fake stops it.
# run_prog OUT ERR [ENV=V...] -- ARGS...   runs $PROG under exactly the given
#                               drti environment (everything else of drti's unset).

PROGS="$USDTKIT_SRCDIR/tests/drti/progs"
FAKE="$USDTKIT_BUILDDIR/tests/drti/fakehelperd"
P="dt$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
PU=$(echo "$P" | tr a-z A-Z)
SOCK="$T/helper.sock"
FLOG="$T/fake.log"
FAKE_PID=""

build_progs() { # [CC [CFLAGS...]]
	local cc=${1:-gcc}
	shift || true
	local tag
	tag=$(echo "$cc $*" | tr -c 'A-Za-z0-9\n' '_')
	B="$T/$tag"
	mkdir -p "$B"
	cat >"$B/app.d" <<EOF
provider ${P}app {
	probe start(int, char *);
	probe tick(int);
};
EOF
	cat >"$B/lib.d" <<EOF
provider ${P}lib {
	probe call(int);
};
EOF
	cat >"$B/names.h" <<EOF
#include "app.h"
#include "lib.h"
#define APP_START ${PU}APP_START
#define APP_TICK ${PU}APP_TICK
#define LIB_CALL ${PU}LIB_CALL
EOF
	(
		cd "$B"
		"$DTRACE" -h -s app.d -o app.h
		"$DTRACE" -h -s lib.d -o lib.h
		$cc "$@" -I"$SDT_INC" -I. -O2 -c "$PROGS/prog.c" -o prog.o
		$cc "$@" -I"$SDT_INC" -I. -O2 -fPIC -c "$PROGS/lib.c" -o lib.o
		CC="$cc" CFLAGS="$*" "$DTRACE" -G -s app.d -o app-prov.o prog.o
		CC="$cc" CFLAGS="$*" "$DTRACE" -G -s lib.d -o lib-prov.o lib.o
		$cc "$@" prog.o app-prov.o -ldl -o prog
		$cc "$@" -shared lib.o lib-prov.o -o liblib.so
	) || fail "building the test programs with $cc $*"
	PROG="$B/prog"
	LIB="$B/liblib.so"
}

start_fake() { # MODE [NPROBES]
	rm -f "$SOCK" "$FLOG"
	"$FAKE" "$SOCK" "$FLOG" "$@" &
	FAKE_PID=$!
	local i
	for i in $(seq 200); do
		grep -q '^listening' "$FLOG" 2>/dev/null && return 0
		sleep 0.01
	done
	fail "fakehelperd $* did not start"
}

stop_fake() {
	if [ -n "$FAKE_PID" ]; then
		kill -CONT "$FAKE_PID" 2>/dev/null || true
		kill "$FAKE_PID" 2>/dev/null || true
		wait "$FAKE_PID" 2>/dev/null || true
	fi
	FAKE_PID=""
}
at_exit stop_fake

# Messages the fake server logged, one per line ("msg pid=... type=...").
msgs() { grep '^msg ' "$FLOG" 2>/dev/null || true; }
nmsgs() { msgs | wc -l; }

# Waits until the log has at least N messages (the server logs after reading).
wait_msgs() { # N
	local i
	for i in $(seq 300); do
		[ "$(nmsgs)" -ge "$1" ] && return 0
		sleep 0.01
	done
	return 1
}

# A field of a logged message line: field LINE NAME
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

DRTI_ENV_VARS="USDTKIT_DEBUG USDTKIT_DISABLE DTRACE_DOF_INIT_DISABLE DTRACE_DOF_INIT_DEBUG
USDTKIT_HELPER_SOCKET USDTKIT_HELPER_TIMEOUT_MS"

run_prog() { # OUT ERR [VAR=VALUE...] -- ARGS...
	local out=$1 err=$2 unset="" v
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	for v in $DRTI_ENV_VARS; do unset="$unset -u $v"; done
	# shellcheck disable=SC2086
	env $unset "${envs[@]}" "$PROG" "$@" >"$out" 2>"$err"
}

# Nanoseconds of wall-clock time a command takes.
elapsed_ns() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" || true
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
