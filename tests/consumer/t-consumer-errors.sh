#!/bin/bash
# What the D consumer refuses, and how: one error at file:line:col naming the
# construct, exit status 1 (2 for usage), no bpftrace message ever shown;
# and the environment: no bpftrace, not root. None of it needs the kernel
# (errors are found before bpftrace runs), except the last case.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"

err_case() { # rc expected-stderr-regex args...
	local want=$1 re=$2 rc=0
	shift 2
	timeout 60 "$DTRACE" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$T/err" >&2; fail "dtrace $* exited $rc, expected $want"; }
	grep -qE -- "$re" "$T/err" || { cat "$T/err" >&2; fail "dtrace $*: no line matches '$re'"; }
	[ -s "$T/out" ] && { cat "$T/out" >&2; fail "dtrace $*: wrote to stdout"; }
	no_bpftrace_dump "dtrace $*"
}

err_case 1 "^<command line>:1:20: error: expected '\)' to close the argument list, found '\}'" \
	-n 'BEGIN { printf("x" }'
err_case 1 "^<command line>:1:9: error: failed to resolve foo: Unknown function name" -n 'BEGIN { foo(1); }'
err_case 1 "^<command line>:1:1: error: probe description fbt::vfs_read:entry: the fbt provider is not supported" \
	-n 'fbt::vfs_read:entry { }'
err_case 1 "error: macro argument \\\$1 is not given" -n 'BEGIN { trace($1); }'
err_case 1 "error: \\\$target is the process of -c or -p" -n 'BEGIN { trace($target); }'
err_case 1 "error: operator -> must be applied to a pointer" -n 'BEGIN { x = 1; trace(x->url); }'
err_case 1 "error: llquantize\( \) factor \(argument #2\) and steps \(argument #5\) must divide each other evenly" -n 'BEGIN { @a = llquantize(1, 10, 0, 6, 25); }'
err_case 1 "error: unterminated string" -n 'BEGIN { printf("x); }'
err_case 1 "error: operands have incompatible types: int = string" -n 'BEGIN { x = 1; x = "s"; }'
# (the bpftrace backend's own limit; the default engine runs it)
err_case 1 "error: strjoin\(\) is supported where its value is printed" -x engine=bpftrace -n 'BEGIN { x = strjoin("a", "b"); }'
err_case 1 "error: @a: aggregation redefined: sum\( \) here, count\( \) before" -n 'BEGIN { @a = count(); @a = sum(1); }'
err_case 1 "error: failed to resolve x: Unknown variable name" -n 'BEGIN { trace(x); }'
err_case 1 "error: arg12: a USDT probe has at most 12 arguments" -Z -p $$ -n 'BEGIN { } nosuch$target:::x { trace(arg12); }'

# A script's errors name the file and line.
printf 'BEGIN\n{\n\ttrace(1)\n\tx = ;\n}\n' >"$T/bad.d"
err_case 1 "^$T/bad.d:4:2: error: expected ';' after the statement" -s "$T/bad.d"

# No match without -Z: DTrace's message.
err_case 1 "^dtrace: invalid probe specifier nosuch\\\$target:::x \{ \}: probe description nosuch$$:::x does not match any probes" \
	-p $$ -n 'nosuch$target:::x { }'
printf '/* nothing */\n' >"$T/empty.d"
err_case 1 "^dtrace: error: $T/empty.d: no probe description: nothing to trace" -s "$T/empty.d"
printf 'nosuch$target:::x { }\n' >"$T/nm.d"
err_case 1 "^dtrace: failed to compile script $T/nm.d: line 1: probe description nosuch$$:::x does not match any probes" \
	-p $$ -s "$T/nm.d"

# Usage errors.
err_case 2 "-P is only used with -l" -P foo -n 'BEGIN { }'
err_case 2 "-c is given more than once" -c true -c true -n 'BEGIN { }'

# The environment: no bpftrace, one too old (the bpftrace backend, -x
# engine=bpftrace), not root, no tracefs, a -p process that is not there or
# ends before tracing begins: each one line that says what to do.
one_line() { [ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err" >&2; fail "$1: not one line"; }; }
if [ "$(id -u)" = 0 ]; then
	BPFTRACE=/nonexistent/bpftrace err_case 1 "^dtrace: error: bpftrace was not found: install it" -x engine=bpftrace -q -n 'BEGIN { exit(0); }'
	mkdir -p "$T/nobin"
	rc=0
	env -u BPFTRACE PATH="$T/nobin" "$DTRACE" -x engine=bpftrace -q -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "a PATH without bpftrace: exit $rc"; }
	same "$T/err" "dtrace: error: bpftrace was not found: install it (Debian: apt-get install bpftrace) or name it in \$BPFTRACE\n" "a PATH without bpftrace"
	one_line "a PATH without bpftrace"
	# the default engine compiles with clang
	rc=0
	env -u USDTKIT_CLANG PATH="$T/nobin" "$DTRACE" -q -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "a PATH without clang: exit $rc"; }
	grep -q "^dtrace: error: .*compiles with clang, which is not installed: install the clang package" "$T/err" ||
		{ cat "$T/err" >&2; fail "a PATH without clang: message"; }
	one_line "a PATH without clang"
	printf '#!/bin/sh\necho "bpftrace v0.14.1"\n' >"$T/oldbt"
	chmod +x "$T/oldbt"
	BPFTRACE="$T/oldbt" err_case 1 "^dtrace: error: bpftrace 0.14.1 is too old: this dtrace needs 0.17 or later \(install a newer one, or name it in \\\$BPFTRACE\)$" -x engine=bpftrace -q -n 'BEGIN { exit(0); }'
	one_line "an old bpftrace"
	# one that runs the program is asked its version only once it has
	# compiled it ("attached_probes"), not beside its start-up, and is
	# stopped then
	cat >"$T/oldrun" <<'SH'
#!/bin/sh
for a; do [ "$a" = --version ] && { echo "bpftrace v0.14.1"; exit 0; }; done
echo '{"type": "attached_probes", "data": {"probes": 1}}'
echo '{"type": "printf", "data": "\u001e0"}'
exec sleep 60
SH
	chmod +x "$T/oldrun"
	t0=$(date +%s)
	BPFTRACE="$T/oldrun" err_case 1 "^dtrace: error: bpftrace 0.14.1 is too old: this dtrace needs 0.17 or later" -x engine=bpftrace -q -n 'BEGIN { }'
	one_line "an old bpftrace that runs"
	[ $(($(date +%s) - t0)) -lt $((20 * TIME_FACTOR)) ] || fail "an old bpftrace that runs: not stopped"
	# bpftrace attached its probes, then failed before its BEGIN ran (a
	# program the kernel's verifier refused): an error, never a silent 0.
	cat >"$T/failbt" <<'SH'
#!/bin/sh
for a; do [ "$a" = --version ] && { echo "bpftrace v0.17.0"; exit 0; }; done
echo '{"type": "attached_probes", "data": {"probes": 1}}'
echo "ERROR: Error loading program: BEGIN (try -v)" >&2
exit 1
SH
	chmod +x "$T/failbt"
	BPFTRACE="$T/failbt" err_case 1 "^dtrace: could not enable tracing: bpftrace: Error loading program: BEGIN \(try -v\)" -x engine=bpftrace -q -n 'BEGIN { exit(0); }'
	one_line "bpftrace failing after its attach"
	# bpftrace 0.17's real lines when LLVM refuses a program (a D clause
	# past the BPF stack): its RLIMIT_MEMLOCK "ERROR" (every start, as
	# root) is not the error to show
	cat >"$T/stackbt" <<'SH'
#!/bin/sh
for a; do [ "$a" = --version ] && { echo "bpftrace v0.17.0"; exit 0; }; done
echo 'ERROR: Unknown error -1: couldn'"'"'t set RLIMIT_MEMLOCK for bpftrace. If your program is not loading, you can try "ulimit -l 8192" to fix the problem' >&2
echo 'WARNING: Addrspace is not set' >&2
echo 'error: <unknown>:0:0: in function BEGIN i64 (i8*): Looks like the BPF stack limit of 512 bytes is exceeded. Please move large on stack variables into BPF per-cpu array map.' >&2
exit 1
SH
	chmod +x "$T/stackbt"
	BPFTRACE="$T/stackbt" err_case 1 "^dtrace: could not enable tracing: bpftrace: <unknown>:0:0: in function BEGIN i64 \(i8\*\): Looks like the BPF stack limit of 512 bytes is exceeded" -x engine=bpftrace -q -n 'BEGIN { exit(0); }'
	one_line "bpftrace refusing a program past the BPF stack"
	true &
	gone=$!
	wait "$gone"
	err_case 1 "^dtrace: failed to grab pid $gone: No such process$" -p "$gone" -n 'BEGIN { exit(0); }'
	one_line "-p of no process"
	# a process that ends as soon as dtrace's bpftrace runs
	command -v pgrep >/dev/null || fail "pgrep is not installed (procps)"
	(
		while [ ! -s "$T/dtpid" ]; do sleep 0.01; done
		until pgrep -P "$(cat "$T/dtpid")" -x bpftrace >/dev/null; do sleep 0.01; done
	) &
	early=$!
	rc=0
	"$DTRACE" -x engine=bpftrace -q -p "$early" -n 'BEGIN { } tick-1s { }' >"$T/out" 2>"$T/err" &
	echo $! >"$T/dtpid"
	wait $! || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "-p of a process that ends at once: exit $rc"; }
	same "$T/err" "dtrace: error: process $early exited before tracing began (bpftrace takes a second or more to attach): run it with -c CMD to trace it from its start\n" \
		"-p of a process that ends at once"
	command -v unshare >/dev/null || fail "unshare is not installed (util-linux)"
	# tracefs hidden in a mount namespace of this test's own
	rc=0
	unshare -m bash -c 'umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug/tracing 2>/dev/null; exec "$0" "$@"' \
		"$DTRACE" -q -n 'syscall::openat:entry { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "no tracefs: exit $rc"; }
	same "$T/err" "dtrace: error: syscall::openat:entry: tracefs is not mounted at /sys/kernel/tracing (the syscall provider's probes are its tracepoints): mount it with 'mount -t tracefs nodev /sys/kernel/tracing'\n" "no tracefs"
	command -v setpriv >/dev/null || fail "setpriv is not installed (util-linux)"
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$DTRACE" -q -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "as nobody: exit $rc"
	grep -q "tracing needs root" "$T/err" || { cat "$T/err" >&2; fail "as nobody: message"; }
fi
