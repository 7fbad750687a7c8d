#!/bin/bash
# Memory returned at destroy: rtprog's API, cycle and many modes under
# valgrind memcheck, with no error and nothing lost (definitely, indirectly
# or possibly), all the library's objects, copies and descriptors included.
# On the sanitizer build valgrind cannot run; there LeakSanitizer does the
# same check at each mode's exit (ASAN_OPTIONS detect_leaks=1, a report
# fails the test).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
RTPROG="$USDTKIT_BUILDDIR/tests/runtime/rtprog"
export RTPROG_NAME="rtmem$$"

run() { # NAME ARGS...
	local name=$1
	shift
	if [ -n "${USDTKIT_SANITIZE:-}" ]; then
		"$RTPROG" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null ||
			{ cat "$T/$name.err" >&2; fail "rtprog $* (sanitized)"; }
		return 0
	fi
	command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/deps.sh installs it)"
	valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=9 --track-fds=yes \
		--log-file="$T/$name.vg" "$RTPROG" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null ||
		{ cat "$T/$name.vg" "$T/$name.err" >&2; fail "rtprog $* under valgrind"; }
	expect_grep 'ERROR SUMMARY: 0 errors' "$T/$name.vg" "$name: memcheck errors"
	# Every descriptor the library opened is closed: all open at exit were inherited.
	awk '/Open file descriptor/ { d = $0; getline; if ($0 !~ /inherited from parent/) { print d; bad = 1 } }
		END { exit bad }' "$T/$name.vg" || fail "$name: descriptors left open (above)"
	expect_grep 'FILE DESCRIPTORS: [0-9]+ open' "$T/$name.vg" "$name: valgrind's descriptor report"
}

run errors errors
expect_grep '^errors ok$' "$T/errors.out" "errors ran"
run cycle cycle 5
expect_grep '^cycles 5$' "$T/cycle.out" "cycles ran"
run many many
expect_grep '^providers 65 probes 2280$' "$T/many.out" "many ran"
exit 0
