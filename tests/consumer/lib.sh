# Helpers for the D consumer's tests (source after tests/lib/common.sh).
#
# Expected outputs are written from DTrace's documented formats (illumos
# dt_consume.c, dt_printf.c; the research brief's examples), never taken
# from this dtrace's own output.

# The test programs never talk to a helper daemon that may run here.
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"
EX="$USDTKIT_SRCDIR/examples/quickstart"

# build_quickstart DIR [PROVIDER]: DIR/quickstart, the example, built as its
# README says; with PROVIDER (lower-case letters) its provider is renamed,
# for a unique tracefs group when a daemon registers it.
build_quickstart() {
	local p=${2:-quickstart}
	mkdir -p "$1/src"
	sed -e "s/quickstart/$p/g; s/QUICKSTART/${p^^}/g" "$EX/quickstart.d" >"$1/src/quickstart.d"
	sed -e "s/quickstart_probes/${p}_probes/g; s/QUICKSTART/${p^^}/g" "$EX/quickstart.c" >"$1/src/quickstart.c"
	(
		cd "$1" || exit 1
		"$DTRACE" -h -s src/quickstart.d -o "${p}_probes.h" &&
			cc -O2 -I"$SDT_INC" -I. -c src/quickstart.c -o quickstart.o &&
			"$DTRACE" -G -s src/quickstart.d -o quickstart_provider.o quickstart.o &&
			cc -o quickstart quickstart.o quickstart_provider.o
	) || fail "building examples/quickstart in $1"
}

# dt EXPECTED-RC ARGS...: runs dtrace with stdout in $T/out, stderr in
# $T/err; fails unless it exits EXPECTED-RC. Pinned to one CPU, so that the
# CPU column is 0 and so are the processes it starts. DT_TIMEOUT (seconds,
# default 60) bounds it, only so that a hang fails.
dt() {
	local want=$1 rc=0
	shift
	taskset -c 0 timeout "${DT_TIMEOUT:-60}" "$DTRACE" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || {
		echo "--- stdout" >&2; cat "$T/out" >&2
		echo "--- stderr" >&2; cat "$T/err" >&2
		fail "dtrace $* exited $rc, expected $want"
	}
}

# same FILE EXPECTED-TEXT WHAT: FILE holds exactly EXPECTED-TEXT (printf %b).
same() {
	printf '%b' "$2" >"$T/want"
	cmp -s "$1" "$T/want" || {
		echo "--- expected" >&2; cat -A "$T/want" >&2
		echo "--- got" >&2; cat -A "$1" >&2
		fail "$3"
	}
}

# refused_tag TAG MESSAGE PROGRAM: dtrace -e refuses the program with
# DTrace's own -xerrtags line ("[TAG] line 1: MESSAGE"), exit 1.
refused_tag() {
	local rc=0
	"$DTRACE" -xerrtags -e -n "$3" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "dtrace -e -n '$3' exited $rc, expected 1"; }
	grep -qF -- "[$1] line 1: $2" "$T/err" || { cat "$T/err" >&2; fail "dtrace -n '$3': not [$1] $2"; }
}

# need_engine: what dtrace -n/-s runs on (dtrace/engine): clang (or
# $USDTKIT_CLANG) to compile the BPF C, and tracefs for the uprobes; libbpf
# is linked in.
need_engine() {
		command -v "${USDTKIT_CLANG:-clang}" >/dev/null || command -v clang-14 >/dev/null ||
		fail "clang is not installed (scripts/deps.sh installs it): dtrace -n compiles with it"
	need_tracefs
}

# No bpftrace text ever reaches the user (bpftrace is the tests' own
# independent reader of the probes, never dtrace's).
no_bpftrace_dump() {
	expect_no_grep 'Attaching|stdin:|\^~|bpftrace -' "$T/err" "$1: bpftrace's own messages"
}
