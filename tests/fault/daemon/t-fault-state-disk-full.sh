#!/bin/bash
# Fault: the file system of the state file (--state) is full. A tiny tmpfs
# mounted under $T (unmounted at exit) is filled up while a program runs.
# Guarantees: registrations still succeed (a dlopen'ed library gets its
# event), the write failure is logged once however many changes fail, the
# previous state file stays whole (byte for byte), no temporary file is left
# (the journal beside it is its only companion),
# SIGTERM still removes every event, and once space is freed the state is
# written again (the failed write is retried every second).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
SFS="$T/statefs"
mkdir "$SFS"
mount -t tmpfs -o size=64k,mode=0755 usdtkit-fault "$SFS" || skip "cannot mount a tmpfs"
at_exit "umount -l '$SFS' 2>/dev/null"
STATE="$SFS/helperd.state"
fill() { dd if=/dev/zero of="$SFS/fill" bs=4k 2>/dev/null || true; }
sites() { grep -c '^site ' "$STATE"; }

start_daemon --state "$STATE"
prog_start a
wait_events 2 "the program"
# (The events are written by the daemon's writer thread, the state file by
# its loop after them: wait for it.)
_sites_are() { [ "$(sites)" -eq "$1" ]; }
poll_until 20 _sites_are 2 || true
expect_eq "$(sites)" 2 "sites in the state file before the disk is full"
cp "$STATE" "$T/state-before"

# Full: each change (a library in, out, in again) registers, the state file
# cannot be written, and the log says so once.
fill
[ "$(df --output=avail -B1 "$SFS" | tail -1)" -lt 4096 ] || fail "the tmpfs is not full"
prog_cmd a "dlopen $LIB"
prog_wait a '^dlopen ok' 1
wait_events 3 "the library registered while the disk is full"
prog_cmd a dlclose
prog_wait a '^dlclose ok' 1
wait_events 2 "the library unregistered while the disk is full"
prog_cmd a "dlopen $LIB"
prog_wait a '^dlopen ok' 2
wait_events 3 "the library registered while the disk is full"
expect_eq "$(grep -c 'cannot write the state file' "$DLOG.new")" 1 "log lines about the state file"
expect_grep "cannot write the state file $STATE: No space left on device" "$DLOG.new" "the reason"
cmp -s "$STATE" "$T/state-before" || { diff "$T/state-before" "$STATE" >&2; fail "the previous state file changed"; }
expect_eq "$(ls -A "$SFS" | sort | tr '\n' ' ')" "fill helperd.state helperd.state.journal " "files on the full file system"
daemon_healthy

# Space again: the write that failed is tried again (once a second), with no
# change needed: the state gains the library's site.
rm -f "$SFS/fill"
for i in $(seq 100); do [ "$(sites)" -eq 3 ] && break; sleep 0.05; done
poll_until 20 _sites_are 3 || true
expect_eq "$(sites)" 3 "sites in the state file once space is freed"
expect_grep "the state file $STATE is written again" "$DLOG.new" "the log of the recovery"
grep -qE "^site [0-9]+ [0-9]+ sdt_${P}lib call " "$STATE" || fail "the library's site is not in the state file"

# Full again at SIGTERM: every event is still removed, the state file whole.
cp "$STATE" "$T/state-before"
fill
stop_daemon
wait_events 0 "after SIGTERM with the disk full"
cmp -s "$STATE" "$T/state-before" || fail "the state file changed at SIGTERM with the disk full"
expect_eq "$(ls -A "$SFS" | sort | tr '\n' ' ')" "fill helperd.state helperd.state.journal " "files left at SIGTERM"
prog_stop a
HD_OK=1
exit 0
