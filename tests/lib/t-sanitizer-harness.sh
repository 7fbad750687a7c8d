#!/bin/bash
# The sanitizer run's net (tests/lib/common.sh): a report fails the test
# whichever process makes it. Nested tests, sourcing common.sh as every
# shell test does with USDTKIT_SANITIZE set, run small clang ASan+UBSan
# programs whose stderr they discard: a leak, undefined behaviour, a leak of
# a background child that outlives the nested test's last command (as a
# daemon sent SIGTERM and not waited for), and a daemon log line saying the
# sandboxed parser died of SIGSYS. Each must turn a passing nested test into
# a failure that shows the report; the same nested test without the bug
# passes. Runs in both test runs: the programs are instrumented here.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

command -v clang >/dev/null || fail "clang is not installed (scripts/deps.sh installs it)"
B="$T/bin"
mkdir -p "$B"
cat >"$T/bug.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *volatile g;

int main(int argc, char **argv)
{
	char *p = malloc(32);

	if (!p)
		return 2;
	strcpy(p, "kept");
	if (!strcmp(argv[1], "leak")) {
		p = NULL;
	} else if (!strcmp(argv[1], "ub")) {
		int s = atoi(argv[2]);

		p[0] = (char)(1 << s);
	} else if (!strcmp(argv[1], "bgleak")) {
		/* the parent returns at once; the child leaks after 1 s */
		if (fork() == 0) {
			sleep(1);
			g = malloc(64);
			g = NULL;
			exit(0);
		}
	}
	free(p);
	return 0;
}
EOF
clang -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -o "$B/bug" "$T/bug.c" ||
	fail "compiling the test program with clang -fsanitize=address,undefined"

# nested NAME COMMANDS: a test of its own (its own $T), run as meson runs
# ours in the sanitizer run; its exit status and stderr are kept.
nested() {
	local name=$1 rc=0
	shift
	cat >"$T/$name.sh" <<EOF
set -eu
. "\$USDTKIT_SRCDIR/tests/lib/common.sh"
$*
echo "nested $name: done"
EOF
	env USDTKIT_BUILDDIR="$B" USDTKIT_SANITIZE=address,undefined \
		ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=23:log_exe_name=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=23:log_exe_name=1 \
		bash "$T/$name.sh" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	echo "$rc" >"$T/$name.rc"
}
expect_pass() { # NAME
	[ "$(cat "$T/$1.rc")" = 0 ] || { cat "$T/$1.err" >&2; fail "$1: the nested test failed"; }
	expect_no_grep 'sanitizer report' "$T/$1.err" "$1"
}
expect_caught() { # NAME PATTERN
	[ "$(cat "$T/$1.rc")" = 1 ] || { cat "$T/$1.err" >&2; fail "$1: the nested test exited $(cat "$T/$1.rc"), not 1"; }
	grep -q "^nested $1: done" "$T/$1.out" || fail "$1: the nested test did not get to its end"
	expect_grep "$2" "$T/$1.err" "$1: the report is shown"
	expect_grep '^FAIL: a sanitizer reported an error' "$T/$1.err" "$1: the failure is said"
}

nested clean '"$USDTKIT_BUILDDIR/bug" none 2>/dev/null; "$USDTKIT_BUILDDIR/bug" ub 3 >/dev/null 2>&1'
expect_pass clean
nested leak '"$USDTKIT_BUILDDIR/bug" leak 2>/dev/null || true'
expect_caught leak 'ERROR: LeakSanitizer: detected memory leaks'
nested ub '"$USDTKIT_BUILDDIR/bug" ub 40 >/dev/null 2>&1 || true'
expect_caught ub 'runtime error: shift exponent 40'
nested bgleak '"$USDTKIT_BUILDDIR/bug" bgleak >/dev/null 2>&1'
expect_caught bgleak 'ERROR: LeakSanitizer: detected memory leaks'
nested sandbox 'echo "usdtkit-helperd: warning: /x/prog: the parser died of signal 31 (sandbox)" >"$T/daemon.log"'
expect_caught sandbox 'the parser died of signal 31 \(sandbox\)'
# (Its copies of the line must not fail this test too in the sanitizer run.)
rm -f "$T"/sandbox.*
echo "ok: a leak, UB, a late child's leak and a parser killed by its sandbox each fail a test; a clean one passes"
