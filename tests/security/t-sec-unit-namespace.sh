#!/bin/bash
# The daemon confined as kernel-helper/systemd/usdtkit-helperd.service
# confines it, emulated with unshare (this test machine's PID 1 is not
# systemd): its own mount namespace, slave to the host's (PrivateMounts),
# / read-only but for its socket directory and /run/usdtkit
# (ProtectSystem=strict, ReadWritePaths), a private /tmp (PrivateTmp),
# empty /home and /root (ProtectHome), /sys read-only but tracefs
# (ProtectKernelTunables), /proc with hidepid=invisible (ProtectProc). Programs run on the host from the host's /tmp
# and from /home, which the daemon cannot see by name, and from a trusted
# directory under /opt, which it can. A bind mount of a file of another
# namespace's mount is refused (EINVAL), so no alias can be made there: the
# untrusted files register through the daemon's descriptors
# (/proc/DAEMON/fd/N), the trusted one under its path; their events fire
# (perf record -e sdt_* on the host), and everything is removed at exit.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs
command -v unshare >/dev/null || fail "no unshare (util-linux)"
command -v perf >/dev/null || fail "perf is not installed (scripts/deps.sh installs it)"

# The socket outside /tmp (which the daemon's namespace replaces), root's,
# open to all; removed after the daemon stopped (at_exit runs last first).
SD=$(mktemp -d /run/usdtkit-sec-test.XXXXXX)
HOMEDIR=$(mktemp -d /home/usdtkit-sec-test.XXXXXX)
TD=$(mktemp -d /opt/usdtkit-sec-test.XXXXXX)
at_exit "rm -rf '$SD' '$HOMEDIR' '$TD'"
chmod 755 "$SD" "$HOMEDIR" "$TD"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
SOCK="$SD/helper.sock"
export USDTKIT_HELPER_SOCKET="$SOCK"
mkdir -p /run/usdtkit

build_progs gcc
cp "$PROG" "$HOMEDIR/prog"
cp "$PROG" "$TD/prog"

# The namespace, then the daemon (its stderr, the log, was opened before).
# Sanitizer reports go to $T/sanitizer: kept reachable under the new /tmp.
cat >"$T/ns.sh" <<EOF
set -e
mount --make-rslave /
mkdir -p "$SD/.san"
[ -d "$T/sanitizer" ] && mount --bind "$T/sanitizer" "$SD/.san"
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p "$T/sanitizer" && chmod 1777 "$T/sanitizer"
[ -d "$SD/.san" ] && mountpoint -q "$SD/.san" && mount --bind "$SD/.san" "$T/sanitizer"
mount -t tmpfs -o mode=755 tmpfs /home
mount -t tmpfs -o mode=700 tmpfs /root
mount -t proc -o hidepid=invisible proc /proc
mount -o remount,bind,ro /sys
mount --bind /run/usdtkit /run/usdtkit
mount --bind "$SD" "$SD"
mount -o remount,bind,ro /
exec "\$@"
EOF
# The daemon's binary out of /tmp too, which its namespace replaces: a
# checkout under /tmp (the fresh-machine check's clone) has its build there.
cp "$HELPERD" "$SD/usdtkit-helperd"
start_daemon_ns() {
	daemon_start "$DLOG.new" unshare -m --propagation slave bash "$T/ns.sh" \
		"$SD/usdtkit-helperd" -f --debug --socket "$SOCK" --linger 0
}
start_daemon_ns
dpid=$DAEMON_PID
# (unshare execs bash, which execs the daemon: the same pid)
# (by identity: in a chroot, the path the kernel prints for another mount
# namespace's file is not the one we see)
[ "/proc/$dpid/exe" -ef "$SD/usdtkit-helperd" ] || fail "the daemon is not pid $dpid ($(readlink /proc/$dpid/exe))"
[ "$(readlink /proc/$dpid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] || fail "the daemon shares our mount namespace"
# What the daemon sees: not the host's /tmp nor /home.
[ -e "/proc/$dpid/root$PROG" ] && fail "the daemon's namespace shows the host's /tmp"

# Run in a chroot (our / is a directory of another file system's tree, as
# the fresh-machine check's is)?
in_chroot=""
[ "$(awk '$5 == "/" { r = $4 } END { print r }' /proc/self/mountinfo)" = / ] || in_chroot=1
start_path() { grep -E "^p:sdt_${P}app/start " <(uprobe_events) | awk '{ sub(/:0x.*/, "", $2); print $2 }' | sort -u; }

for f in "$PROG" "$HOMEDIR/prog" "$TD/prog"; do
	prog_start ns "$f"
	wait_events 2 "$f, registered by the confined daemon"
	a=$(start_path)
	if [ "$f" = "$TD/prog" ] && [ -z "$in_chroot" ]; then
		expect_eq "$a" "$f" "the trusted file's name"
	else
		# In a chroot (the fresh-machine check), the daemon's maps name the
		# file by the real root's path, which its walk from its own / cannot
		# prove: even the trusted file gets the descriptor (safe, not wrong).
		[ "$f" = "$TD/prog" ] && echo "note: in a chroot: the trusted file is named by a descriptor too"
		case $a in /proc/"$dpid"/fd/[0-9]*) ;; *) fail "$f: events name $a, not a descriptor of the daemon" ;; esac
		expect_eq "$(stat -Lc %d-%i "$a")" "$(stat -c %d-%i "$f")" "$f: the descriptor is the file"
	fi
	rm -f "$T/perf.ready"
	perf record -q -e "sdt_${P}app:start" -a -o "$T/perf.data" -- \
		sh -c "echo on >'$T/perf.ready'; sleep 3" >"$T/perf.out" 2>&1 &
	perf_pid=$!
	at_exit "kill $perf_pid 2>/dev/null"
	wait_until 20 "perf record to start" test -e "$T/perf.ready"
	prog_cmd ns "fire 2"
	prog_wait ns 'fired 2'
	wait "$perf_pid" || { cat "$T/perf.out" >&2; fail "$f: perf record failed"; }
	perf script -i "$T/perf.data" >"$T/perf.txt" 2>"$T/perf.err" || { cat "$T/perf.err" >&2; fail "perf script"; }
	expect_grep "sdt_${P}app:start: \((0x)?[0-9a-f]+\) count=2 label=\"str-2\"" "$T/perf.txt" "$f: a firing recorded by perf"
	prog_stop ns
	wait_events 0 "after $f exited"
	echo "ok: $f registered as $a; perf recorded its firings"
done

# A deleted file: the daemon's own descriptor, through its /proc.
cp "$LIB" "$T/gone.so"
prog_start del "$HDCLIENT" dlreg-del "$T/gone.so"
expect_grep "^status=0 nprobes=1\$" "$T/del.out" "registering a deleted file"
wait_events 1 "the deleted file's event"
expect_grep "^p:sdt_${P}lib/call /proc/$dpid/fd/[0-9]+:" "$TRACEFS/uprobe_events" "the deleted file, through a descriptor"
prog_stop del
wait_events 0 "after the deleted file's process exited"
daemon_healthy
stop_daemon
HD_OK=1
