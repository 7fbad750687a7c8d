#!/bin/bash
# A Python provider seen by perf through the helper's registered events, by
# name and system-wide (`perf record -e sdt_<provider>:<probe> -a`): the
# values Python passed, the string decoded, exactly.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-python/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_tracefs
command -v perf >/dev/null || fail "perf is not installed (scripts/deps.sh installs it)"

DLOG="$T/daemon.log"
our_events() { uprobe_events_in_group "sdt_$PROV/"; }
cleanup() {
	local e
	for e in $(our_events); do remove_uprobe_event "$e"; done
}
at_exit cleanup
at_exit daemon_stop
at_exit '[ -n "${OK:-}" ] || { echo "--- daemon log:"; tail -40 "$DLOG"; } >&2'
daemon_start "$DLOG" "$HELPERD" -f --socket "$USDTKIT_HELPER_SOCKET" --linger 0

cat >"$T/fire.py" <<PY
import os, sys, time
import usdtkit
with usdtkit.Provider("$PROV") as p:
    q = p.add_probe("job-done", "string", "int64", "uint8")
    p.load()
    print("ready", os.getpid(), flush=True)
    n = 0
    while not os.path.exists("$T/stop"):
        n += 1
        q.fire("job %d" % n, -n, n % 256)
        time.sleep(0.01)
PY
py_start "$T/py" "$T/fire.py"
py_wait "$T/py" ready
wait_until 30 "the daemon to create sdt_$PROV/job__done" eval '[ "$(our_events)" = "sdt_$PROV/job__done" ]'
perf record -q -e "sdt_$PROV:job__done" -a -o "$T/perf.data" -- sleep 1 >"$T/perf.out" 2>&1 ||
	{ cat "$T/perf.out" >&2; fail "perf record -e sdt_$PROV:job__done -a"; }
perf script -i "$T/perf.data" >"$T/perf.txt" 2>"$T/perf.err" || { cat "$T/perf.err" >&2; fail "perf script"; }
touch "$T/stop"
py_reap "$T/py"
grep "sdt_$PROV:job__done:" "$T/perf.txt" >"$T/hits" || { cat "$T/perf.txt" >&2; fail "perf saw no firing"; }
[ "$(wc -l <"$T/hits")" -ge 10 ] || fail "perf: fewer than 10 firings in 1 s"
# Each record: arg1 the string "job N", arg2 -N, arg3 N mod 256.
awk '{ if (!match($0, /arg1="job [0-9]+" arg2=-[0-9]+ arg3=[0-9]+$/)) { print; bad = 1; next }
	split(substr($0, RSTART), f, /[ "=]+/); n = f[3]
	if (f[5] != -n || f[7] != n % 256) { print; bad = 1 } } END { exit bad }' "$T/hits" ||
	fail "perf records with other values (above)"
wait_until 30 "the daemon to remove the events of the exited program" eval '[ -z "$(our_events)" ]'
OK=1
