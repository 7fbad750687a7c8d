#!/bin/bash
# D's actions, built-in variables and strings as DTrace defines them, on the
# BPF engine (issue 35): trace()'s widths by type (Oracle's dt_print_trace),
# $_DTRACE_TESTING's records without the CPU and ID columns, the default
# action (a clause with no statement prints its probe; one of assignments
# prints nothing), exit() stopping the firing's later clauses, the builtins
# a BPF helper gives (stackdepth 0 at a uprobe, whose registers are the
# user's; ipl 0 at BEGIN, DTrace's illegal operation at tick-),
# strchr/strrchr, a string indexed, subroutines as statements, system()
# and its destructive rule, dynvarsize in DTrace's units, the kernel's
# typedefs, %f of a declared float. Expected
# values are DTrace's documented semantics.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v clang >/dev/null || command -v clang-14 >/dev/null || fail "clang is not installed"
export USDTKIT_ENGINE=bpf

# trace(): " %3d", " %5d", " %10d", " %19d" signed, " %20u" unsigned 64-bit,
# "  %-33s" a string; the record's prefix "%32s " under _DTRACE_TESTING.
_DTRACE_TESTING=t dt 0 -n 'BEGIN { trace((int8_t)-1); trace((uint16_t)-1); trace((int32_t)-1);
	trace((int64_t)-1); trace(-1ul); trace("a"); exit(0); }'
same "$T/out" "                   FUNCTION:NAME\n                          :BEGIN   -1 65535         -1                  -1 18446744073709551615  a                                \n\n" \
	"trace()'s widths, _DTRACE_TESTING's columns"
dt 0 -q -n 'BEGIN { trace(-1ul); trace(" "); trace((uint8_t)-1); trace(" "); trace((short)-2); exit(0); }'
same "$T/out" "18446744073709551615 255 -2\n" "trace() under quiet: unsigned as unsigned"
dt 0 -n 'BEGIN { exit(0); }'
grep -q '^CPU     ID                    FUNCTION:NAME$' "$T/out" || fail "without _DTRACE_TESTING: the CPU and ID columns"

# The default action: an empty clause prints its probe, one of assignments
# nothing; exit() is an action (its line); after exit() the firing's later
# clauses do not run, END's do.
_DTRACE_TESTING=t dt 0 -n 'BEGIN { n = 1; } BEGIN { } BEGIN { n++; } BEGIN { exit(0); }
	BEGIN { printf("not after exit"); n++; } END { printf("n=%d", n); }'
same "$T/out" "                   FUNCTION:NAME\n                          :BEGIN \n                          :BEGIN \n                            :END n=2\n\n" \
	"default action, exit() stops the firing"
# exit()'s status is the last one's: END's
dt 0 -q -n 'BEGIN { exit(1); } END { exit(0); }'

# Builtins: at BEGIN (a uprobe: the user's registers) the kernel's stack is
# empty, so stackdepth and caller are 0; the user's is not.
dt 0 -q -n 'BEGIN { printf("%d %d %d %d %d %d %d %d\n", stackdepth, caller, ustackdepth > 1, ucaller != 0,
	errno, curthread != 0, curcpu != 0 && curcpu != cpu, timestamp == timestamp); exit(0); }'
same "$T/out" "0 0 1 1 0 1 1 1\n\n" "stackdepth, caller, ustackdepth, ucaller, errno, curthread, curcpu, timestamp"
# ipl: no BPF helper gives it: 0 in a thread's context (BEGIN: a uprobe),
# DTrace's run-time illegal operation in an interrupt's (tick-)
dt 0 -q -n 'BEGIN { printf("%d\n", ipl); } tick-10ms { trace(ipl); }
    ERROR { printf("%d\n", arg4 == DTRACEFLT_ILLOP); exit(0); }'
same "$T/out" "0\n1\n\n" "ipl is 0 at BEGIN, an illegal operation at tick-"
grep -q 'illegal operation' "$T/err" || fail "ipl's message"
# errno at a syscall's return: its error
# shellcheck disable=SC2016 # a D program: $target is its macro
dt 0 -q -n 'syscall::openat:return /pid == $target/ { printf("%d %d\n", errno, (int)arg0); exit(0); }' \
	-c "cat /nonexistent/file"
same "$T/out" "2 -2\n\n" "errno at syscall::openat:return is ENOENT"

# Strings: strchr/strrchr (null when absent, '\0' found at the end), a
# string indexed (a char), a subroutine as a statement computed and dropped.
dt 0 -q -n 'BEGIN { s = "fooeyfoo"; printf("%s|%s|%s|%d|%d|%d\n", strchr(s, 121), strrchr(s, 102),
	strchr(s, 0), strchr(s, 122) == NULL, s[1], execname[0]); strlen(s); strjoin(s, s); exit(0); }'
same "$T/out" "yfoo|foo||1|111|100\n\n" "strchr, strrchr, s[i], execname[0], subroutine statements"
dt 0 -q -n 'BEGIN { self->s = "AB"; this->s = "CD"; printf("%d %d %d\n", self->s[1], this->s[0], this->s[9]); exit(0); }'
same "$T/out" "66 67 0\n\n" "self->s[i], this->s[i], past the end"

# 0 is D's NULL where a string is wanted: read at run time, it faults at address 0
dt 0 -q -n 'BEGIN { strlen(0); exit(1); } ERROR { printf("%d %d\n", arg4 == DTRACEFLT_BADADDR, arg5); exit(0); }'
same "$T/out" "1 0\n\n" "strlen(0) faults"
dt 1 -q -n 'BEGIN { trace(strlen(1)); exit(0); }'
grep -q 'incompatible with prototype' "$T/err" || fail "strlen(1) is refused"

# system(): printf's conversions, run when the record is read, after what
# dtrace printed before; destructive: refused without -w.
dt 0 -q -w -n 'BEGIN { printf("first\n"); system("echo %s %d", "sys", 42); printf("last\n"); exit(0); }'
same "$T/out" "first\nsys 42\nlast\n\n" "system()"
dt 1 -q -n 'BEGIN { system("echo no"); exit(0); }'
same "$T/out" "" "system() without -w runs nothing"
grep -q 'could not enable tracing: Destructive actions not allowed' "$T/err" || fail "system() without -w: DTrace's refusal"

# freopen(): what follows goes to the file (appended); "" the output again
dt 0 -q -w -n "BEGIN { printf(\"a\\n\"); freopen(\"$T/%s\", \"fo\"); printf(\"b\\n\"); freopen(\"\"); printf(\"c\\n\"); exit(0); }"
same "$T/out" "a\nc\n\n" "freopen(): the output before and after"
same "$T/fo" "b\n" "freopen(): the file's"
dt 1 -q -n "BEGIN { freopen(\"$T/no\"); exit(0); }"
[ ! -e "$T/no" ] || fail "freopen() without -w opens nothing"

# dynvarsize in DTrace's units: elements of (tuple + value), an int 4 bytes.
dt 0 -q -x dynvarsize=4 -n 'BEGIN { self->a = 1; self->b = 0; trace(self->a); exit(0); }'
same "$T/out" "1\n" "dynvarsize=4 holds one int thread variable"
dt 1 -q -x dynvarsize=3 -n 'BEGIN { self->a = 1; exit(0); }'
same "$T/err" "dtrace: error: could not enable tracing: Enabling exceeds size of buffer\n" "dynvarsize=3"

# The kernel's typedefs; a declared float printed by %f/%e/%g.
dt 0 -q -n 'float f; double d; BEGIN { printf("%d %d %f %e %g\n", (uint)-12345, sizeof(u16), f, d, f); exit(0); }'
same "$T/out" "4294954951 2 0.000000 0.000000e+00 0\n\n" "uint, u16, float, double"

# chill(): destructive (-w); a busy wait (END, a later firing, sees the time
# spent); over DTrace's 500 ms a CPU a second, its illegal operation.
dt 1 -q -n 'BEGIN { chill(1); exit(0); }'
grep -q 'could not enable tracing: Destructive actions not allowed' "$T/err" || fail "chill() without -w"
dt 0 -q -w -n 'BEGIN { t = timestamp; chill(200000000); exit(0); }
	END { printf("%d\n", timestamp - t >= 200000000); }'
same "$T/out" "1\n\n" "chill(200 ms) spins 200 ms at least"
dt 0 -q -w -n 'BEGIN { chill(300000000); chill(300000000); exit(0); } BEGIN { exit(0); }
	ERROR { printf("%d %d\n", arg4, arg5); }'
same "$T/out" "3 0\n\n" "chill() past 500 ms a second: DTRACEFLT_ILLOP"
grep -q 'illegal operation' "$T/err" || fail "chill() past the limit: DTrace's message"

# A probe listed several times in one clause's description runs the clause
# once a listing (each is an enabling, as DTrace's).
dt 0 -q -n 'BEGIN, BEGIN, BEGIN { n++; printf("%d\n", n); } BEGIN { exit(0); }'
same "$T/out" "1\n2\n3\n\n" "BEGIN, BEGIN, BEGIN: three runs"

# DTrace's NULL kept in a string variable, array element, thread and
# clause-local variable: == NULL, != "", sorted first; printed, a fault.
dt 0 -q -n 'BEGIN { g = strchr("abc", 122); this->l = strstr("ab", "z"); self->t = g; a[1] = g;
	e = ""; printf("%d %d %d %d %d %d %d\n", g == NULL, this->l == NULL, self->t == NULL,
	a[1] == NULL, e == NULL, g < e, g == a[1]); g = "x"; printf("%d %s\n", g == NULL, g); }
	BEGIN { trace(a[1]); } ERROR { printf("fault %d %d\n", arg4, arg5); exit(0); }'
same "$T/out" "1 1 1 1 0 1 1\n0 x\nfault 1 0\n\n" "NULL kept in string variables, printed a fault"

echo "ok"
