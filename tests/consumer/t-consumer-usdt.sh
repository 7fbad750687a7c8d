#!/bin/bash
# dtrace -n/-s on the quickstart example's probes, on the engine: each
# output format compared byte for byte with what DTrace prints (illumos
# dt_consume.c: the record prefix and its header, trace() widths, the exit
# dump's key and value columns, quantize/lquantize art, the end-of-run
# newline, the notices on stderr), with -c and $target, -p, a glob over the
# provider with its pid, clause order with this-> shared, exit(n), SIGINT.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"

build_quickstart "$T/qs"
cd "$T/qs"

# The program's own "served N requests" may come anywhere among the records
# (two processes writing one stdout): it is not compared.
# It is one write, which may land inside a record's line.
strip_served() { perl -0pe 's/served \d+ requests\n//' "$T/out" >"$T/out2"; mv "$T/out2" "$T/out"; }

# 1. -q, printf with widths, copyinstr, $target: requests 1..4.
dt 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-start { printf("%-3d|%-22s|%5s|\n", arg0, copyinstr(arg1), "ok"); }'
strip_served
want=""
for i in 1 2 3 4; do
	case $((i % 3)) in 0) p=/index.html ;; 1) p=/api/users ;; 2) p=/static/app.js ;; esac
	want+=$(printf '%-3d|%-22s|%5s|' "$i" "$p?id=$i" ok)'\n'
done
same "$T/out" "$want\n" "-q printf records"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }

# 2. Not quiet: the header, "%3d %6d %32s " prefixes, trace() of an int
# (DTrace's " %10d") and of a string ("  %-33s"), each record's newline; the notices.
dt 0 -c './quickstart 2 1' -n 'quickstart*:::request-start { trace(args[0]); trace(args[1]); }'
strip_served
hdr=$(printf '%3s %6s %32s' CPU ID FUNCTION:NAME)
r1=$(printf '%3d %6d %32s  %10d  %-33s' 0 4 main:request-start 1 '/api/users?id=1')
r2=$(printf '%3d %6d %32s  %10d  %-33s' 0 4 main:request-start 2 '/static/app.js?id=2')
same "$T/out" "$hdr\n$r1\n$r2\n\n" "records with the default prefix"
pid=$(sed -n 's/^dtrace: pid \([0-9]*\) has exited$/\1/p' "$T/err")
[ -n "$pid" ] || fail "no 'pid N has exited' notice"
same "$T/err" "dtrace: description 'quickstart*:::request-start ' matched 1 probe\ndtrace: pid $pid has exited\n" "notices"

# 3. The exit dump: count keyed by an int (" %8d"), sum keyed by a string
# ("  %-50s"), quantize, lquantize, min, max, avg, in declaration order,
# entries by value.
dt 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-done { @c[args[1]] = count(); @s["sum"] = sum(args[0]); @q = quantize(args[0]); @l = lquantize(args[0], 0, 4, 1); @mx = max(args[0]); @mn = min(args[0]); @av = avg(args[0]); }'
strip_served
dist=$(printf '%16s %41s %-9s' value '------------- Distribution -------------' count)
row() { printf '%16s |%-40s %-9s' "$1" "$2" "$3"; }
at10=@@@@@@@@@@
want="\n"
want+=$(printf ' %8d %16d' 404 1)'\n'$(printf ' %8d %16d' 200 3)'\n'
want+=$(printf '  %-50s %16d' sum 10)'\n'
want+="\n$dist\n$(row 0 '' 0)\n$(row 1 $at10 1)\n$(row 2 $at10$at10 2)\n$(row 4 $at10 1)\n$(row 8 '' 0)\n\n"
want+="\n$dist\n$(row 0 '' 0)\n$(row 1 $at10 1)\n$(row 2 $at10 1)\n$(row 3 $at10 1)\n$(row '>= 4' $at10 1)\n\n"
want+=$(printf ' %16d' 4)'\n'$(printf ' %16d' 1)'\n'$(printf ' %16d' 2)'\n'
same "$T/out" "$want" "the exit dump"

# 4. A script: #pragma, self->, a predicate, printa with a format in END (then
# not in the dump), dirname() keys merged by the renderer, normalize(),
# strjoin() printed.
cat >"$T/s.d" <<'D'
#!/usr/sbin/dtrace -s
#pragma D option quiet
quickstart$target:::request-start
{
	self->path = copyinstr(arg1);
	@dirs[dirname(self->path)] = count();
}
quickstart$target:::request-done
/self->path != ""/
{
	printf("%s %d\n", strjoin(strjoin("done:", self->path), "!"), args[1]);
	@st[args[1]] = count();
	self->path = 0;
}
END
{
	printa("%-20s %@5d\n", @dirs);
	normalize(@st, 2);
}
D
dt 0 -s "$T/s.d" -c './quickstart 4 1'
strip_served
want=""
for i in 1 2 3 4; do
	case $((i % 3)) in 0) p=/index.html ;; 1) p=/api/users ;; 2) p=/static/app.js ;; esac
	s=200; [ "$i" = 4 ] && s=404
	want+="done:$p?id=$i! $s\n"
done
want+=$(printf '%-20s %5d' / 1)'\n'$(printf '%-20s %5d' /static 1)'\n'$(printf '%-20s %5d' /api 2)'\n'
want+="\n"$(printf ' %8d %16d' 404 0)'\n'$(printf ' %8d %16d' 200 1)'\n'
same "$T/out" "$want" "a script with printa, normalize, strjoin, dirname"

# 5. -p on a running process; two clauses of one probe in order, this->
# from the first read by the second's predicate; exit(5) is the status.
./quickstart 100000 20 >/dev/null &
QS=$!
at_exit "kill $QS 2>/dev/null"
dt 5 -q -p "$QS" -n 'quickstart$target:::request-start { this->one = 1; n++; } quickstart$target:::request-start /n == 3 && this->one == 1/ { printf("third %d\n", n); exit(5); }'
same "$T/out" "third 3\n\n" "-p, clause order, exit(5)"

# 6. SIGINT: END runs and the aggregations are printed. SIGTERM comes at
# once after it, as one kill of timeout(1) reaches dtrace twice (the child,
# then its process group): one interrupt, not a second, impatient one that
# would end the run before its END (a lost exit dump; two signals, since
# two SIGINTs pending at once are one).
taskset -c 0 "$DTRACE" -p "$QS" -n 'quickstart$target:::request-done { @n["done"] = count(); } END { printf("end\n"); }' >"$T/out" 2>"$T/err" &
DT=$!
wait_until 20 "dtrace to attach" grep -q matched "$T/err"
sleep 0.3
kill -INT "$DT"
kill -TERM "$DT"
rc=0
wait "$DT" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "dtrace interrupted exited $rc"; }
# The notice counts the probes of every clause: request-done and END.
head -1 "$T/err" | grep -qx "dtrace: description 'quickstart\$target:::request-done ' matched 2 probes" ||
	{ cat "$T/err" >&2; fail "SIGINT: notice"; }
grep -qE '^  done {45} +[1-9][0-9]*$' "$T/out" || { cat -A "$T/out" >&2; fail "SIGINT: no exit dump"; }
grep -qx '  0      2                             :END end' "$T/out" || { cat -A "$T/out" >&2; fail "SIGINT: END's record"; }
kill "$QS"
