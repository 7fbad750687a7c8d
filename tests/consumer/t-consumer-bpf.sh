#!/bin/bash
# The D consumer's engine (dtrace/engine: BPF C through clang, loaded and
# attached with libbpf), named as scripts name it (-x engine=bpf, accepted:
# it is the only one). Programs of t-consumer-usdt and t-consumer-begin,
# with the same expected outputs (DTrace's formats byte for byte); what
# bpftrace 0.17 cannot do: twelve arguments with negative values (registers, constants,
# stack memory), a count() keyed by two 255-byte strings; a saturation run
# whose records all arrive (the ring buffer) where bpftrace loses some;
# what the engine does not do yet refused at file:line:col; SIGINT ends the
# run with END and the exit dump; without clang, one error naming the
# package; D's string functions (strstr index rindex substr strtok toupper
# tolower lltostr copyin/stringof, copyinstr with a length, NULL), assignments
# and ++/-- as values, probefunc per site, probeprov, stddev, llquantize.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v clang >/dev/null || command -v clang-14 >/dev/null ||
	fail "clang is not installed (scripts/deps.sh installs it)"
"$DTRACE" -x engine=bpf -e -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "-x engine=bpf -e of BEGIN { exit(0); }"; }

# Without clang (the dtrace package only recommends it: build machines
# install it for -h and -G): one error naming the package, exit 1.
rc=0
env PATH=/nonexistent USDTKIT_CLANG=/nonexistent/clang "$DTRACE" -x engine=bpf -n 'BEGIN { exit(0); }' \
	>"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "-x engine=bpf without clang exited $rc, expected 1"
same "$T/err" "dtrace: error: dtrace compiles with clang, which is not installed: install the clang package (apt-get install clang, dnf install clang) or name a clang in \$USDTKIT_CLANG\n" "without clang"
[ -s "$T/out" ] && fail "-x engine=bpf without clang printed output"

# dt with the engine: the option first, as a user would give it.
ebpf() {
	local want=$1
	shift
	dt "$want" -x engine=bpf "$@"
}

# What the engine does not do yet: one error at file:line:col, exit 1.
refused() { # column message program
	local rc=0
	"$DTRACE" -x engine=bpf -e -n "$3" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/err" >&2; fail "dtrace -x engine=bpf -e -n '$3' exited $rc, expected 1"; }
	grep -qF -- "<command line>:1:$1: error: $2" "$T/err" ||
		{ cat "$T/err" >&2; fail "-x engine=bpf -n '$3': not '$2' at column $1"; }
	[ "$(grep -c error: "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "'$3': more than one error"; }
}
refused 9 "local variables may not be used as associative arrays: a" 'BEGIN { this->a[1] = 2; }'
refused 16 "an array assigned inside another array's key is not supported" 'BEGIN { a[b[1] = 2] = 3; }'
refused 18 "operands have incompatible types: string = int" 'BEGIN { x = "a"; x = 1; }'
refused 30 "@b: no clause before this one assigns it" 'BEGIN { @a = count(); printa(@b); }'
refused 22 "d_path() is not supported by this D consumer" 'BEGIN { printf("%s", d_path(0)); }'
refused 17 "operator + requires an operand of arithmetic type" 'BEGIN /execname + "x"/ { exit(0); }'
refused 9 "pcap() is not supported by this D consumer" 'BEGIN { pcap(0, 1); }'
refused 13 "ustack() is supported as an action, an aggregation key or printf's %k argument" 'BEGIN { x = ustack(); }'
refused 14 "failed to resolve lmin: Unknown function name" 'BEGIN { @a = lmin(1); }'
refused 18 "a built-in variable cannot be assigned to" 'BEGIN { if (1) { pid = 1; } }'

# t-consumer-begin 1: printf's conversions, exit(7), the record's end.
export TZ=UTC
ebpf 7 -q -n 'BEGIN { printf("%Y|%-6s|%6s|%*s|%x|%X|%o|%c|%u|%i|%5.2s|%%|%-4d|%04d\n", 0, "ab", "cd", 5, "e", 255, 255, 8, 65, -1, 42, "xyz", 7, 7); exit(7); }'
same "$T/out" "1970 Jan  1 00:00:00|ab    |    cd|    e|ff|FF|10|A|4294967295|42|   xy|%|7   |0007\n\n" "printf conversions"

# t-consumer-begin's others: BEGIN's default record and notice, tick-N,
# macros, -e, several BEGIN clauses in order with a global, END.
ebpf 0 -n 'BEGIN { exit(0); }'
same "$T/out" "$(printf '%3s %6s %32s' CPU ID FUNCTION:NAME)\n$(printf '%3d %6d %32s ' 0 1 :BEGIN)\n\n" "BEGIN's default record"
same "$T/err" "dtrace: description 'BEGIN ' matched 1 probe\n" "BEGIN's notice"
ebpf 0 -q -n 'tick-10ms { n++; } tick-10ms /n == 5/ { printf("five %d\n", n); exit(0); }'
same "$T/out" "five 5\n\n" "tick-10ms, two clauses"
# profile-N: on every CPU (dtrace is pinned to CPU 0; CPU 1's clock fires
# too where there is one), arg0 or arg1 the pc, the kernel's or the user's
ebpf 0 -q -n 'BEGIN { n = 0; } profile-100 { @c[cpu] = count(); n += (arg0 != 0) + (arg1 != 0); } tick-1s { printa("%d %@d\n", @c); printf("%d\n", n > 0); exit(0); }'
ncpu=$(grep -c '^processor' /proc/cpuinfo)
[ "$(grep -c '^[0-9]* [1-9][0-9]*$' "$T/out")" = "$ncpu" ] || { cat "$T/out" >&2; fail "profile-100: not a count for each of $ncpu CPUs"; }
grep -qx 1 "$T/out" || { cat "$T/out" >&2; fail "profile-100: no pc in arg0 or arg1"; }
# syscall:: (the syscalls tracepoints, argN their fields): a file opened,
# its name a string of the process; exit_group's status; the return probe
printf 'x\n' >"$T/marker-file"
printf 'cat "$1" >/dev/null\nexit 3\n' >"$T/cat-exit.sh"
ebpf 0 -q -c "/bin/sh $T/cat-exit.sh $T/marker-file" -n 'syscall::openat:entry /strstr(copyinstr(arg1), "marker-file") != NULL/ { printf("%s %s %s\n", probefunc, probename, basename(copyinstr(arg1))); } syscall::exit_group:entry /pid == $target/ { printf("%s %d\n", probefunc, arg0); } syscall::openat:return /strstr(execname, "cat") != NULL && arg0 > 2/ { n++; } END { printf("%d\n", n > 0); }'
same "$T/out" "openat entry marker-file\nexit_group 3\n1\n\n" "syscall:: probes"
# proc::: (sched's tracepoints), ppid and vtimestamp (the kernel's task by
# its BTF), zonename, rand()
printf '/bin/true\n/bin/echo hi >/dev/null\n' >"$T/two.sh"
ebpf 0 -q -c "/bin/sh $T/two.sh" -n 'proc:::exec-success /ppid == $target/ { printf("exec %s %d %s\n", execname, arg0, zonename); } proc:::create /pid == $target/ { @c[probename] = count(); } proc:::exit /ppid == $target/ { printf("exit %s %d %d\n", execname, vtimestamp > 0, rand() >= 0); }'
same "$T/out" "exec true 0 global\nexit true 1 1\nexec echo 0 global\nexit echo 1 1\n\n$(printf '  %-50s %16d' create 2)\n" "proc::: probes, ppid, vtimestamp, zonename, rand()"
ebpf 0 -x argref -q -n 'BEGIN { printf("%s %d %s\n", $$1, $2, "$3"); exit(0); }' hello 42 x
same "$T/out" "hello 42 \$3\n\n" "macro arguments"
ebpf 0 -e -n 'BEGIN { exit(0); }'
[ -s "$T/out" ] && fail "-e printed output"
same "$T/err" "dtrace: description 'BEGIN ' matched 1 probe\n" "-e notice"
ebpf 3 -q -n 'BEGIN { x = 1; } BEGIN /x == 1/ { printf("two\n"); } BEGIN { exit(3); } END { printf("end\n"); }'
same "$T/out" "two\nend\n\n" "several BEGIN clauses, END"

build_quickstart "$T/qs"
cd "$T/qs"
strip_served() { perl -0pe 's/served \d+ requests\n//' "$T/out" >"$T/out2"; mv "$T/out2" "$T/out"; }

# t-consumer-usdt 1: -q, printf with widths, copyinstr, $target.
ebpf 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-start { printf("%-3d|%-22s|%5s|\n", arg0, copyinstr(arg1), "ok"); }'
strip_served
want=""
for i in 1 2 3 4; do
	case $((i % 3)) in 0) p=/index.html ;; 1) p=/api/users ;; 2) p=/static/app.js ;; esac
	want+=$(printf '%-3d|%-22s|%5s|' "$i" "$p?id=$i" ok)'\n'
done
same "$T/out" "$want\n" "-q printf records"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }

# copyin()'s idiom (HotSpot's scripts): a (char *) cast of its bytes, a NUL
# stored into them; stringof() of an integer.
ebpf 0 -q -c './quickstart 2 1' -n 'quickstart$target:::request-start { this->s = (char *)copyin(arg1, 8); this->s[4] = '"'\\0'"'; printf("%s|%s|%s\n", stringof(this->s), stringof(arg0), stringof(-12)); }'
strip_served
same "$T/out" "/api|1|-12\n/sta|2|-12\n\n" "copyin(), a NUL stored, stringof()"

# t-consumer-usdt 2: the header, the record prefixes, trace() of an int and
# of a string, the notices.
ebpf 0 -c './quickstart 2 1' -n 'quickstart*:::request-start { trace(args[0]); trace(args[1]); }'
strip_served
hdr=$(printf '%3s %6s %32s' CPU ID FUNCTION:NAME)
r1=$(printf '%3d %6d %32s  %10d  %-33s' 0 4 main:request-start 1 '/api/users?id=1')
r2=$(printf '%3d %6d %32s  %10d  %-33s' 0 4 main:request-start 2 '/static/app.js?id=2')
same "$T/out" "$hdr\n$r1\n$r2\n\n" "records with the default prefix"
pid=$(sed -n 's/^dtrace: pid \([0-9]*\) has exited$/\1/p' "$T/err")
[ -n "$pid" ] || fail "no 'pid N has exited' notice"
same "$T/err" "dtrace: description 'quickstart*:::request-start ' matched 1 probe\ndtrace: pid $pid has exited\n" "notices"

# t-consumer-usdt 3: the exit dump.
ebpf 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-done { @c[args[1]] = count(); @s["sum"] = sum(args[0]); @q = quantize(args[0]); @l = lquantize(args[0], 0, 4, 1); @mx = max(args[0]); @mn = min(args[0]); @av = avg(args[0]); }'
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

# Keys of every builtin the engine has: probefunc/probename/probemod per
# probe, execname, pid; a predicate (request-summary's arg0 is its text: all 3 count).
ebpf 0 -q -c './quickstart 3 1' -n 'quickstart$target:::request-* /arg0 != 2/ { @[probefunc, probename, probemod, execname, pid == $target] = count(); }'
strip_served
want="\n"$(printf '  %-50s  %-50s  %-50s  %-50s %8d %16d' main request-done quickstart quickstart 1 2)'\n'
want+=$(printf '  %-50s  %-50s  %-50s  %-50s %8d %16d' main request-start quickstart quickstart 1 2)'\n'
want+=$(printf '  %-50s  %-50s  %-50s  %-50s %8d %16d' main request-summary quickstart quickstart 1 3)'\n'
same "$T/out" "$want" "builtin keys, a predicate, the semaphore (request-summary fired)"

# self-> from one probe to another, printa() with a format in END (then
# not in the dump), normalize(), a global's value in END.
cat >"$T/s.d" <<'D'
#pragma D option quiet
quickstart$target:::request-start
{
	self->id = arg0;
	self->ts = timestamp;
	@starts[copyinstr(arg1)] = count();
}
quickstart$target:::request-done
/self->ts && self->id == args[0]/
{
	@st[args[1]] = count();
	@lat = max(timestamp - self->ts > 0);
	self->ts = 0;
	done++;
}
END
{
	printa("%-20s %@5d\n", @starts);
	normalize(@st, 2);
	printf("done %d\n", done);
}
D
ebpf 0 -s "$T/s.d" -c './quickstart 4 1'
strip_served
want=""
for i in 1 2 3 4; do
	case $((i % 3)) in 0) p=/index.html ;; 1) p=/api/users ;; 2) p=/static/app.js ;; esac
	want+=$(printf '%-20s %5d' "$p?id=$i" 1)'\n'
done
want="$(printf '%b' "$want" | sort)\n"
want+="done 4\n\n"$(printf ' %8d %16d' 404 0)'\n'$(printf ' %8d %16d' 200 1)'\n'$(printf ' %16d' 1)'\n'
# (printa's entries of equal counts come in key order: sorted here as DTrace sorts them)
same "$T/out" "$want" "a script with self->, printa, normalize, a global"

# String variables (self->, this->) and comparisons: a string read into a
# thread's variable, compared with "" and with a constant, freed with 0 (then
# DTrace's NULL: == NULL, as Oracle's operators/tst.str_comparison-basic-with-NULL); a
# this-> string as a key beside a comparison's result.
ebpf 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-start { self->path = copyinstr(arg1); this->p = self->path; @[this->p, execname == "quickstart"] = count(); } quickstart$target:::request-done /self->path != ""/ { printf("%s %d\n", self->path, args[1]); self->path = 0; } quickstart$target:::request-done /self->path == NULL/ { printf("unset\n"); } quickstart$target:::request-start /copyinstr(arg1) == "/api/users?id=4"/ { printf("four\n"); }'
strip_served
want=""
for i in 1 2 3 4; do
	case $((i % 3)) in 0) p=/index.html ;; 1) p=/api/users ;; 2) p=/static/app.js ;; esac
	s=200; [ "$i" = 4 ] && s=404 && want+="four\n"
	want+="$p?id=$i $s\nunset\n"
done
want+="\n"
for k in /api/users?id=1 /api/users?id=4 /index.html?id=3 /static/app.js?id=2; do
	want+=$(printf '  %-50s %8d %16d' "$k" 1 1)'\n'
done
same "$T/out" "$want" "string variables and comparisons"

# if/else, nested, with records in both branches (the reader skips the
# actions of the branch not taken) and exit() in one.
ebpf 0 -c './quickstart 8 1' -n 'quickstart$target:::request-done { if (args[1] == 404) { printf("miss %d", args[0]); } else { printf("hit %d", args[0]); if (args[0] == 5) { exit(0); } } }'
strip_served
want="$hdr\n"
for i in 1 2 3 4 5; do
	r="hit $i"; [ $i = 4 ] && r="miss $i"
	want+="$(printf '%3d %6d %32s ' 0 4 main:request-done)$r\n"
done
same "$T/out" "$want\n" "if/else"

# examples/d-scripts/reqsnoop.d, as t-consumer-scripts checks it: %-20Y of
# walltimestamp (this year), widths, a self-> string.
dt 0 -x engine=bpf -s "$USDTKIT_SRCDIR/examples/d-scripts/reqsnoop.d" -c './quickstart 3 10'
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

# A string ?: as a key part; trunc() in END before its printa (the reader
# acts on a record's actions in order): the two largest kept.
ebpf 0 -q -c './quickstart 8 1' -n 'quickstart$target:::request-done { @status[args[1] == 200 ? "ok" : "error", args[1]] = count(); @id[args[0]] = sum(args[0]); } END { trunc(@id, 2); printa(@id); trunc(@id); }'
strip_served
want='\n'$(printf ' %8d %16d' 7 7)'\n'$(printf ' %8d %16d' 8 8)'\n\n' # printa: a blank line first
want+=$(printf '  %-50s %8d %16d' error 404 2)'\n'$(printf '  %-50s %8d %16d' ok 200 6)'\n'
same "$T/out" "$want" "a string ?: key, trunc"

# t-consumer-usdt 4: a script: #pragma, self->, a predicate, printa with a format in END (then
# not in the dump), dirname() keys merged by the renderer, normalize(),
# strjoin() printed.
cat >"$T/s4.d" <<'D'
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
ebpf 0 -s "$T/s4.d" -c './quickstart 4 1'
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

# examples/d-scripts/reqstat.d, as t-consumer-scripts checks it: two printa with formats, then the exit dump of the histogram.
dt 0 -x engine=bpf -s "$USDTKIT_SRCDIR/examples/d-scripts/reqstat.d" -c './quickstart 8 1'
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

# Associative arrays: global ones keyed by an integer, a string (the probe's
# name) and two parts; += and ++; 0 deletes; a thread's array of strings
# an array read in an aggregation key.
ebpf 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-start { start[arg0] = timestamp; n[probename]++; tot[pid, "x"] += arg0; self->p[arg0 % 2] = copyinstr(arg1); } quickstart$target:::request-done /start[arg0]/ { printf("%d %d %d %d %s\n", arg0, timestamp - start[arg0] > 0, n["request-start"], tot[pid, "x"], self->p[arg0 % 2]); @[n["request-start"]] = count(); start[arg0] = 0; } END { printf("%d %d\n", start[1], n["request-start"]); }'
strip_served
want="1 1 1 1 /api/users?id=1\n2 1 2 3 /static/app.js?id=2\n3 1 3 6 /index.html?id=3\n"
want+="4 1 4 10 /api/users?id=4\n0 4\n\n"
for i in 1 2 3 4; do want+=$(printf ' %16d %16d' $i 1)'\n'; done
same "$T/out" "$want" "associative arrays"
# An array read inside another array's key (each key in an area of its own),
# three deep, in an aggregation's key, in ++'s key, of strings and integers.
ebpf 0 -q -c './quickstart 4 1' -n 'quickstart$target:::request-start { id[arg0] = arg0 * 10; path[id[arg0]] = copyinstr(arg1); self->k = arg0; } quickstart$target:::request-done { n[path[id[arg0]]]++; @c[n[path[id[self->k]]]] = count(); printf("%d %s %d\n", arg0, path[id[arg0]], n[path[id[self->k]]]); }'
strip_served
want="1 /api/users?id=1 1\n2 /static/app.js?id=2 1\n3 /index.html?id=3 1\n4 /api/users?id=4 1\n\n"
want+=$(printf ' %16d %16d' 1 4)'\n'
same "$T/out" "$want" "an array read in another array's key"
ebpf 0 -q -n 'BEGIN { a[1] = 2; b[a[1]] = 3; s["k"] = "v"; n[s["k"]] = 5; c[n[s["k"]], s["k"]] = "deep"; t[c[b[a[1]] + 2, s["k"]]] = 9; printf("%d %d %s %d\n", b[2], n[s["k"]], c[5, "v"], t[c[n[s["k"]], s["k"]]]); exit(0); }'
same "$T/out" "3 5 deep 9\n\n" "arrays read in keys, three deep"

# t-consumer-usdt 6: SIGINT then SIGTERM: one interrupt; END and the dump.
./quickstart 100000 20 >/dev/null &
QS=$!
at_exit "kill $QS 2>/dev/null"
taskset -c 0 "$DTRACE" -x engine=bpf -p "$QS" -n 'quickstart$target:::request-done { @n["done"] = count(); } END { printf("end\n"); }' >"$T/out" 2>"$T/err" &
DT=$!
wait_until 20 "dtrace to attach" grep -q matched "$T/err"
sleep 0.3
kill -INT "$DT"
kill -TERM "$DT"
rc=0
wait "$DT" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "dtrace interrupted exited $rc"; }
head -1 "$T/err" | grep -qx "dtrace: description 'quickstart\$target:::request-done ' matched 2 probes" ||
	{ cat "$T/err" >&2; fail "SIGINT: notice"; }
grep -qE '^  done {45} +[1-9][0-9]*$' "$T/out" || { cat -A "$T/out" >&2; fail "SIGINT: no exit dump"; }
grep -qx '  0      2                             :END end' "$T/out" || { cat -A "$T/out" >&2; fail "SIGINT: END's record"; }
# t-consumer-usdt 5: -p on a running process; two clauses of one probe in
# order, this-> from the first read by the second's predicate, a global;
# exit(5) is the status.
ebpf 5 -q -p "$QS" -n 'quickstart$target:::request-start { this->one = 1; n++; } quickstart$target:::request-start /n == 3 && this->one == 1/ { printf("third %d\n", n); exit(5); }'
same "$T/out" "third 3\n\n" "-p, clause order, exit(5)"
kill "$QS"
# Past bpftrace's reach: twelve arguments (registers, constants, stack
# memory with SystemTap's "nor" constraint at -O0), negative values, and a
# count() keyed by two strings of 255 bytes (bpftrace: "BPF stack limit").
mkdir -p "$T/m" && cd "$T/m" || fail "no scratch directory"
cat >m.d <<'D'
provider engt {
	probe many(int, long, int, long, int, long, int, long, int, long, int, long);
	probe two(char *, char *);
};
D
cat >m.c <<'C'
#include <stdlib.h>
#include <string.h>
#include "m_probes.h"

static char a[300], b[300];

__attribute__((noinline)) static void many(int i)
{
	volatile long local = -20;

	ENGT_MANY(-i, -1000000000000L * i, i * 3, local, -3, 7L, -2147483647 - 1, local * 2, i,
		  -9L, 11, -1L);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;

	memset(a, 'a', 255);
	memset(b, 'b', 255);
	if (argc > 2) { /* saturation: one probe back to back */
		for (int i = 0; i < n; i++)
			ENGT_TWO(a, b);
		return 0;
	}
	for (int i = 1; i <= n; i++)
		many(i);
	for (int i = 0; i < 2 * n; i++) {
		b[254] = (char)('0' + i % 2); /* two keys that differ in their last byte */
		ENGT_TWO(a, b);
	}
	return 0;
}
C
"$DTRACE" -h -s m.d -o m_probes.h || fail "dtrace -h"
for v in O2 O0; do
	cflags=-$v
	[ $v = O0 ] && cflags="-O0 -DSTAP_SDT_ARG_CONSTRAINT=nor"
	# shellcheck disable=SC2086
	gcc $cflags -I"$SDT_INC" -I. -c m.c -o m$v.o && "$DTRACE" -G -s m.d -o p$v.o m$v.o &&
		gcc -o m$v m$v.o p$v.o || fail "building m$v"
done
readelf -n mO0 | grep -qE 'Arguments: .*@-?[0-9]+\(%rbp\)' || fail "no memory operand in mO0's notes"
s255a=$(printf 'a%.0s' $(seq 255))
s255b=$(printf 'b%.0s' $(seq 254))
for v in O2 O0; do
	ebpf 0 -q -c "./m$v 2" -n 'engt$target:::many { printf("%d %d %d %d %d %d %d %d %d %d %d %d|%d %d\n", args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], arg0, arg11); } engt$target:::two { @[copyinstr(arg0), copyinstr(arg1)] = count(); }'
	want="-1 -1000000000000 3 -20 -3 7 -2147483648 -40 1 -9 11 -1|-1 -1\n"
	want+="-2 -2000000000000 6 -20 -3 7 -2147483648 -40 2 -9 11 -1|-2 -1\n\n"
	want+=$(printf '  %-50s  %-50s %16d' "$s255a" "${s255b}0" 2)'\n'
	want+=$(printf '  %-50s  %-50s %16d' "$s255a" "${s255b}1" 2)'\n'
	same "$T/out" "$want" "twelve arguments and a two-string key ($v)"
done
# -x strsize: strings cut at strsize bytes (DTrace's: strsize characters,
# the NUL not counted), up to 1024.
ebpf 0 -q -x strsize=16 -c './mO2 1' -n 'engt$target:::two { printf("%s|\n", copyinstr(arg0)); }'
same "$T/out" "aaaaaaaaaaaaaaaa|\naaaaaaaaaaaaaaaa|\n\n" "-x strsize=16"
ebpf 0 -q -x strsize=1024 -c './mO2 1' -n 'engt$target:::two { printf("%d\n", 1); @[copyinstr(arg0), copyinstr(arg1)] = count(); }'
"$DTRACE" -x engine=bpf -x strsize=2048 -e -n 'BEGIN { exit(0); }' >"$T/out" 2>"$T/err" &&
	fail "-x strsize=2048 accepted"
grep -q 'strsize 2048' "$T/err" || { cat "$T/err" >&2; fail "-x strsize=2048: the error"; }

# Saturation: 200,000 firings back to back, a string record each. The ring
# buffer (64 MiB: every record fits even if dtrace read none before the end)
# delivers all of them, and no drop is reported (bpftrace by hand, with its
# own buffers, loses some: bench/consumer).
n=200000
ebpf 0 -q -x bufsize=64m -c "./mO2 $n sat" -n 'engt$target:::two { printf("%s\n", copyinstr(arg1)); }'
got=$(grep -c . "$T/out")
[ "$got" = "$n" ] || { head -3 "$T/err" >&2; fail "saturation: $got of $n records"; }
grep -q drop "$T/err" && { cat "$T/err" >&2; fail "saturation: drops reported"; }
echo "saturation: $n firings, $got records"
# A ring buffer of one page: most records find no room. Each firing either
# wrote its record or was counted, so what arrived and the drops reported
# ("dtrace: N drops on CPU C", DTrace's words) add up to the firings.
n=50000
ebpf 0 -q -x bufsize=4k -c "./mO2 $n sat" -n 'engt$target:::two { printf("%s\n", copyinstr(arg1)); }'
got=$(grep -c . "$T/out")
grep -vqE '^dtrace: [0-9]+ drops? on CPU [0-9]+$' "$T/err" && { cat "$T/err" >&2; fail "drops: other messages"; }
drops=$(sed -n 's/^dtrace: \([0-9]*\) drops\{0,1\} on CPU [0-9]*$/\1/p' "$T/err" | awk '{ s += $1 } END { print s + 0 }')
[ "$drops" -gt 0 ] || fail "drops: none reported with a one-page ring buffer"
[ $((got + drops)) = "$n" ] || { cat "$T/err" >&2; fail "drops: $got records + $drops drops, not $n"; }
echo "one page: $got records, $drops drops"

# D's string functions on a program's strings: strstr (NULL when not
# found), index, rindex (-1 when not found), substr, toupper, tolower,
# lltostr; a string compared with NULL (copyinstr of a null pointer is NULL,
# and && does not evaluate its right side then). The probe has two sites,
# in two functions.
mkdir -p "$T/s" && cd "$T/s" || fail "no scratch directory"
cat >s.d <<'D'
provider strt {
	probe req(char *, char *, long);
};
D
cat >s.c <<'C'
#include <stddef.h>
#include "s_probes.h"

__attribute__((noinline)) static void from_a(char *p, char *q, long n)
{
	STRT_REQ(p, q, n);
}

__attribute__((noinline)) static void from_b(char *p, char *q, long n)
{
	STRT_REQ(p, q, n * 2); /* not from_a's code: gcc would fold the two */
}

int main(void)
{
	from_a((char *)"/usr/lib/Foo/bar.rb", (char *)"FooBar", -7);
	from_a((char *)"/tmp/x", NULL, 0);
	from_b((char *)"/usr/lib/Foo/bar.rb", (char *)"Baz", 61728394506L);
	return 0;
}
C
"$DTRACE" -h -s s.d -o s_probes.h && gcc -O2 -I"$SDT_INC" -I. -c s.c -o s.o && "$DTRACE" -G -s s.d -o p.o s.o &&
	gcc -o s s.o p.o || fail "building s"
ebpf 0 -q -c ./s -n 'strt$target:::req /copyinstr(arg1) != NULL && strstr(copyinstr(arg1), "Foo") != NULL/ { printf("foo %s %s\n", copyinstr(arg1), strstr(copyinstr(arg0), "Foo")); } strt$target:::req /copyinstr(arg1) == NULL/ { printf("null %s\n", copyinstr(arg0)); } strt$target:::req { printf("%d %d %s %s %s %s\n", index(copyinstr(arg0), "/"), rindex(copyinstr(arg0), "/"), substr(copyinstr(arg0), rindex(copyinstr(arg0), "/") + 1), toupper(copyinstr(arg0)), tolower("MiXeD"), lltostr(arg2)); }'
want="foo FooBar Foo/bar.rb\n0 12 bar.rb /USR/LIB/FOO/BAR.RB mixed -7\n"
want+="null /tmp/x\n0 4 x /TMP/X mixed 0\n0 12 bar.rb /USR/LIB/FOO/BAR.RB mixed 123456789012\n\n"
same "$T/out" "$want" "strstr, index, rindex, substr, toupper, tolower, lltostr, NULL"
# Assignments as values: chained, in a predicate (a string and an
# integer), ++ and -- before and after.
ebpf 0 -q -c ./s -n 'strt$target:::req /(this->p = copyinstr(arg0)) != NULL && (this->n = strlen(this->p)) > 6/ { printf("%s %d %d\n", this->p, this->n, ++cnt); }'
same "$T/out" "/usr/lib/Foo/bar.rb 19 1\n/usr/lib/Foo/bar.rb 19 2\n\n" "assignments in a predicate"
ebpf 0 -q -n 'BEGIN { a = b = 5; self->x = this->y = "str"; n = 0; m = n++; k = ++n; j = n--; printf("%d %d %s %s %d %d %d %d\n", a, b, self->x, this->y, m, k, j, n); exit(0); }'
same "$T/out" "5 5 str str 0 2 2 1\n\n" "chained assignments, ++ and -- as values"
ebpf 0 -q -n 'BEGIN { a = x[1] = 4; b = x[1]++; c = ++x[2]; s["k"] = t = "v"; printf("%d %d %d %d %d %s %s\n", a, b, c, x[1], x[2], s["k"], t); exit(0); }'
same "$T/out" "4 4 1 5 1 v v\n\n" "assignments to arrays, ++ on arrays, as values"
# copyin's bytes as a string (stringof), a string's stringof.
ebpf 0 -q -c ./s -n 'strt$target:::req { printf("%s|%s|%s|\n", stringof(copyin(arg0, 4)), stringof(copyin(arg0, 0)), stringof(copyinstr(arg0))); }'
same "$T/out" "/usr||/usr/lib/Foo/bar.rb|\n/tmp||/tmp/x|\n/usr||/usr/lib/Foo/bar.rb|\n\n" "stringof(copyin())"
# strtok: the first token of a string, the next ones from NULL, NULL at
# the end; a set of delimiters.
ebpf 0 -q -c ./s -n 'strt$target:::req { printf("%s|%s|%d|", strtok(copyinstr(arg0), "/"), strtok(NULL, "/"), strtok(NULL, "/") == NULL); printf("%s|%s|%s|\n", strtok("x.y;z", ";,"), strtok("//x,y;z", "/;,"), strtok(NULL, ".;,")); }'
same "$T/out" "usr|lib|0|x.y|x|y|\ntmp|x|1|x.y|x|y|\nusr|lib|0|x.y|x|y|\n\n" "strtok"
# The string functions where values stand: an aggregation's key (index()
# is an int: DTrace's 8-wide key), a thread's variable, an array's key and
# value.
ebpf 0 -q -c ./s -n 'strt$target:::req { @[toupper(substr(copyinstr(arg0), 1, 3)), index(copyinstr(arg0), "b")] = count(); self->t = strtok(copyinstr(arg0), "/"); x[rindex(copyinstr(arg0), "/")] = lltostr(arg2); printf("%s %s\n", self->t, x[12]); }'
want="usr -7\ntmp -7\nusr 123456789012\n\n"
want+=$(printf '  %-50s %8d %16d' TMP -1 1)'\n'$(printf '  %-50s %8d %16d' USR 7 2)'\n'
same "$T/out" "$want" "string functions in a key, a variable, an array"
# stddev: DTrace's integer arithmetic (the mean and the mean of the squares
# divided first): lengths 19, 6, 19 make 14 and 252, sqrt(56) is 7; per
# function 19 and 6 make 12 and 198, sqrt(54) is 7; 19 alone is 0.
ebpf 0 -q -c ./s -n 'strt$target:::req { @[probefunc] = stddev(strlen(copyinstr(arg0))); @all = stddev(strlen(copyinstr(arg0))); }'
want="\n"$(printf '  %-50s %16d' from_b 0)'\n'$(printf '  %-50s %16d' from_a 7)'\n'$(printf ' %16d' 7)'\n'
same "$T/out" "$want" "stddev"
ebpf 0 -q -n 'BEGIN { @s = stddev(2); @s = stddev(4); @s = stddev(4); @s = stddev(4); @s = stddev(5); @s = stddev(5); @s = stddev(7); @s = stddev(9); exit(0); }'
same "$T/out" "\n$(printf ' %16d' 2)\n" "stddev of 2 4 4 4 5 5 7 9"
# llquantize(x, 10, 0, 2, 10), DTrace for Linux's layout: negative values
# mirror the positive buckets, 0 its own bucket (lmag 0), then 1..9,
# 10..90, 100..900 by their steps, then 1000 and up; every bucket from
# one before the first used to the last, 40 @ for the whole.
ebpf 0 -q -n 'BEGIN { @ = llquantize(0, 10, 0, 2, 10); @ = llquantize(5, 10, 0, 2, 10); @ = llquantize(5, 10, 0, 2, 10); @ = llquantize(15, 10, 0, 2, 10); @ = llquantize(2000, 10, 0, 2, 10); exit(0); }'
row() { printf '%16s |%-40s %-9d\n' "$1" "$(printf '@%.0s' $(seq "$((8 * $2))") | head -c $((8 * $2)))" "$2"; }
{
	printf '\n\n%16s %41s %-9s\n' value '------------- Distribution -------------' count
	row -1 0
	row 0 1
	for v in 1 2 3 4; do row $v 0; done
	row 5 2
	for v in 6 7 8 9; do row $v 0; done
	row 10 1
	for v in 20 30 40 50 60 70 80 90 100 200 300 400 500 600 700 800 900; do row $v 0; done
	row '>= 1000' 1
	printf '\n'
} >"$T/llq"
cmp -s "$T/out" "$T/llq" || { diff "$T/llq" "$T/out" >&2; fail "llquantize"; }
# copyinstr(addr, maxlength): at most maxlength bytes.
ebpf 0 -q -c ./s -n 'strt$target:::req { printf("%s|%s|%s|\n", copyinstr(arg0, 4), copyinstr(arg0, 0), copyinstr(arg0, 100)); }'
same "$T/out" "/usr||/usr/lib/Foo/bar.rb|\n/tmp||/tmp/x|\n/usr||/usr/lib/Foo/bar.rb|\n\n" "copyinstr with a length"
# The string functions at -x strsize=16: the string cut at 16 bytes first.
ebpf 0 -q -x strsize=16 -c ./s -n 'strt$target:::req /strstr(copyinstr(arg0), "Foo") != NULL/ { printf("%s %d %s %s %s\n", substr(copyinstr(arg0), 1, 3), rindex(copyinstr(arg0), "/"), strtok(copyinstr(arg0), "/"), toupper(copyinstr(arg0)), stringof(copyin(arg0, 3))); }'
same "$T/out" "usr 12 usr /USR/LIB/FOO/BAR /us\nusr 12 usr /USR/LIB/FOO/BAR /us\n\n" "string functions at strsize 16"
# probeprov of a USDT probe: the provider and the firing process's pid.
ebpf 0 -q -c ./s -n 'strt$target:::req { @[probeprov, probename] = count(); } END { printf("%d\n", $target); }'
pid=$(head -1 "$T/out")
same "$T/out" "$pid\n\n$(printf '  %-50s  %-50s %16d' "strt$pid" req 3)\n" "probeprov"
# probefunc per site: each site's function (the symbol table), in a
# record, a key and a comparison.
ebpf 0 -q -c ./s -n 'strt$target:::req { @[probefunc] = count(); printf("%s %d\n", probefunc, arg2); } strt$target:::req /probefunc == "from_b"/ { printf("b\n"); }'
want="from_a -7\nfrom_a 0\nfrom_b 123456789012\nb\n\n"
want+=$(printf '  %-50s %16d' from_b 1)'\n'$(printf '  %-50s %16d' from_a 2)'\n'
same "$T/out" "$want" "probefunc per site"
# DTrace's edge cases: substr's negative index and length, past the end;
# index from a start, rindex up to one, an empty string; not found.
ebpf 0 -q -n 'BEGIN { printf("%s|%s|%s|%s|%s|%s|\n", substr("hello world", 6), substr("hello world", 0, 5), substr("hello", -3), substr("hello", 1, -1), substr("hello", 10), substr("hello", -9, 6)); printf("%d %d %d %d %d %d %d %s|%s|%s|\n", index("hello", "l"), rindex("hello", "l"), index("hello", "z"), index("hello", "l", 3), rindex("hello", "l", 2), index("abc", ""), rindex("abc", ""), strstr("hello world", "o w"), strstr("abc", "x"), lltostr(-9223372036854775807 - 1)); exit(0); }'
same "$T/out" "world|hello|llo|ell||he|\n2 3 -1 3 2 0 3 o world||-9223372036854775808|\n\n" "string functions' edge cases"
cd "$T/m" || fail "no scratch directory"

# The generated C needs no header: -x bpfc prints it, and it includes nothing.
"$DTRACE" -x bpfc -c './mO2 1' -n 'engt$target:::two { @[copyinstr(arg0)] = count(); }' >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "-x bpfc"; }
grep -q 'SEC("uprobe")' "$T/out" || fail "-x bpfc: no uprobe program"
grep -q '#include' "$T/out" && fail "-x bpfc: the generated C includes a header"
echo "ok: -x engine=bpf"
