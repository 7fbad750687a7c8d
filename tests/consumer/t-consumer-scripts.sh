#!/bin/bash
# The example scripts (examples/d-scripts/) against the quickstart example,
# run as their README says: columns checked byte for byte (the time and the
# measured latencies by pattern), the aggregations exactly.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
S="$USDTKIT_SRCDIR/examples/d-scripts"

build_quickstart "$T/qs"
cd "$T/qs"
strip_served() { perl -0pe 's/served \d+ requests\n//' "$T/out" >"$T/out2"; mv "$T/out2" "$T/out"; }

# reqsnoop.d: %-20Y of walltimestamp (this year), widths, self-> strings.
dt 0 -s "$S/reqsnoop.d" -c './quickstart 3 10'
strip_served
year=$(date +%Y)
{
	printf '%-20s %4s %6s %8s %s\n' TIME ID STATUS 'LAT(us)' PATH
	for i in 1 2 3; do
		case $((i % 3)) in 0) p=/index.html ;; 1) p=/api/users ;; 2) p=/static/app.js ;; esac
		printf '%s %4d %6d %s %s\n' "$year [A-Z][a-z]{2} [ 123][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}" \
			"$i" 200 '[ 0-9]{7}[0-9]' "$p\\?id=$i"
	done
	echo
} >"$T/patterns"
[ "$(wc -l <"$T/out")" = "$(wc -l <"$T/patterns")" ] || { cat -A "$T/out" >&2; fail "reqsnoop.d: line count"; }
paste -d '\n' "$T/patterns" "$T/out" | while IFS= read -r pat && IFS= read -r line; do
	[ "$pat" = "$(printf '%-20s %4s %6s %8s %s' TIME ID STATUS 'LAT(us)' PATH)" ] && {
		[ "$line" = "$pat" ] || fail "reqsnoop.d header: '$line'"
		continue
	}
	[[ $line =~ ^$pat$ ]] || fail "reqsnoop.d: '$line' does not match '$pat'"
done
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "reqsnoop.d (quiet) wrote to stderr"; }

# reqstat.d: two printa with formats, then the exit dump of the histogram.
dt 0 -s "$S/reqstat.d" -c './quickstart 8 1'
strip_served
want="$(printf '%-12s %6s %8s' RESULT STATUS COUNT)\n"
want+="$(printf '%-12s %6d %8d' error 404 2)\n$(printf '%-12s %6d %8d' ok 200 6)\n"
want+="\n$(printf '%-20s %8s' DIRECTORY COUNT)\n"
want+="$(printf '%-20s %8d' / 2)\n$(printf '%-20s %8d' /api 3)\n$(printf '%-20s %8d' /static 3)\n"
want+="\nlatency (us):\n\n$(printf '%16s %41s %-9s' value '------------- Distribution -------------' count)\n"
printf '%b' "$want" >"$T/want"
head -c "$(stat -c %s "$T/want")" "$T/out" | cmp -s - "$T/want" || { cat -A "$T/out" >&2; fail "reqstat.d"; }
tail -n +15 "$T/out" | head -n -1 | grep -vqE '^ {0,15}[0-9]+ \|[@ ]{40} [0-9 ]{9}$' &&
	{ cat -A "$T/out" >&2; fail "reqstat.d: histogram rows"; }
[ "$(tail -n 1 "$T/out")" = "" ] || fail "reqstat.d: the histogram's last line"

# reqrate.d 1: a glob with the pid, probeprov, tick-1sec, trunc, $1; -p
# (the processes of -p are read directly: no daemon needed).
./quickstart 100000 20 >/dev/null &
QS=$!
at_exit "kill $QS 2>/dev/null"
dt 0 -s "$S/reqrate.d" -p "$QS" 1
grep -qE "^quickstart$QS +[1-9][0-9]*/s$" "$T/out" || { cat -A "$T/out" >&2; fail "reqrate.d"; }

# -x bpfc prints the engine's BPF C for each script, a program per probe
# and no run.
for s in reqsnoop.d reqstat.d "reqrate.d 1"; do
	# shellcheck disable=SC2086 # the script's name and its argument
	set -- $s
	dt 0 -x bpfc -q -p "$QS" -s "$S/$1" ${2:+"$2"}
	grep -q '^SEC("uprobe' "$T/out" || { cat "$T/out" >&2; fail "$1: -x bpfc printed no USDT program"; }
done
true
