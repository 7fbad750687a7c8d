#!/bin/bash
# The kernel's types from its BTF (issue 35, slice k1; dtrace/consumer/kbtf.c):
# curthread as a struct task_struct *, -> through kernel pointers, sizeof and
# offsetof of kernel structs (members in unnamed unions too), a kernel
# typedef as a type name, kernel char arrays as strings (read from the
# kernel's memory alone, as the generated C shows), the fault of a
# NULL's member, and print() of the program's and the kernel's structs in
# DTrace's format, with -x printsize. Expected values: the kernel's layout
# as bpftool reads the same BTF, the process's pid, and print()'s text as
# DTrace's own tests write it (Oracle's test/unittest/print/*.r), by hand.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_tracefs
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v bpftool >/dev/null || fail "bpftool is not installed (the kernel's layout, read independently)"
[ -r /sys/kernel/btf/vmlinux ] || fail "the kernel has no BTF (/sys/kernel/btf/vmlinux)"

# the kernel's layout of task_struct, read by bpftool
raw=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw)
ts=$(printf '%s\n' "$raw" | awk '/STRUCT .task_struct. size=/ { s = 1; sub(/.*size=/, ""); print $1; exit }')
comm=$(printf '%s\n' "$raw" | awk '/STRUCT .task_struct. size=/ { s = 1; next } s && /^\[/ { exit } s && /.comm. type_id/ { sub(/.*bits_offset=/, ""); print $1 / 8; exit }')
if [ -z "$ts" ] || [ -z "$comm" ]; then
	fail "bpftool did not show task_struct's size and comm"
fi

# BEGIN runs in dtrace's own context: curthread is dtrace's task
dt 0 -q -n 'BEGIN {
	printf("%d %d %s\n", curthread->pid == pid, curthread->tgid == pid, curthread->comm);
	printf("%d %d\n", curthread->comm == "dtrace", "dtrace" != curthread->comm);
	printf("%d %d\n", sizeof(struct task_struct), offsetof(struct task_struct, comm));
	printf("%d %d\n", offsetof(struct sk_buff, dev), sizeof(atomic_t));
	printf("%d\n", curthread->real_parent->tgid == ppid);
	exit(0);
}'
same "$T/out" "1 1 dtrace\n1 0\n$ts $comm\n16 4\n1\n\n" "curthread's members, the kernel's sizes and offsets"

# a kernel object's string, and one a kernel pointer member points to, is
# read from the kernel's memory alone (the generated C: no user read tried
# first); a string at an address of unknown kind tries both (DREAD_STR)
prog='BEGIN {
	printf("%s %s %s|\n", curthread->comm, stringof(curthread->group_leader->comm),
	    curpsinfo->pr_fname);
	exit(0);
}'
dt 0 -x bpfc -n "$prog"
n=$(grep -c 'if (bpf_probe_read_kernel_str(.*STRSIZE, (void \*)fa) < 0)' "$T/out") || true
[ "$n" = 3 ] || fail "kernel strings read as the kernel's: $n reads of 3 in the generated C"
expect_no_grep 'DREAD_STR\(\(rec' "$T/out" "no user-then-kernel read of a kernel string"
dt 0 -q -n "$prog"
same "$T/out" "dtrace dtrace dtrace|\n\n" "kernel strings, read as the kernel's"
dt 0 -x bpfc -n 'BEGIN { trace(copyinstr(arg0)); }'
expect_grep 'if \(DREAD_STR\(\(rec \+ [0-9]+\), fa\) < 0\)' "$T/out" "a user string's read tries D's, the process's, the kernel's"

# a kernel typedef is a type's name; a kernel struct is a member's type
dt 0 -q -n 'struct pair { __u8 a; atomic_t b; struct list_head l; }; BEGIN {
	printf("%d %d %d\n", sizeof(struct pair), offsetof(struct pair, b), offsetof(struct pair, l));
	exit(0);
}'
same "$T/out" "24 4 8\n\n" "a struct of kernel types, laid out as C lays it out"

# function pointer members are a pointer's bytes; sizeof is a constant (tracemem()'s size)
dt 0 -q -n 'struct fns { char c; int (*fp)(int, char *); int (*afp[2])(); }; BEGIN {
	printf("%d %d %d\n", sizeof(struct fns), offsetof(struct fns, fp), offsetof(struct fns, afp));
	tracemem(curthread, sizeof(struct fns));
	exit(0);
}'
expect_grep '^32 8 16$' "$T/out" "a struct's function pointers"
expect_grep '^        10: ' "$T/out" "tracemem() of sizeof(struct fns) bytes"

# trace() of a char array: its bytes, as tracemem() prints them
dt 0 -n 'BEGIN { trace(curthread->comm); exit(0); }'
expect_grep '^         0: 64 74 72 61 63 65 00 00 00 00 00 00 00 00 00 00  dtrace\.\.\.\.\.\.\.\.\.\.$' "$T/out" "trace() of comm"

# a member of a NULL pointer: DTrace's fault at address 0, ERROR's arg4 and arg5
dt 0 -q -n 'BEGIN { trace(((struct task_struct *)NULL)->pid); }
ERROR { printf("%d %d\n", arg4, arg5); exit(0); }'
same "$T/out" "1 0\n\n" "ERROR's fault kind and address"
expect_grep 'invalid address \(0x0\)' "$T/err" "the fault's message"

# print() of the program's struct: DTrace's text (test/unittest/print/tst.print.local.r)
cat >"$T/p.d" <<'D'
#pragma D option quiet
enum eh { FIRSTVAL = 0, SECONDVAL = 1, THIRDVAL = 3 };
struct test_struct {
	int a;
	char b[5];
	union {
		__u8 c;
		__u64 d;
	} u;
	struct {
		void *e;
		uint64_t f;
	} s;
	bool g;
	enum eh h;
};
BEGIN
{
	t = (struct test_struct *)alloca(sizeof (struct test_struct));
	t->a = 1;
	t->b[0] = 't'; t->b[1] = 'e'; t->b[2] = 's'; t->b[3] = 't'; t->b[4] = '\0';
	t->u.d = 123456789;
	t->s.e = (void *)0xffff9b7aca7e0000;
	t->s.f = 987654321;
	t->g = 1, t->h = SECONDVAL; /* the comma operator, as DTrace's tests write it */
	print(t);
	t->a = 0;
	setopt("printsize", "16");
	print(t);
	exit(0);
}
D
dt 0 -s "$T/p.d"
I=$(printf '%44s' '')
sed 's/^0x[0-9a-f]* = \*$/P = */' "$T/out" >"$T/out2"
same "$T/out2" "P = *
$I(struct test_struct) {
$I .a = (int)1,
$I .b = (char [5]) [
$I  (char)'t',
$I  (char)'e',
$I  (char)'s',
$I  (char)'t',
$I ],
$I .u = (union) {
$I  .c = (__u8)21,
$I  .d = (__u64)123456789,
$I },
$I .s = (struct) {
$I  .e = (void *)0xffff9b7aca7e0000,
$I  .f = (uint64_t)987654321,
$I },
$I .g = (bool)1,
$I .h = (enum eh)SECONDVAL,
$I}
P = *
$I(struct test_struct) {
$I .b = (char [5]) [
$I  (char)'t',
$I  (char)'e',
$I  (char)'s',
$I  (char)'t',
$I ],
$I ...
$I}

" "print() of a struct the program declares, whole and to printsize"

# print() of a kernel struct (tst.print.skb.r's)
dt 0 -q -n 'BEGIN {
	skb = (struct sk_buff *)alloca(sizeof (struct sk_buff));
	skb->len = 123;
	skb->data = (unsigned char *)0xfeedfacefeedface;
	skb->truesize = 32;
	print(skb);
	exit(0);
}'
sed 's/^0x[0-9a-f]* = \*$/P = */' "$T/out" >"$T/out2"
same "$T/out2" "P = *
$I(struct sk_buff) {
$I .len = (unsigned int)123,
$I .data = (unsigned char *)0xfeedfacefeedface,
$I .truesize = (unsigned int)32,
$I}

" "print() of a struct sk_buff"

# what DTrace refuses, with its tags
refused_tag D_PRINT_SIZE "print( ) argument #1 reference has type 'struct bpf_raw_tracepoint_args' with size 0" \
	'BEGIN { print((struct bpf_raw_tracepoint_args *)alloca(8)); }'
refused_tag D_PROTO_ARG "print( ) argument #1 is incompatible with prototype:" 'BEGIN { print(1); }'
refused_tag D_OP_INCOMPLETE "operator ->: struct no_such_kernel_struct is an incomplete type" \
	'BEGIN { trace(((struct no_such_kernel_struct *)0)->x); }'
echo ok
