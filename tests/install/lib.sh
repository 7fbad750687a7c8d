# Helpers for the install suite. Source after tests/lib/common.sh.

EXAMPLES="$USDTKIT_SRCDIR/examples"

# Prints the shell block of a README that follows the line
# "<!-- run: NAME -->" (the commands the README tells a reader to type).
readme_block() { # README NAME
	awk -v want="<!-- run: $2 -->" '
		$0 == want { armed = 1; next }
		armed && /^```sh$/ { inblk = 1; next }
		inblk && /^```$/ { exit }
		inblk { print }' "$1"
}

# Runs that block with bash -e in the current directory; fails the test,
# showing the block and its output, when a command fails.
run_readme_block() { # README NAME
	local blk
	blk=$(readme_block "$1" "$2")
	[ -n "$blk" ] || fail "$1: no '<!-- run: $2 -->' block"
	if ! bash -euc "$blk" >"$T/block.out" 2>&1; then
		{ echo "--- $2:"; echo "$blk"; echo "--- output:"; cat "$T/block.out"; } >&2
		fail "$2: the README's commands failed"
	fi
}

# A directory whose cc and c++ are the given compiler, for PATH: README
# commands say cc and c++, and dtrace -G compiles with cc.
compiler_shims() { # gcc|clang
	local d="$T/shims-$1"
	mkdir -p "$d"
	if [ "$1" = gcc ]; then
		ln -sf "$(command -v gcc)" "$d/cc"
		ln -sf "$(command -v g++)" "$d/c++"
	else
		ln -sf "$(command -v clang)" "$d/cc"
		ln -sf "$(command -v clang++)" "$d/c++"
	fi
	echo "$d"
}

# bpftrace, started in the background on a script, until it has attached
# (its BEGIN probe runs after every other probe is attached). bt_stop then
# waits until its output has COUNT lines matching PATTERN (what the traced
# program fired: bpftrace prints it a little later), stops it and leaves its
# output in the file given. BT_ARGS: bpftrace's options (-p PID).
BT_PID=""
at_exit 'stop_bg "$BT_PID" TERM 5'
BT_OUT=""
bt_start() { # OUTFILE SCRIPT
	local i
	BT_OUT=$1
	# shellcheck disable=SC2086
	bpftrace ${BT_ARGS:-} -e "BEGIN { printf(\"bt-ready\\n\"); } $2" >"$1" 2>&1 &
	BT_PID=$!
	# 30 s, scaled: under the emulated arm64 machine bpftrace takes minutes to attach
	for i in $(seq $((1500 * ${TIME_FACTOR:-1}))); do
		grep -q '^bt-ready' "$1" && return 0
		kill -0 "$BT_PID" 2>/dev/null || { cat "$1" >&2; fail "bpftrace exited at start"; }
		sleep 0.02
	done
	cat "$1" >&2
	fail "bpftrace did not attach"
}
# (-a: a string a test fired may hold bytes that are not text)
_bt_has() { [ "$(grep -acE -- "$1" "$BT_OUT" || true)" -ge "$2" ]; }
# Stops bpftrace once its output has what the caller expects: for each
# PATTERN COUNT, at least COUNT lines matching PATTERN (the events of a
# program that has exited are still on their way through bpftrace's
# buffers; stopping it at once loses them). Every caller names what it
# expects: there is no other sign that the output is complete.
bt_stop() { # PATTERN COUNT [PATTERN COUNT]...
	[ $# -ge 2 ] || fail "bt_stop: say which output lines to wait for"
	while [ $# -ge 2 ]; do
		wait_until 10 "$2 bpftrace output lines matching '$1'" _bt_has "$1" "$2"
		shift 2
	done
	stop_bg "$BT_PID" TERM
	BT_PID=""
}

# gdb stopped at a probe: prints "argc=N" and then each expression's value.
gdb_probe() { # PROBE(prov:name) 'ARGS' PROGRAM EXPR...
	local probe=$1 args=$2 prog=$3 e
	shift 3
	local cmds=(-ex 'set breakpoint pending on' -ex "break -probe-stap $probe" -ex "run $args"
		-ex 'printf "argc=%d\n", $_probe_argc')
	for e in "$@"; do
		cmds+=(-ex "output $e" -ex 'echo \n')
	done
	cmds+=(-ex kill)
	gdb -nx -q -batch "${cmds[@]}" "$prog" 2>&1
}
