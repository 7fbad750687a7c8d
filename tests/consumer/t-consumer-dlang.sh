#!/bin/bash
# D as DTrace defines it, on the BPF engine (issue 35, item 4): run-time
# errors (a division or modulo by a run-time zero stops its clause, not the
# run: DTrace's message, the clause's record discarded, the ERROR probe fired
# with DTrace's arguments: arg1 the probe's ID, arg2 the clause's index, arg4
# DTRACEFLT_DIVZERO, arg5 0); macro variables ($pid, $ppid, $uid, $gid);
# tick-/profile- units; printf's argument positions. Expected values are
# DTrace's documented semantics.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v clang >/dev/null || command -v clang-14 >/dev/null || fail "clang is not installed"

# A division by a run-time zero: the clause stops there (no "after"), its
# earlier output discarded with it ("before" never printed); the next clause
# of the probe runs; ERROR gets DTrace's arguments; the run goes on to exit.
dt 0 -x engine=bpf -q -n 'BEGIN { z = 0; printf("before\n"); x = 10 / z; printf("after\n"); }
BEGIN { printf("next %d\n", 7 % 4); }
ERROR { printf("ERROR %d %d %d %d\n", arg1, arg2, arg4 == DTRACEFLT_DIVZERO, arg5); }
ERROR { exit(0); }'
same "$T/out" "next 3\nERROR 1 0 1 0\n\n" "a division by zero stops its clause and fires ERROR"
same "$T/err" "dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): divide-by-zero at BPF pc 1\n" \
	"the run-time error's message"

# Modulo, unsigned, in a predicate; without an ERROR clause: the message,
# and the run continues (tick keeps firing, exit in a later clause).
dt 0 -x engine=bpf -q -n 'BEGIN { z = 0; } tick-10ms /(n++ % (unsigned long)z) == 0/ { printf("no\n"); }
tick-10ms /n == 3/ { printf("n %d\n", n); exit(0); }'
same "$T/out" "n 3\n\n" "a modulo by zero in a predicate: the clause does not run, the run goes on"
[ "$(grep -c 'dtrace: error in dt_clause_1 for probe ID [0-9]* (profile:::tick-10ms): divide-by-zero at BPF pc 1$' "$T/err")" = 3 ] ||
	{ cat "$T/err" >&2; fail "one message per fault, each naming the tick probe"; }

# A fault in ERROR's own clause is reported, not fired again.
dt 0 -x engine=bpf -q -n 'BEGIN { z = 0; x = 1 / z; } ERROR { y = 2 / z; } ERROR { printf("once\n"); } BEGIN { exit(0); }'
same "$T/out" "once\n\n" "ERROR fires once for BEGIN's fault"
[ "$(grep -c 'divide-by-zero' "$T/err")" = 2 ] || { cat "$T/err" >&2; fail "two faults reported"; }

# A constant divisor that is not zero needs no test and behaves as C's.
dt 0 -x engine=bpf -q -n 'BEGIN { printf("%d %d %d\n", -19 / 5, 19 % -5, 100 / (1 + 1)); exit(0); }'
same "$T/out" "-3 4 50\n\n" "signed division and modulo"

echo "ok"
