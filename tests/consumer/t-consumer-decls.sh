#!/bin/bash
# What DTrace's compiler refuses in declarations, '#' lines, the order of a
# global's first assignment, alloca()'s taint and -x iregs, refused before
# anything runs, each with DTrace's -xerrtags tag (consumer/parse_proto.c,
# lex.c, check.c, check_alloca.c, options.c); what it accepts of the same
# kinds accepted; `dtrace -v`'s stability report (stability.c) and -H.
# The programs are compiled with -e: clang and the verifier (root), nothing attached.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
export USDTKIT_CACHE_DIR=$T/cache

n=0
# tagged TAG 'message start' LINE program: -s of a script, -xerrtags
tagged() {
	local tag=$1 msg=$2 line=$3 rc=0
	n=$((n + 1))
	printf '%s\n' "$4" >"$T/p$n.d"
	timeout 60 "$DTRACE" -xerrtags -e -s "$T/p$n.d" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "'$4' exited $rc, expected 1"; }
	[ -s "$T/out" ] && { cat "$T/out" >&2; fail "'$4' wrote to stdout"; }
	head -n 1 "$T/err" | grep -qF -- "dtrace: failed to compile script $T/p$n.d: [$tag] line $line: $msg" ||
		{ cat "$T/err" >&2; fail "'$4': not [$tag] line $line '$msg'"; }
}
# accepted 'program' [options]: compiled with -e, exit 0
accepted() {
	local rc=0
	n=$((n + 1))
	printf '%s\n' "$1" >"$T/p$n.d"
	timeout 60 "$DTRACE" -e "${@:2}" -s "$T/p$n.d" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "'$1' ${*:2}: exited $rc, expected 0"; }
}

# a prototype's parameters, an array's key signature
tagged D_DECL_PARMCLASS "inappropriate storage class for function or associative array parameter" 1 \
	'int foo(static int); BEGIN { exit(0); }'
tagged D_DECL_PARMCLASS "inappropriate storage class" 1 'int a[self int]; BEGIN { exit(0); }'
tagged D_DECL_PROTO_NAME "void parameter may not have a name: v" 1 'int a(void v); BEGIN { exit(0); }'
tagged D_DECL_PROTO_TYPE "function prototype may not use parameter of type dynamic variable: a, parameter #1" 1 \
	'int a(int a[int]); BEGIN { exit(0); }'
tagged D_DECL_PROTO_TYPE "array prototype may not use parameter of type void: (anonymous), parameter #1" 1 \
	'int x[void, char]; BEGIN { exit(0); }'
tagged D_DECL_PROTO_VARARGS "array prototype may not use a variable-length argument list" 1 \
	'int a[...]; BEGIN { exit(0); }'
tagged D_DECL_PROTO_VOID "void must be sole parameter" 1 'int foo(int, void); BEGIN { exit(0); }'
# type words
tagged D_DECL_VOIDATTR "invalid type declaration: attributes may not be used with void type" 1 \
	'short void ptr; BEGIN { exit(0); }'
tagged D_DECL_CHARATTR "invalid type declaration: short and long may not be used with char type" 1 \
	'long char c; BEGIN { exit(0); }'
tagged D_DECL_LONGINT "invalid type declaration: long and long long may only be used" 1 \
	'long struct s { int i; }; BEGIN { exit(0); }'
tagged D_DECL_SIGNINT "invalid type declaration: signed and unsigned may only be used" 1 \
	'unsigned string s; BEGIN { exit(0); }'
# bit-fields: an integer type, a positive width, no wider than the type
tagged D_DECL_BFCONST "positive integral constant expression expected as bit-field size" 1 \
	'struct r { int a : 1; int b : -3; } var; BEGIN { exit(0); }'
tagged D_DECL_BFCONST "positive integral constant expression" 1 'struct r { int b : 0; } var; BEGIN { exit(0); }'
tagged D_DECL_BFSIZE "bit-field too big for type: a" 1 'struct r { char a : 10; } var; BEGIN { exit(0); }'
tagged D_DECL_BFTYPE "invalid type for bit-field: (anon)" 1 'struct r { float : 1; } xyz; BEGIN { exit(0); }'
tagged D_ADDROF_BITFIELD "cannot take address of bit-field" 1 \
	'struct r { int a : 1; int b : 3; } var; BEGIN { trace(&var.b); exit(0); }'
tagged D_SIZEOF_BITFIELD "cannot apply sizeof to a bit-field" 1 \
	'struct r { int a : 1; int b : 3; } var; BEGIN { printf("%n", sizeof(var.a)); exit(0); }'
accepted 'struct r { char a : 8; long long b : 64; unsigned c : 1; } var; BEGIN { exit(0); }'
# storage classes, scoping, enumerators, struct members, arrays
tagged D_DECL_CLASS "only one storage class allowed in a declaration" 1 'self this int x; BEGIN { exit(0); }'
tagged D_DECL_SCOPE "D scoping operator may not be used in a declaration name (\`xyz)" 1 'int `xyz; BEGIN { exit(0); }'
tagged D_UNKNOWN "failed to define enumerator 'GREEN': Duplicate member or variable name" 1 \
	'enum colors { RED, GREEN, GREEN = 2 }; BEGIN { exit(0); }'
tagged D_DECL_IDRED "identifier redeclared: RED" 1 'enum a { RED }; enum b { RED }; BEGIN { exit(0); }'
tagged D_DECL_VOIDOBJ "cannot have void member: trace" 1 'struct { int trace(); }; BEGIN { exit(0); }'
tagged D_DECL_ARRBIG "array dimension too big" 1 'int x[88294967295]; BEGIN { exit(0); }'
tagged D_ARR_BADREF "cannot access scalar x as an associative array" 1 'int x[5]; BEGIN { x[1, 2] = 1; }'
tagged D_ARR_LOCAL "local variables may not be used as associative arrays: x" 1 \
	'BEGIN { this->x[1] = 123; exit(0); }'
accepted 'BEGIN { this->s = "ABC"; trace(this->s[1]); exit(0); }'
tagged D_IDENT_BADREF "associative array 'a' may not be referenced as scalar" 1 \
	'BEGIN { a[0] = 1; trace(sizeof(a)); exit(0); }'
# this-> associative arrays, a variable declared again with another type
tagged D_DECL_LOCASSC "associative arrays may not be declared as local variables: a" 1 \
	'this int a[int]; BEGIN { exit(0); }'
tagged D_DECL_IDRED "identifier redeclared: x" 1 'int x; char x; BEGIN { x = 1; }'
accepted 'int f(int, char *); int g(void); int h(int, ...); int k(register int);
int a[int, string]; self int s[int]; this int t[4]; int x; int x;
long double d; unsigned long long u; signed char sc;
BEGIN { a[1, "a"] = 2; self->s[1] = 3; x = 4; exit(0); }'

# '#' lines: a control line without -C, #pragma D depends_on and attributes
tagged D_PRAGCTL_INVAL "invalid control directive: #if" 1 '#if 0
#endif
BEGIN { exit(0); }'
accepted '#if 0
#endif
BEGIN { exit(0); }' -C
accepted '#ident "v1"
BEGIN { exit(0); }'
tagged D_PRAGMA_DEPEND "main program may not explicitly depend on a library" 1 \
	'#pragma D depends_on library net.d
BEGIN { exit(0); }'
tagged D_PRAGMA_UNUSED "unused #pragma attributes" 2 'void func(int, int);
#pragma D attributes Stable/Stable/Common func
BEGIN { exit(0); }'
tagged D_PRAGMA_INVAL "invalid attributes specified by #pragma attributes" 1 \
	'#pragma D attributes incorrect_attr foo
BEGIN { exit(0); }'
tagged D_PRAGMA_MALFORM "malformed #pragma attributes <attributes> <ident>" 1 \
	'#pragma D attributes Stable
BEGIN { exit(0); }'
accepted 'int x;
#pragma D attributes Stable/Evolving/Common x
inline int y = 3;
#pragma D attributes Private y
BEGIN { x = y; exit(0); }'

# a global exists from its first assignment on, in the program's order
tagged D_IDENT_UNDEF "failed to resolve start: Unknown variable name" 1 \
	'END { total = timestamp - start; } BEGIN { start = timestamp; exit(0); }'
tagged D_IDENT_UNDEF "failed to resolve y: Unknown variable name" 1 'BEGIN { trace(y); y = 1; exit(0); }'
accepted 'BEGIN { x = x + 1; start = timestamp; } END { trace(timestamp - start); }'

tagged D_VAR_UNDEF "p has not yet been declared or assigned" 1 'BEGIN { p -= 1; exit(0); }'
accepted 'int p; BEGIN { p -= 1; q = 2; q += 1; exit(0); }'
tagged D_PRED_SCALAR "predicate result must be of scalar type" 1 'int a[4]; BEGIN /a/ { exit(0); }'
tagged D_PROTO_ARG "args[ ] argument #1 is incompatible with prototype" 1 'BEGIN { trace(args["a"]); exit(0); }'

# -x amin: the least attributes a clause may have
tagged D_ATTR_MIN "attributes for clause (Unstable/Unstable/Common) are less than predefined minimum" 2 \
	'#pragma D option amin=Evolving/Evolving/Common
BEGIN { trace(curthread->nosuch); exit(0); }'
rc=0
"$DTRACE" -xerrtags -xamin=Stable/Stable/Common -e -n 'dtrace:::BEGIN { trace(curthread); exit(0); }' \
	>"$T/out" 2>"$T/err" || rc=$?
if [ "$rc" != 1 ] || ! grep -qF '[D_ATTR_MIN] line 1: attributes for clause (Stable/Private/Common)' "$T/err"; then
	cat "$T/err" >&2
	fail "-xamin: curthread's Private data not refused"
fi
accepted 'dtrace:::BEGIN { exit(0); }' -xamin=Stable/Stable/Common

# alloca()'s taint
tagged D_ALLOCA_INCOMPAT "ternary conditional with alloca and non-alloca branches cannot be assigned to a variable" 1 \
	'BEGIN { a = (char *) alloca(1); a = (a == NULL) ? (char *) 50 : a; }'
tagged D_ALLOCA_INCOMPAT "a: cannot reuse the same identifier for both alloca and non-alloca allocations" 1 \
	'int x; BEGIN { a = (char *) alloca(1); } BEGIN { b = (char *) &x; a = NULL; a = b + 5; exit(0); }'
tagged D_ALLOCA_INCOMPAT "p: cannot reuse the same identifier" 1 \
	'int x; BEGIN { this->p = (char *) &x; this->p = alloca(4); exit(0); }'
tagged D_OP_VFPTR "operator -= cannot be applied to alloca( )'s void *" 1 'int p; BEGIN { p = 1; p -= alloca(10); exit(0); }'
accepted 'BEGIN { a = (char *) alloca(1); trace((a == NULL) ? (char *) 50 : a); a = NULL; a = a + 1; exit(0); }'

tagged D_ALLOCA_SIZE "copyin(65) size larger than scratchsize 64" 2 '#pragma D option scratchsize=64
BEGIN { copyin(0, 65); exit(0); }'
tagged D_AGG_MDIM "multi-dimensional indexing" 1 'BEGIN { @[0][1] = count(); exit(0); }'
tagged D_FUNC_IDENT "function designator is not of function type" 1 'BEGIN { @ = tick-1(); exit(0); }'

# -x iregs: 1 to 8
tagged D_PRAGMA_OPTSET "failed to set option 'iregs' to '9': Invalid value for specified option" 1 \
	'#pragma D option iregs=9
BEGIN { exit(0); }'
accepted 'BEGIN { exit(0); }' -xiregs=8

# dtrace -v: DTrace's stability report, on stdout before the program runs
n=$((n + 1))
printf 'BEGIN\n{\n\tprintf("%%d\\n", 2);\n\texit(0);\n}\n' >"$T/p$n.d"
"$DTRACE" -v -e -s "$T/p$n.d" >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; fail "-v -e exited non-zero"; }
printf '\nStability attributes for script %s:\n\n' "$T/p$n.d" >"$T/exp"
printf '\tMinimum Probe Description Attributes\n\t\tIdentifier Names: Unstable\n\t\tData Semantics:   Unstable\n\t\tDependency Class: Common\n\n' >>"$T/exp"
printf '\tMinimum Statement Attributes\n\t\tIdentifier Names: Stable\n\t\tData Semantics:   Stable\n\t\tDependency Class: Common\n\n' >>"$T/exp"
diff -u "$T/exp" "$T/out" || fail "-v: not DTrace's stability report"
"$DTRACE" -v -e -n 'dtrace:::BEGIN { trace(curthread); exit(0); }' >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "-v -e -n exited non-zero"; }
grep -q '^Stability attributes for description dtrace:::BEGIN' "$T/out" || fail "-v -n: no report"
[ "$(grep -c 'Identifier Names: Stable' "$T/out")" = 2 ] || { cat "$T/out" >&2; fail "-v: dtrace:::BEGIN is Stable"; }
grep -q 'Data Semantics:   Private' "$T/out" || { cat "$T/out" >&2; fail "-v: curthread's data is Private"; }

# -H: the files cpp includes, on stderr
printf '#define FORTY 40\n' >"$T/inc.h"
printf '#include "inc.h"\nBEGIN { trace(FORTY); exit(0); }\n' >"$T/h.d"
"$DTRACE" -e -C -H -s "$T/h.d" >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; fail "-CH exited non-zero"; }
grep -q 'inc\.h$' "$T/err" || { cat "$T/err" >&2; fail "-H: inc.h not named"; }
echo "ok: $n programs"
