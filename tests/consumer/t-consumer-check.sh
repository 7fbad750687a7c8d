#!/bin/bash
# dtrace -x engine=bpf -e: compiles and loads every program through the
# kernel's verifier, enabling no probe (a running program's semaphore stays
# down, where a real start raises it); a program the verifier rejects fails
# with the verifier's words and one error; a script -e accepts starts. -e
# and -Z without the helper daemon: -Z says once that processes started
# later need usdtkit-helperd, and runs; -e -Z compiles a clause that matched
# no probe (its error is found); -e without -Z fails as DTrace does on a
# description that matches nothing, not on the daemon.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_tracefs
REAL_CLANG=$(command -v clang || command -v clang-14) ||
	fail "clang is not installed (scripts/deps.sh installs it)"
export USDTKIT_CACHE_DIR=$T/cache
SOCK=$USDTKIT_HELPER_SOCKET
[ -e "$SOCK" ] && fail "$SOCK exists: these cases need no daemon there"
NOTE="dtrace: the usdtkit helper daemon is not running (nothing listens on $SOCK): processes started later are seen only with usdtkit-helperd"

# A program that reports when its request-summary semaphore rises.
build_quickstart "$T/qs"
cat >"$T/qs/semwatch.c" <<'C'
#include <stdio.h>
#include <time.h>
#include "quickstart_probes.h"
int main(void)
{
	struct timespec ms = {0, 1000000};
	long i;

	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 120000; i++) { /* 2 minutes at most */
		if (QUICKSTART_REQUEST_SUMMARY_ENABLED()) {
			/*
			 * The semaphore rises when the uprobe is registered,
			 * a moment before the tracer's program is attached to
			 * it: fire for a while, not once.
			 */
			printf("enabled\n");
			fflush(stdout);
			for (i = 0; i < 2000; i++) {
				QUICKSTART_REQUEST_SUMMARY("on");
				nanosleep(&ms, NULL);
			}
			return 0;
		}
		nanosleep(&ms, NULL);
	}
	return 1;
}
C
(cd "$T/qs" && cc -O2 -I"$SDT_INC" -I. -c semwatch.c -o semwatch.o &&
	"$DTRACE" -G -s src/quickstart.d -o sw_provider.o semwatch.o &&
	cc -o semwatch semwatch.o sw_provider.o) || fail "building semwatch"
"$T/qs/semwatch" >"$T/sw" &
SW=$!
at_exit "kill $SW 2>/dev/null || true"
wait_until 30 "semwatch's start" grep -q ready "$T/sw"

# -e: compiled and verified, nothing enabled.
dt 0 -x engine=bpf -e -p "$SW" -n 'quickstart$target:::request-summary { printf("%s\n", copyinstr(arg0)); }'
same "$T/err" "dtrace: description 'quickstart\$target:::request-summary ' matched 1 probe\n" "-e's notice"
[ -s "$T/out" ] && fail "-e printed output"
sleep 0.2
grep -q enabled "$T/sw" && fail "-e raised the semaphore: a probe was enabled"
# and the same program started enables it (the check above can fail)
dt 0 -x engine=bpf -q -p "$SW" -n 'quickstart$target:::request-summary /!done/ { done = 1; printf("%s\n", copyinstr(arg0)); exit(0); }'
same "$T/out" "on\n\n" "the program -e accepted, started"
grep -q enabled "$T/sw" || fail "a started program did not raise the semaphore"

# A program the verifier rejects: a clang that adds a program reading past
# its context. -e fails: the verifier's words, then one error.
cat >"$T/badclang" <<EOF
#!/bin/sh
for a; do case "\$a" in *.c) printf '%s\n' 'SEC("uprobe") int zz_bad(void *ctx) { return *(volatile int *)((char *)ctx + 100000); }' >>"\$a" ;; esac; done
exec "$REAL_CLANG" "\$@"
EOF
chmod +x "$T/badclang"
USDTKIT_CLANG=$T/badclang dt 1 -x engine=bpf -e -n 'BEGIN { exit(0); }'
grep -q "^libbpf: prog 'zz_bad': -- BEGIN PROG LOAD LOG --" "$T/err" ||
	{ cat "$T/err" >&2; fail "-e of a rejected program: not the verifier's log"; }
grep -q "^processed [0-9]* insns" "$T/err" ||
	{ cat "$T/err" >&2; fail "-e of a rejected program: not the verifier's verdict"; }
tail -n 1 "$T/err" | grep -qE "^dtrace: error: the kernel refused the generated program \(.*\): the verifier's last words are above$" ||
	{ cat "$T/err" >&2; fail "-e of a rejected program: not one error at the end"; }
[ "$(grep -c "error:" "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "-e of a rejected program: more than one error"; }
[ -s "$T/out" ] && fail "-e of a rejected program printed output"

# -Z without the daemon: the note, once (two USDT clauses), and the run.
dt 0 -x engine=bpf -Z -q -n 'nosuch*:::a { } nosuch*:::b { } BEGIN { printf("began\n"); exit(0); }'
same "$T/out" "began\n\n" "-Z without the daemon: the run"
same "$T/err" "$NOTE\n" "-Z without the daemon: the note, once"
# -e -Z without the daemon: accepted, the note; a clause matching nothing is compiled
dt 0 -x engine=bpf -Z -e -n 'nosuch*:::a { @[copyinstr(arg0), copyinstr(arg1)] = count(); }'
same "$T/err" "$NOTE\ndtrace: description 'nosuch*:::a ' matched 0 probes\n" "-e -Z without the daemon"
dt 1 -x engine=bpf -Z -e -n 'nosuch*:::a { printa(@b); }'
grep -qF "<command line>:1:22: error: @b: no clause before this one assigns it" "$T/err" ||
	{ cat "$T/err" >&2; fail "-e -Z: an unmatched clause's error not found"; }
# (args[] has no stand-in: its types are the probe's; the clause is accepted)
dt 0 -x engine=bpf -Z -e -n 'nosuch*:::a { @[copyinstr(arg0), args[1]] = count(); }'
# -e without -Z: DTrace's no-match error, not the daemon's
dt 1 -x engine=bpf -e -n 'nosuch*:::a { }'
same "$T/err" "dtrace: invalid probe specifier nosuch*:::a { }: probe description nosuch*:::a does not match any probes\n" \
	"-e without -Z or the daemon: DTrace's no-match error"
echo "PASS"
