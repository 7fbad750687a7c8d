#!/bin/bash
# D's types and arithmetic on the BPF engine (issue 35, items 1 and 2):
# constants typed by C's rules, signed and unsigned division, modulo and
# shifts, casts, wrap-around where a value is stored or printed, typed
# declarations (typedef, enum, inline, struct and bit-field members,
# typed globals, self-> and this->), sizeof and offsetof, and a division by
# a constant zero refused. Every expected value is worked out by hand
# from C's conversions and DTrace's rules (dtrace(1): "D's integers"),
# never taken from this dtrace's output.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"

# Division and modulo: signed by the common type; DTrace's % negates the
# magnitudes' remainder when the signs differ (19 % -5 is -4).
cat >"$T/arith.d" <<'D'
BEGIN
{
	printf("%d %d %d %d %d\n", (-19) / 5, 19 / (-5), (-19) % 5, 19 % (-5), (-19) % (-5));
	printf("%d %d %d\n", (uint8_t)255, (unsigned short)-1, (char)200);
	printf("%x %x\n", ~0xdeadbeef, ~0xdeadbeefdeadbeefull);
	i = 2147483647;
	i = i + 1;
	printf("%d\n", i);
	printf("%d %d\n", (unsigned int)-1 / 2, -1 / 2);
	printf("%d %d %d\n", -1 < 1u, -1 < 1, -1L < 1u);
	printf("%d %d %d\n", -16 >> 2, (unsigned int)-16 >> 2, 1 << 31);
	printf("%d %x\n", (long long)(1 << 31), (unsigned long long)(unsigned int)-1);
	j = 0;
	j = 0xffffffff;
	k = 40000 * 40000;
	printf("%d %d\n", j, k / 40000);
	exit(0);
}
D
dt 0 -x engine=bpf -q -s "$T/arith.d"
# (-19)/5 = -3, 19/-5 = -3, -19%5 = -4, 19%-5 = -4, -19%-5 = 4;
# (char)200 of the constant keeps its bits, unextended (DTrace's printf/tst.ints.r:
# (char)0x1234567890abcdef prints 239 with %d; a run-time value's cast sign-extends,
# t-consumer-dforms.sh); ~0xdeadbeef is an unsigned int;
# 2147483647+1 stored into an int wraps; 0xffffffff/2 unsigned;
# -1 < 1u compares as unsigned int (0xffffffff < 1: 0), -1L < 1u as long (1);
# -16>>2 arithmetic, 0xfffffff0>>2 logical, 1<<31 an int;
# (long long) of an int sign-extends, of an unsigned int zero-extends;
# j is an int (its first value's type): 0xffffffff stored is -1;
# 40000*40000 is computed on 64 bits (as DTrace's registers): 1600000000/40000.
same "$T/out" "-3 -3 -4 -4 4\n255 65535 200\n21524110 2152411021524110\n-2147483648\n2147483647 0\n0 1 1\n-4 1073741820 -2147483648\n-2147483648 ffffffff\n-1 40000\n\n" "integer types and arithmetic"

cat >"$T/decl.d" <<'D'
typedef unsigned char u8_t;
enum colors { RED, GREEN = 5, BLUE };
inline int answer = 2 * 21;
struct rec {
	char c;
	int i;
	long l;
};
struct bits {
	int a : 3;
	unsigned int b : 4;
} bf;
int gi, never;
self unsigned short su;
this long long tl;
struct rec r;

BEGIN
{
	printf("%d %d %d %d\n", RED, GREEN, BLUE, answer);
	printf("%d %d %d %d %d\n", sizeof(u8_t), sizeof(struct rec), sizeof(enum colors), sizeof(r), sizeof(int *));
	printf("%d %d %d\n", offsetof(struct rec, i), offsetof(struct rec, l), sizeof("hi"));
	x8 = (u8_t)257;
	gi = 0xffffffff;
	self->su = -1;
	this->tl = 1 << 31;
	printf("%d %d %d %d %d\n", x8, gi, self->su, this->tl, never);
	bf.a = 7;
	bf.b = 17;
	r.i = 5;
	r.c = 300;
	printf("%d %d %d %d\n", bf.a, bf.b, r.i, r.c);
	exit(0);
}
D
dt 0 -x engine=bpf -q -s "$T/decl.d"
# enum: 0, 5, 6; struct rec: c at 0, i at 4, l at 8: 16 bytes; a pointer 8;
# "hi" and its NUL 3; (u8_t)257 = 1; an int given 0xffffffff is -1; an
# unsigned short given -1 is 65535; a long long given the int 1<<31 is
# sign-extended; a declared global never assigned reads 0; a signed 3-bit
# field given 7 is -1, an unsigned 4-bit one given 17 is 1; a char given
# 300 is 44.
same "$T/out" "0 5 6 42\n1 16 4 16 8\n4 8 3\n1 -1 65535 -2147483648 0\n-1 1 5 44\n\n" "declarations, sizeof, offsetof, members"

# Invalid programs: refused at compile time, never run (nor loaded).
printf 'BEGIN\n{\n\tc = 123 / (7 - 7);\n\texit(0);\n}\n' >"$T/div0.d"
dt 1 -q -s "$T/div0.d"
same "$T/err" "$T/div0.d:3:10: error: expression contains division by zero\n    3 | \tc = 123 / (7 - 7);\n      | \t        ^\n" "division by a constant zero"
dt 1 -q -n 'BEGIN { x = 5; x %= 0; exit(0); }'
expect_grep "error: expression contains division by zero" "$T/err" "%= by a constant zero"
dt 1 -q -n 'struct s { int a; }; BEGIN { trace(offsetof(struct s, b)); exit(0); }'
expect_grep "error: offsetof: struct s has no member 'b'" "$T/err" "offsetof of no member"
dt 1 -q -n 'struct s { int a : 3; } v; BEGIN { trace(sizeof(v.a)); exit(0); }'
expect_grep "error: cannot apply sizeof to a bit-field" "$T/err" "sizeof of a bit-field"
dt 1 -q -n 'struct s { struct t x; }; BEGIN { exit(0); }'
expect_grep "error: struct t is incomplete" "$T/err" "a member of an incomplete type"
dt 1 -q -n 'BEGIN { trace((struct nosuch)1); exit(0); }'
expect_grep "error: cast to unknown type 'struct nosuch'" "$T/err" "a cast to an unknown type"
# trace() without -q: a narrow value printed as its type's sign reads it
# (DTrace's dt_consume prints a 1, 2 or 4-byte record through the unsigned
# type of its size for an unsigned type: 255, 65535, 4294967295; widths
# " %3d", " %5d", " %10d" as Oracle's dt_print_trace)
dt 0 -x engine=bpf -n 'BEGIN { trace((uint8_t)-1); trace((int8_t)-1); trace((uint16_t)-1); trace((uint32_t)-1); trace((int32_t)-1); exit(0); }'
grep -q ' 255  -1 65535 4294967295         -1 *$' "$T/out" || { cat "$T/out" >&2; fail "trace() of narrow unsigned and signed values"; }
echo "ok: D's types and arithmetic"
