#!/bin/bash
# What the D consumer refuses, and how: one error at file:line:col naming the
# construct, exit status 1 (2 for usage), no compiler's or loader's own
# message ever shown; and the environment: no clang, not root, no tracefs.
# None of it needs the kernel (errors are found before anything is
# loaded), except the last cases.
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
# ($target without -c or -p is 0, as DTrace's: t-consumer-buffers)
err_case 1 "error: operator -> must be applied to a pointer" -n 'BEGIN { x = 1; trace(x->url); }'
err_case 1 "error: llquantize\( \) factor \(argument #2\) and steps \(argument #5\) must divide each other evenly" -n 'BEGIN { @a = llquantize(1, 10, 0, 6, 25); }'
err_case 1 "error: unterminated string" -n 'BEGIN { printf("x); }'
err_case 1 "error: operands have incompatible types: int = string" -n 'BEGIN { x = 1; x = "s"; }'
# One engine: what it cannot compile yet is one error at the construct,
# tagged D_UNSUPPORTED (never run another way); the bpftrace backend is
# gone, and asking for it is one error (-x engine=bpf, the engine's old
# name, is accepted).
err_case 1 "^<command line>:1:16: error: an array assigned inside another array's key is not supported yet$" \
	-n 'BEGIN { a[b[1] = 2] = 3; }'
one_line() { [ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err" >&2; fail "$1: not one line"; }; }
printf 'BEGIN\n{ a[b[1] = 2] = 3; }\n' >"$T/arr.d"
err_case 1 "^dtrace: failed to compile script $T/arr.d: \[D_UNSUPPORTED\] line 2: an array assigned inside another array's key is not supported yet$" -x errtags -s "$T/arr.d"
one_line "an unsupported construct under -xerrtags"
# this-> arrays: DTrace refuses them too (D_ARR_LOCAL)
err_case 1 "^<command line>:1:9: error: local variables may not be used as associative arrays: a$" -n 'BEGIN { this->a[1] = 2; }'
err_case 1 "^dtrace: error: -x engine=bpftrace: dtrace has one engine, BPF C through clang and libbpf \(the bpftrace backend was removed\)$" \
	-x engine=bpftrace -n 'BEGIN { exit(0); }'
one_line "-x engine=bpftrace"
err_case 1 "^dtrace: error: -x bpftrace: the bpftrace backend was removed \(-x bpfc prints the engine's BPF C\)$" -x bpftrace -n 'BEGIN { exit(0); }'
# the same as a pragma: located and tagged, as other bad pragmas are
printf '#pragma D option engine=bpftrace\nBEGIN { exit(0); }\n' >"$T/pragma.d"
err_case 1 "^$T/pragma.d:1:1: error: -x engine=bpftrace: dtrace has one engine" -s "$T/pragma.d"
[ "$(wc -l <"$T/err")" = 3 ] || { cat "$T/err" >&2; fail "#pragma D option engine=bpftrace: not 3 lines (the error, the line, the caret)"; }
printf 'BEGIN { exit(0); }\n#pragma D option engine=foo\n' >"$T/pragma2.d"
err_case 1 "^dtrace: failed to compile script $T/pragma2.d: \[D_PRAGMA_OPTSET\] line 2: -x engine=foo: dtrace has one engine" \
	-x errtags -s "$T/pragma2.d"
# $USDTKIT_ENGINE chooses nothing any more: the engine runs the program
rc=0
USDTKIT_ENGINE=bpftrace "$DTRACE" -x bpfc -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "USDTKIT_ENGINE=bpftrace -x bpfc: exit $rc"; }
grep -q 'SEC(' "$T/out" || { head "$T/out" >&2; fail "USDTKIT_ENGINE=bpftrace -x bpfc: no BPF C"; }
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

# The environment: no clang, not root, no tracefs, a -p process that is
# not there: each one line that says what to do.
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$T/nobin"
	# the engine compiles with clang
	rc=0
	env -u USDTKIT_CLANG PATH="$T/nobin" "$DTRACE" -q -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "a PATH without clang: exit $rc"; }
	grep -q "^dtrace: error: .*compiles with clang, which is not installed: install the clang package" "$T/err" ||
		{ cat "$T/err" >&2; fail "a PATH without clang: message"; }
	one_line "a PATH without clang"
	true &
	gone=$!
	wait "$gone"
	err_case 1 "^dtrace: failed to grab pid $gone: No such process$" -p "$gone" -n 'BEGIN { exit(0); }'
	one_line "-p of no process"
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
