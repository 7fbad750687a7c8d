#!/bin/bash
# The soak (issue 7): many short-lived probed processes, then many
# dlopen/dlclose cycles of a probed library, against one usdtkit-helperd
# (the build under test's: in a -Db_sanitize=address,undefined build, the
# ASan+UBSan one, whose reports go to log files here). Checks, and fails on:
#   - stale events: none of this run's tracefs groups (sdt_${P}*) in
#     uprobe_events whenever no soak process runs (after every batch, after
#     the cycles), nor after the daemon stopped;
#   - the registry: LIST answers no entry when no soak process runs;
#   - sanitizer reports: none in the ASan/UBSan/LSan logs (LSan runs when the
#     daemon exits on SIGTERM; its exit status must be 0) nor in its stderr;
#   - descriptors: the daemon's open fds whenever idle equal those it had
#     before the first process;
#   - memory: VmRSS at the end of each phase at most SOAK_RSS_GROWTH_KIB above
#     VmRSS after the phase's warm-up (the first tenth of the processes and
#     the consumer check below; the first sample of the cycles);
#   - that registrations happened: every process's drti reports its REGISTER
#     answered "done" (USDTKIT_DEBUG lines), the daemon's --debug log has a
#     successful REGISTER per process and per dlopen, and after the first
#     tenth of the processes a tracefs instance counts the probe firing in
#     every one of a batch of 200 (a real consumer of the daemon's events).
# The daemon runs with --no-board and --linger 0: every process asks and
# every file's events go as soon as nobody maps it, so each of the counts
# above is exact (the board and lingering are tested by
# tests/helperd/t-helperd-linger.sh and t-helperd-lifetime.sh).
#
# Parameters (environment; bench/soak/run.sh runs the full soak with them):
#   SOAK_PROCESSES (3000)  short-lived processes, programs a and b in turn
#   SOAK_JOBS (2)          processes running at once
#   SOAK_BATCH (500)       processes between two idle checks and samples
#   SOAK_CYCLES (200)      dlopen/dlclose cycles per cycling process
#   SOAK_CYCLERS (3)       cycling processes at once (library 1, 2, 1, 2...)
#   SOAK_CYCLE_SAMPLE (100) cycles between samples
#   SOAK_RSS_GROWTH_KIB (8192) the memory bound (see above)
#   SOAK_OUT (none)        a directory to keep samples.tsv, summary.txt, the
#                          daemon log's tail and any sanitizer log in
#   SOAK_ASAN_OPTIONS      appended to the daemon's ASAN_OPTIONS (after CI's and ours)
#   SOAK_KEEP_LOG          keep the whole daemon log (gzip) in SOAK_OUT, not its tail
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs

NPROC=${SOAK_PROCESSES:-3000}
JOBS=${SOAK_JOBS:-2}
BATCH=${SOAK_BATCH:-500}
NCYC=${SOAK_CYCLES:-200}
NCYCLERS=${SOAK_CYCLERS:-3}
CYC_SAMPLE=${SOAK_CYCLE_SAMPLE:-100}
GROWTH_KIB=${SOAK_RSS_GROWTH_KIB:-8192}
OUT=${SOAK_OUT:-$T/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

HELPERD="$USDTKIT_BUILDDIR/kernel-helper/helperd/usdtkit-helperd"
HDCLIENT="$USDTKIT_BUILDDIR/tests/helperd/hdclient"
PROGS="$USDTKIT_SRCDIR/tests/soak/progs"
for f in "$HELPERD" "$HDCLIENT" "$DTRACE"; do [ -x "$f" ] || fail "no $f: build first"; done
P="sk$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
SOCK="$T/helper.sock"
DLOG="$T/daemon.log"
SAN="$T/san"
INST="$TRACEFS/instances/usdtkit-$P"
mkdir -p "$SAN"
export USDTKIT_HELPER_SOCKET="$SOCK"
unset USDTKIT_DISABLE DTRACE_DOF_INIT_DISABLE USDTKIT_DEBUG DTRACE_DOF_INIT_DEBUG
# Each process waits for its registration (the maximum drti allows): the
# soak measures the daemon, and a process that gave up would not count.
export USDTKIT_HELPER_TIMEOUT_MS=5000

# --- building: two short programs, the cycler, two libraries, the spawner ---

B="$T/b"
mkdir -p "$B"
build_probed() { # DIR PROVIDER PROBE MACRO SRC OUTPUT [-shared]
	local d="$B/src-$1"
	mkdir -p "$d"
	printf 'provider %s { probe %s(int n); };\n' "$2" "$3" >"$d/p.d"
	(
		set -e
		cd "$d"
		"$DTRACE" -h -s p.d -o p.h
		printf '#include "p.h"\n#define %s %s\n' "$4" "$(echo "$2" | tr "[:lower:]" "[:upper:]")_$(echo "$3" | tr "[:lower:]" "[:upper:]")" >soak.h
		gcc -I"$SDT_INC" -I. -O2 -fPIC -c "$PROGS/$5" -o prog.o
		"$DTRACE" -G -s p.d -o prov.o prog.o
		# shellcheck disable=SC2086 # ${7:-}: -shared or nothing
		gcc ${7:-} prog.o prov.o -o "$B/$6"
	) || fail "building $6"
}
build_probed a "${P}a" tick SOAK_TICK short.c a
build_probed b "${P}b" tick SOAK_TICK short.c b
build_probed l1 "${P}la" call SOAK_CALL lib.c lib1.so -shared
build_probed l2 "${P}lb" call SOAK_CALL lib.c lib2.so -shared
gcc -O2 "$PROGS/cycle.c" -ldl -o "$B/cycle" || fail "building cycle"
gcc -O2 "$PROGS/spawn.c" -o "$B/spawn" || fail "building spawn"

# --- the daemon ---

if { ldd "$HELPERD" 2>/dev/null | grep -q libasan; } || nm "$HELPERD" 2>/dev/null | grep -q __asan_init; then
	SANITIZED=asan
else
	SANITIZED=none
fi
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
start_daemon() {
	# A 16 MiB quarantine (default 256) keeps what was freed by the last
	# ~100 registrations poisoned, and lets RSS level off within them.
	DAEMON_START_S=20 daemon_start "$DLOG" env \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:quarantine_size_mb=16:log_path=$SAN/asan:${SOAK_ASAN_OPTIONS:-}" \
		UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:log_path=$SAN/ubsan" \
		"$HELPERD" -f --debug --socket "$SOCK" --linger 0 --no-board
}
# SIGTERM, then its exit status in DAEMON_STATUS (LSan runs at exit: 23
# when it found leaks).
stop_daemon() { daemon_stop TERM 120; }
our_events() { uprobe_events_in_group "sdt_${P}"; }
cleanup() {
	local e
	[ -e "$INST" ] && {
		echo 0 >"$INST/tracing_on" 2>/dev/null
		for e in "$INST"/events/sdt_"$P"*/*/enable; do echo 0 >"$e" 2>/dev/null; done
		rmdir "$INST" 2>/dev/null
	}
	stop_daemon
	for e in $(our_events); do remove_uprobe_event "$e"; done
	# Keep what explains a failure.
	[ -d "$OUT" ] && [ "$OUT" != "$T/out" ] && {
		if [ -n "${SOAK_KEEP_LOG:-}" ]; then
			gzip -c "$DLOG" >"$OUT/daemon.log.gz" 2>/dev/null
		else
			tail -200 "$DLOG" >"$OUT/daemon.log.tail" 2>/dev/null
		fi
		cp "$SAN"/* "$OUT"/ 2>/dev/null
	}
	return 0
}
at_exit cleanup

# --- sampling ---

T0=$(date +%s.%N)
elapsed() { echo "$(date +%s.%N) $T0" | awk '{printf "%.1f", $1 - $2}'; }
registry() { # the number of (process, module) entries LIST answers
	local out
	out=$("$HDCLIENT" list) || fail "LIST failed: $out"
	echo "$out" | sed -n 's/^status=0 count=\([0-9]*\).*/\1/p' | grep . ||
		fail "LIST answered: $out"
}
status_kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$DAEMON_PID/status"; }
fds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
echo "phase	count	seconds	rss_kib	hwm_kib	fds	registry	events" >"$OUT/samples.tsv"
LAST_RSS=0 LAST_FDS=0
sample() { # PHASE COUNT
	kill -0 "$DAEMON_PID" 2>/dev/null || { tail -30 "$DLOG" >&2; fail "the daemon died"; }
	LAST_RSS=$(status_kib VmRSS)
	LAST_FDS=$(fds)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$(elapsed)" "$LAST_RSS" \
		"$(status_kib VmHWM)" "$LAST_FDS" "$(registry)" "$(our_events | wc -l)" >>"$OUT/samples.tsv"
}
# No soak process runs: within 10 s none of our events may remain and the
# daemon's fds must be back to at most those it had at start (each
# registered process holds a pidfd, so a leak grows with the processes;
# fewer than at start is fine: one may still have been open then for the
# daemon's background start-up work; the connection of an exiting
# process's UNREGISTER, which drti does not wait for, may stay open a
# moment); then LIST must be
# empty. LIST comes last: its own connection stays open until the daemon
# sees the client's close.
check_idle() { # WHAT
	local i n
	for i in $(seq 500); do
		[ -z "$(our_events)" ] && [ "$(fds)" -le "$BASE_FDS" ] && break
		sleep 0.02
	done
	[ -z "$(our_events)" ] || { our_events >&2; fail "$1: stale events with no soak process running"; }
	n=$(fds)
	[ "$n" -le "$BASE_FDS" ] ||
		{ ls -l "/proc/$DAEMON_PID/fd" >&2; fail "$1: the daemon has $n fds open, $BASE_FDS at start"; }
	[ "$(registry)" -eq 0 ] || { "$HDCLIENT" list >&2; fail "$1: the registry is not empty"; }
}

start_daemon
BASE_FDS=$(fds)
sample start 0
BASE_RSS=$LAST_RSS

# --- phase 1: short-lived processes ---

DRTI_DONE=0
DRTI_OTHER=0
run_batch() { # N PROG...
	local n=$1 ok
	shift
	USDTKIT_DEBUG=1 "$B/spawn" "$n" "$JOBS" "$@" >"$T/spawn.out" 2>"$T/drti.log" ||
		{ head -20 "$T/drti.log" >&2; cat "$T/spawn.out" >&2; fail "a soak process failed"; }
	ok=$(grep -c '^usdtkit drti: register module, .*: done, 1 probes$' "$T/drti.log" || true)
	DRTI_DONE=$((DRTI_DONE + ok))
	if [ "$ok" -ne "$n" ]; then
		DRTI_OTHER=$((DRTI_OTHER + n - ok))
		grep -v ': done, 1 probes$' "$T/drti.log" | head -5 >>"$OUT/drti-not-done.txt"
	fi
}

# A real consumer: a tracefs instance counts the probe of program a while
# one holding process keeps the module registered; every process of a batch
# must show up (each fires tick once).
consumer_check() {
	local n=200 hits i
	mkfifo "$T/hold.in"
	"$B/a" hold <"$T/hold.in" >"$T/hold.out" &
	local hold=$!
	exec {hold_fd}>"$T/hold.in"
	for i in $(seq 500); do grep -q ready "$T/hold.out" && break; sleep 0.02; done
	grep -q ready "$T/hold.out" || fail "the holding process did not start"
	[ -e "$TRACEFS/events/sdt_${P}a/tick" ] || fail "no event sdt_${P}a/tick while a process holds it"
	mkdir "$INST" || fail "cannot create the tracefs instance $INST"
	echo 1 >"$INST/events/sdt_${P}a/tick/enable" || fail "enabling sdt_${P}a/tick in an instance"
	local before=$DRTI_DONE
	run_batch "$n" "$B/a"
	CONSUMER_DONE=$((DRTI_DONE - before))
	DRTI_DONE=$before
	echo 0 >"$INST/events/sdt_${P}a/tick/enable"
	hits=$(grep -c ' tick: (' "$INST/trace" || true)
	[ "$hits" -eq "$n" ] || head "$INST/trace" >&2
	rmdir "$INST" || fail "cannot remove the tracefs instance"
	exec {hold_fd}>&-
	wait "$hold" || fail "the holding process failed"
	CONSUMER_HITS=$hits
	CONSUMER_N=$n
	[ "$hits" -eq "$n" ] || fail "a consumer saw $hits firings of $n processes"
}

done_n=0
WARM=$((NPROC / 10))
WARM_RSS=""
while [ "$done_n" -lt "$NPROC" ]; do
	n=$BATCH
	[ $((NPROC - done_n)) -lt "$n" ] && n=$((NPROC - done_n))
	run_batch "$n" "$B/a" "$B/b"
	done_n=$((done_n + n))
	check_idle "after $done_n processes"
	sample processes "$done_n"
	# The warm-up ends with the consumer check, so that it has seen every
	# kind of work once: the memory bound is about growth with the number
	# of processes, not a step when the mix of allocations changes (under
	# ASan the consumer check's step stays: its allocator keeps what it maps).
	if [ -z "${CONSUMER_N:-}" ] && [ "$done_n" -ge "$WARM" ]; then
		consumer_check
		check_idle "after the consumer check"
		sample consumer "$CONSUMER_N"
		WARM_RSS=$LAST_RSS
		WARM=$done_n
	fi
done
PROC_END_RSS=$LAST_RSS
PROC_SECONDS=$(awk -F'\t' '$1 == "processes" {s = $3} END {print s}' "$OUT/samples.tsv")

# --- phase 2: dlopen/dlclose cycles ---

cyc_pid=()
for i in $(seq "$NCYCLERS"); do
	lib=$B/lib$((2 - i % 2)).so
	USDTKIT_DEBUG=1 "$B/cycle" "$lib" "$NCYC" >"$T/cyc$i.out" 2>"$T/cyc$i.err" &
	cyc_pid[i]=$!
	at_exit "kill ${cyc_pid[i]} 2>/dev/null"
done
progress() { # the least number of cycles any cycler has finished
	local i k min=$NCYC
	for i in $(seq "$NCYCLERS"); do
		k=$(sed -n 's/^\(cycle\|done\) \([0-9]*\)$/\2/p' "$T/cyc$i.out" | tail -1)
		[ "${k:-0}" -lt "$min" ] && min=${k:-0}
	done
	echo "$min"
}
next=$CYC_SAMPLE
CYC_T0=$(date +%s)
deadline=$((CYC_T0 + 120 + NCYC))
CYC_WARM_RSS=""
while :; do
	k=$(progress)
	if [ "$k" -ge "$next" ] || [ "$k" -ge "$NCYC" ]; then
		sample cycles "$k"
		[ -z "$CYC_WARM_RSS" ] && CYC_WARM_RSS=$LAST_RSS
		next=$(((k / CYC_SAMPLE + 1) * CYC_SAMPLE))
	fi
	[ "$k" -ge "$NCYC" ] && break
	for i in $(seq "$NCYCLERS"); do
		running "${cyc_pid[i]}" || grep -q '^done' "$T/cyc$i.out" ||
			{ cat "$T/cyc$i.out" >&2; fail "cycling process $i ended early"; }
	done
	[ "$(date +%s)" -lt "$deadline" ] || fail "the cycles took more than $((120 + NCYC)) s"
	sleep 0.2
done
for i in $(seq "$NCYCLERS"); do
	wait "${cyc_pid[i]}" || { cat "$T/cyc$i.out" >&2; fail "cycling process $i failed"; }
done
CYC_SECONDS=$(($(date +%s) - CYC_T0))
check_idle "after the cycles"
sample idle "$NCYC"
CYC_END_RSS=$LAST_RSS
# Every dlopen registered and every dlclose unregistered, as drti saw it.
CYC_REG=$(cat "$T"/cyc*.err | grep -c '^usdtkit drti: register module, .*: done, 1 probes$' || true)
CYC_UNREG=$(cat "$T"/cyc*.err | grep -c '^usdtkit drti: unregister at dlclose, .*: done' || true)

# --- the daemon's view, then its exit ---

# A REGISTER is logged when it ends: "REGISTER pid N uid U[ addr 0xA]: PATH"
# on success, an errno's text otherwise; a new file's requests are also
# logged when they start waiting for its parse.
D_REG=$(grep -cE 'debug: REGISTER pid [0-9]+ uid [0-9]+( addr 0x[0-9a-f]+)?: /' "$DLOG" || true)
D_REG_FAIL=$(grep -E 'debug: REGISTER pid' "$DLOG" |
	grep -vcE '( addr 0x[0-9a-f]+)?: (/|waits for the parse$)' || true)
D_UNREG=$(grep -cE 'debug: UNREGISTER pid [0-9]+ .*: ok$' "$DLOG" || true)
D_WARN=$(grep -cE '^usdtkit-helperd: (warning|error|crit|alert|emerg):' "$DLOG" || true)
grep -E '^usdtkit-helperd: (warning|error|crit|alert|emerg):' "$DLOG" | head -20 >"$OUT/daemon-warnings.txt" || true
sample end "$NPROC"
stop_daemon
[ -z "$(our_events)" ] || { our_events >&2; fail "events left after the daemon stopped"; }
# A sanitizer writes its log file only to report something (a finding, or
# LSan unable to run at exit): every non-empty file is one report.
REPORTS=$(find "$SAN" -type f -size +0 | wc -l)
grep -qE 'runtime error|Sanitizer|ERROR: ' "$DLOG" && REPORTS=$((REPORTS + 1))

cat >"$OUT/summary.txt" <<EOF
sanitizer=$SANITIZED
processes=$NPROC jobs=$JOBS seconds=$PROC_SECONDS
processes_per_s=$(awk -v n="$NPROC" -v s="$PROC_SECONDS" 'BEGIN {printf "%.1f", n / s}')
drti_register_done=$DRTI_DONE of $NPROC, consumer check: $CONSUMER_DONE of $CONSUMER_N; not done: $DRTI_OTHER
consumer_hits=$CONSUMER_HITS of $CONSUMER_N
cyclers=$NCYCLERS cycles_each=$NCYC seconds=$CYC_SECONDS
drti_dlopen_register_done=$CYC_REG dlclose_unregister_done=$CYC_UNREG
daemon_register_ok=$D_REG daemon_register_failed=$D_REG_FAIL daemon_unregister_ok=$D_UNREG
daemon_warnings_errors=$D_WARN
rss_start_kib=$BASE_RSS rss_after_warmup_kib=$WARM_RSS rss_processes_end_kib=$PROC_END_RSS
rss_cycles_first_kib=$CYC_WARM_RSS rss_cycles_end_kib=$CYC_END_RSS bound_kib=$GROWTH_KIB
fds_idle=$BASE_FDS
daemon_exit_status=$DAEMON_STATUS sanitizer_reports=$REPORTS
EOF
cat "$OUT/summary.txt"
column -t "$OUT/samples.tsv" 2>/dev/null || cat "$OUT/samples.tsv"

# --- the verdict ---

if [ "$REPORTS" -ne 0 ]; then
	cat "$SAN"/* 2>/dev/null | head -80 >&2
	grep -E -A20 'runtime error|Sanitizer|ERROR: ' "$DLOG" | head -60 >&2
	fail "$REPORTS sanitizer reports"
fi
[ "$DAEMON_STATUS" -eq 0 ] || fail "the daemon exited with status $DAEMON_STATUS"
expect_eq "$DRTI_DONE" "$NPROC" "processes whose drti saw its REGISTER done"
expect_eq "$CONSUMER_DONE" "$CONSUMER_N" "consumer-check processes whose drti saw its REGISTER done"
expect_eq "$CYC_REG" $((NCYC * NCYCLERS)) "dlopens whose drti saw its REGISTER done"
expect_eq "$CYC_UNREG" $((NCYC * NCYCLERS)) "dlcloses whose drti saw its UNREGISTER done"
# The daemon logged a successful REGISTER for each (processes: one per
# process, the holding one included; cycles: one per dlopen).
expect_eq "$D_REG" $((NPROC + CONSUMER_N + 1 + NCYC * NCYCLERS)) "successful REGISTERs in the daemon's log"
[ $((PROC_END_RSS - WARM_RSS)) -le "$GROWTH_KIB" ] ||
	fail "memory grew by $((PROC_END_RSS - WARM_RSS)) KiB from $WARM processes to $NPROC (bound $GROWTH_KIB)"
[ $((CYC_END_RSS - CYC_WARM_RSS)) -le "$GROWTH_KIB" ] ||
	fail "memory grew by $((CYC_END_RSS - CYC_WARM_RSS)) KiB over the cycles (bound $GROWTH_KIB)"
echo "soak passed"
