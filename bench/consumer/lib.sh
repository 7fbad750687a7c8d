# shellcheck shell=bash
# What the consumer's benchmarks share (bench/consumer/*.sh source it, after
# `set -eu`): the build's programs, a scratch directory cleaned up at the
# end with the processes a benchmark started, the probed programs built as a
# user builds them (dtrace -h, cc, dtrace -G, cc), a private helper daemon,
# and the clocks and quantiles the tables are made of.
#
# bc_init BUILDDIR [helperd] [bpftrace] [clang]: SRC (the source tree), B
# (the build), DTRACE, with helperd HELPERD; W (a scratch directory); checks
# that each is there, and that the tools named are installed. The test
# programs talk to no daemon unless bc_daemon starts one.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BC_PIDS=()

bc_fail() {
	echo "$*" >&2
	exit 1
}

bc_cleanup() {
	local p
	for p in "${BC_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	# (the daemon removes its events when it ends)
	[ "${#BC_PIDS[@]}" = 0 ] || sleep 1
	rm -rf "$W"
}

bc_init() {
	local what
	B=$(cd "${1:-$SRC/build}" && pwd)
	shift || true
	DTRACE=$B/dtrace/dtrace
	HELPERD=$B/kernel-helper/helperd/usdtkit-helperd
	[ -x "$DTRACE" ] || bc_fail "no $DTRACE: build first"
	for what in "$@"; do
		case $what in
		helperd) [ -x "$HELPERD" ] || bc_fail "no $HELPERD: build first" ;;
		*) command -v "$what" >/dev/null || bc_fail "$what is not installed" ;;
		esac
	done
	W=$(mktemp -d)
	trap bc_cleanup EXIT
	export USDTKIT_HELPER_SOCKET="$W/no-daemon.sock"
}

# bc_bg PID: a process to end with the benchmark; bc_unbg PID: ended already.
bc_bg() { BC_PIDS+=("$1"); }
bc_unbg() {
	local i
	for i in "${!BC_PIDS[@]}"; do
		[ "${BC_PIDS[$i]}" != "$1" ] || unset "BC_PIDS[$i]"
	done
}

# bc_stop PID: SIGINT (the tracer's own ending, its output flushed), and if
# it has not ended within 5 s, SIGTERM, then SIGKILL; reaped, forgotten.
# (bpftrace 0.17 has been seen to stay in epoll_wait after a SIGINT.)
bc_stop() {
	local i sig
	for sig in INT TERM KILL; do
		kill -"$sig" "$1" 2>/dev/null || break
		for i in $(seq 50); do
			kill -0 "$1" 2>/dev/null || break 2
			sleep 0.1
		done
		[ "$sig" = KILL ] || echo "pid $1 still there $((i / 10)) s after SIG$sig" >&2
	done
	wait "$1" 2>/dev/null || true
	bc_unbg "$1"
}

# bc_build D C OUT [CFLAGS...]: $W/OUT, the program C with the provider D (both
# in $W), built as a user builds one (the header is D's name with .h).
bc_build() {
	local d=$1 c=$2 out=$3 cflags=(-O2)
	[ $# -lt 4 ] || cflags=("${@:4}")
	(
		cd "$W" || exit 1
		"$DTRACE" -h -s "$d" -o "${d%.d}.h" &&
			cc "${cflags[@]}" -I"$SRC/include" -I. -c "$c" -o "$out.o" &&
			"$DTRACE" -G -s "$d" -o "$out-provider.o" "$out.o" &&
			cc -o "$out" "$out.o" "$out-provider.o"
	) || bc_fail "building $out"
}

# bc_daemon LINGER: a private helper daemon (its socket exported), ready.
bc_daemon() {
	local i
	export USDTKIT_HELPER_SOCKET="$W/helper.sock"
	"$HELPERD" -f --socket "$USDTKIT_HELPER_SOCKET" --linger "$1" 2>"$W/daemon.log" &
	bc_bg $!
	for i in $(seq 100); do
		grep -q ': ready' "$W/daemon.log" && return 0
		sleep 0.1
	done
	bc_fail "the helper daemon did not start: $(cat "$W/daemon.log")"
}

# bc_provider PREFIX: a provider name of PREFIX and six random letters (a
# tracefs group of its own).
bc_provider() { echo "$1$(tr -dc '[:lower:]' </dev/urandom | head -c 6)"; }

now_us() {
	local t=${EPOCHREALTIME/[.,]/}
	echo "$((10#$t))"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# quantile Q: that quantile of the numbers on stdin ("-" for none)
quantile() {
	sort -n | awk -v q="$1" '{ a[NR] = $1 }
END { if (!NR) { print "-"; exit } i = int(q * NR + 0.999); if (i < 1) i = 1; print a[i] }'
}
load() { cut -d' ' -f1 /proc/loadavg; }

# until_go CMD...: microseconds from starting CMD to its line "go" (then
# it is interrupted). Not its first line: bpftrace prints "Attaching N
# probes..." before it attaches them.
until_go() {
	local t0 pid l
	rm -f "$W/fifo"
	mkfifo "$W/fifo"
	t0=$(now_us)
	"$@" >"$W/fifo" 2>/dev/null &
	pid=$!
	while read -r l && [ "$l" != go ]; do :; done <"$W/fifo"
	echo $(($(now_us) - t0))
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
