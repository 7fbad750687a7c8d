#!/bin/bash
# dtrace -l probe descriptions (-n, -P, -m, -f): globs on
# provider:module:function:name, aligned on the option's field, several
# descriptions listing their union, DTrace's "failed to match" message and
# exit 1 when nothing matches; several -p; and the errors: a nonexistent
# pid, malformed descriptions and pids, no daemon without -p.
#
# The expected lines of a filtered listing are those of the unfiltered one
# (checked against readelf/nm/addr2line by t-list-pid) whose fields match
# the description by bash's own glob matching, in the same order.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

build_app "$T/app" gcc -O2 -g
start_prog "$T/app/app"
P1=$PID
start_prog "$T/app/app"
P2=$PID

run() { # expected-rc args...
	local want=$1 rc=0
	shift
	"$DTRACE" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$T/err" >&2; fail "dtrace $* exited $rc, expected $want"; }
}

run 0 -l -p "$P1" -p "$P2"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "unfiltered listing wrote to stderr"; }
check_ids "$T/out"
tail -n +2 "$T/out" | cut -c7- >"$T/all"
grep -q "ltapp$P1 " "$T/all" && grep -q "ltapp$P2 " "$T/all" || fail "two -p: both processes listed"

# Lines of $T/all matching four glob fields (empty: anything).
select_lines() { # provider module function name
	local p m f n
	while read -r p m f n; do
		[[ -z "$1" || $p == $1 ]] && [[ -z "$2" || $m == $2 ]] &&
			[[ -z "$3" || $f == $3 ]] && [[ -z "$4" || $n == $4 ]] &&
			printf '%10s %17s %33s %s\n' "$p" "$m" "$f" "$n"
	done <"$T/all"
	return 0
}

# expect_filter "P M F N" [P M F N ...] -- dtrace-args...: the listing is the union, in order.
expect_filter() {
	local sel=() a
	while [ "$1" != -- ]; do
		sel+=("$1")
		shift
	done
	shift
	run 0 -l -p "$P1" -p "$P2" "$@"
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "dtrace $*: unexpected stderr"; }
	check_ids "$T/out"
	: >"$T/want"
	while IFS= read -r line; do
		for a in "${sel[@]}"; do
			# shellcheck disable=SC2086
			IFS='|' read -r p m f n <<<"$a"
			if echo "$line" | { read -r lp lm lf ln; [[ (-z "$p" || $lp == $p) && (-z "$m" || $lm == $m) && (-z "$f" || $lf == $f) && (-z "$n" || $ln == $n) ]]; }; then
				echo "$line" >>"$T/want"
				break
			fi
		done
	done < <(select_lines "" "" "" "")
	[ -s "$T/want" ] || fail "dtrace $*: the test expects nothing; fix the test"
	tail -n +2 "$T/out" | cut -c7- | diff -u "$T/want" - >&2 || fail "dtrace $*: wrong selection"
}

expect_filter '|||request-start' -- -n request-start
expect_filter 'ltapp*|||request-*' -- -n 'ltapp*:::request-*'
expect_filter "ltapp$P1|||" -- -P "ltapp$P1"
expect_filter '|libltlib.so||' -- -m libltlib.so
expect_filter 'ltlib*|lib*.so||' -- -m 'ltlib*:lib*.so'
expect_filter '||other_entry|' -- -f other_entry
expect_filter 'ltapp*|app|other_*|' -- -f 'ltapp*:app:other_*'
expect_filter "|app|handle_request|" -- -n '*:app:handle_request:'
expect_filter '|||request-start' -- -n 'req?est-st[a]rt'
expect_filter '|||inlined-site' -- -f inlined_helper
expect_filter '|||request-done' '||lib_work|' -- -n request-done -f lib_work

# Nothing matched: DTrace's message, only the header on stdout, exit 1.
run 1 -l -p "$P1" -n nosuch
expect_eq "$(cat "$T/out")" "$HEADER_LINE" "stdout when nothing matched"
expect_eq "$(cat "$T/err")" "dtrace: failed to match :::nosuch: No probe matches description" \
	"the no-match message"
run 1 -l -p "$P1" -f 'x:y'
expect_grep '^dtrace: failed to match :x:y:: No probe matches description$' "$T/err" "-f alignment"
# The provider name carries the pid: the bare name matches nothing, as in DTrace.
run 1 -l -p "$P1" -P ltapp
expect_grep '^dtrace: failed to match ltapp:::: No probe matches description$' "$T/err" "-P ltapp"
# One description matched, one did not: listed, reported, exit 0.
run 0 -l -p "$P1" -n request-done -n nosuch
expect_grep "ltapp$P1 +app +handle_request request-done$" "$T/out" "the matching description"
expect_grep '^dtrace: failed to match :::nosuch: No probe matches description$' "$T/err" \
	"the unmatched description"

# -o appends the listing to a file, as DTrace does.
echo "kept" >"$T/listing"
run 0 -l -p "$P1" -n request-done -o "$T/listing"
[ -s "$T/out" ] && fail "-o: the listing also went to stdout"
expect_eq "$(head -n 1 "$T/listing")" "kept" "-o appends"
expect_eq "$(sed -n 2p "$T/listing")" "$HEADER_LINE" "-o: the header follows"
expect_grep "ltapp$P1 +app +handle_request request-done$" "$T/listing" "-o: the probe"
run 1 -l -p "$P1" -o "$T/no/such/dir/x"
expect_grep "failed to open output file" "$T/err" "-o into a missing directory"

# Malformed descriptions and pids: usage errors.
run 2 -l -p "$P1" -P a:b
run 2 -l -p "$P1" -n a:b:c:d:e
run 2 -l -p abc
run 2 -l -p -5
run 2 -l -s "$PROGS/app.d"
run 2 -l -p "$P1" "$T/app/app"

# A process that does not exist.
gone=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e "/proc/$gone" ]; do gone=$((gone - 1)); done
run 1 -l -p $gone
expect_eq "$(cat "$T/err")" "dtrace: failed to grab pid $gone: No such process" "nonexistent pid"
[ "$(wc -l <"$T/out")" = 0 ] || fail "a failed grab printed a listing"

# No daemon and no -p: a clear error that suggests -p.
USDTKIT_HELPER_SOCKET="$T/nobody-listens.sock" run 1 -l
expect_grep 'helper daemon is not running' "$T/err" "no daemon"
expect_grep '[-]p PID' "$T/err" "no daemon: -p suggested"
echo "PASS"
