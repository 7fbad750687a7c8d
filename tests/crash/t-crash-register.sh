#!/bin/bash
# Crash consistency (issue 21, item 2): usdtkit-helperd killed with SIGKILL
# at any point of a large registration or of a removal leaves, once
# restarted, no event that no live process needs, and never removes another
# tool's event. The crash points are exact: --test-crash-after N makes the
# daemon kill itself right after its N-th write to uprobe_events; a sweep
# of plain `kill -9` after N ms covers the instants in between (the journal
# appends, the parse, the removal's bookkeeping).
#
#   big: a library with 3,000 probes (1,000 in the sanitizer run, where
#        each registration costs more and the kernel's cost per event is
#        the same) and no .note.usdtkit (SystemTap's
#        macros only), registered by a process that asks for it: after a
#        restart nothing adopts it, so all of its events must be gone, and
#        a new registration must own (and remove) every one of them again.
#   gm:  a `dtrace -G` library with 1,000 probes: the restart adopts the
#        process that maps it, so exactly its 1,000 events must be there,
#        owned (removed when that process exits), none twice.
#   foreign events in big's group, as perf probe writes them (one the very
#        site the daemon would write, one another name on a site of it):
#        kept through every crash and restart.
#   a state file of another boot that names a foreign event: ignored.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
CLIENT="$USDTKIT_BUILDDIR/tests/crash/crashclient"
PROBES="$USDTKIT_BUILDDIR/kernel-helper/tools/usdtkit-probes"
[ -x "$CLIENT" ] || fail "no $CLIENT: build first"
# No --debug: a line per site would be 3,000 lines a registration.
HD_DEBUG=
# A restart removes up to 3,000 events before it serves: 2 ms each under load.
DAEMON_START_S=180
# A registration of 3,000 sites takes 6 s on this machine under load.
export CRASHCLIENT_WAIT_MS=180000
NB=$([ -n "${USDTKIT_SANITIZE:-}" ] && echo 1000 || echo 3000)

# --- the libraries ---
B="$T/build"
mkdir -p "$B"
{
	echo '#include <sys/sdt.h>'
	echo 'void lib_call(int x);'
	echo 'void lib_call(int x) {'
	echo '	if (x != 42) return;'
	for i in $(seq 0 $((NB - 1))); do echo "	STAP_PROBE(${P}big, p$i);"; done
	echo '}'
} >"$B/big.c"
gcc -O0 -fPIC -shared -I"$SDT_INC" "$B/big.c" -o "$B/libbig.so" || fail "building libbig.so"
BIG="$B/libbig.so"
{
	echo "provider ${P}gm {"
	for i in $(seq 0 999); do echo "	probe p$i();"; done
	echo '};'
} >"$B/gm.d"
{
	echo '#include "gm.h"'
	echo 'void lib_call(int x);'
	echo 'void lib_call(int x) {'
	echo '	if (x != 42) return;'
	for i in $(seq 0 999); do echo "	${PU}GM_P$i();"; done
	echo '}'
} >"$B/gm.c"
(
	cd "$B"
	"$DTRACE" -h -s gm.d -o gm.h
	gcc -O0 -fPIC -I"$SDT_INC" -I. -c gm.c -o gm.o
	"$DTRACE" -G -s gm.d -o gm-prov.o gm.o
	gcc -shared gm.o gm-prov.o -o libgm.so
) || fail "building libgm.so"
GM="$B/libgm.so"

# uprobe_events is read in pieces, and other tests add and remove events
# meanwhile, so one reading can skip or repeat a line: a line read twice is
# counted once (the kernel never lists two identical events), and a count is
# taken when two readings in a row agree. Even two readings can skip the same
# line while others churn (seen once under load 20), so where a count must
# reach a number, count_is polls for it before failing.
stable() { # COMMAND...
	local a b i
	a=$("$@")
	for i in $(seq 20); do
		b=$("$@")
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$a"
}
_sites() { grep "^p:sdt_${P}$1/" "$TRACEFS/uprobe_events" | sort -u | wc -l; }
sites() { stable _sites "$1"; }
# Sites whose event is not one of the foreign ones made below.
_ours() { grep "^p:sdt_${P}$1/" "$TRACEFS/uprobe_events" | grep -v "^p:sdt_${P}big/\(p7\|foreign\) " | sort -u | wc -l; }
ours() { stable _ours "$1"; }
_sites_eq() { [ "$(sites "$1")" -eq "$2" ]; }
_ours_eq() { [ "$(ours "$1")" -eq "$2" ]; }
count_is() { # sites|ours LIB N what
	poll_until 10 "_$1_eq" "$2" "$3" || expect_eq "$("$1" "$2")" "$3" "$4"
}
wait_sites() { # lib N what
	poll_until 20 _sites_eq "$1" "$2" && return 0
	fail "$3: $(sites "$1") sites of sdt_${P}$1, expected $2"
}

# A holder: registers LIB, prints its status, holds it until told to exit.
holder_start() { # NAME LIB
	rm -f "$T/$1.in"
	mkfifo "$T/$1.in"
	(
		close_prog_fds
		exec "$CLIENT" hold "$2"
	) <"$T/$1.in" >"$T/$1.out" 2>"$T/$1.err" &
	eval "PID_$1=$!"
	eval "exec {FD_$1}>\"$T/$1.in\""
	at_exit "kill -9 $! 2>/dev/null"
	poll_until 200 grep -q '^ready' "$T/$1.out" || { cat "$T/$1.out" "$T/$1.err" >&2; fail "$1 did not start"; }
}
holder_stop() { prog_stop "$1"; }
status_of() { sed -n 's/^status=\([^ ]*\).*/\1/p' "$T/$1.out"; }

# Waits for the daemon to have killed itself, and reaps it.
crashed() { # what
	poll_until 60 eval '! running "$DAEMON_PID"' || fail "$1: the daemon did not crash"
	stop_daemon KILL
}

# The clean state every round starts from: no event of this run's groups
# but the foreign ones.
clean() { # what
	expect_eq "$(ours big)" 0 "$1: events of big left"
	expect_eq "$(sites gm)" 0 "$1: events of gm left"
}

# --- foreign events in big's group, as perf probe would write them ---
off_of() { "$PROBES" list "$BIG" | awk -v p="p$1" '$1 == "probe" && $3 == p {for (i = 1; i <= NF; i++) if ($i ~ /^pc_off=/) print substr($i, 8)}'; }
off7=$(off_of 7)
off9=$(off_of 9)
[ -n "$off7" ] && [ -n "$off9" ] || { "$PROBES" list "$BIG" | head >&2; fail "no offsets for p7/p9"; }
echo "p:sdt_${P}big/p7 $BIG:$off7" >>"$TRACEFS/uprobe_events" || fail "creating the foreign p7"
echo "p:sdt_${P}big/foreign $BIG:$off9" >>"$TRACEFS/uprobe_events" || fail "creating the foreign event"
at_exit "echo '-:sdt_${P}big/p7' >>$TRACEFS/uprobe_events 2>/dev/null; echo '-:sdt_${P}big/foreign' >>$TRACEFS/uprobe_events 2>/dev/null"
foreign_kept() { # what
	uprobe_event_line "sdt_${P}big/p7" | grep -q " $BIG:0x0*${off7#0x} *$" ||
		{ grep "sdt_${P}big/p7 " <(uprobe_events) >&2; fail "$1: the foreign p7 was removed"; }
	uprobe_event_line "sdt_${P}big/foreign" >/dev/null || fail "$1: the foreign event was removed"
}

# One full registration and removal: every site ours again (none left behind
# as someone else's), then all removed at exit.
full_cycle() { # what
	holder_start full "$BIG"
	expect_eq "$(status_of full)" 0 "$1: a fresh registration"
	count_is ours big $((NB - 1)) "$1: big's own sites (p7 is the foreign one's)"
	holder_stop full
	poll_until 20 eval '[ "$(ours big)" -eq 0 ]' || fail "$1: $(ours big) of big's sites left after its only process exited"
	foreign_kept "$1"
}

# big's registration is NB writes, one per site: its group exists (the
# foreign events), so none of its sites may be batched (a batch's lines
# have no result of their own, and a site there may be someone else's:
# kernel-helper/lib/tracefs_register.c); p7 is refused once (EEXIST: the
# kernel takes the foreign p7 for the very same probe, comparing the
# inode, whatever path names it; the listing then shows p7 with our
# arguments, so no other name is tried). Its removal is batched: a few
# writes of many lines each. A first registration, removed at its
# process's exit, checks the file registers at all.
W=$NB
start_daemon
holder_start cal "$BIG"
expect_eq "$(status_of cal)" 0 "the first registration"
holder_stop cal
poll_until 20 eval '[ "$(ours big)" -eq 0 ]' || fail "the first registration's events did not go"
stop_daemon
echo "big's registration: $W writes"

# --- a registration killed at its N-th write ---
for k in 1 2 8 9 10 11 150 $((NB / 4 + 27)) $((NB / 2)) $((3 * NB / 4 - 28)) $((W - 2)) $((W - 1)) $W \
	$((RANDOM % W + 1)) $((RANDOM % W + 1)); do
	start_daemon --test-crash-after "$k"
	holder_start h "$BIG"
	crashed "register, crash after write $k"
	[ "$(status_of h)" != 0 ] || fail "crash after write $k: the holder was answered"
	left=$(ours big)
	echo "crash after write $k: $left of big's sites left by the dead daemon"
	[ "$left" -gt 0 ] || fail "crash after write $k: no site written before the crash (the hook)"
	start_daemon
	# big has no .note.usdtkit: nothing adopts it, so nothing of it may stay.
	expect_eq "$(ours big)" 0 "crash after write $k, restarted: big's sites"
	foreign_kept "crash after write $k"
	running "$PID_h" || fail "crash after write $k: the holder died"
	holder_stop h
	case $k in 2 | "$((NB / 2))" | "$W") full_cycle "crash after write $k" ;; esac
	stop_daemon
	clean "crash after write $k"
done

# --- a removal killed at its N-th write ---
# The removal's lines go packed, at most 64 KiB a write (tracefs_batch.c):
# NB lines of 60 bytes and more (about 77 in CI's run) take 3 writes at the
# least for 3,000 sites, so the kill after its first or second write comes
# before its end; for the sanitizer run's 1,000 sites, 2 writes at the least:
# only the first is surely before the end.
JS=$([ "$NB" -ge 3000 ] && echo "1 2" || echo 1)
for j in $JS; do
	start_daemon --test-crash-after $((W + j))
	holder_start h "$BIG"
	expect_eq "$(status_of h)" 0 "removal $j: the registration"
	holder_stop h
	crashed "removal, crash after its write $j"
	left=$(ours big)
	echo "crash after removal write $j: $left of big's sites left by the dead daemon"
	[ "$left" -ge 1 ] && [ "$left" -le $((NB - 1 - j)) ] ||
		fail "removal $j: $left sites left, expected 1 to $((NB - 1 - j))"
	start_daemon
	expect_eq "$(ours big)" 0 "removal $j, restarted: big's sites"
	foreign_kept "removal $j"
	stop_daemon
done

# --- adoption after a crash: gm (a -G module) is adopted, complete, owned ---
# gm's group is new: its 1,000 lines go packed, 64 KiB a write at most, so
# in 2 writes at the least (70 bytes a line and more): killed after the
# first (half written) and the second (whole, or not yet).
for k in 1 2; do
	start_daemon --test-crash-after "$k"
	holder_start g "$GM"
	crashed "gm, crash after write $k"
	start_daemon
	wait_log 'start-up: 1 process registrations found running' "gm, crash after write $k: the adoption"
	count_is sites gm 1000 "gm, crash after write $k, restarted: its sites (each once)"
	holder_stop g
	wait_sites gm 0 "gm, crash after write $k: after its process exited"
	stop_daemon
done

# --- kill -9 after N ms: the instants between the writes ---
for ms in 0 2 5 10 20 40 80 160; do
	start_daemon
	(
		close_prog_fds
		exec "$CLIENT" hold-quiet "$BIG"
	) >"$T/k.out" 2>&1 &
	hp=$!
	sleep "0.$(printf %03d "$ms")"
	stop_daemon KILL
	echo "kill -9 after $ms ms: $(ours big) of big's sites left by the dead daemon"
	start_daemon
	expect_eq "$(ours big)" 0 "kill -9 after $ms ms of a registration, restarted"
	foreign_kept "kill -9 after $ms ms"
	kill -9 "$hp" 2>/dev/null || true
	wait "$hp" 2>/dev/null || true
	stop_daemon
done
for ms in 0 5 20 60; do
	start_daemon
	holder_start r "$BIG"
	expect_eq "$(status_of r)" 0 "the registration before a removal killed after $ms ms"
	holder_stop r
	sleep "0.$(printf %03d "$ms")"
	stop_daemon KILL
	start_daemon
	expect_eq "$(ours big)" 0 "kill -9 after $ms ms of a removal, restarted"
	foreign_kept "kill -9 after $ms ms of a removal"
	stop_daemon
done

# --- a state file of another boot is not believed ---
dev_ino=$(stat -c '%d %i' "$BIG")
printf 'usdtkit-helperd-state 2 00000000-0000-0000-0000-000000000000\nsite %s sdt_%sbig foreign %s - %s\n' \
	"$dev_ino" "$P" "$off9" "$BIG" >"$SOCK.state"
start_daemon
foreign_kept "a state file of an earlier boot"
stop_daemon
# (and the same file of this boot is believed: the check above can fail)
printf 'usdtkit-helperd-state 2 %s\nsite %s sdt_%sbig foreign %s - %s\n' \
	"$(cat /proc/sys/kernel/random/boot_id)" "$dev_ino" "$P" "$off9" "$BIG" >"$SOCK.state"
start_daemon
poll_until 10 eval '! grep -q "^p:sdt_${P}big/foreign " "$TRACEFS/uprobe_events"' ||
	fail "a state file of this boot naming the event: not removed"
stop_daemon
clean "the end"
HD_OK=1
exit 0
