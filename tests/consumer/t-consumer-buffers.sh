#!/bin/bash
# Buffer policies and stacks on the BPF engine (issue 35): -x bufpolicy=ring
# keeps the newest records (each counted at DTrace's size: a 4-byte EPID,
# an int's 4 bytes) and prints them at the end; fill prints until the
# buffer is full, then stops, with room kept for END; bufsize is checked
# against DTrace's sizes. stack() of the kernel, sym()/func()/mod() of
# kernel text named from /proc/kallsyms, uaddr() and $target without -c/-p
# as DTrace's. Expectations are DTrace's documented semantics (Oracle's
# buffering/ and ustack/ unit tests, illumos dt_print_sym), not this
# dtrace's output. Also here: many aggregations (shared maps) and many
# string comparisons in one clause (the verifier's limits), dynvarsize,
# statusrate.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
cd "$T" || fail "cd"

# 1. ring, 40 bytes: 5 records of 8 bytes; the exit clause's false predicate
# reserves its 8 bytes at every firing, so 4 printf records and the exit's
# are what is left: 16..19.
cat >ring.d <<'D'
#pragma D option bufpolicy=ring
#pragma D option bufsize=40
#pragma D option quiet
int n;
tick-10ms
/n < 20/
{
	printf("%d\n", n++);
}
tick-10ms
/n == 20/
{
	exit(0);
}
D
dt 0 -s ring.d
same "$T/out" "16\n17\n18\n19\n\n" "ring: the newest records, printed at the end"
# the same with room for everything: all of them, in order
sed -i 's/bufsize=40/bufsize=4k/' ring.d
dt 0 -s ring.d
same "$T/out" "$(seq 0 19 | tr '\n' '#' | sed 's/#/\\n/g')\n" "ring: every record kept, in order"

# 2. fill, 64 bytes less END's 8 (printf of an int): 7 records, then the
# buffer is full and the run ends (exit status 0, no drop reported); END's
# record goes into the space kept for it.
{
	echo '#pragma D option bufpolicy=fill'
	echo '#pragma D option bufsize=64'
	echo '#pragma D option quiet'
	echo 'int i;'
	for _ in 1 2 3 4 5 6 7 8 9 10; do printf 'tick-10ms\n{\n\tprintf("%%d\\n", i++);\n}\n'; done
	printf 'tick-10ms\n/i > 200/\n{\n\texit(1);\n}\n'
	printf 'END\n{\n\tprintf("end %%d\\n", 1);\n}\n'
} >fill.d
dt 0 -s fill.d
same "$T/out" "0\n1\n2\n3\n4\n5\n6\nend 1\n\n" "fill: until full, then END"
expect_no_grep 'drop' "$T/err" "fill: no drop reported"

# 3. bufsize against DTrace's sizes: 32 bytes hold a printf of an int;
# trace() of a 64-byte string (68 with its EPID) does not fit.
dt 0 -x bufsize=32 -q -n 'BEGIN { printf("%d\n", 7); exit(0); }'
same "$T/out" "7\n\n" "bufsize=32 holds an int's record"
dt 1 -x bufsize=32 -x strsize=64 -q -n 'BEGIN { exit(0); } END { trace(execname); }'
expect_grep 'Enabling exceeds size of buffer' "$T/err" "a record bigger than bufsize"
# A program that enables ERROR needs DTrace for Linux's ERROR record (48
# bytes) in a perf record (12): 59 bytes refused, 64 run; 40 run without it.
dt 1 -b59 -q -n 'BEGIN { exit(0); } ERROR { exit(1); }'
expect_grep 'Enabling exceeds size of buffer' "$T/err" "-b59 with an ERROR clause"
dt 0 -b64 -q -n 'BEGIN { exit(0); } ERROR { exit(1); }'
dt 0 -x bufsize=40 -q -n 'BEGIN { printf("%d\n", 7); exit(0); }'
same "$T/out" "7\n\n" "bufsize=40 without ERROR"
dt 1 -x bufpolicy=wrap -n 'BEGIN { exit(0); }'
expect_grep 'bufpolicy' "$T/err" "an unknown policy refused"

# 4. stack() of the kernel: a system call's frames, each a kernel text symbol
# shellcheck disable=SC2016 # a D program: $target is its macro
dt 0 -q -c 'sleep 0.3' -n 'syscall::clock_nanosleep:entry,syscall::nanosleep:entry
/pid == $target/ { stack(); @s[stack(4)] = count(); exit(0); }'
grep -E '^ +vmlinux`' "$T/out" | sed -E 's/^ +vmlinux`//; s/\+0x[0-9a-f]+$//' | sort -u >frames
[ "$(wc -l <frames)" -ge 2 ] || { cat "$T/out" >&2; fail "stack(): fewer than 2 kernel frames"; }
awk '$2 ~ /^[tT]$/ && NF == 3 { print $3 }' /proc/kallsyms | sort -u >ktext
[ -z "$(comm -23 frames ktext)" ] || fail "stack(): frames not in kallsyms: $(comm -23 frames ktext | head -3)"
expect_grep '^ +1$' "$T/out" "stack() as an aggregation key"

# 5. sym(), func(), mod() of a kernel text address; uaddr() of 0
a=$(awk '$2 ~ /^[tT]$/ && $3 == "vfs_read" { print $1; exit }' /proc/kallsyms)
{ [ -n "$a" ] && [ "$a" != 0000000000000000 ]; } || fail "vfs_read not in /proc/kallsyms"
dt 0 -q -n "BEGIN { sym(0x$a + 4); func(0x$a); mod(0x$a); printf(\"\\n\"); @[sym(0x$a + 1)] = count(); exit(0); }"
same "$T/out" "$(printf '  %-50s  %-50s  %-50s\n\n  %-50s %16s\n\n' 'vmlinux`vfs_read' 'vmlinux`vfs_read' vmlinux 'vmlinux`vfs_read' 1)\n" \
	"sym, func, mod as DTrace prints them"
# 6. $target without -c or -p is 0, as DTrace's; uaddr(0) is 0x0
# shellcheck disable=SC2016 # a D program: $target is its macro
dt 0 -q -n 'BEGIN { trace($target); uaddr(0); exit(0); }'
same "$T/out" "$(printf '0  %-50s\n' 0x0)\n" "\$target 0, uaddr(0)"

# 7. dynvarsize=32 holds two elements of a[int] of ints (16 bytes each:
# the key's and the value's, Oracle's accounting); the others are dynamic
# variable drops, reported at the end. A deleted element frees its place.
dt 0 -x dynvarsize=32 -q -n 'BEGIN { a[1] = 1; a[2] = 2; a[3] = 3; a[1] = 0; a[4] = 4; printf("%d %d %d %d\n", a[1], a[2], a[3], a[4]); exit(0); }'
same "$T/out" "0 2 0 4\n\n" "dynvarsize: two elements kept"
expect_grep '^dtrace: 1 dynamic variable drop$' "$T/err" "dynvarsize: the drop reported"

# 8. -x statusrate: exit() is seen at the consumer's next status check (here
# every 4 s from the start), so END runs about 3 s after a tick's
# exit at about 1 s; without the option, at once.
cat >status.d <<'D'
#pragma D option quiet
tick-1sec
{
	exit(0);
	ts = timestamp;
}
END
{
	printf("%s\n", timestamp - ts > 1500000000 ? "late" : "soon");
}
D
dt 0 -x statusrate=4sec -s status.d
same "$T/out" "late\n\n" "statusrate: END at the next status check"
dt 0 -s status.d
same "$T/out" "soon\n\n" "no statusrate: END at once"

# 9. More aggregations than a BPF program may use maps (64): 50 of one
# shape share a map; each prints its own entries only, and clear() and
# trunc() of one leave the others alone.
{
	echo '#pragma D option quiet'
	echo 'BEGIN {'
	for k in $(seq 0 49); do printf '\t@a%d[%d] = sum(%d);\n' "$k" "$k" "$((k * 10))"; done
	printf '\t@a7[70] = sum(1);\n\t@a8[80] = sum(2);\n}\n'
	printf 'BEGIN {\n\tclear(@a7);\n\ttrunc(@a8);\n'
	printf '\tprinta("a3 %%d %%@d\\n", @a3);\n\tprinta("a7 %%d %%@d\\n", @a7);\n'
	printf '\tprinta("a8 %%d %%@d\\n", @a8);\n\tprinta("a49 %%d %%@d\\n", @a49);\n\texit(0);\n}\n'
} >many.d
dt 0 -s many.d
head -5 "$T/out" >head5
same head5 "a3 3 30\na7 7 0\na7 70 0\na49 49 490\n\n" "shared maps: each aggregation its own entries"
# the exit dump: the 46 not printed by printa(), one entry each
[ "$(grep -c . "$T/out")" = 50 ] || fail "shared maps: $(grep -c . "$T/out") lines, not 4 + 46"
expect_grep '^       48              480$' "$T/out" "shared maps: @a48 in the dump"
expect_no_grep '^ +(3|7|8|49|70|80) ' "$T/out" "shared maps: printed aggregations not dumped again"

# 10. Many string comparisons in one clause (each a bpf_loop, verified once):
# 64 of them, with DTrace's NULL sorting first; the count of true ones is
# known from the strings.
{
	echo '#pragma D option quiet'
	printf 'BEGIN {\n\tn = 0;\n\ta = "abc";\n\tb = "abd";\n\tz = "x";\n\tz = NULL;\n'
	for _ in $(seq 16); do
		printf '\tn += a < b;\n\tn += b > a;\n\tn += a == b;\n\tn += z < a;\n'
	done
	printf '\tprintf("%%d\\n", n);\n\texit(0);\n}\n'
} >cmp.d
dt 0 -s cmp.d
same "$T/out" "48\n\n" "64 string comparisons in one clause"
