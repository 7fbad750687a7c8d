# Helpers for the process-fault tests (suite fault, tests/fault/process).
# Source after tests/lib/common.sh and tests/helperd/lib.sh (whose daemon,
# programs and event helpers these build on; that file is the daemon
# engineer's, so additions live here).
#
# Every test proves two things for each fault: another client is served
# (served_ok: a LIST answers and a probed program registers, both within a
# bound) and the faulty program behaves exactly as with USDTKIT_DISABLE=1
# (pstart/pcmd/pstop record a run; same_as_disabled replays the same commands
# with registration disabled and compares exit status, stdout and stderr).

FCLIENT="$USDTKIT_BUILDDIR/tests/fault/process/fclient"
[ -x "$FCLIENT" ] || fail "no $FCLIENT: build first"

# Milliseconds since the epoch.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Another client is served promptly: a LIST answers, and a probed program
# (short, a -G program of this run) starts, registers (its drti says so)
# and exits 0, each within LIMIT ms (default 5000: the machine is shared;
# scaled by bound_ms under sanitizers).
served_ok() { # what [LIMIT-MS]
	local what=$1 limit t0 ms
	limit=$(bound_ms "${2:-5000}")
	t0=$(now_ms)
	timeout 20 "$HDCLIENT" list >"$T/served.list" 2>&1 || true
	ms=$(($(now_ms) - t0))
	grep -q '^status=0 ' "$T/served.list" ||
		{ cat "$T/served.list" >&2; fail "$what: the daemon did not answer a LIST"; }
	[ "$ms" -le "$limit" ] || fail "$what: a LIST took $ms ms (bound $limit)"
	t0=$(now_ms)
	USDTKIT_DEBUG=1 USDTKIT_HELPER_TIMEOUT_MS=5000 timeout 20 "$SHORT" 2>"$T/served.err" ||
		fail "$what: the probed program failed"
	ms=$(($(now_ms) - t0))
	grep -qE '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: done, [1-9][0-9]* probes' \
		"$T/served.err" || { cat "$T/served.err" >&2; fail "$what: a probed program was not registered"; }
	[ "$ms" -le "$limit" ] || fail "$what: a probed program took $ms ms to register (bound $limit)"
}

# An interactive program, commands through a fifo, like helperd/lib.sh's
# prog_start, but under the given environment, with its exit status kept
# and every command recorded (with the number of output lines seen before
# it) so that same_as_disabled can replay the run. PSTART_PID=N starts it as
# pid N (inside a private pid namespace: ns_last_pid is written just before
# the one fork that becomes the program).
#   pstart NAME FILE [VAR=VALUE...] [-- ARGS...]; pcmd NAME LINE;
#   prog_wait NAME PATTERN; pstop NAME
declare -A PARGV
pstart() { # NAME FILE [VAR=VALUE...] [-- ARGS...]
	local n=$1 f=$2 envs=() args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	args=("$@")
	rm -f "$T/$n.in" "$T/$n.cmds"
	mkfifo "$T/$n.in"
	: >"$T/$n.cmds"
	if [ -n "${PSTART_PID:-}" ]; then
		echo $((PSTART_PID - 1)) >/proc/sys/kernel/ns_last_pid
	fi
	(
		close_prog_fds
		exec env "${envs[@]}" "$f" "${args[@]}"
	) <"$T/$n.in" >"$T/$n.out" 2>"$T/$n.err" &
	eval "PID_$n=$!"
	eval "exec {FD_$n}>\"$T/$n.in\""
	if [ -n "${PSTART_PID:-}" ] && [ "$!" != "$PSTART_PID" ]; then
		fail "$n: started as pid $!, not $PSTART_PID"
	fi
	prog_wait "$n" '^ready'
	at_exit "kill -9 $(eval echo \$PID_$n) 2>/dev/null"
	PARGV[$n]=$(printf '%q ' "$f" "${args[@]}")
}
pcmd() { # NAME LINE
	printf '%s\t%s\n' "$(wc -l <"$T/$1.out")" "$2" >>"$T/$1.cmds"
	prog_cmd "$1" "$2"
}
# Waits until NAME's process has exec'ed FILE (its /proc/PID/exe), and
# records the wait for the replay: commands sent before the old program is
# gone could be read ahead by its stdio and lost at exec.
pwait_exec() { # NAME FILE
	local pid i want
	pid=$(eval echo "\$PID_$1")
	want=$(realpath "$2")
	for i in $(seq 500); do
		[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$want" ] && break
		sleep 0.02
	done
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$want" ] || fail "$1: did not exec $2"
	printf 'exec\t%s\n' "$want" >>"$T/$1.cmds"
}
# Closes its stdin (EOF: the program exits) and keeps the exit status in $T/NAME.rc.
pstop() { # NAME
	local fd pid rc=0 i
	fd=$(eval echo "\$FD_$1")
	pid=$(eval echo "\$PID_$1")
	eval "exec $fd>&-"
	for i in $(seq 500); do
		running "$pid" || break
		sleep 0.02
	done
	wait "$pid" 2>/dev/null || rc=$?
	echo "$rc" >"$T/$1.rc"
}
# A pid-free view of a program's output: app.c prints its pid and its
# children's, fclient its pid and an address.
normalized() { sed -E 's/^(ready|child) [0-9]+( 0x[0-9a-f]+)?/\1 PID/' "$1"; }

# Replays NAME's commands, with the same pacing (each sent once the output
# has as many lines as the recorded run had), to its program with
# registration disabled, and compares: exit status, stdout (pids aside),
# stderr.
same_as_disabled() { # NAME
	local n=$1 r="$1_off" count line i
	eval "pstart \"\$r\" env USDTKIT_DISABLE=1 -- ${PARGV[$n]}"
	while IFS=$'\t' read -r count line; do
		if [ "$count" = exec ]; then
			pwait_exec "$r" "$line"
			continue
		fi
		for i in $(seq 500); do
			[ "$(wc -l <"$T/$r.out")" -ge "$count" ] && break
			sleep 0.02
		done
		prog_cmd "$r" "$line"
	done <"$T/$n.cmds"
	pstop "$r"
	expect_eq "$(cat "$T/$n.rc")" "$(cat "$T/$r.rc")" "$n: exit status against a disabled run"
	if ! diff <(normalized "$T/$r.out") <(normalized "$T/$n.out") >&2; then
		fail "$n: stdout differs from a disabled run's"
	fi
	cmp -s "$T/$r.err" "$T/$n.err" || { diff "$T/$r.err" "$T/$n.err" >&2; fail "$n: stderr differs"; }
}

# Builds a second probed program into $B2: prog2 (app.c with provider
# ${P}oth) and liblib2.so (lib.c with provider ${P}olib): modules of the
# same shape as $PROG and $LIB but of other names, so events of one are
# never mistaken for the other's.
build_other() { # [CC]
	local cc=${1:-gcc}
	B2="$T/build2-$cc"
	mkdir -p "$B2"
	printf 'provider %soth {\n\tprobe start(int count, char *label);\n\tprobe tick(int n);\n};\n' \
		"$P" >"$B2/app.d"
	printf 'provider %solib {\n\tprobe call(int x);\n};\n' "$P" >"$B2/lib.d"
	cat >"$B2/names.h" <<EOF
#include "app.h"
#include "lib.h"
#define APP_START ${PU}OTH_START
#define APP_TICK ${PU}OTH_TICK
#define LIB_CALL ${PU}OLIB_CALL
EOF
	(
		cd "$B2"
		"$DTRACE" -h -s app.d -o app.h
		"$DTRACE" -h -s lib.d -o lib.h
		$cc -I"$SDT_INC" -I. -O2 -c "$HPROGS/app.c" -o app.o
		$cc -I"$SDT_INC" -I. -O2 -fPIC -c "$HPROGS/lib.c" -o lib.o
		CC="$cc" "$DTRACE" -G -s app.d -o app-prov.o app.o
		CC="$cc" "$DTRACE" -G -s lib.d -o lib-prov.o lib.o
		$cc app.o app-prov.o -ldl -o prog2
		$cc -shared lib.o lib-prov.o -o liblib2.so
	) || fail "building the second test programs with $cc"
	PROG2="$B2/prog2"
	LIB2="$B2/liblib2.so"
}

# LIST entries ("entry PID NPROBES DEV INO BIAS PATH") for one pid, or all.
list_entries() { # [PID]
	"$HDCLIENT" list ${1:-} >"$T/list.out" 2>&1 || true
	grep -q '^status=0 ' "$T/list.out" || { cat "$T/list.out" >&2; fail "LIST failed"; }
	grep '^entry ' "$T/list.out" || true
}

# The end of a --debug log line "REGISTER pid N uid U[ addr A]: OUTCOME" up
# to the outcome's first character: a path (registered) or an strerror
# (refused), not "waits for the parse" (the answer comes later).
REG_AT="uid [0-9]+( addr 0x[0-9a-f]+)?: "
DONE="${REG_AT}[A-Z/]"
# (wait_log, wait_log_count, count_log: tests/helperd/lib.sh)

# --- shared by the exec tests (t-fault-exec-without-exit, t-fault-exec-self) ---

app_events() { our_events | grep -c "^sdt_${P}app/" || true; }
# The registry's entries as "PID BIAS PATH" lines.
entries() { list_entries | awk '{print $2, $6, $7}'; }
# The load bias of FILE in PID, from its maps: the start of its offset-0
# mapping (PIE programs: the first PT_LOAD has vaddr and offset 0).
bias_of() { # pid file
	awk -v f="$(realpath "$2")" '$6 == f && $3 == "00000000" { split($1, a, "-"); print "0x" a[1]; exit }' \
		"/proc/$1/maps" | sed 's/0x0*/0x/'
}
# A holder (process "keep", running $PROG) keeps the module registered
# beside the process under test: start it (holder_start yes|no, which also
# sets $beside, the case's words, and $left, the events that stay when the
# process under test is gone), and at the end of a case check it is still
# registered once, stop it, and compare.
holder_start() { # yes|no
	beside="${1/no/alone}"
	beside="${beside/yes/beside a holder}"
	left=$([ "$1" = yes ] && echo 2 || echo 0)
	[ "$1" = yes ] || return 0
	pstart keep "$PROG"
	wait_events 2 "the holder's module"
}
holder_done() { # yes|no
	[ "$1" = yes ] || return 0
	expect_eq "$(entries | grep -c "$PROG\$")" 1 "the holder's registration"
	pstop keep
	wait_events 0 "the holder exited"
	same_as_disabled keep
}
