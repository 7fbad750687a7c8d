# Shared helpers for usdtkit's shell tests. Source it from bash:
#   . "$USDTKIT_SRCDIR/tests/lib/common.sh"
# meson passes USDTKIT_SRCDIR, USDTKIT_BUILDDIR and DTRACE (the built command)
# in the environment of every test.
#
# Conventions: exit 0 pass, 1 fail, 77 skip (meson's). A skip always says
# why on its last line of stdout; CI lists every skip with that reason and
# never counts it as a pass.

set -eu

: "${USDTKIT_SRCDIR:?run through meson test}"
: "${USDTKIT_BUILDDIR:?run through meson test}"
SDT_INC="$USDTKIT_SRCDIR/include"
# The tests' Python helpers (tests/lib/usdtproto.py) for their inline scripts.
export PYTHONPATH="$USDTKIT_SRCDIR/tests/lib${PYTHONPATH:+:$PYTHONPATH}"
TRACEFS=/sys/kernel/tracing

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# A scratch directory removed when the test exits, whatever the outcome.
# Extra cleanup can be registered with at_exit "command".
_at_exit_cmds=""
at_exit() { _at_exit_cmds="$1; $_at_exit_cmds"; }
# The file aliases (kernel-helper/lib/tracefs.c: bind mounts at
# /run/usdtkit/files/DEV-INO, shared by every daemon) that a test's daemons
# made of its files and, killed on purpose or crashed, did not release:
# they would outlive the test in the host's mount table, each pinning a
# deleted file. After the test's own cleanup, when its daemons are gone.
_release_aliases() {
	local a ids
	[ -n "$(ls -A /run/usdtkit/files 2>/dev/null)" ] || return 0
	ids=$(find "$T" -xdev -type f -printf '%D-%i\n' 2>/dev/null) || return 0
	for a in /run/usdtkit/files/*; do
		printf '%s\n' "$ids" | grep -qFx "${a##*/}" || continue
		while umount -l "$a" 2>/dev/null; do :; done
		rm -f "$a"
	done
}
_run_at_exit() {
	eval "$_at_exit_cmds" || true
	[ -n "${T:-}" ] && _release_aliases
	if [ -n "${USDTKIT_SANITIZE:-}" ] && ! _sanitizer_check; then
		[ -n "${T:-}" ] && rm -rf "$T"
		exit 1
	fi
	[ -n "${T:-}" ] && rm -rf "$T"
}
T=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-test.XXXXXX")
trap _run_at_exit EXIT

# The machine's state steers no test: every program a test starts (drti in
# its -G objects, libusdtkit-runtime, dtrace -l, the test clients) talks to
# a private socket path that nobody serves unless the test starts a daemon
# there, never to a packaged daemon at /run/usdtkit/helper.sock; and drti's
# other variables come from the test alone, not from whoever runs the suite.
# Tests of the default path itself run in a private mount namespace
# (tests/checkers/lib.sh, in_private_run).
unset USDTKIT_DISABLE USDTKIT_DEBUG USDTKIT_HELPER_TIMEOUT_MS DTRACE_DOF_INIT_DISABLE \
	DTRACE_DOF_INIT_DEBUG
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"
# dtrace's cache of compiled BPF objects (dtrace/engine/cache.c): the test's
# own, not the user's, so no test starts warm from another's run.
export USDTKIT_CACHE_DIR="$T/dtrace-cache"

# The sanitizer run (meson -Db_sanitize=address,undefined, which sets
# USDTKIT_SANITIZE and the *SAN_OPTIONS defaults in tests/meson.build): every
# sanitized process this test starts, whatever it does with its stderr,
# writes its reports to $T/sanitizer/report.<exe>.<pid>, and a report fails
# the test at exit, printed. The sandboxed parser worker of usdtkit-helperd
# may not open files nor write to its stderr: a report there ends in its
# death by SIGSYS, which the daemon logs as "the parser died of signal 31
# (sandbox)"; that line in any log under $T fails the test as well.
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	# Sticky and world-writable: tests that run a sanitized client as another
	# uid (setpriv --reuid=nobody) open $T to it; its reports must land too.
	mkdir -p "$T/sanitizer"
	chmod 1777 "$T/sanitizer"
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/sanitizer/report"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/sanitizer/report"
fi
_sanitizer_check() {
	local i p exe busy f bad=0
	[ -d "${T:-}/sanitizer" ] || return 0
	# A sanitized process of ours (one of the build's programs, or an
	# installed copy under $T) still exiting, e.g. a daemon sent SIGTERM and
	# not waited for, writes its leak report last: give it 10 s.
	for ((i = 0; i < 100; i++)); do
		busy=""
		for p in /proc/[0-9]*; do
			exe=$(readlink "$p/exe" 2>/dev/null) || continue
			case $exe in "$USDTKIT_BUILDDIR"/* | "$T"/*) ;; *) continue ;; esac
			grep -qsaF "log_path=$T/sanitizer/" "$p/environ" && busy=$p && break
		done
		[ -z "$busy" ] && break
		sleep 0.1
	done
	for f in "$T"/sanitizer/report*; do
		[ -e "$f" ] || continue
		echo "--- sanitizer report ${f##*/} ---" >&2
		head -150 "$f" >&2
		bad=1
	done
	f=$(grep -rlsIF --exclude-dir=sanitizer 'died of signal 31 (sandbox)' "$T" | head -1)
	if [ -n "$f" ]; then
		grep -F -B5 'died of signal 31 (sandbox)' "$f" | head -40 >&2
		echo "(the parser worker was killed by its sandbox: under a sanitizer, a report)" >&2
		bad=1
	fi
	[ "$bad" -eq 0 ] || echo "FAIL: a sanitizer reported an error (above)" >&2
	return "$bad"
}
trap 'exit 130' INT TERM

# Check a condition, reporting what was expected on failure.
expect_eq() { # actual expected what
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}
# Each reads FILE again when a reading could have missed a line: the kernel
# lists uprobe_events a page at a time, so one reading while other tests add
# or remove events can skip a line that is there (CI's fresh run once missed
# t-helper-register's vals event). A line that is there is in one of five
# readings; a line that must not be there is in neither of two.
expect_grep() { # pattern file what
	local i
	for i in 1 2 3 4 5; do
		grep -qE -- "$1" "$2" && return 0
	done
	cat "$2" >&2
	fail "$3: no line matches '$1'"
}
expect_no_grep() { # pattern file what
	local i
	for i in 1 2; do
		! grep -qE -- "$1" "$2" || { grep -E -- "$1" "$2" >&2; fail "$3: a line matches '$1'"; }
	done
}

# Mount tracefs when it is not mounted; skip only when the kernel has no uprobes.
need_tracefs() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for tracefs and uprobes"
	if [ ! -e "$TRACEFS/uprobe_events" ]; then
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null || true
	fi
	[ -e "$TRACEFS/uprobe_events" ] ||
		skip "kernel has no uprobe tracing (no $TRACEFS/uprobe_events after mounting tracefs)"
}

# Remove one uprobe event by group/name, appending "-:group/name": never
# truncate uprobe_events, which would delete every event on the system.
remove_uprobe_event() { # group/name
	[ -e "$TRACEFS/events/$1/enable" ] && echo 0 >"$TRACEFS/events/$1/enable" 2>/dev/null || true
	echo "-:$1" >>"$TRACEFS/uprobe_events" 2>/dev/null || true
}

# The name uprobe_events gives FILE in the events of usdtkit-helperd or
# usdtkit-probes register (docs/SECURITY.md): the alias the daemon made of it,
# /run/usdtkit/files/DEV-INO, when there is one, else its own path (a file
# whose every directory only root can change). Files under $T are aliased:
# $T is in /tmp, which everyone can write. Call it while the events exist.
event_path() { # FILE
	local id a
	id=$(stat -Lc %d-%i "$1")
	a="/run/usdtkit/files/$id"
	if [ -e "$a" ] && [ "$(stat -c %d-%i "$a")" = "$id" ]; then echo "$a"; else readlink -f "$1"; fi
}
# Both names events of FILE could carry (its path, its alias), as grep -e patterns'
# arguments: grep -qF $(event_names FILE) ... finds any event of FILE.
event_names() { # FILE
	echo "-e $(readlink -f "$1"): -e /run/usdtkit/files/$(stat -Lc %d-%i "$1"):"
}

# uprobe_events, read three times, its lines merged (sorted, unique). The
# kernel lists it a page at a time, so one reading made while other tests
# add and remove events can skip a line that stays: t-sec-state-file once
# missed an event nobody removed, t-crash-register counted 2,982 of 2,999
# in two readings. Read it with this wherever a line must be seen (or a
# count be right); expect_grep and expect_no_grep read again themselves.
uprobe_events() {
	local i
	for i in 1 2 3; do cat "$TRACEFS/uprobe_events" 2>/dev/null; done | sort -u
}
# The uprobe_events line of the event GROUP/EVENT; 1 when there is no such
# event. Whether it exists is its events directory (a lookup by name).
uprobe_event_line() { # group/event
	[ -d "$TRACEFS/events/$1" ] || return 1
	uprobe_events | grep -E "^[pr]:$1 "
}

# Every uprobe event whose group starts with a prefix, as group/name lines
# (sorted, unique).
uprobe_events_in_group() { # group-prefix
	uprobe_events | grep -oE "^[pr]:$1[^ ]*" | sed 's/^[pr]://' | sort -u || true
}

# Polls COMMAND (run in this shell, every 20 ms) until it succeeds: 0, or 1
# after TIMEOUT_S seconds (a decimal, e.g. 0.5) without success.
poll_until() { # TIMEOUT_S COMMAND...
	local end now
	end=$(_now_us)
	end=$((end + $(_secs_to_us "$1")))
	shift
	while :; do
		"$@" && return 0
		now=$(_now_us)
		[ "$now" -lt "$end" ] || break
		sleep 0.02
	done
	"$@" # the last chance, at the deadline
}
# The same, failing the test on timeout with what it waited for:
#   wait_until 10 "the daemon's log to show the registration" grep -q REGISTER "$DLOG"
# TIMEOUT_S is an upper bound, scaled by TIME_FACTOR (below): waiting longer
# for something that comes hides no bug (the emulated arm64 machine,
# tests/arm64, runs 20-50 times slower).
wait_until() { # TIMEOUT_S DESCRIPTION COMMAND...
	local secs what=$2
	secs=$(awk -v s="$1" -v f="${TIME_FACTOR:-1}" 'BEGIN { print s * f }')
	shift 2
	poll_until "$secs" "$@" || fail "timed out after $secs s waiting for $what"
}
_now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
_secs_to_us() { # 1, 0.5, 2.25
	local i=${1%%.*} f=
	[ "$i" != "$1" ] && f=${1#*.}
	f=${f}000000
	echo $((10#${i:-0} * 1000000 + 10#${f:0:6}))
}

# Wall-clock bounds: sanitized programs run 2-4 times slower, so an upper
# bound a test asserts on elapsed time is scaled by one factor, defined
# here: USDTKIT_TIME_FACTOR (default 4 under USDTKIT_SANITIZE, else 1). Not
# scaled: lower bounds (a program must have waited at least the timeout),
# and upper bounds that tell one timeout from another (scaled, they would
# no longer tell): those say so where they are.
#   [ "$ms" -le "$(bound_ms 1500)" ] || fail ...
TIME_FACTOR=${USDTKIT_TIME_FACTOR:-$([ -n "${USDTKIT_SANITIZE:-}" ] && echo 4 || echo 1)}
bound_ms() { # MS
	echo $(($1 * TIME_FACTOR))
}

# Is a process still running (not gone, not a zombie waiting to be reaped)?
running() { # pid
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}

# Stops a background child and reaps it, never waiting unboundedly: SIGNAL
# (default INT, which bpftrace treats as Ctrl-C), sent again every second (a
# signal that lands while a tracer is still attaching can be lost), then
# SIGKILL after SECONDS (default 10).
stop_bg() { # pid [signal] [seconds]
	local pid=$1 sig=${2:-INT} secs=${3:-10} i
	[ -n "$pid" ] || return 0
	kill -"$sig" "$pid" 2>/dev/null || true
	for ((i = 1; i <= secs * 20; i++)); do
		running "$pid" || break
		((i % 20)) || kill -"$sig" "$pid" 2>/dev/null || true
		sleep 0.05
	done
	if running "$pid"; then
		echo "stop_bg: $pid ignored SIG$sig for ${secs}s: killed" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

need_bpftrace() {
	command -v bpftrace >/dev/null || fail "bpftrace is not installed (scripts/deps.sh installs it)"
	need_tracefs
}

# The compilers every probe test runs with.
COMPILERS="gcc clang"

# Can this kernel execute 32-bit x86 programs? A kernel built without IA32
# emulation, or booted with it off (ia32_emulation=0, or a default of off),
# refuses them with ENOEXEC ("Exec format error"); building, linking and
# reading them is unaffected. Tests keep every build and static check of
# their -m32 programs and run those programs only when this succeeds;
# otherwise they print M32_NO_EXEC (the part is not checked, and says so),
# or skip whole (77) when running 32-bit programs is all they do. Asked once
# per test: the answer is kept in $T. A gcc -m32 that cannot link, or a
# 32-bit program that fails in any other way, fails the test: only the
# kernel's refusal is a reason not to run them.
M32_NO_EXEC="kernel cannot run 32-bit programs: ia32 emulation off; the 32-bit run is not checked"
can_exec_m32() {
	local d="$T/can-exec-m32" rc=0
	if [ ! -e "$d/answer" ]; then
		mkdir -p "$d"
		echo 'int main(void) { return 42; }' >"$d/m32.c"
		gcc -m32 "$d/m32.c" -o "$d/m32" 2>"$d/err" ||
			{ cat "$d/err" >&2; fail "gcc -m32 cannot link a program (gcc-12-multilib, scripts/deps.sh)"; }
		"$d/m32" 2>"$d/err" || rc=$?
		if [ "$rc" = 42 ]; then
			echo yes >"$d/answer"
		elif [ "$rc" = 126 ] && grep -q 'Exec format error' "$d/err"; then
			echo no >"$d/answer"
		else
			cat "$d/err" >&2
			fail "a trivial 32-bit program exited $rc (expected 42, or the kernel's Exec format error)"
		fi
	fi
	[ "$(cat "$d/answer")" = yes ]
}
