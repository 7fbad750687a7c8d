#!/bin/bash
# Maps a tick- firing (NMI context) adds to: aggregation keys, array
# elements and self-> variables are all kept (allocated beforehand in such
# a program: a map that allocates as keys come has only its per-CPU
# cache's few elements in NMI, and lost the rest without a word), and
# what a full map cannot take is reported in DTrace's words ("dtrace: N
# dynamic variable drops", "dtrace: N aggregation drops on CPU C"), never
# lost silently. The counts are the program's own: F firings of K keys.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine

# keys.d F: F firings, each storing 40 distinct aggregation keys and array elements
keys() {
	local j
	{
		echo "int i;"
		echo "tick-1ms /i < $1/ {"
		for j in $(seq 0 39); do
			echo "	@a[i, $j] = count(); b[i, $j] = i + $j + 1;"
		done
		echo "	i++;"
		echo "}"
		echo "tick-1ms /i >= $1/ {"
		printf '\tprintf("%%d %%d %%d\\n", b[0, 0], b[%d, 39], b[%d, 0]);\n' $(($1 - 1)) "$1"
		echo "	exit(0);"
		echo "}"
		printf '%s\n' 'END { printa("%d %d %@d\n", @a); }'
	} >"$T/keys.d"
}

# 50 firings x 40 keys: 2000 entries, each counted once, no drop
keys 50
dt 0 -q -s "$T/keys.d"
[ "$(sed -n 1p "$T/out")" = "1 89 0" ] || fail "array elements of a tick- firing: $(sed -n 1p "$T/out")"
n=$(grep -c '^[0-9]* [0-9]* 1$' "$T/out")
[ "$n" = 2000 ] || fail "aggregation keys made in tick- firings: $n of 2000"
[ "$(sed 1d "$T/out" | sort -u | grep -c .)" = 2000 ] || fail "aggregation keys not distinct"
[ ! -s "$T/err" ] || fail "drops reported with room for every key: $(cat "$T/err")"

# 500 firings x 40 keys: 20000 where the maps hold 16384; the rest reported as drops
keys 500
dt 0 -q -s "$T/keys.d"
n=$(grep -c '^[0-9]* [0-9]* 1$' "$T/out")
agg=$(sed -n 's/^dtrace: \([0-9]*\) aggregation drops\{0,1\} on CPU [0-9]*$/\1/p' "$T/err" |
	awk '{ s += $1 } END { print s + 0 }')
dyn=$(sed -n 's/^dtrace: \([0-9]*\) dynamic variable drops\{0,1\}$/\1/p' "$T/err" |
	awk '{ s += $1 } END { print s + 0 }')
if [ "$n" = 0 ] || [ "$agg" = 0 ] || [ $((n + agg)) != 20000 ]; then
	fail "aggregation keys kept ($n) and drops reported ($agg) are not the 20000 made"
fi
[ "$dyn" = "$agg" ] || fail "array elements dropped ($dyn) are not the aggregation's ($agg)"
grep -v '^dtrace: [0-9]* \(aggregation drops\{0,1\} on CPU [0-9]*\|dynamic variable drops\{0,1\}\)$' \
	"$T/err" && fail "unexpected stderr"

# self-> variables stored in tick- firings read back in the firing (whichever thread it interrupts)
cat >"$T/self.d" <<'D'
int i;
tick-1ms
/i < 100/
{
	self->s = "abc";
	self->x = i;
	@ok[self->x == i && self->s == "abc"] = count();
	i++;
}
tick-1ms
/i >= 100/
{
	exit(0);
}
D
dt 0 -q -s "$T/self.d"
same "$T/out" "\n        1              100\n" "self-> variables stored in tick- firings"
[ ! -s "$T/err" ] || fail "self-> variables: $(cat "$T/err")"
exit 0
