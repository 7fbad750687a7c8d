#!/bin/bash
# A Python provider with usdtkit-helperd running (a private daemon on a
# private socket, tests/lib/daemon.sh): load registers it, so
#  - tracefs has typed events sdt_<provider>/<probe> (request-start as
#    request__start, strings decoded as ustring);
#  - `dtrace -l -p PID` lists every probe, names with '-' shown back as '-',
#    in the module memfd:usdtkit:<module>; `dtrace -l` through the daemon
#    lists the same;
#  - enabling the event (in a tracefs instance of this test) makes
#    Probe.enabled True; the fired values are in the event's trace;
#    disabling it makes it False again;
#  - when the program exits, the daemon removes the events.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-python/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_tracefs

SOCK=$USDTKIT_HELPER_SOCKET
DLOG="$T/daemon.log"
INST="$TRACEFS/instances/usdtkit-$PROV"
our_events() { uprobe_events_in_group "sdt_$PROV/"; }
cleanup() {
	[ -d "$INST" ] && { echo 0 2>/dev/null >"$INST/events/sdt_$PROV/enable"; rmdir "$INST"; }
	local e
	for e in $(our_events); do remove_uprobe_event "$e"; done
}
at_exit cleanup
at_exit daemon_stop
at_exit '[ -n "${OK:-}" ] || { echo "--- daemon log:"; tail -40 "$DLOG"; } >&2'
daemon_start "$DLOG" "$HELPERD" -f --debug --socket "$SOCK" --linger 0

py_start "$T/py" "$USDTKIT_SRCDIR/tests/runtime-python/tracee.py" "$PROV" hold "$T/go"
py_wait "$T/py" ready
PID=$PYPID
probes="ints8 ints16 ints32 ints64 masked pointers strings request__start"
want_events=$(for p in $probes; do echo "sdt_$PROV/$p"; done | sort)
has_events() { [ "$(our_events | sort)" = "$want_events" ]; }
wait_until 30 "the daemon to create the events of $PROV" has_events
a0=%di # the argument array's register: rdi, or arm64's x0
[ "$(uname -m)" = aarch64 ] && a0=%x0
expect_grep "^p:sdt_$PROV/request__start .* arg1=\+0\(\+0\($a0\)\):ustring arg2=\+8\($a0\):s64\$" \
	"$TRACEFS/uprobe_events" "request-start's event: a string and an int64"

"$DTRACE" -l -p "$PID" >"$T/by-pid" 2>"$T/err" || { cat "$T/err" >&2; fail "dtrace -l -p exited $?"; }
# (Debian's python3 has USDT probes of its own: provider python<pid>.)
expect_eq "$(awk -v p="$PROV$PID" '$2 == p {print $2, $3, $4, $5}' "$T/by-pid")" \
	"$(for p in $probes; do p=${p/__/-}; echo "$PROV$PID memfd:usdtkit:${PROV}mod $p $p"; done)" \
	"dtrace -l -p: the Python provider's probes"
"$DTRACE" -l >"$T/all" 2>"$T/err" || { cat "$T/err" >&2; fail "dtrace -l exited $?"; }
grep -E "^ +[0-9]+ +$PROV$PID " "$T/all" | cut -c7- >"$T/from-daemon"
grep -E "^ +[0-9]+ +$PROV$PID " "$T/by-pid" | cut -c7- | diff -u - "$T/from-daemon" >&2 ||
	fail "dtrace -l through the daemon does not list the probes as -p does"

# The event, enabled in an instance of our own: the kernel counts the
# semaphore and Python sees it.
mkdir "$INST"
echo 1 >"$INST/events/sdt_$PROV/request__start/enable"
touch "$T/go"
py_wait "$T/py" fired
expect_eq "$(sed -n 's/^\(enabled\|fired\) /&/p' "$T/py")" "enabled True
fired True" "Probe.enabled and fire() with the tracefs event enabled"
expect_grep "request__start: \([0-9a-fx]+\) arg1=\"/index.html\" arg2=42\$" "$INST/trace" \
	"the event's record of the fired values"
echo 0 >"$INST/events/sdt_$PROV/request__start/enable"
py_wait "$T/py" disabled
py_reap "$T/py"
expect_grep '^disabled False$' "$T/py" "Probe.enabled once the event is disabled"
wait_until 30 "the daemon to remove the events of the exited program" eval '[ -z "$(our_events)" ]'
OK=1
