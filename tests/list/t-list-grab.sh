#!/bin/bash
# dtrace -l -p PID on a process that has only just started, as a shell's
# `./prog & dtrace -l -p $!` does: dtrace waits until it has exec'd and its
# dynamic loader has mapped every library, for at most until the process is
# 2 s old (list_grab.c). Deterministic cases: a subshell that sleeps before
# it execs the program; a loader held up (an LD_AUDIT library waiting, when
# the program is loaded and before its libraries are, for a file the test
# creates 0.3 s after dtrace started); then 200
# back-to-back `prog & dtrace -l -p $!`. The bound: a forked shell that
# never execs is listed when it is 2 s old, and an older one at once.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

export USDTKIT_HELPER_SOCKET="$NO_DAEMON_SOCK"
d="$T/app"
build_app "$d" gcc -O2 -g
APP="$d/app"

# listed_all LABEL PID: dtrace -l -p PID lists the program's and the library's probes.
listed_all() {
	local rc=0
	"$DTRACE" -l -p "$2" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "$1: dtrace -l -p exited $rc"; }
	expect_grep "^ +[0-9]+ +ltapp$2 +app +handle_request request-start$" "$T/out" "$1: the program's probes"
	expect_grep "^ +[0-9]+ +ltlib$2 +libltlib.so +lib_work work-item$" "$T/out" "$1: the library's probes"
}

# Not exec'd yet: a subshell sleeping 0.5 s before it execs the program.
(
	sleep 0.5
	exec "$APP" "$T/ready1"
) &
pid=$!
at_exit "kill $pid 2>/dev/null"
listed_all "before its exec" "$pid"
check_ids "$T/out"
kill "$pid"

# Exec'd, the loader held up: an audit library holds the loader when it
# opens the program, before it maps libltlib.so, until $T/go exists. dtrace
# starts once /proc/PID/exe is the program; $T/go comes 0.3 s later.
cat >"$T/slow-audit.c" <<'AUDIT'
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
unsigned la_version(unsigned v) { return v; }
unsigned la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	struct timespec tick = { 0, 10000000 };
	const char *go = getenv("LT_AUDIT_GO");
	int i;

	(void)cookie;
	if (lmid == LM_ID_BASE && !map->l_name[0] && go)
		for (i = 0; i < 500 && access(go, F_OK); i++)
			nanosleep(&tick, 0);
	return 0;
}
AUDIT
gcc -shared -fPIC -o "$T/slow-audit.so" "$T/slow-audit.c" || fail "building the audit library"
LT_AUDIT_GO="$T/go" LD_AUDIT="$T/slow-audit.so" "$APP" "$T/ready2" &
pid=$!
at_exit "kill $pid 2>/dev/null"
for i in $(seq 200); do
	[ "$(readlink "/proc/$pid/exe")" = "$APP" ] && break
	sleep 0.005
done
[ "$(readlink "/proc/$pid/exe")" = "$APP" ] || fail "the program was not exec'd after 1 s"
grep -q libltlib "/proc/$pid/maps" && fail "libltlib.so was mapped already: the loader was not held up"
(
	sleep 0.3
	touch "$T/go"
) &
go=$!
listed_all "in its loader" "$pid"
wait "$go"
kill "$pid"

# Back to back, as users do it.
for i in $(seq 200); do
	"$APP" "$T/ready-b2b" &
	pid=$!
	listed_all "back-to-back run $i" "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
done

# The bound. A subshell that never execs (it waits for its sleep, then runs
# a builtin) shares its parent's auxiliary vector: listed when 2 s old.
# uptime: seconds since boot, as /proc/PID/stat's start time counts them.
uptime() { awk '{ print $1 }' /proc/uptime; }
(
	sleep 5
	true
) &
pid=$!
at_exit "kill $pid 2>/dev/null"
hz=$(getconf CLK_TCK)
born=$(awk -v hz="$hz" '{ sub(/.*\) /, ""); split($0, f, " "); printf "%.2f", f[20] / hz }' "/proc/$pid/stat")
rc=0
"$DTRACE" -l -p "$pid" >"$T/out" 2>"$T/err" || rc=$?
end=$(uptime)
expect_eq "$rc" 0 "a fork that never execs: exit status"
expect_eq "$(cat "$T/out")" "$HEADER_LINE" "a fork that never execs: the listing"
awk -v b="$born" -v e="$end" 'BEGIN { exit !(e >= b + 1.98 && e <= b + 4.5) }' ||
	fail "a fork that never execs, started at $born s: dtrace ended at $end s, not at 2 s of age"
start=$(uptime)
"$DTRACE" -l -p "$pid" >"$T/out" 2>"$T/err" || fail "an old fork: dtrace -l -p failed"
end=$(uptime)
awk -v s="$start" -v e="$end" 'BEGIN { exit !(e - s < 1.5) }' ||
	fail "a fork older than 2 s was waited for ($start s to $end s)"
kill "$pid"
echo "PASS"
