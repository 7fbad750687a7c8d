#!/bin/bash
# Processes that send REGISTER for a real probed module and exit before the
# daemon looks at them: none is registered, no event and no registry entry
# remains, nothing is attributed to another process, and the daemon keeps
# serving others meanwhile and afterwards.
#
# Deterministic: with the daemon SIGSTOPped, N clients (fclient, each a
# fork child that maps liblib.so) connect, send REGISTER and _exit without
# reading; once they are gone (reaped, or still zombies) the daemon is
# continued. Racy: 1,000 such clients against a running daemon, so that some
# are looked at while alive, some while dying, some after: the end state
# must be the same. The program whose drti registers meanwhile behaves as
# with registration disabled. Last, the window the asynchronous parse opens:
# a client that dies while its new file is being parsed (the daemon's
# --test-worker-delay holds the parser), alone and beside a live one.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/fault/process/lib.sh"
need_tracefs
build_progs gcc
start_daemon
served_ok "at start"

# The REGISTER lines the daemon logged for these pids (--debug): each must
# be a refusal ("...: <strerror>"), never the module's path.
check_refused() { # what pid...
	local what=$1 pid line esrch=0 efault=0 dropped=0
	shift
	for pid in "$@"; do
		line=$(grep -E "REGISTER pid $pid $DONE" "$DLOG.new" | tail -1)
		case "$line" in
		"") dropped=$((dropped + 1)) ;; # read nothing: also a refusal
		*": /"*) fail "$what: pid $pid (exited) was registered: $line" ;;
		*"No such process") esrch=$((esrch + 1)) ;;
		*"Bad address") efault=$((efault + 1)) ;;
		*) fail "$what: pid $pid: unexpected answer: $line" ;;
		esac
	done
	echo "$what: refused with ESRCH $esrch, EFAULT $efault, dropped $dropped"
}

nothing_left() { # what
	wait_events 0 "$1: events"
	[ -z "$(list_entries)" ] || { list_entries >&2; fail "$1: the registry still has entries"; }
	expect_no_grep "registered .*liblib\\.so" "$DLOG.new" "$1: the module was registered"
}

# 1. Deterministic, reaped: every client is gone before the daemon reads.
for n in 1 20; do
	kill -STOP "$DAEMON_PID"
	"$FCLIENT" regexit "$LIB" "$n" >"$T/rx.out" || fail "fclient regexit"
	expect_grep "^sent $n\$" "$T/rx.out" "$n clients sent their REGISTER"
	pids=$(sed -n 's/^child //p' "$T/rx.out")
	for p in $pids; do ! kill -0 "$p" 2>/dev/null || fail "client $p still exists"; done
	kill -CONT "$DAEMON_PID"
	served_ok "$n exited clients"
	for p in $pids; do wait_log "REGISTER pid $p $DONE" "client $p's request handled"; done
	check_refused "$n exited clients" $pids
	nothing_left "$n exited clients"
	echo "ok: $n clients exited before the daemon read their REGISTER: all refused, nothing left"
done

# 2. Deterministic, zombies: exited but not yet reaped while the daemon reads.
kill -STOP "$DAEMON_PID"
rm -f "$T/zin"
mkfifo "$T/zin"
"$FCLIENT" regexit "$LIB" 20 zombies <"$T/zin" >"$T/rz.out" &
zc=$!
exec {ZFD}>"$T/zin"
for i in $(seq 500); do grep -q '^forked' "$T/rz.out" && break; sleep 0.02; done
expect_grep '^forked 20$' "$T/rz.out" "zombie clients forked"
pids=$(sed -n 's/^child //p' "$T/rz.out")
for p in $pids; do
	for i in $(seq 250); do running "$p" || break; sleep 0.02; done
	running "$p" && fail "client $p did not exit"
	[ -e "/proc/$p" ] || fail "client $p was reaped (not a zombie)"
done
kill -CONT "$DAEMON_PID"
served_ok "20 zombie clients"
for p in $pids; do wait_log "REGISTER pid $p $DONE" "zombie $p's request handled"; done
check_refused "20 zombie clients" $pids
nothing_left "20 zombie clients"
exec {ZFD}>&-
wait "$zc"
expect_grep '^sent 20$' "$T/rz.out" "zombie clients sent their REGISTER"
echo "ok: 20 zombie clients: all refused, nothing left"

# 3. Racy, at scale: 1,000 clients exiting right after sending, against a
# running daemon, while a probed program registers itself and the same
# library (dlopen): afterwards the registry holds exactly that program's two
# modules, and when it drops the library the library's events go (no client
# left a user behind).
pstart app "$PROG"
pcmd app "dlopen $LIB"
prog_wait app '^dlopen ok'
app=$PID_app
handled0=$(count_log "REGISTER pid [0-9]+ $DONE")
t0=$(now_ms)
nice -n 5 "$FCLIENT" regexit "$LIB" 1000 >"$T/r1000.out" &
rc=$!
pcmd app "fire 3"
prog_wait app '^fired 3'
served_ok "during 1,000 exiting clients" 10000
wait "$rc" || fail "fclient regexit 1000"
ms=$(($(now_ms) - t0))
# The daemon may shed connections at its cap before a client sends (the
# newcomer wins): those clients sent nothing, which is as good.
sent=$(sed -n 's/^sent //p' "$T/r1000.out")
[ "${sent:-0}" -ge 500 ] || fail "only ${sent:-0} of 1,000 clients could send their REGISTER"
# Quiescence: the log stops growing once every connection is read or dropped.
prev=-1
for i in $(seq 300); do
	cur=$(wc -l <"$DLOG.new")
	[ "$cur" -eq "$prev" ] && break
	prev=$cur
	sleep 0.3
done
handled=$(($(count_log "REGISTER pid [0-9]+ $DONE") - handled0))
alive=$(grep -cE "REGISTER pid [0-9]+ ${REG_AT}/.*liblib\.so" "$DLOG.new" || true)
list_entries >"$T/entries"
expect_eq "$(awk '{print $2}' "$T/entries" | sort -u | tr '\n' ' ')" "$app " \
	"after 1,000 exiting clients: the registry's processes"
expect_eq "$(wc -l <"$T/entries")" 2 "after 1,000 exiting clients: the program's modules"
expect_eq "$(our_events | grep -c "^sdt_${P}lib/")" 1 "the library's event while the program maps it"
pcmd app "dlclose"
prog_wait app '^dlclose ok'
wait_events 2 "the library dropped by its only real user" # the program's start, tick
pcmd app exit
pstop app
same_as_disabled app
wait_events 0 "after 1,000 exiting clients"
[ -z "$(list_entries)" ] || { list_entries >&2; fail "after 1,000 exiting clients: registry entries left"; }
served_ok "after 1,000 exiting clients"
echo "1,000 exiting clients: $ms ms, $sent sent, $handled REGISTERs answered, $alive found their client alive"
echo "ok: 1,000 clients exiting right after REGISTER: no event, no registry entry left"

# 4. Dying while the file is parsed: the parser of files named *slow-* sleeps
# 8 s first; another client must be served meanwhile (within 6 s).
stop_daemon
start_daemon --parse-timeout 20000 --test-worker-delay '8000:*slow-*'
for live in 0 1; do
	slow="$B/slow-$live-liblib.so"
	cp "$LIB" "$slow"
	pstart h1 "$FCLIENT" -- hold "$slow"
	h1=$PID_h1
	pcmd h1 reg
	wait_log "REGISTER pid $h1 ${REG_AT}waits for the parse" "$live: the request waits for the parse"
	if [ "$live" = 1 ]; then
		pstart h2 "$FCLIENT" -- hold "$slow"
		h2=$PID_h2
		pcmd h2 reg
		wait_log "REGISTER pid $h2 ${REG_AT}waits for the parse" "$live: the second request waits"
	fi
	kill -9 "$h1"
	served_ok "$live: while a dead client's file is parsed" 6000
	wait_log "REGISTER pid $h1 $DONE" "$live: the dead client's request ended"
	# Refused: the requester is gone (ESRCH), or its connection closed and,
	# nobody else waiting, the parse was abandoned (ECANCELED).
	expect_grep "REGISTER pid $h1 ${REG_AT}(No such process|Operation canceled)\$" "$DLOG.new" \
		"$live: the dead client refused"
	if [ "$live" = 0 ]; then
		expect_no_grep "registered $slow" "$DLOG.new" "$live: a file nobody waits for was registered"
	else
		prog_wait h2 '^status=0 nprobes=1$'
		expect_eq "$(list_entries | awk '{print $2, $7}')" "$h2 $slow" "$live: the registry"
		expect_eq "$(our_events)" "sdt_${P}lib/call" "$live: the live client's events"
		pstop h2
	fi
	wait_events 0 "$live: after the parse"
	[ -z "$(list_entries)" ] || { list_entries >&2; fail "$live: registry entries left"; }
	echo "ok: a client killed while its file is parsed ($([ "$live" = 1 ] && echo "beside a live one" || echo alone)): refused, nothing left"
done
served_ok "at the end"
HD_OK=1
