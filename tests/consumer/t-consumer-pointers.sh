#!/bin/bash
# D's pointers on the BPF engine (issue 35, item 1): & of array elements and
# of members reached through pointers, *, ->, [] through pointers, pointer
# arithmetic and comparison, a union global's members, alloca(), bcopy(),
# copyinto(), tracemem(), a char * as its string, a process's memory read through a
# pointer argument, faults on addresses nothing answers for, and what
# DTrace refuses, with its tags. Every expected value is worked out by hand
# from C's layout and DTrace's rules (dtrace(1): "D's pointers"), never taken
# from this dtrace's output. (-q's output ends with the blank line DTrace
# prints at its exit.)
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_tracefs
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"

cat >"$T/mem.d" <<'D'
struct pt {
	int x;
	char c;
	long y;
};
union num {
	int i;
	unsigned char b[4];
	long l;
};
int a[4];
struct pt pts[3];
union num u;
string s;

BEGIN
{
	a[0] = 10; a[1] = 20; a[2] = 30; a[3] = 40;
	p = &a[1];
	q = &a[3];
	printf("%d %d %d %d %d\n", *p, p[1], *(p + 2), q - p, (int)((uintptr_t)q - (uintptr_t)p));
	p++;
	*p = 33;
	p[-1] += 2;
	printf("%d %d %d %d %d\n", a[1], a[2], *p, p > q || p == q, p < q);
	sp = &pts[2];
	sp->x = -7;
	sp->c = 300;
	sp->y = 1234567890123;
	printf("%d %d %d %d\n", pts[2].x, pts[2].c, sp->y, (int)((uintptr_t)&pts[2] - (uintptr_t)&pts[0]));
	u.i = 0x01020304;
	printf("%d %d %x %d\n", u.b[0], u.b[3], u.i, sizeof(u));
	m = (struct pt *)alloca(sizeof(struct pt));
	m->y = 5;
	(*m).x = 6;
	printf("%d %d %d %d\n", m->y, m->x, sizeof(*m), (uintptr_t)&m->y - (uintptr_t)m);
	s = "hello";
	c = (char *)alloca(8);
	bcopy(s, c, 6);
	c[0] = 'j';
	printf("%s %s %d\n", stringof(c), basename(c), strlen(c));
	exit(0);
}
D
dt 0 -x engine=bpf -q -s "$T/mem.d"
# p = &a[1]: *p 20, p[1] 30, *(p+2) 40, q - p 2 ints, 8 bytes apart;
# p++ is &a[2], given 33; p[-1] (a[1]) += 2 is 22; p is below q;
# struct pt: x at 0, c at 4, y at 8: 16 bytes, so pts[2] is 32 bytes after
# pts[0]; a char given 300 is 44; a little-endian int 0x01020304's first
# byte is 4, its last 1; the union is its longest member's 8 bytes;
# alloca()'s struct: y at offset 8; "hello" copied, its first byte made 'j'.
same "$T/out" "20 30 40 2 8\n22 33 33 0 1\n-7 44 1234567890123 32\n4 1 1020304 8\n5 6 16 8\njello jello 5\n\n" "pointers into D's memory"

# tracemem(): DTrace's dump (its consumer's dt_print_bytes(), margin 5): a
# blank line, the 16 columns' header, then 16 bytes a row at its offset in
# hex, padded to 16, then the bytes as characters, '.' where not printable;
# tracemem(p, 16, 5) prints 5 of them, a count of 0 nothing.
cat >"$T/tm.d" <<'D'
int a[4];
BEGIN
{
	a[0] = 0x6c6c6548; a[1] = 0x77202c6f; a[2] = 0x646c726f; a[3] = 0x0a21;
	tracemem(&a[0], 16);
	tracemem(&a[0], 16, 5);
	tracemem(&a[0], 16, 0);
	c = (char *)alloca(20);
	bcopy((char *)&a[0], c, 16);
	tracemem(c, 20);
	exit(0);
}
D
dt 0 -x engine=bpf -q -s "$T/tm.d"
hdr="\n             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n"
row0="         0: 48 65 6c 6c 6f 2c 20 77 6f 72 6c 64 21 0a 00 00  Hello, world!...\n"
same "$T/out" "$hdr$row0$hdr         0: 48 65 6c 6c 6f                                   Hello\n$hdr$row0        10: 00 00 00 00                                      ....\n\n" "tracemem()"

# A string kept in alloca()'s memory (string *), and (string) of a pointer:
# the string there; bcopy() of probename's 6 bytes ("BEGIN" and its NUL).
dt 0 -x engine=bpf -q -n 'BEGIN { x = (string *)alloca(sizeof(string)); *x = "abc"; s = alloca(8); bcopy(probename, s, 6); printf("%s %s\n", *x, (string)s); exit(0); }'
same "$T/out" "abc BEGIN\n\n" "strings in alloca()'s memory"

# A struct assigned whole, between a this-> struct (its members variables of
# their own) and globals (memory), member by member; R, first assigned a
# struct, is one; a struct as a key is its bytes (R's equal P's); trace() of a union
# prints its bytes as tracemem() does (DTrace's trace() of a struct or union).
cat >"$T/sou.d" <<'D'
struct coords { int x, y; };
struct coords P, Q;
this struct coords q;
union { int a; char b[3]; short c; } u;
BEGIN
{
	this->q.x = 15;
	this->q.y = 16;
	P = this->q;
	Q = P;
	Q.y++;
	this->q = Q;
	printf("%d %d %d %d %d\n", P.x, P.y, Q.x, Q.y, this->q.y);
	R = P;
	k[P] = 5;
	printf("%d %d\n", k[R], k[Q]);
	u.a = 0x12345678;
	trace(u);
	exit(0);
}
D
dt 0 -x engine=bpf -q -s "$T/sou.d"
# u's 4 bytes (an int's, little-endian; the union is 4 bytes), 12 columns of
# padding, then "xV4." (0x12 is not printable).
same "$T/out" "15 16 15 17 17\n5 0\n$hdr         0: 78 56 34 12                                      xV4.\n\n" "structs assigned whole, trace() of a union"

# alloca()'s memory is the clause's: the next clause gets the same address;
# past what alloca() gave is an invalid address (DTrace's fault, ERROR's arg4 1;
# the faulting clause's output is dropped).
cat >"$T/scratch.d" <<'D'
BEGIN
{
	s1 = (char *)alloca(1);
	*s1 = 'a';
}
BEGIN
{
	s2 = (char *)alloca(1);
	printf("%d\n", s1 == s2);
}
BEGIN
{
	x = (int *)alloca(4);
	y = x + 2;
	*y = 3;
	printf("not reached\n");
}
ERROR
{
	printf("ERROR %d %d\n", arg4, arg5 == (uint64_t)y);
	exit(0);
}
D
dt 0 -x engine=bpf -q -s "$T/scratch.d"
same "$T/out" "1\nERROR 1 1\n\n" "alloca()'s scratch, and past it"
expect_grep "^dtrace: error in dt_clause_2 for probe ID 1 \(dtrace:::BEGIN\): invalid address \(0x[0-9a-f]+\) at BPF pc [0-9]+$" "$T/err" "the fault's message"
dt 0 -x engine=bpf -q -n 'BEGIN { p = (int *)0; trace(*p); } ERROR { printf("%d %d", arg4, arg5); exit(0); }'
same "$T/out" "1 0\n" "a null pointer read"

# A process's memory through a pointer argument: members, an array member
# as its string, copyinto() into alloca()'s memory, as the program laid it out.
mkdir -p "$T/u" && cd "$T/u" || fail "no scratch directory"
cat >ptrt.d <<'D'
provider ptrt {
	probe rec(void *, long);
};
D
cat >ptrt.c <<'C'
#include "ptrt_probes.h"
struct pt {
	int x;
	char c;
	long y;
	char name[8];
};
int main(void)
{
	static struct pt v[2] = {{-3, 'a', 1234567890123L, "first"}, {7, 'b', -2, "second"}};

	for (int i = 0; i < 2; i++)
		PTRT_REC(&v[i], (long)i);
	return 0;
}
C
"$DTRACE" -h -s ptrt.d -o ptrt_probes.h && cc -O2 -I"$SDT_INC" -I. -c ptrt.c -o ptrt.o &&
	"$DTRACE" -G -s ptrt.d -o prov.o ptrt.o && cc -o ptrt ptrt.o prov.o || fail "building the probe program"
cat >u.d <<'D'
struct pt {
	int x;
	char c;
	long y;
	char name[8];
};
ptrt$target:::rec
{
	this->p = (struct pt *)arg0;
	b = (struct pt *)alloca(sizeof(struct pt));
	copyinto(arg0, sizeof(struct pt), b);
	printf("%d %d %c %d %s | %d %d %s\n", arg1, this->p->x, this->p->c, this->p->y,
	    stringof(this->p->name), b->x, b[0].y, stringof(b->name));
}
D
dt 0 -x engine=bpf -q -s u.d -c ./ptrt
same "$T/out" "0 -3 a 1234567890123 first | -3 1234567890123 first\n1 7 b -2 second | 7 -2 second\n\n" "a process's structure through a pointer"
cd "$T" || fail "no scratch directory"

# What DTrace refuses, with its tags (refused_tag: tests/consumer/lib.sh).
refused_tag D_ADDROF_VAR "cannot take address of dynamic variable" 'int i; BEGIN { p = &i; }'
refused_tag D_ADDROF_VAR "cannot take address of dynamic variable" 'int a[2]; BEGIN { p = &a; }'
refused_tag D_ADDROF_VAR "cannot take address of dynamic variable" 'BEGIN { @a = count(); trace(&@a); }'
refused_tag D_DEREF_NONPTR "cannot dereference non-pointer type" 'BEGIN { x = 1; trace(*x); }'
refused_tag D_DEREF_VOID "cannot dereference pointer to void" 'void *p; BEGIN { trace(*p); }'
refused_tag D_OP_PTR "operator -> must be applied to a pointer" 'struct s { int a; } v; BEGIN { trace(v->a); }'
refused_tag D_OP_SOU 'operator . cannot be applied to type "struct s *"; must be applied to a struct or union' 'struct s { int a; } *v; BEGIN { v.a = 1; }'
refused_tag D_OP_INCOMPAT 'operands have incompatible types: "void *" + "int"' 'void *p; BEGIN { trace(p + 1); }'
refused_tag D_OP_LVAL "operator = requires modifiable lvalue as an operand" 'int a[2]; BEGIN { &a[0] = 0; }'
refused_tag D_ARR_BOUNDS "index outside array bounds: 5, max is 5" 'int a[5]; BEGIN { a[5] = 0; }'
refused_tag D_DECL_ARRNULL "array declaration requires array dimension or tuple signature: a" 'int a[]; BEGIN { }'
dt 1 -xerrtags -x scratchsize=16 -e -n 'BEGIN { p = alloca(20); }'
expect_grep "\[D_ALLOCA_SIZE\] line 1: alloca\(20\) size larger than scratchsize 16" "$T/err" "alloca() past -x scratchsize"
refused_tag D_PROTO_ARG "assoc_array[ ] key #1 is incompatible with prototype:" 'struct a { int x; } a1; struct b { int x; } b1; BEGIN { assoc_array[a1] = 1; assoc_array[b1] = 2; }'
echo "ok: D's pointers"
