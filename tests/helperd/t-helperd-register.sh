#!/bin/bash
# usdtkit-helperd end to end with real -G programs (drti talks to the daemon):
# events appear at start with the argument names and the string fetch the .d
# file declares, fire with decoded values, follow fork children, dlopen and
# dlclose, awkward paths and a deleted file, and are gone after exit.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs

for cc in $COMPILERS; do
	build_progs "$cc"
	start_daemon

	# 1. Start: both probes, named and typed from app.d (count: int, label: char *).
	prog_start a
	wait_events 2 "$cc: after start"
	grep -E "^p:sdt_${P}app/start " <(uprobe_events) >"$T/def"
	expect_grep " $(event_path "$PROG"):0x[0-9a-f]+\(0x[0-9a-f]+\) count=[^ ]+:s32 label=\+0\([^ ]+\):ustring\$" "$T/def" \
		"$cc: definition of start (path, ref_ctr, named int and string)"
	grep -E "^p:sdt_${P}app/tick " <(uprobe_events) >"$T/def"
	expect_grep " n=[^ ]+:s32\$" "$T/def" "$cc: definition of tick"
	"$HDCLIENT" list >"$T/list"
	pid_a=$(awk '/^ready/ {print $2}' "$T/a.out")
	expect_grep "^entry $pid_a 2 [0-9]+ [0-9]+ 0x[0-9a-f]+ $PROG\$" "$T/list" "$cc: LIST names the process"

	# 2. Firing, decoded, in a private instance (never the global buffer).
	inst="$TRACEFS/instances/$P"
	mkdir "$inst"
	at_exit "rmdir '$inst' 2>/dev/null"
	echo 1 >"$inst/events/sdt_${P}app/enable"
	prog_cmd a "fire 3"
	prog_wait a 'fired 3'
	echo 0 >"$inst/events/sdt_${P}app/enable"
	cat "$inst/trace" >"$T/trace"
	rmdir "$inst"
	for i in 1 2 3; do
		expect_grep "start: \(0x[0-9a-f]+\) count=$i label=\"str-$i\"" "$T/trace" "$cc: start firing $i"
		expect_grep "tick: \(0x[0-9a-f]+\) n=$i\$" "$T/trace" "$cc: tick firing $i"
	done
	expect_eq "$(grep -c 'start:' "$T/trace")" 3 "$cc: start firings"

	# 3. A fork child is listed too (LIST finds who maps each module), counted per pid;
	#    it sent nothing itself: drti has no fork handler.
	prog_cmd a fork
	prog_wait a '^child '
	child=$(awk '/^child/ {print $2}' "$T/a.out")
	for i in $(seq 200); do
		"$HDCLIENT" list "$child" >"$T/list"
		grep -q "^entry $child 2 " "$T/list" && break
		sleep 0.02
	done
	expect_grep "^entry $child 2 " "$T/list" "$cc: the fork child is registered"
	kept=$(count_log "$RETIRED_KEPT")
	prog_stop a
	wait_log_count "$RETIRED_KEPT" $((kept + 1)) "$cc: the retirement pass after the parent's exit"
	expect_eq "$(our_events | wc -l)" 2 "$cc: events while the fork child lives"
	kill "$child"
	wait_events 0 "$cc: after the parent and the child exited"

	# 4. dlopen/dlclose cycles: the library's events come and go with it.
	prog_start b
	for i in 1 2 3 4 5; do
		prog_cmd b "dlopen $LIB"
		prog_wait b "^dlopen ok" "$i"
		wait_events 3 "$cc: dlopen $i"
		our_events | grep -qx "sdt_${P}lib/call" || fail "$cc: no sdt_${P}lib/call after dlopen"
		prog_cmd b dlclose
		prog_wait b "^dlclose ok" "$i"
		wait_events 2 "$cc: dlclose $i"
	done
	prog_stop b
	wait_events 0 "$cc: after exit"
	stop_daemon
done

# 5. A path tracefs cannot take literally (space, newline): registered through an alias.
start_daemon
odd="$T/dir with space/pro
g"
mkdir -p "$T/dir with space"
cp "$PROG" "$odd"
prog_start c "$odd"
wait_events 2 "path with a space and a newline"
expect_grep "^p:sdt_${P}app/start /run/usdtkit/files/[0-9]+-[0-9]+:" "$TRACEFS/uprobe_events" "alias path"
alias=$(grep -oE "^p:sdt_${P}app/start /run/usdtkit/files/[0-9]+-[0-9]+" <(uprobe_events) | awk '{print $2}')
expect_eq "$(stat -c %i "$alias")" "$(stat -c %i "$odd")" "the alias is the file"
inst="$TRACEFS/instances/$P"
mkdir "$inst"
echo 1 >"$inst/events/sdt_${P}app/start/enable"
prog_cmd c "fire 2"
prog_wait c 'fired 2'
echo 0 >"$inst/events/sdt_${P}app/start/enable"
expect_grep 'count=2 label="str-2"' "$inst/trace" "firing through the alias"
rmdir "$inst"
prog_stop c
wait_events 0 "after the oddly named program exited"
# (the alias goes on the loop after the writer removed the events)
wait_until 10 "alias $alias to go (left behind)" test ! -e "$alias"

# 6. A deleted library: dlopened, unlinked, then registered (map_files reaches it).
cp "$LIB" "$T/gone.so"
prog_start del "$HDCLIENT" dlreg-del "$T/gone.so"
expect_grep "^status=0 nprobes=1\$" "$T/del.out" "registering a deleted file"
wait_events 1 "the deleted file's event"
# (a deleted file cannot be bind-mounted: the daemon holds it open and names its descriptor)
expect_grep "^p:sdt_${P}lib/call /proc/$DAEMON_PID/fd/[0-9]+:" "$TRACEFS/uprobe_events" \
	"the deleted file is registered through a descriptor of the daemon"
prog_stop del
wait_events 0 "after the process of the deleted file exited"

# 7. Another user's program registers too; LIST shows a user its own processes only.
chmod 755 "$T" "$B"
prog_start u setpriv --reuid=65534 --regid=65534 --clear-groups "$PROG"
wait_events 2 "a program of uid 65534"
pid_u=$(awk '/^ready/ {print $2}' "$T/u.out")
prog_start r
setpriv --reuid=65534 --regid=65534 --clear-groups "$HDCLIENT" list >"$T/list.u"
expect_grep "^entry $pid_u 2 " "$T/list.u" "uid 65534 lists its own process"
expect_eq "$(grep -c '^entry' "$T/list.u")" 1 "processes uid 65534 may list"
"$HDCLIENT" list >"$T/list.r"
expect_eq "$(grep -c '^entry' "$T/list.r")" 2 "processes root lists"
# LISTs read /proc on the lister thread: clients that go before their answer
# (killed after 0 to 9 ms) leave the daemon answering, its log clean (a
# sanitizer build reports into it: stop_daemon).
for i in $(seq 30); do
	timeout -s KILL "0.00$((i % 10))" "$HDCLIENT" list >/dev/null 2>&1 || true
	timeout -s KILL "0.00$((i % 10))" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$HDCLIENT" list >/dev/null 2>&1 || true
done
daemon_healthy
"$HDCLIENT" list >"$T/list.r"
expect_eq "$(grep -c '^entry' "$T/list.r")" 2 "processes root lists after LISTs cut short"
# LISTs at once (queued together, they may share one reading): each answered whole.
lp=""
for i in $(seq 8); do
	"$HDCLIENT" list >"$T/list.p$i" &
	lp="$lp $!"
done
for p in $lp; do wait "$p" || fail "a concurrent LIST failed"; done
for i in $(seq 8); do
	expect_eq "$(grep -c '^entry' "$T/list.p$i")" 2 "processes in concurrent LIST $i"
	expect_grep '^status=0 count=2' "$T/list.p$i" "concurrent LIST $i's reply"
done
prog_stop u
prog_stop r
wait_events 0 "after both exited"

# 8. One file under two names (a hard link): one registration, each process
# listed under the name it mapped.
ln "$PROG" "$T/hardlink"
prog_start h1
prog_start h2 "$T/hardlink"
wait_events 2 "the same file under two names"
expect_eq "$(grep -c "^p:sdt_${P}app/start " <(uprobe_events))" 1 "start sites for one file under two names"
"$HDCLIENT" list >"$T/list"
expect_grep "^entry $PID_h1 2 .* $PROG\$" "$T/list" "the first name"
expect_grep "^entry $PID_h2 2 .* $T/hardlink\$" "$T/list" "the second name"
prog_stop h1
prog_stop h2
wait_events 0 "after both names exited"

# 9. A clean stop removes what the daemon created.
prog_start d
wait_events 2 "before SIGTERM"
stop_daemon TERM
wait_events 0 "after SIGTERM"
prog_stop d
grep -q 'ERROR\|error:' "$DLOG" && { cat "$DLOG" >&2; fail "the daemon logged an error"; }
HD_OK=1
exit 0
