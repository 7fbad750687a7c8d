# The tracefs faults (t-fault-tracefs-*.sh): source after tests/lib/common.sh
# and tests/helperd/lib.sh, then call tracefs_fault KIND.
#
# The fault is injected in a PRIVATE mount namespace (unshare --mount
# --propagation private) that the daemon runs in; the host's tracefs is never
# unmounted or altered. KIND:
#   unmounted  tracefs unmounted there and /sys/kernel hidden under an empty
#              tmpfs, so the daemon cannot mount it either: -ENODEV
#   readonly   a read-only bind mount of tracefs over itself: -EROFS
#   nouprobes  a tmpfs over /sys/kernel/tracing (a kernel without uprobe
#              events, as far as the daemon can tell): -EOPNOTSUPP
# Checked: the daemon starts and serves (LIST); REGISTER is refused with that
# errno; the log says once what is wrong and what to do; nothing is written
# (no event, the state file byte for byte as it was); a probed program's
# output is that of a USDTKIT_DISABLE=1 run; once the fault is repaired in
# the namespace, the daemon registers without a restart, and SIGTERM removes
# what it created.

NSPID=""
# -r: the target's root, so that a run inside a chroot (the fresh check) stays in
# it: entering a mount namespace otherwise moves to its real root.
ns() { nsenter -t "$NSPID" -m -r -- "$@"; }

tracefs_fault() { # KIND
	local kind=$1 want_errno repair i
	case $kind in
	unmounted) want_errno=ENODEV ;;
	readonly) want_errno=EROFS ;;
	nouprobes) want_errno=EOPNOTSUPP ;;
	*) fail "unknown fault $kind" ;;
	esac
	command -v unshare >/dev/null && command -v nsenter >/dev/null ||
		skip "needs unshare and nsenter (util-linux)"
	need_tracefs
	build_progs gcc

	# The namespace, held by a sleeping process.
	unshare --mount --propagation private -- sleep 3600 &
	NSPID=$!
	at_exit "kill $NSPID 2>/dev/null"
	for i in $(seq 100); do
		[ "$(readlink "/proc/$NSPID/ns/mnt" 2>/dev/null)" != "$(readlink /proc/self/ns/mnt)" ] &&
			break
		sleep 0.02
	done
	[ "$(readlink "/proc/$NSPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
		fail "no private mount namespace: refusing to touch tracefs"

	case $kind in
	unmounted)
		ns sh -c 'umount /sys/kernel/debug/tracing 2>/dev/null; umount /sys/kernel/tracing' ||
			fail "unmounting tracefs in the private namespace"
		ns mount -t tmpfs -o ro,size=4k usdtkit-fault /sys/kernel ||
			fail "hiding /sys/kernel in the private namespace"
		repair="umount /sys/kernel" # the daemon then mounts tracefs itself
		;;
	readonly)
		ns sh -c 'mount --bind /sys/kernel/tracing /sys/kernel/tracing &&
			mount -o remount,bind,ro /sys/kernel/tracing' || fail "the read-only bind mount"
		repair="mount -o remount,bind,rw /sys/kernel/tracing"
		;;
	nouprobes)
		# (with debugfs mounted, its tracing/ is an automount of tracefs:
		# hidden under an empty read-only tmpfs too)
		ns sh -c 'umount /sys/kernel/debug/tracing 2>/dev/null;
			! mountpoint -q /sys/kernel/debug ||
				mount -t tmpfs -o ro,size=4k usdtkit-fault /sys/kernel/debug;
			mount -t tmpfs -o size=64k usdtkit-fault /sys/kernel/tracing' || fail "the tmpfs"
		repair="umount /sys/kernel/tracing"
		;;
	esac
	# The fault is real in the namespace, and absent on the host.
	if ns test -w /sys/kernel/tracing/uprobe_events; then
		fail "uprobe_events is still writable in the namespace"
	fi
	[ -w "$TRACEFS/uprobe_events" ] || fail "the host's tracefs was altered"

	# A previous instance's state file: it must stay as it is.
	printf 'usdtkit-helperd-state 1\n' >"$T/state"
	touch -d '2020-01-01 00:00' "$T/state"
	local state0
	state0=$(stat -c '%s %Y %i' "$T/state")$(sha256sum <"$T/state")

	USDTKIT_DISABLE=1 run_prog >"$T/expected"
	expect_grep '^fired 3$' "$T/expected" "the program's own output"

	HD_WRAP="nsenter -t $NSPID -m -r --" start_daemon --state "$T/state"
	"$HDCLIENT" dlreg "$LIB" >"$T/reg"
	expect_grep "^status=$(errno_of "$want_errno") nprobes=0\$" "$T/reg" "REGISTER without tracefs"
	for i in 1 2 3; do
		USDTKIT_DEBUG=1 run_prog >"$T/got"
		cmp -s "$T/expected" "$T/got" ||
			{ diff "$T/expected" "$T/got" >&2; fail "run $i: the program's output differs"; }
		grep -q 'refused by the helper' "$T/prog.err" ||
			{ cat "$T/prog.err" >&2; fail "run $i: drti's answer"; }
	done
	"$HDCLIENT" dlreg "$LIB" >"$T/reg"
	expect_grep "^status=$(errno_of "$want_errno") nprobes=0\$" "$T/reg" "REGISTER again"
	"$HDCLIENT" list >"$T/list"
	expect_grep '^status=0 count=0 ' "$T/list" "LIST without tracefs"
	expect_eq "$(grep -c 'tracefs is not usable' "$DLOG.new")" 1 "log lines about tracefs"
	expect_grep "tracefs is not usable: .*Registrations are refused \\($(errno_text "$want_errno")\\).*to fix: " \
		"$DLOG.new" "what is wrong and what to do"
	expect_eq "$(our_events | wc -l)" 0 "events written without a usable tracefs"
	expect_eq "$(stat -c '%s %Y %i' "$T/state")$(sha256sum <"$T/state")" "$state0" "the state file"

	# Repaired: registered without a restart (the retry is at most once a second).
	ns sh -c "$repair" || fail "repairing: $repair"
	for i in $(seq 50); do
		"$HDCLIENT" dlreg "$LIB" >"$T/reg"
		grep -q '^status=0 ' "$T/reg" && break
		sleep 0.1
	done
	expect_grep '^status=0 nprobes=1$' "$T/reg" "REGISTER once tracefs is usable"
	expect_grep 'tracefs is usable again' "$DLOG.new" "the log of the repair"
	prog_start a
	wait_events 2 "the program after the repair"
	kill -0 "$DAEMON_PID" || fail "the daemon died"
	# (the events are written by the daemon's writer thread, the state file by its loop after)
	poll_until 20 grep -qE "^site [0-9]+ [0-9]+ sdt_${P}app " "$T/state" ||
		{ cat "$T/state" >&2; fail "the state file after the repair lists no site"; }
	stop_daemon
	wait_events 0 "after SIGTERM"
	prog_stop a
}

errno_of() { python3 -c "import errno; print(-errno.$1)"; }
errno_text() { python3 -c "import errno, os; print(os.strerror(errno.$1))"; }
# The program's output without its pid.
