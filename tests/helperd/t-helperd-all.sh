#!/bin/bash
# --all registers programs that never call the daemon (plain <sys/sdt.h>
# probes, no dtrace -G), found by scanning /proc at start and on --rescan;
# --only GLOB keeps that to the paths named (here: this test's directory, so
# the rest of the machine, other tests' processes included, is left alone).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs

mkdir -p "$T/all" "$T/other"
# A program with SystemTap-style probes only: provider given at build time.
cat >"$T/plain.c" <<'C'
#include <stdio.h>
#include <sys/sdt.h>

int main(void)
{
	char line[64];
	long n = 0;

	/* Fires once per line read; exits at EOF. */
	while (fgets(line, sizeof(line), stdin)) {
		n++;
		STAP_PROBE2(PROV, tick, n, line);
	}
	return 0;
}
C
build_plain() { # provider output
	gcc -O2 -I"$SDT_INC" -DPROV="$1" "$T/plain.c" -o "$2" || fail "cannot build $2"
}
build_plain "${P}early" "$T/all/early"
build_plain "${P}late" "$T/all/late"
build_plain "${P}outside" "$T/other/outside"
build_plain "${P}slow" "$T/all/slow"

# Each program reads from a fifo kept open here, so it lives until we close it.
run_plain() { # name path
	mkfifo "$T/$1.in"
	(close_prog_fds; exec env -u USDTKIT_HELPER_SOCKET "$2" <"$T/$1.in" >/dev/null) &
	eval "PID_$1=\$!"
	eval "exec {FD_$1}>\"\$T/$1.in\""
}
stop_plain() { # name
	local v="FD_$1" p="PID_$1"
	eval "exec ${!v}>&-"
	wait "${!p}" || fail "$1 exited with $?"
}

run_plain early "$T/all/early"
run_plain outside "$T/other/outside"
# (The test knob holds the parser of "slow" for 3 s: section 2b.)
start_daemon --all --only "$T/all/*" --rescan 1 --test-worker-delay "3000:$T/all/slow"

# 1. A process already running at start is registered from the /proc scan.
wait_events 1 "the early program (running before the daemon)"
expect_eq "$(our_events)" "sdt_${P}early/tick" "events after start-up"
uprobe_event_line "sdt_${P}early/tick" | grep -qE " $(event_path "$T/all/early"):0x[0-9a-f]+ " ||
	fail "the event does not name the early program's file and an offset"

# 2. One started later is found by the rescan (every second); the program
#    outside --only never is.
run_plain late "$T/all/late"
wait_events 2 "the late program (found by --rescan)"
sleep 2.2 # two more rescans
expect_eq "$(our_events | tr '\n' ' ')" "sdt_${P}early/tick sdt_${P}late/tick " \
	"events: the program outside --only must have none"
"$HDCLIENT" list >"$T/list"
expect_no_grep "^entry .* /(usr|lib|opt|bin)" "$T/list" "files outside --only registered"
expect_eq "$(grep -c '^entry' "$T/list")" 2 "processes registered (early, late)"

# 2b. The rescan parses a new file the way a REGISTER does, without stopping
#     the loop: while the parse of "slow" is held, a LIST is answered at once;
#     the file is registered when its parse ends.
run_plain slow "$T/all/slow"
for i in $(seq 250); do
	grep -qF "$T/all/slow: parse started" "$DLOG.new" && break
	sleep 0.02
done
expect_grep "$T/all/slow: parse started" "$DLOG.new" "the rescan's parse of the slow program"
t0=$(date +%s%N)
"$HDCLIENT" list >"$T/list"
ms=$((($(date +%s%N) - t0) / 1000000))
expect_grep '^status=0 ' "$T/list" "a LIST during the rescan's parse"
# (not scaled by bound_ms: the held parse lasts 3000 ms, which a LIST must not wait for)
[ "$ms" -le 1500 ] || fail "a LIST during the rescan's held parse took $ms ms"
expect_no_grep "sdt_${P}slow/" <(our_events) "the slow program registered before its parse ended"
wait_events 3 "the slow program (its parse held 3 s)"
echo "a LIST during the rescan's held parse: $ms ms"

# 3. The registered probe works: enabled in tracefs, it fires with the line count.
inst="$TRACEFS/instances/usdtkit-all-$P"
mkdir "$inst" || fail "cannot create a tracefs instance"
at_exit "rmdir '$inst' 2>/dev/null"
echo 1 >"$inst/events/sdt_${P}early/tick/enable"
for i in 1 2 3; do echo "line $i" >&"$FD_early"; done
for i in $(seq 250); do
	[ "$(grep -c "sdt_${P}early:tick\|tick:" "$inst/trace" 2>/dev/null)" -ge 3 ] && break
	sleep 0.02
done
grep -qE "tick: .*arg1=3( |$)" "$inst/trace" || { cat "$inst/trace" >&2; fail "no firing with arg1=3"; }
echo 0 >"$inst/events/sdt_${P}early/tick/enable"

# 4. Exits remove the events, as for -G programs.
stop_plain early
wait_events 2 "after the early program exited"
stop_plain late
wait_events 1 "after the late program exited"
stop_plain slow
wait_events 0 "after the slow program exited"
stop_plain outside
daemon_healthy
HD_OK=1
echo "--all with --only: start-up scan, rescan, firing, exit; nothing outside the glob"
