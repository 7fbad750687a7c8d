#!/bin/bash
# Aggregations as DTrace prints and sorts them (issue 35, item 3), on the
# BPF engine: quantize bars for negative counts (to the left of the axis;
# both signs, two half bars about a centre line), histograms sorted by the
# sum of bucket value * count without overflow, then by the count at zero;
# llquantize's symmetric layout (DTrace for Linux: negative values mirror
# the positive buckets); stddev of large values (128-bit sum of squares);
# integer keys compared by their bits, unsigned, the narrow ones printed
# unsigned; aggsortrev reversing the exit dump's order; trunc() of
# histograms; exit() stopping the later clauses of its firing; strsize
# counting characters, not the NUL; _DTRACE_TESTING's record prefix;
# printa() of several aggregations joined by key; setopt() while tracing. Every
# expected value is worked out by hand from DTrace's rules (libdtrace
# dt_print_quantline, dt_aggregate_*cmp, dt_stddev), never taken from this
# dtrace's output.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"

dist=$(printf '%16s %41s %-9s' value '------------- Distribution -------------' count)
ats() { printf '@%.0s' $(seq "$1") | head -c "$1"; }

# 1. quantize with a negative increment: all counts negative, so the bar
# (40 @ for the whole) grows leftwards to the axis; with both signs, half
# bars (20 columns each side of '|'): -1 of 3 in magnitude is 20/3 = 7.
dt 0 -x engine=bpf -q -n 'BEGIN { @a = quantize(1, -5); exit(0); }'
{
	printf '\n\n%s\n' "$dist"
	printf '%16d %40s| %-9d\n' 0 '' 0
	printf '%16d %s| %-9d\n' 1 "$(ats 40)" -5
	printf '%16d %40s| %-9d\n' 2 '' 0
	printf '\n'
} >"$T/want.q"
cmp -s "$T/out" "$T/want.q" || { diff "$T/want.q" "$T/out" >&2; fail "quantize with negative counts"; }
dt 0 -x engine=bpf -q -n 'BEGIN { @b = quantize(1, -1); @b = quantize(2, 2); exit(0); }'
{
	printf '\n\n%s\n' "$dist"
	printf '%16d %20s|%20s %-9d\n' 0 '' '' 0
	printf '%16d %20s|%20s %-9d\n' 1 "$(ats 7)" '' -1
	printf '%16d %20s|%-20s %-9d\n' 2 '' "$(ats 13)" 2
	printf '%16d %20s|%20s %-9d\n' 4 '' '' 0
	printf '\n'
} >"$T/want.q"
cmp -s "$T/out" "$T/want.q" || { diff "$T/want.q" "$T/out" >&2; fail "quantize with counts of both signs"; }

# 2. Sorted by the sum of value * count in long double: 2^63-1 at 1 and
# 2^62-1 at 2 (f) outweigh 2^63-4 and 2^62-2 (s); a 64-bit sum saturates
# both. Equal sums (0) are ordered by the count at zero: -3 before -1.
cat >"$T/sort.d" <<'D'
#pragma D option quiet
BEGIN
{
	@["f"] = quantize(1, 9223372036854775807);
	@["f"] = quantize(2, 4611686018427387903);
	@["s"] = quantize(1, 9223372036854775804);
	@["s"] = quantize(2, 4611686018427387902);
	@z[1] = quantize(0, -1);
	@z[2] = quantize(0, -3);
	exit(0);
}
D
dt 0 -x engine=bpf -s "$T/sort.d"
grep -E '^  [fs] |^ +[12]$' "$T/out" | tr -d ' ' >"$T/order"
same "$T/order" "s\nf\n2\n1\n" "histograms sorted by their unsaturated sums, then the count at zero"

# 3. llquantize(x, 4, 0, 1, 4): magnitudes 0 and 1, 4 steps: 1 2 3 | 4 8 12,
# >= 16; negative values mirrored (-5 in -4's bucket, -20 at or below -16);
# 0 its own bucket.
dt 0 -x engine=bpf -q -n 'BEGIN { @ = llquantize(-20, 4, 0, 1, 4); @ = llquantize(-5, 4, 0, 1, 4); @ = llquantize(0, 4, 0, 1, 4); @ = llquantize(9, 4, 0, 1, 4); exit(0); }'
{
	printf '\n\n%s\n' "$dist"
	row() { printf '%16s |%-40s %-9d\n' "$1" "$(ats "$2")" "$3"; }
	row '<= -16' 10 1
	for v in -12 -8; do row $v 0 0; done
	row -4 10 1
	for v in -3 -2 -1; do row $v 0 0; done
	row 0 10 1
	for v in 1 2 3 4; do row $v 0 0; done
	row 8 10 1
	row 12 0 0
	printf '\n'
} >"$T/want.llq"
cmp -s "$T/out" "$T/want.llq" || { diff "$T/want.llq" "$T/out" >&2; fail "llquantize with negative values"; }

# 4. stddev of 5000000000 + 100 k, k = 0..9: the squares overflow 64 bits;
# sqrt(mean of squares - square of mean), in integers, is 287.
prog='BEGIN { '
for k in 0 1 2 3 4 5 6 7 8 9; do prog+="@ = stddev(50000000${k}00); "; done
dt 0 -x engine=bpf -q -n "$prog exit(0); }"
same "$T/out" "\n$(printf ' %16d' 287)\n" "stddev of values whose squares pass 64 bits"

# 5. Keys compared by their bits, unsigned (aggsortkey): (char)-1 after 2,
# printed as 255; an int key -1 printed signed. (Sorted by key, DTrace
# sorts every aggregation's entries as one: no blank line between them.)
dt 0 -x engine=bpf -q -x aggsortkey -n 'BEGIN { @c[(char)-1] = sum(1); @c[(char)2] = sum(2); @i[-1] = sum(3); @i[2] = sum(4); exit(0); }'
want="\n$(printf ' %3d %16d' 2 2)\n$(printf ' %3d %16d' 255 1)\n"
want+="$(printf ' %8d %16d' 2 4)\n$(printf ' %8d %16d' -1 3)\n"
same "$T/out" "$want" "signed keys sorted unsigned, char keys printed unsigned"

# 6. aggsortrev: the entries and the aggregations in reverse.
dt 0 -x engine=bpf -q -x aggsortrev -n 'BEGIN { @a[1] = sum(1); @a[2] = sum(2); @b[1] = sum(5); exit(0); }'
grep -v '^$' "$T/out" >"$T/lines"
want="$(printf ' %8d %16d' 1 5)\n$(printf ' %8d %16d' 2 2)\n$(printf ' %8d %16d' 1 1)\n"
same "$T/lines" "$want" "aggsortrev: the aggregations' order reversed too"

# 7. trunc(@, 1) of lquantize entries: the one with the largest sum of
# value * count (key 3: 3 + 4) is kept, not the one with most counts.
dt 0 -x engine=bpf -q -n 'BEGIN { @[1] = lquantize(0, 0, 10); @[1] = lquantize(0, 0, 10); @[1] = lquantize(1, 0, 10); @[3] = lquantize(3, 0, 10); @[3] = lquantize(4, 0, 10); trunc(@, 1); exit(0); }'
grep -E '^ +[0-9]+$' "$T/out" | tr -d ' ' >"$T/keys"
same "$T/keys" "3\n" "trunc() keeps histograms by their sums"

# 8. exit() in the first clause: the second clause of the same firing does
# not run; the third tick's firing never comes.
dt 0 -x engine=bpf -q -n 'tick-10ms { i++; } tick-10ms /i == 2/ { exit(0); } tick-10ms { @ = count(); }'
same "$T/out" "\n$(printf ' %16d' 1)\n" "no clause after exit() in its firing"

# 9. strsize=4: a string holds four characters.
dt 0 -x engine=bpf -q -x strsize=4 -n 'BEGIN { s = "abcdef"; printf("%s|\n", s); exit(0); }'
same "$T/out" "abcd|\n\n" "strsize counts characters, not the NUL"

# 10. _DTRACE_TESTING (DTrace's test mode): no CPU or ID in the prefix.
_DTRACE_TESTING=1 dt 0 -x engine=bpf -n 'BEGIN { exit(0); }'
same "$T/out" "$(printf '%32s' FUNCTION:NAME)\n$(printf '%32s ' :BEGIN)\n\n" "_DTRACE_TESTING's prefix"

# 11. printa() of two aggregations, joined by key: a key one lacks gives 0,
# rows sorted by the first's value (3: 0, 2: 5, 1: 10); with aggsortpos=1
# by the second's (1: 0, 3: 1, 2: 7).
join='BEGIN { @a[1] = sum(10); @a[2] = sum(5); @b[2] = sum(7); @b[3] = sum(1); printa("%d %@d %@d\n", @a, @b); exit(0); }'
dt 0 -x engine=bpf -q -n "$join"
grep -v '^$' "$T/out" >"$T/lines"
same "$T/lines" "3 0 1\n2 5 7\n1 10 0\n" "printa of two aggregations"
dt 0 -x engine=bpf -q -x aggsortpos=1 -n "$join"
grep -v '^$' "$T/out" >"$T/lines"
same "$T/lines" "1 10 0\n3 0 1\n2 5 7\n" "printa of two aggregations, aggsortpos=1"

# 12. setopt() while tracing: aggsortkey from the next printa on; a name
# DTrace does not know refused in its words, and the run goes on.
dt 0 -x engine=bpf -q -n 'BEGIN { @[1] = sum(2); @[2] = sum(1); printa("%d %@d\n", @); setopt("aggsortkey"); printa("%d %@d\n", @); setopt("Nixon"); exit(0); }'
grep -v '^$' "$T/out" >"$T/lines"
same "$T/lines" "2 1\n1 2\n1 2\n2 1\n" "setopt(\"aggsortkey\") at run time"
grep -qF 'couldn'"'"'t set option "Nixon" to "1": Invalid option name' "$T/err" ||
	{ cat "$T/err" >&2; fail "setopt of an unknown option: DTrace's error"; }
