# Helpers for the Node binding's tests. Source after tests/lib/common.sh.
#
# need_node_addon: skips (77) when this build has no Node addon (the build
# found no Node headers, bindings/node/meson.build) or there is no node;
# otherwise exports what dtrace-provider.js needs to load the build's addon.
#
# node_start [NODE-OPTION...]: starts driver.js (one at a time) with its
# stdin and stdout on pipes of this shell; sets NODE_PID; node_stop ends
# it. js 'CODE': runs CODE in it and prints the answer line ("ok <JSON>" / "err <Class>: <message>"). js_expect 'CODE'
# 'ANSWER': fails the test unless the answer is exactly ANSWER.

NODE_PKG="$USDTKIT_SRCDIR/bindings/node"
NODE_ADDON="$USDTKIT_BUILDDIR/bindings/node/usdtkit_dtrace_provider.node"
NODE_DRIVER="$USDTKIT_SRCDIR/tests/runtime-node/driver.js"

need_node_addon() {
	command -v node >/dev/null || skip "no node on PATH (scripts/deps.sh installs nodejs)"
	[ -e "$NODE_ADDON" ] ||
		skip "no Node addon in this build: Node's headers (node_api.h) were not found at setup"
	export USDTKIT_NODE_ADDON="$NODE_ADDON" USDTKIT_NODE_PKG="$NODE_PKG"
	export NODE_DTRACE_PROVIDER_REQUIRE=hard
	if [ -n "${USDTKIT_SANITIZE:-}" ]; then
		local rt
		rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null) || true
		[ -e "$rt" ] || fail "sanitizer run: no libclang_rt.asan-x86_64.so to preload into node"
		NODE_ENV=(LD_PRELOAD="$rt" ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0")
	fi
}

# node, in the sanitizer run with ASan's runtime preloaded (the addon's
# libusdtkit-runtime is instrumented, node is not) and without leak checks
# (node's own leaks are not ours); only node: not the build tools that
# node-gyp runs (call those through `command node`). In the background,
# write `env "${NODE_ENV[@]}" node ... &`: $! is then node's pid.
NODE_ENV=()
node() {
	env "${NODE_ENV[@]}" node "$@"
}

NODE_PID=""
node_start() { # [NODE-OPTION...]
	local line
	rm -f "$T/node.in" "$T/node.out"
	mkfifo "$T/node.in" "$T/node.out"
	env "${NODE_ENV[@]}" node "$@" "$NODE_DRIVER" <"$T/node.in" >"$T/node.out" 2>"$T/node.err" &
	NODE_PID=$!
	at_exit 'stop_bg "$NODE_PID" TERM 5'
	# (FD_*: daemon.sh's close_prog_fds keeps them from a daemon)
	exec {FD_NODEIN}>"$T/node.in" {FD_NODEOUT}<"$T/node.out"
	read -r -t $((20 * TIME_FACTOR)) line <&"$FD_NODEOUT" || { cat "$T/node.err" >&2; fail "node did not start"; }
	[ "${line%% *}" = ready ] || { cat "$T/node.err" >&2; fail "node said '$line'"; }
}

# Ends the driver (EOF on its stdin) and waits for it.
node_stop() {
	exec {FD_NODEIN}>&- {FD_NODEOUT}<&-
	stop_bg "$NODE_PID" TERM 5
	NODE_PID=""
}

js() { # CODE
	local line
	printf '%s\n' "${1//$'\n'/ }" >&"$FD_NODEIN" # (one line: one command)
	# (an upper bound: scaled, as under the emulated arm64 machine, tests/arm64)
	read -r -t $((20 * TIME_FACTOR)) line <&"$FD_NODEOUT" || { cat "$T/node.err" >&2; fail "no answer to: $1"; }
	printf '%s\n' "$line"
}

js_expect() { # CODE ANSWER
	local got
	got=$(js "$1")
	[ "$got" = "$2" ] || fail "$1: expected '$2', got '$got'"
}

# A name no other test run uses at the same time: letters only (a pid in
# digits would read as part of dtrace -l's provider<pid>).
node_unique() { # PREFIX
	printf '%s%s' "$1" "$(printf '%s' "$$" | tr 0-9 a-j)"
}

# bpftrace 0.17 prints its BEGIN line a moment before a probe is all set
# (its semaphore and its breakpoint do not come at once): runs CODE, firings
# of warm-up values, every 0.1 s until bpftrace's output (bt_start's
# BT_OUT) has COUNT distinct lines matching PATTERN. The test then leaves
# those lines out.
bt_warm() { # CODE PATTERN COUNT
	local i
	for ((i = 0; i < 100; i++)); do
		js "$1" >/dev/null
		[ "$(grep -E -- "$2" "$BT_OUT" | sort -u | wc -l)" -ge "$3" ] && return 0
		sleep 0.1
	done
	cat "$BT_OUT" >&2
	fail "bpftrace did not trace the warm-up firings ($1) in 10 s"
}
