#!/bin/bash
# dtrace -n with BEGIN, END and tick-N only (no process): printf's
# conversions as DTrace's (%Y, %*s, %i, %u by the value's size, precision),
# the default record of BEGIN, exit(n), tick-N, macro arguments, -e.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"

export TZ=UTC
dt 7 -q -n 'BEGIN { printf("%Y|%-6s|%6s|%*s|%x|%X|%o|%c|%u|%i|%5.2s|%%|%-4d|%04d\n", 0, "ab", "cd", 5, "e", 255, 255, 8, 65, -1, 42, "xyz", 7, 7); exit(7); }'
same "$T/out" "1970 Jan  1 00:00:00|ab    |    cd|    e|ff|FF|10|A|4294967295|42|   xy|%|7   |0007\n\n" "printf conversions"

dt 0 -n 'BEGIN { exit(0); }'
same "$T/out" "$(printf '%3s %6s %32s' CPU ID FUNCTION:NAME)\n$(printf '%3d %6d %32s ' 0 1 :BEGIN)\n\n" "BEGIN's default record"
same "$T/err" "dtrace: description 'BEGIN ' matched 1 probe\n" "BEGIN's notice"

dt 0 -q -n 'tick-10ms { n++; } tick-10ms /n == 5/ { printf("five %d\n", n); exit(0); }'
same "$T/out" "five 5\n\n" "tick-10ms, two clauses"

# $3 only in a string: not a reference, so -x argref (else DTrace's D_MACRO_UNUSED)
dt 0 -x argref -q -n 'BEGIN { printf("%s %d %s\n", $$1, $2, "$3"); exit(0); }' hello 42 x
same "$T/out" "hello 42 \$3\n\n" "macro arguments"
dt 1 -q -n 'BEGIN { printf("%s %d %s\n", $$1, $2, "$3"); exit(0); }' hello 42 x

dt 0 -e -n 'BEGIN { exit(0); }'
[ -s "$T/out" ] && fail "-e printed output"
same "$T/err" "dtrace: description 'BEGIN ' matched 1 probe\n" "-e notice"

# Two BEGIN clauses and an END: one BEGIN program, in order.
dt 3 -q -n 'BEGIN { x = 1; } BEGIN /x == 1/ { printf("two\n"); } BEGIN { exit(3); } END { printf("end\n"); }'
same "$T/out" "two\nend\n\n" "several BEGIN clauses, END"

# A #! script: the kernel passes "-Z -qs" as one argument, split by dtrace.
# (Through a link without blanks: a #! line cannot name a path holding one,
# as a checkout's may.)
ln -s "$DTRACE" "$T/dtrace"
printf '#!%s -Z -qs\nBEGIN { printf("shebang %%s\\n", $$1); exit(0); }\n' "$T/dtrace" >"$T/sb.d"
chmod +x "$T/sb.d"
rc=0
"$T/sb.d" arg >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "#! script exited $rc"; }
same "$T/out" "shebang arg\n\n" "#! script with options"
