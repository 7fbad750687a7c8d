#!/bin/bash
# The D language where a tracer finds it hard: arguments past the sixth
# (the stapsdt note's operands decoded by dtrace: registers, stack memory,
# constants, a global through %rip, several sites placing them
# differently; gcc and clang, -O0 and -O2), strings up to DTrace's 256
# bytes, copyin()+stringof(), strlen/strstr/substr, llquantize, stddev,
# ustack. Expected outputs are written from DTrace's documented formats.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v readelf >/dev/null || fail "readelf is not installed (binutils)"

# What stays refused: one error at file:line:col naming the construct.
refused() { # column message program
	local rc=0
	"$DTRACE" -e -n "$3" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "dtrace -e -n '$3' exited $rc, expected 1"; }
	grep -qF -- "<command line>:1:$1: error: $2" "$T/err" || { cat "$T/err" >&2; fail "dtrace -n '$3': not '$2' at column $1"; }
}
refused 13 "ustack() is supported as an action, an aggregation key or printf's %k argument" 'BEGIN { x = ustack(); }'
refused 9 "local variables may not be used as associative arrays: a" 'BEGIN { this->a[1] = 2; }'
refused 9 "pcap() is not supported by this D consumer" 'BEGIN { pcap(0, 1); }'
refused 21 "stddev( ) argument #1 must be of scalar type, not a string" 'BEGIN { @a = stddev("x"); }'
refused 13 "copyin( ) prototype mismatch: 1 arg passed, 2 expected" 'BEGIN { x = copyin(1); }'

mkdir -p "$T/g" && cd "$T/g" || fail "no scratch directory"
cat >lang.d <<'D'
provider langt {
	probe many(int, int, long, long, int, int, int, long, char *, int, long, unsigned char);
	probe text(char *, int);
};
D
cat >lang.c <<'C'
/* Built four times (gcc, clang; -O0, -O2), as fire_<v>() and run_<v>(). */
#include <stdlib.h>
#include "lang_probes.h"

extern long g_var;
static int s_small = -77;

__attribute__((noinline)) static void fire(int a, long b, const char *s)
{
	volatile int local = -20;
	int c = a * 3;

	LANGT_MANY(a, local, 5, g_var, c, -3, s_small, b, (char *)s, local + 1, g_var, 200);
}

void run(int n, char *name);
void run(int n, char *name)
{
	for (int i = 1; i <= n; i++)
		fire(i, -1000000000000L * i, "twelve");
	/* a second site, placing the arguments otherwise */
	LANGT_MANY(n, 7, 5, g_var, 0, -3, s_small, 0L, name, 8, g_var + 1, 9);
}
C
cat >main.c <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lang_probes.h"

long g_var = 123456789012;

/* Built -O0 with frame pointers: ustack() sees say() and main(). */
__attribute__((noinline)) static void say(char *s, int n)
{
	LANGT_TEXT(s, n);
}
void run_gcc0(int, char *), run_gcc2(int, char *), run_clang0(int, char *),
    run_clang2(int, char *);

/* A short string followed by bytes a key or a record must not take in. */
static char *named(char *b, const char *s)
{
	memset(b, ',', 127);
	b[70] = '\037';
	b[127] = '\0';
	strcpy(b, s);
	return b;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	char big[256], nb[4][128];

	run_gcc0(n, named(nb[0], "gcc0"));
	run_gcc2(n, named(nb[1], "gcc2"));
	run_clang0(n, named(nb[2], "clang0"));
	run_clang2(n, named(nb[3], "clang2"));
	for (int i = 0; i < 255; i++)
		big[i] = (char)('a' + i % 26);
	big[255] = '\0';
	for (int i = 0; i < n; i++)
		say(big, 255);
	/* alive a while for bpftrace to name the stacks' functions */
	if (argc > 2)
		usleep(300000);
	return 0;
}
C
# SystemTap's constraint ("nor"): the compiler may pick memory operands.
"$DTRACE" -h -s lang.d -o lang_probes.h || fail "dtrace -h"
for cc in gcc clang; do
	for o in 0 2; do
		$cc -O$o -DSTAP_SDT_ARG_CONSTRAINT=nor -Dfire=fire_$cc$o -Drun=run_$cc$o \
			-I"$SDT_INC" -I. -c lang.c -o l-$cc$o.o &
	done
done
wait
for v in gcc0 gcc2 clang0 clang2; do [ -s l-$v.o ] || fail "compiling lang.c as $v"; done
gcc -O0 -fno-omit-frame-pointer -I"$SDT_INC" -I. -c main.c -o main.o &&
	"$DTRACE" -G -s lang.d -o p.o main.o l-*.o &&
	gcc -o lang main.o l-*.o p.o || fail "linking lang"
# Every operand kind is there somewhere, past the sixth argument too.
readelf -n lang | sed -n 's/^ *Arguments: //p' >notes.txt
for kind in '@%[a-z0-9]+( |$)' '@\$-?[0-9]+' '@-?[0-9]+\(%rbp\)' '@-?[0-9]*\(%rsp\)' '@g_var\(%rip\)'; do
	grep -qE -- "$kind" notes.txt || { cat notes.txt >&2; fail "no operand like $kind in the test's notes"; }
done

# 1. All twelve arguments, exact, from every build's two sites: args[] typed,
# argN raw. 5. With stddev() (dt_print_stddev: " %16llu" of libdtrace's
# integer dt_stddev) and llquantize() (dt_print_llquantize's buckets, DTrace
# for Linux's: the negative ones mirror the positive, 0 alone (lmag 0), steps
# of 1 up to 10, of 10 up to 100, then ">= 100"; one bucket either side).
dt 0 -q -c './lang 2' -n 'langt$target:::many { printf("%d %d %d %d %d %d %d %d %s %d %d %d|%d %d %d %d\n", args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], arg6, arg7, arg9, arg11); @sd = stddev(args[0]); @sdk[args[8]] = stddev(args[4] - 10); @ll = llquantize(args[4], 10, 0, 1, 10); }'
want=""
for v in gcc0 gcc2 clang0 clang2; do
	want+="1 -20 5 123456789012 3 -3 -77 -1000000000000 twelve -19 123456789012 200|-77 -1000000000000 -19 200\n"
	want+="2 -20 5 123456789012 6 -3 -77 -2000000000000 twelve -19 123456789012 200|-77 -2000000000000 -19 200\n"
	want+="2 7 5 123456789012 0 -3 -77 0 $v 8 123456789013 9|-77 0 8 9\n"
done
# stddev of 1,2,2 four times: sqrt(36/12 - (20/12)^2) = sqrt(3 - 1) = 1;
# of -7,-4 four times, in integers: sqrt(260/8 - |-44/8|^2) = sqrt(32 - 25)
# = 2; of -10: 0.
want+="\n$(printf ' %16d' 1)\n"
for k in clang0 clang2 gcc0 gcc2; do want+="$(printf '  %-50s %16d' $k 0)\n"; done
want+="$(printf '  %-50s %16d' twelve 2)\n"
dist=$(printf '%16s %41s %-9s' value '------------- Distribution -------------' count)
row() { printf '%16s |%-40s %-9s' "$1" "$2" "$3"; }
at13=@@@@@@@@@@@@@
want+="\n$dist\n$(row -1 '' 0)\n$(row 0 $at13 4)\n$(row 1 '' 0)\n$(row 2 '' 0)\n$(row 3 $at13 4)\n"
want+="$(row 4 '' 0)\n$(row 5 '' 0)\n$(row 6 $at13 4)\n$(row 7 '' 0)\n\n"
same "$T/out" "$want" "twelve arguments from gcc and clang, -O0 and -O2; stddev, llquantize"

# A key of a short string followed by commas and \037 (main.c's named()):
# none of what follows the string may reach the key.
dt 0 -q -c './lang 1' -n 'langt$target:::many { @nm[args[8]] = count(); }'
want="\n"
for k in clang0 clang2 gcc0 gcc2; do want+="$(printf '  %-50s %16d' $k 1)\n"; done
same "$T/out" "$want$(printf '  %-50s %16d' twelve 4)\n" "keys of short strings"

# An operand dtrace cannot read is refused by name (a floating-point one,
# written by hand in a .S file: the compilers' sites never have one here).
cat >fa.S <<'S'
#include <sys/sdt.h>
	.text
	.globl main
	.type main, @function
main:
	mov $0x8234, %eax
	STAP_PROBE8(langf, f, -4@$1, -4@$2, -4@$3, -4@$4, -4@$5, -4@$6, 8f@%xmm0, -4@%ah)
	xor %eax, %eax
	ret
	.size main, .-main
	.section .note.GNU-stack,"",@progbits
S
gcc -I"$SDT_INC" -o fa fa.S || fail "assembling fa.S"
rc=0
"$DTRACE" -c ./fa -n 'langf$target:::f { trace(arg6); }' >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "arg6 in %xmm0: exit $rc, expected 1"; }
grep -qE "^<command line>:1:26: error: arg6 of langf:::f cannot be read at its site 0x[0-9a-f]+ in .*/fa: operand '8f@%xmm0': (a size other than 1, 2, 4, 8|floating-point argument)" "$T/err" ||
	{ cat "$T/err" >&2; fail "arg6 in %xmm0: not refused by name"; }

# 2. Strings as long as DTrace's (a 255-byte string: strsize 256 holds 256 and the NUL), though
# bpftrace 0.17 holds at most 200: printed by %s, by trace() (quiet: the
# string alone), and as an aggregation key ("  %-50s" then the value
# " %16lld"); two of them in one printf; -x strsize=100 cuts at 100.
big=""
for ((i = 0; i < 255; i++)); do big+=$(printf "\\x$(printf %x $((97 + i % 26)))"); done
# 3. copyin() and HotSpot's idiom: a buffer, its NUL, stringof().
cat >"$T/s.d" <<'D'
#pragma D option quiet
langt$target:::text
{
	printf("[%s]\n", copyinstr(arg0));
	printf("<%s|%s|%d>\n", args[0], stringof(args[0]), arg1);
	@[copyinstr(arg0)] = count();
	trace(args[0]);
	printf("\n");
}
langt$target:::text
{
	this->s = (char *)copyin(arg0, arg1 + 1);
	this->s[arg1] = '\0';
	this->t = (char *)copyin(arg0, 11);
	this->t[10] = '\0';
	printf("{%s|%s|%s}\n", stringof(this->s), stringof(this->t), stringof(arg1));
}
/* 4. strlen, strstr, substr (illumos dtrace_dif_subr's semantics) */
langt$target:::text
{
	printf("%d %s|%s|%s|%s|%s|%d\n", strlen(copyinstr(arg0)), substr(copyinstr(arg0), 250),
	    substr(args[0], 3, 4), substr(args[0], -3), strstr(copyinstr(arg0), "xyzab"),
	    substr(strstr(args[0], "yz"), 0, 5), strlen(substr(args[0], 10, -5)));
	@sub[substr(args[0], 3, 4)] = count();
}
/* 6. ustack(): DTrace's frames (dt_print_ustack), as an action and a key */
langt$target:::text
{
	ustack(2);
	@st[ustack(1)] = count();
	self->n++;
}
/* bpftrace prints a map as it is when it reads it: print it once */
langt$target:::text
/self->n == 2/
{
	printa(@st);
}
D
dt 0 -c './lang 2 wait' -s "$T/s.d"
# say's probe site and the return address of main's call to say, from the
# file: module`function+0xoffset.
site=$(readelf -n lang | sed -n '/Name: text/,/Location/s/.*Location: 0x\([0-9a-f]*\).*/\1/p')
say=$(nm lang | sed -n 's/^\([0-9a-f]*\) t say$/\1/p')
main=$(nm lang | sed -n 's/^\([0-9a-f]*\) T main$/\1/p')
ret=$(objdump -d --no-show-raw-insn lang | sed -n '/<main>:/,/^$/p' | grep -A1 'call.*<say>' | sed -n '2s/^ *\([0-9a-f]*\):.*/\1/p')
[ -n "$site" ] && [ -n "$say" ] && [ -n "$main" ] && [ -n "$ret" ] || fail "no say/main addresses in lang"
f1=$(printf '%14slang`say+0x%x' '' $((0x$site - 0x$say)))
f2=$(printf '%14slang`main+0x%x' '' $((0x$ret - 0x$main)))
rec="[$big]\n<$big|$big|255>\n$big\n{$big|abcdefghij|255}\n255 qrstu|defg|stu|${big:23}|yzabc|240\n"
# printa(@st): DTrace's blank line first, then the stack key's own line break
want="$rec\n$f1\n$f2\n$rec\n$f1\n$f2\n\n\n$f1\n$(printf ' %16d' 2)\n"
want+="\n$(printf '  %-50s %16d' "$big" 2)\n$(printf '  %-50s %16d' defg 2)\n"
same "$T/out" "$want" "255-byte strings printed and as a key; copyin(); strlen, strstr, substr; ustack"
# Not quiet, -x strsize=100: trace()'s "  %-33s" after the record prefix,
# the string cut at 100 bytes (strsize characters, the NUL not counted).
dt 0 -x strsize=100 -c './lang 1' -n 'langt$target:::text { trace(args[0]); }'
want="$(printf '%3s %6s %32s' CPU ID FUNCTION:NAME)\n$(printf '%3d %6d %32s   %-33s' 0 4 say:text "${big:0:100}")\n\n"
same "$T/out" "$want" "trace() with -x strsize=100"
# strsize set past bpftrace 0.17's 200 (a script's `#pragma D option
# strsize=256`, or more): read in chunks of 63 as by default, printed, its
# strlen() and as a key in one block (chunks of 199 took the BPF stack's 512
# bytes).
for ss in 256 1024; do
	dt 0 -x strsize=$ss -q -c './lang 1' -n 'langt$target:::text { printf("[%s] %d\n", copyinstr(arg0), strlen(copyinstr(arg0))); @[copyinstr(arg0)] = count(); }'
	same "$T/out" "[$big] 255\n\n$(printf '  %-50s %16d' "$big" 1)\n" "-x strsize=$ss: a 255-byte string printed, its strlen, and as a key"
done
