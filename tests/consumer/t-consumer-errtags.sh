#!/bin/bash
# D's compile errors as DTrace reports them (dtrace/consumer/check.c): every
# invalid program refused with exit status 1 before anything runs, nothing
# on standard output; under -xerrtags each error is DTrace's one line,
# "dtrace: failed to compile script F: [D_TAG] line N: message" (for -n:
# "invalid probe specifier ..."), the tag DTrace gives it. Needs no kernel:
# the programs are refused before any probe is matched or loaded.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

n=0
# tagged TAG 'message start' program: -s of a script, -xerrtags
tagged() {
	local tag=$1 msg=$2 rc=0
	n=$((n + 1))
	printf '%s\n' "$3" >"$T/p$n.d"
	timeout 60 "$DTRACE" -xerrtags -s "$T/p$n.d" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "'$3' exited $rc, expected 1"; }
	[ -s "$T/out" ] && { cat "$T/out" >&2; fail "'$3' wrote to stdout"; }
	head -n 1 "$T/err" | grep -qF -- "dtrace: failed to compile script $T/p$n.d: [$tag] line 1: $msg" ||
		{ cat "$T/err" >&2; fail "'$3': not [$tag] '$msg'"; }
}

# the prototypes table: how many arguments, of which kinds
tagged D_PROTO_LEN "exit( ) prototype mismatch: 0 args passed, 1 expected" 'BEGIN { exit(); }'
tagged D_PROTO_LEN "substr( ) prototype mismatch: 4 args passed, at most 3 expected" \
	'BEGIN { trace(substr("a", 1, 2, 3)); }'
tagged D_PROTO_LEN "printf( ) prototype mismatch: 0 args passed, at least 1 expected" 'BEGIN { printf(); }'
tagged D_PROTO_ARG "exit( ) argument #1 is incompatible with prototype:" 'BEGIN { exit("a"); }'
tagged D_PROTO_ARG "strtok( ) argument #1 is incompatible with prototype:" 'BEGIN { trace(strtok(1, "a")); }'
tagged D_FUNC_UNDEF "failed to resolve nosuch: Unknown function name" 'BEGIN { nosuch(1); }'
tagged D_TRACE_VOID "trace( ) may not be applied to a void expression" 'BEGIN { trace(exit(0)); }'
# printf() and printa() formats
tagged D_PRINTF_ARG_PROTO "printf( ) prototype mismatch: conversion #2 (%d)" 'BEGIN { printf("%d %d", 1); }'
tagged D_PRINTF_ARG_EXTRA "printf( ) prototype mismatch: only 1 arguments required" 'BEGIN { printf("%d", 1, 2); }'
tagged D_PRINTF_ARG_TYPE "printf( ) argument #2 is incompatible with conversion #1 prototype:" \
	'BEGIN { printf("%d", "a"); }'
tagged D_PRINTF_DYN_PROTO 'printf( ) prototype mismatch: conversion #1 (%d) is missing a corresponding "*" argument' \
	'BEGIN { printf("%*d"); }'
tagged D_PRINTF_FMT_EMPTY "printf( ) format string is empty" 'BEGIN { printf(""); }'
# shellcheck disable=SC2016 # a D program: $ is printf's
tagged D_SYNTAX "format conversion #1 uses unsupported positional format (%n\$)" 'BEGIN { printf("%1$d", 1); }'
tagged D_SYNTAX "format conversion #1 is undefined: %z" 'BEGIN { printf("%z", 1); }'
tagged D_PRINTF_AGG_CONV "%@ conversion requires an aggregation" 'BEGIN { printf("%@d", 1); }'
tagged D_PRINTA_AGGARG "printa( ) argument #1 is incompatible with prototype:" 'BEGIN { printa(1); }'
tagged D_PRINTF_ARG_PROTO "printa( ) prototype mismatch: conversion #1 (%d)" 'BEGIN { @ = count(); printa("%d", @); }'
# aggregations
tagged D_AGG_FUNC "trace( ) is not an aggregating function" 'BEGIN { @ = trace(0); }'
tagged D_AGG_REDEF "@a: aggregation redefined" 'BEGIN { @a = count(); @a = sum(1); }'
tagged D_AGG_SCALAR "avg( ) argument #1 must be of scalar type" 'BEGIN { @ = avg(""); }'
tagged D_AGG_NULL "expression has null effect" 'BEGIN { @a[1]; }'
tagged D_LQUANT_MISMATCH "lquantize( ) base (argument #2) must be less than limit" 'BEGIN { @ = lquantize(1, 10, 5); }'
tagged D_LQUANT_MATCHSTEP "lquantize( ) argument #4 must match" \
	'BEGIN { @ = lquantize(0, 10, 20, 1); @ = lquantize(0, 10, 20, 2); }'
tagged D_LLQUANT_FACTORVAL "llquantize( ) factor (argument #2) must be a 16-bit unsigned integer" \
	'BEGIN { @ = llquantize(1, 1, 0, 6, 20); }'
tagged D_NORMALIZE_AGGARG "normalize( ) argument #1 is incompatible" 'BEGIN { normalize(1, 2); }'
# operators, arrays, constants, the lexer, pragmas, descriptions
tagged D_DIV_ZERO "expression contains division by zero" 'BEGIN { x = 1 / (7 - 7); }'
tagged D_OP_INT "operator << requires an operand of integral type" 'BEGIN { x = "a" << 2; }'
tagged D_OP_SCALAR "operator ?: expression must be of scalar type" 'BEGIN { x = "a" ? 1 : 2; }'
tagged D_OP_ACT "operator ?: operands cannot be actions" 'BEGIN { x = 1 ? trace(0) : trace(1); }'
tagged D_PROTO_LEN "x[ ] prototype mismatch: 1 arg passed, 2 expected" 'BEGIN { x[1, 2] = 1; x[1] = 2; }'
tagged D_SYNTAX "expected an expression, found ';'" 'BEGIN { x = 1 +; }'
tagged D_INT_DIGIT "invalid number" 'BEGIN { x = 0128; }'
tagged D_CHR_NULL "empty character constant" "BEGIN { x = ''; }"
tagged D_PRAGMA_OPTSET "failed to set option 'quiet' to 'please'" '#pragma D option quiet=please'
tagged D_PDESC_ZERO "probe description profile-1us does not match any probes" 'profile-1us { }'
tagged D_STACK_SIZE "stack( ) size must be a non-zero positive integer constant" 'BEGIN { stack(0); }'

tagged D_FUNC_UNDEF "failed to resolve f: Unknown function name" 'BEGIN { @ = f(); }'
tagged D_ARGS_IDX "index 0 is out of range" 'BEGIN { trace(args[0]); }'
tagged D_DREC_COMM "data-recording actions may not follow commit( )" 'BEGIN { commit(1); exit(0); }'
tagged D_OP_INCOMPAT "operands have incompatible types" 'BEGIN { x = curthread; x = pid; }'
tagged D_IDENT_UNDEF "failed to resolve x: Unknown variable name" 'BEGIN /1/ { a[x]++; }'

# a macro argument the program does not use: refused, unless -x argref
rc=0
"$DTRACE" -xerrtags -n 'BEGIN { exit(0); }' 12 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "an unused \$1 ran"; }
grep -qF "[D_MACRO_UNUSED]" "$T/err" || { cat "$T/err" >&2; fail "no [D_MACRO_UNUSED]"; }
"$DTRACE" -x argref -e -n 'BEGIN { exit(0); }' 12 >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; fail "-x argref"; }

# -n: DTrace's "invalid probe specifier"
rc=0
"$DTRACE" -xerrtags -n 'BEGIN { exit(); }' >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "-n: exited $rc"
grep -qxF "dtrace: invalid probe specifier BEGIN { exit(); }: [D_PROTO_LEN] line 1: exit( ) prototype mismatch: 0 args passed, 1 expected" "$T/err" ||
	{ cat "$T/err" >&2; fail "-n: not DTrace's form"; }

# without -xerrtags: file:line:column and the caret, no tag
rc=0
"$DTRACE" -n 'BEGIN { exit(); }' >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "exited $rc"
grep -qxF "<command line>:1:9: error: exit( ) prototype mismatch: 0 args passed, 1 expected" "$T/err" ||
	{ cat "$T/err" >&2; fail "not file:line:column"; }
grep -q "D_PROTO_LEN" "$T/err" && fail "a tag without -xerrtags"

# what D allows stays allowed: the checks refuse nothing valid
"$DTRACE" -e -n 'BEGIN { @a[1, "x"] = lquantize(3, 0, 10, 2); @b = llquantize(5, 10, 0, 6, 20);
	printf("%*d %-5s %d %.*s %p %c\n", 3, 1, "a", 1 ? 2 : 3, 2, "abc", 0, 65); printa("%d %s %@d\n", @a); x[1, "a"] = 2; x[2, "b"]++;
	trace(substr("abc", 1)); trace(strjoin("a", "b")); exit(0); }' >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "a valid program refused"; }
echo "ok: $n tagged refusals, DTrace's form for -s and -n"
