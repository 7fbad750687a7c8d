#!/bin/bash
# usdtkit-helperd under valgrind memcheck (issue 7, item 1): the daemon runs
# through registration (a new file parsed by its worker), fork, exit,
# dlopen/dlclose cycles, LIST, malformed packets, a parse killed at its
# deadline, a client giving up while its parse runs, and SIGTERM; memcheck
# must report zero errors and no definite leak, in the daemon and in every
# worker it forked (--error-exitcode: a worker's report fails its parse too).
#
# Under valgrind the worker runs without its seccomp filter
# (--test-no-seccomp, test-only: valgrind cannot run a process under one);
# valgrind 3.19 has no pidfd_open (ENOSYS): the daemon relies on the
# connection's SO_PEERPIDFD, which works, and the test checks exits are seen;
# valgrind's notice about that syscall (an adoption of a process mapping a
# retired module calls it) is taken out of the logs before they are read.
#
# In the sanitizer run the daemon is an AddressSanitizer binary, which
# valgrind cannot run: the same scenario then runs under ASan/UBSan/LSan,
# whose reports stop_daemon turns into a failure (not a skip).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
export USDTKIT_HELPER_TIMEOUT_MS=5000 # a parse under valgrind takes a while

asan=""
if [ -n "${USDTKIT_SANITIZE:-}" ] || ldd "$HELPERD" 2>/dev/null | grep -q 'libasan' ||
	nm "$HELPERD" 2>/dev/null | grep -q ' __asan_init'; then
	asan=1
	echo "sanitizer build (${USDTKIT_SANITIZE:-libasan}): valgrind cannot run it;" \
		"AddressSanitizer, UBSan and LeakSanitizer check this run instead"
	HD_WRAP=""
	extra=""
else
	command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/deps.sh installs it)"
	mkdir "$T/vg"
	HD_WRAP="valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99
		--track-fds=no --log-file=$T/vg/%p"
	extra=--test-no-seccomp
	echo "$(valgrind --version): memcheck on the daemon and its workers"
fi
mkdir "$T/hang" "$T/gone"
cp "$LIB" "$T/hang/liblib.so"
cp "$LIB" "$T/gone/liblib.so"
# shellcheck disable=SC2086
DAEMON_START_S=60 start_daemon $extra --parse-timeout 3000 \
	--test-worker-delay "30000:$T/[hg]*/*"

# Register, fire, fork a child, dlopen/dlclose three times.
prog_start a
wait_events 2 "the program under memcheck"
prog_cmd a "fire 2"
prog_wait a '^fired 2'
prog_cmd a fork
prog_wait a '^child '
child=$(awk '/^child / {print $2}' "$T/a.out")
for i in 1 2 3; do
	prog_cmd a "dlopen $LIB"
	prog_wait a '^dlopen ok' "$i"
	wait_events 3 "dlopen $i"
	prog_cmd a dlclose
	prog_wait a '^dlclose ok' "$i"
	wait_events 2 "dlclose $i"
done
"$HDCLIENT" list >"$T/list"
expect_grep "^entry $PID_a 2 " "$T/list" "LIST: the program"
expect_grep "^entry $child 2 " "$T/list" "LIST: its fork child"
# The child's exit is seen (through the SO_PEERPIDFD pidfd: no pidfd_open here).
kill "$child"
for i in $(seq 250); do "$HDCLIENT" list >"$T/list"; grep -q "^entry $child " "$T/list" || break; sleep 0.04; done
expect_no_grep "^entry $child " "$T/list" "the exited child"

# Malformed packets.
for kind in short long magic version type size reply tiny empty; do
	"$HDCLIENT" garbage "$kind" >"$T/out"
	grep -qxE "status=-71|closed" "$T/out" || { cat "$T/out" >&2; fail "garbage $kind"; }
done

# A parse killed at its deadline; a client that gives up while its parse runs.
HDCLIENT_WAIT_MS=20000 "$HDCLIENT" dlreg "$T/hang/liblib.so" >"$T/hang.out"
expect_grep "^status=-110 nprobes=0\$" "$T/hang.out" "the parse past its deadline"
"$HDCLIENT" dlreg "$T/gone/liblib.so" >/dev/null &
gone=$!
for i in $(seq 500); do grep -q "gone/liblib.so: parse started" "$DLOG.new" && break; sleep 0.02; done
kill -9 "$gone"
wait "$gone" 2>/dev/null || true
for i in $(seq 250); do grep -q "gone/liblib.so: nobody waits" "$DLOG.new" && break; sleep 0.04; done
expect_grep "gone/liblib.so: nobody waits for its parse any more" "$DLOG.new" "the abandoned parse"
daemon_healthy

# Exit, then SIGTERM: the exit status is memcheck's verdict.
prog_stop a
wait_events 0 "after the program's exit"
prog_start b
wait_events 2 "a second program"
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
pid=$DAEMON_PID
DAEMON_PID=""
stop_daemon # (the log, and a sanitizer's reports in it)
expect_eq "$rc" 0 "the daemon's exit status under ${asan:+the sanitizers}${asan:-memcheck}"
wait_events 0 "after SIGTERM"
prog_stop b
if [ -z "$asan" ]; then
	nlogs=$(find "$T/vg" -type f | wc -l)
	[ -f "$T/vg/$pid" ] || fail "no memcheck log of the daemon"
	# valgrind's own notice that it does not know pidfd_open (434), which
	# the daemon calls to adopt a process that maps a lingering module
	# (retire.c), is no report of ours; every other line is.
	for f in "$T/vg"/*; do
		sed -i '/WARNING: unhandled amd64-linux syscall: 434$/,/valgrind\.org\/support\/bug_reports\.html/d' "$f"
	done
	if grep -l . "$T/vg"/* >/dev/null 2>&1; then
		grep -H . "$T/vg"/* | head -80 >&2
		fail "memcheck reported errors (above)"
	fi
	[ "$nlogs" -ge 3 ] || fail "only $nlogs memcheck logs: the workers did not run under it"
	workers=$(grep -c 'parse started' "$DLOG")
	echo "memcheck: 0 errors, no definite leak, in the daemon and $((nlogs - 1)) worker processes" \
		"($workers parses started)"
fi
HD_OK=1
exit 0
