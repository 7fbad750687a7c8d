#!/bin/bash
# What a request costs the daemon's loop, in instructions (callgrind: the
# same on a loaded machine as on an idle one; issue 33, item 5):
#   bench/helper/loopcost.sh [BUILDDIR] [N]     (default: build, 300)
# HELPERD=PATH measures another daemon binary (an older build, to compare);
# LOOPCOST_KEEP=DIR keeps the callgrind profiles and daemon logs there
# (callgrind_annotate); LOOPCOST_ONLY=known|new|list|big measures that kind alone
# (big, the 12,000-site file, is measured only when asked: its events take
# minutes to write and remove).
# A private daemon under callgrind (--test-no-seccomp: valgrind cannot run
# its worker under seccomp) is sent, by bench/helper/loadclient.c, one
# connection per request as drti and `dtrace -l` make them:
#   - N REGISTERs of a 10-site file it knows (known),
#   - 20 REGISTERs of new 10-site files (new),
#   - N LISTs of every process (list),
#   - one REGISTER of a new 12,000-site file, then its removal when the
#     client exits (big: the process's exit, the retirement and the
#     removal's start and end on the loop, hd_process_exited,
#     hd_registry_background, hd_tick; each part printed on its own, and
#     the loop's whole share: everything but the writer thread's),
# each kind to a daemon of its own. Counted: the loop's handling of a
# connection (conn_accept_one, serve_conn_event, inclusive: accept, the
# peer's credentials, the request, the answer), for LIST the lister
# thread's reading of /proc (lister_main, also printed apart: the rest is
# the loop's share), and for new files the parse's end and the events'
# writing (hd_parse_event, hd_writer_event, the writer thread's jobs).
# Printed per request. Only
# user-space instructions: the kernel's side (printing /proc/PID/maps,
# tracefs) is not in these counts.
set -eu
# shellcheck source=bench/helper/daemonbench.sh
. "$(dirname "$0")/daemonbench.sh"
n=${2:-300}
bh_setup loopcost "${1:-build}" tests/crash/crashclient
hold="$builddir/tests/crash/crashclient"
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }
dpid=
stop_daemon() {
	if [ -n "$dpid" ]; then
		kill "$dpid" 2>/dev/null || true
		wait "$dpid" 2>/dev/null || true
	fi
}
bh_on_exit stop_daemon
bh_loadclient
bh_lib ten ten 10 1 ", x"
mkfifo "$w/hold.in"
mkdir -m 0755 "$w/new"
for i in $(seq 20); do cp "$w/ten.so" "$w/new/libten$i.so"; done
[ "${LOOPCOST_ONLY:-}" != big ] || bh_lib big big 12000

# KIND: the daemon under callgrind, the requests, then its counts.
measure() {
	local kind=$1 out="$w/cg.$1" fns
	rm -f "$sock"
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect=conn_accept_one --toggle-collect=serve_conn_event \
		--toggle-collect=hd_parse_event --toggle-collect=hd_writer_event \
		--toggle-collect=writer_main --toggle-collect=checker_main --toggle-collect=lister_main \
		--toggle-collect=hd_process_exited \
		--toggle-collect=hd_registry_background --toggle-collect=hd_tick \
		"$helperd" -f --socket "$sock" --linger 0 --no-board --test-no-seccomp \
		2>"$w/daemon.$kind.log" &
	dpid=$!
	for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
	[ -S "$sock" ] || { cat "$w/daemon.$kind.log" >&2; exit 1; }
	case $kind in
	known)
		"$w/loadclient" known 1 0 "$w/ten.so" >/dev/null # its events, first
		"$w/loadclient" known "$n" 0 "$w/ten.so" >"$w/r.$kind" ;;
	new) "$w/loadclient" new 0 "$w"/new/libten*.so >"$w/r.$kind" ;;
	big)
		LOADCLIENT_WAIT_S=1800 "$w/loadclient" new 0 "$w/big.so" >"$w/r.$kind"
		# The client gone, the file is removed (--linger 0): its end awaited.
		for _ in $(seq 1800); do
			grep -q "unregistered .*big.so" "$w/daemon.$kind.log" && break
			sleep 1
		done
		grep -q "unregistered .*big.so" "$w/daemon.$kind.log" ||
			{ echo "big.so was not removed within 30 min" >&2; exit 1; }
		sleep 3 ;; # a tick or two: the state file written
	list)
		# A file registered and mapped: LIST reads every process's maps for it.
		setsid "$hold" hold "$w/ten.so" <"$w/hold.in" >"$w/hold.out" 2>&1 &
		exec 8>"$w/hold.in"
		for _ in $(seq 300); do grep -q '^ready' "$w/hold.out" && break; sleep 0.1; done
		lines0=$(cat /proc/[0-9]*/maps 2>/dev/null | wc -l)
		"$w/loadclient" list "$n" 0 >"$w/r.$kind"
		lines1=$(cat /proc/[0-9]*/maps 2>/dev/null | wc -l)
		exec 8>&- ;;
	esac
	kill "$dpid"
	wait "$dpid" 2>/dev/null || true
	dpid=
	[ -z "${LOOPCOST_KEEP:-}" ] || cp "$out" "$w/daemon.$kind.log" "$LOOPCOST_KEEP/"
	fns=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
		awk '/conn_accept_one|serve_conn_event|hd_parse_event|hd_writer_event|writer_main|checker_main|lister_main/ {
			gsub(",", "", $1); printf "%s=%s ", $NF, $1 }')
	case $kind in new) reqs=20 ;; known) reqs=$((n + 1)) ;; big) reqs=1 ;; *) reqs=$n ;; esac
	if [ "$kind" = big ]; then
		callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null | awk '
			/^ *[0-9,]+ / {
				v = $1; gsub(",", "", v)
				for (i = 2; i <= NF; i++) {
					f = $i; sub(/.*:/, "", f)
					if (f ~ /^(serve_conn_event|conn_accept_one|hd_parse_event|hd_writer_event|writer_main|checker_main|hd_process_exited|hd_registry_background|hd_tick|reg_done|rm_done|hd_mod_remove|hd_registry_flush|hd_worker_decode|hd_journal_intent|check_done)$/ && !(f in seen)) {
						seen[f] = v; order[++k] = f
					}
				}
			}
			/^ *[0-9,]+ .*PROGRAM TOTALS/ { t = $1; gsub(",", "", t) }
			END {
				for (i = 1; i <= k; i++) printf "       %-24s %12d\n", order[i], seen[order[i]]
				printf "       the loop (all but writer_main, checker_main) %d\n", t - seen["writer_main"] - seen["checker_main"]
			}'
	fi
	awk -v k="$kind" -v r="$reqs" '/^summary:/ { printf "%-6s %d requests: %.0f instructions per request\n", k, r, $2 / r }' "$out"
	echo "       inclusive: $fns"
	# LIST's reading of /proc is the lister thread's (lister_main), not the loop's.
	[ "$kind" != list ] || awk -v r="$reqs" '/^summary:/ { s = $2 }
		/lister_main/ { v = $1; gsub(",", "", v); l = v }
		END { printf "       the loop (all but lister_main): %.0f per request; lister_main %.0f\n", (s - l) / r, l / r }' \
		<(cat "$out"; callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null | grep -m1 'lister_main')
	[ "$kind" != list ] || echo "       the machine's maps lines before and after: $lines0, $lines1 (LIST reads them all)"
	echo "       client: $(cat "$w/r.$kind")"
}
echo "daemon: $helperd"
for kind in known new list big; do
	case ${LOOPCOST_ONLY:-$kind} in
	big) [ "$kind" = big ] && measure big ;;
	"$kind") measure "$kind" ;;
	esac
done
