#!/bin/bash
# D forms DTrace runs that this consumer refused or got wrong (issue 35,
# slice k4): cpp's environment for a D program (ISO C by default, DTrace's
# predefined names, -x stdc/undef/define); an expression as a statement
# (`*(char *)NULL;` faults) and DTrace's dt_clause_N numbering; declared
# associative arrays read before any assignment and typed by their
# declaration; clauses of more than 64 actions; DTrace's arithmetic types
# (no promotion to int) and %d of a 64-bit unsigned value; strings as char
# arrays (s + i, a[k][1], a char * given a string); escapes D keeps; inline
# arrays and inline structs; declared array bounds at run time. Expected
# values are DTrace's (its unit tests' .r files, its documented semantics).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v clang >/dev/null || command -v clang-14 >/dev/null || fail "clang is not installed"

# cpp: <endian.h> under -C declares no GNU inline function D cannot take
# (ISO C, __GNUC__ undefined); __linux is predefined, -x undef removes it;
# -x stdc=s is K&R (no __STDC__); -x define is -D.
cat >"$T/endian.d" <<'EOF'
#include <endian.h>
BEGIN
{
#if defined(__BYTE_ORDER) && (__BYTE_ORDER == __LITTLE_ENDIAN || __BYTE_ORDER == __BIG_ENDIAN)
	printf("order");
#endif
#ifdef __linux
	printf(" linux");
#endif
#ifdef __STDC__
	printf(" stdc");
#endif
#ifdef MINE
	printf(" %d", MINE);
#endif
	printf("\n");
	exit(0);
}
EOF
dt 0 -q -C -s "$T/endian.d"
same "$T/out" "order linux stdc\n\n" "-C with <endian.h>: DTrace's predefined names, ISO C"
grep -v '#include' "$T/endian.d" >"$T/plain.d"
dt 0 -q -C -x undef=__linux -x stdc=s -x define=MINE=7 -s "$T/plain.d"
same "$T/out" " 7\n\n" "-x undef, -x stdc=s (no __STDC__), -x define"

# An expression as a statement is computed: a NULL dereference faults, and
# the fault names DTrace's clause number (one per probe description).
dt 0 -q -n 'BEGIN, END { x = 1; } BEGIN { *(char *)NULL; }
ERROR { printf("E %d %d\n", arg4 == DTRACEFLT_BADADDR, arg5); exit(0); }'
same "$T/out" "E 1 0\n\n" "*(char *)NULL; as a statement faults"
same "$T/err" "dtrace: error in dt_clause_2 for probe ID 1 (dtrace:::BEGIN): invalid address (0x0) at BPF pc 1\n" \
	"the third probe description's clause is dt_clause_2"

# A declared associative array no clause assigns: its type's zero; a
# string's is DTrace's NULL, whose recording faults.
dt 0 -q -n 'uint64_t b[uint64_t]; string s[int];
BEGIN { printf("%d %d\n", b[1], b[2] == 0); }
BEGIN { trace(s[1]); }
ERROR { printf("E %d %d\n", arg4 == DTRACEFLT_BADADDR, arg5); exit(0); }'
same "$T/out" "0 1\nE 1 0\n\n" "declared arrays read before any assignment"

# A declared array's values are of its type; DTrace's arithmetic keeps the
# wider operand's type (unsigned at equal width), no promotion to int.
dt 0 -q -n 'unsigned char C[int]; short s[int]; self unsigned char u; self signed char c;
BEGIN { C[0] = -2; C[1] = -3; s[0] = -3; self->u = 254; self->c = 3;
	printf("%d %d %d %d\n", C[0] + C[1], C[0] + s[0], s[0], self->u + self->c);
	v = 200; printf("%d %d %d\n", (unsigned long long)-5, (char)0x1ef, (char)v); exit(0); }'
same "$T/out" "251 251 -3 1\n18446744073709551611 239 -56\n\n" \
	"declared array types, DTrace's arithmetic types, %d of a 64-bit unsigned value"

# More than 64 actions in a clause, some in a branch not taken.
prog='BEGIN {'
for i in $(seq 1 70); do
	prog="$prog if ($i % 7 != 0) { printf(\"%d \", $i); }"
done
prog="$prog printf(\"\\n\"); exit(0); }"
dt 0 -q -n "$prog"
want=""
for i in $(seq 1 70); do
	[ $((i % 7)) = 0 ] || want="$want$i "
done
same "$T/out" "$want\n\n" "a clause of 72 actions, the branches not taken skipped"

# Strings as char arrays: s + i, i + s, a string element indexed, a char *
# given a string; escapes D does not know keep their backslash.
dt 0 -q -n 'char *p; BEGIN { g = "abcdef"; a[1] = "XYZ"; p = probeprov;
	printf("%s %s %s %c %c %d\n", g + 2, 1 + g, a[1] + 1, a[1][2], p[0], p[0] == 0x64);
	printf("%s\n", "q\?\x41\\"); exit(0); }'
same "$T/out" "cdef bcdef YZ Z d 1\nq\\\\?A\\\\\n\n" "string arithmetic, indexing, escapes"

# Inline arrays; '.' of an inline struct of a variable.
dt 0 -q -n 'inline int sum[int x, int y] = x + y * 10;
struct r { int i; }; struct r r1; inline struct r r2 = r1;
BEGIN { r1.i = 5; printf("%d %d %d\n", sum[1, 2], sum[r1.i, 1], r2.i); exit(0); }'
same "$T/out" "21 15 5\n\n" "inline arrays and inline struct members"
dt 1 -q -n 'inline int sum[int x, int y] = x + y; BEGIN { trace(sum[1]); }'
grep -q 'takes 2 keys, given 1' "$T/err" || { cat "$T/err" >&2; fail "an inline array given too few keys"; }

# D`name: a type in the D module's scope (the program's own types).
dt 0 -q -n 'typedef struct ev { int a; long b; } ev_t; struct dq { int x; };
BEGIN { p = (D`ev_t *)alloca(sizeof(D`ev_t)); p->a = 3;
	printf("%d %d %d\n", p->a, sizeof(struct D`dq), sizeof(D`ev_t)); exit(0); }'
same "$T/out" "3 4 16\n\n" "D\`-scoped type names"

# A declared array's index out of its bounds at run time: DTRACEFLT_BADINDEX;
# through a cast pointer past the object: the bytes there, no fault.
dt 0 -q -n 'int a[5]; BEGIN { i = 8; a[i] = 1; }
ERROR { printf("E %d %d %d\n", arg4 == DTRACEFLT_BADINDEX, arg4, arg5); exit(0); }
BEGIN { a[4] = 9; printf("%d\n", ((int *)a)[4] + ((int *)a)[6] * 0); }'
same "$T/out" "9\nE 1 11 8\n\n" "a declared array's run-time bounds"
grep -q 'index out of bounds (8) at BPF pc' "$T/err" || { cat "$T/err" >&2; fail "DTrace's index message"; }

echo "ok"
