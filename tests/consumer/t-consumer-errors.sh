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
err_case 1 "^<command line>:1:9: error: foo\(\) is not supported by this D consumer" -n 'BEGIN { foo(1); }'
err_case 1 "^<command line>:1:1: error: probe description fbt::vfs_read:entry: the fbt provider is not supported" \
	-n 'fbt::vfs_read:entry { }'
err_case 1 "error: macro argument \\\$1 is not given" -n 'BEGIN { trace($1); }'
err_case 1 "error: \\\$target is the process of -c or -p" -n 'BEGIN { trace($target); }'
err_case 1 "error: members of structures and translated arguments \('url'\)" -n 'BEGIN { trace(args[0]->url); }'
err_case 1 "error: llquantize\(\): the factor must be at least 2" -n 'BEGIN { @a = llquantize(1, 10, 0, 6, 25); }'
err_case 1 "error: unterminated string" -n 'BEGIN { printf("x); }'
err_case 1 "error: 'x' holds a string and an integer" -n 'BEGIN { x = 1; x = "s"; }'
err_case 1 "error: strjoin\(\) is supported where its value is printed" -n 'BEGIN { x = strjoin("a", "b"); }'
err_case 1 "error: @a is used with two different aggregating functions" -n 'BEGIN { @a = count(); @a = sum(1); }'
err_case 1 "error: 'x' is not a variable or a builtin" -n 'BEGIN { trace(x); }'
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

# The environment: no bpftrace, not root (bpftrace only runs as root).
if [ "$(id -u)" = 0 ]; then
	BPFTRACE=/nonexistent/bpftrace err_case 1 "^dtrace: error: bpftrace was not found: install it" -q -n 'BEGIN { exit(0); }'
	command -v setpriv >/dev/null || fail "setpriv is not installed (util-linux)"
	rc=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$DTRACE" -q -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "as nobody: exit $rc"
	grep -q "tracing needs root" "$T/err" || { cat "$T/err" >&2; fail "as nobody: message"; }
fi
