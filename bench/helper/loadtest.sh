#!/bin/bash
# The daemon under one user's load (issue 33, item 5; the verdicts are
# tests/security/t-sec-writer-stall.sh's, these are the figures):
#   bench/helper/loadtest.sh [BUILDDIR] [SECONDS] [LOAD]   (default: build, 60, big+flood)
# HELPERD=PATH runs another daemon binary (an older build, for comparison);
# HELPERD_ARGS adds options to its command line (--test-bulk-nice 0: bulk
# work not niced, to compare).
# LOAD: big+flood, big (the 12,000-site files only), flood, or none (the
# same measurements on a daemon nobody loads: the machine's own floor).
# as root, with tracefs. A private daemon (its own socket, --linger 0) is
# loaded by nobody, who
#   - registers 12,000-site libraries back to back (2 copies in turn: each
#     process registers one, waits for the answer, exits; its events are
#     then removed while the next is written), and
#   - floods the parse queue with 300 slow hostile files (each parse made
#     to take 400 ms: --test-worker-delay on their paths, as a 65,536-note
#     ELF takes ~0.4 s), registered again and again when refused.
# Meanwhile, uid 4242 starts a -G program of a file the daemon knows (one
# copy of it runs throughout) 200 times, each start paired with one under
# USDTKIT_DISABLE=1 (startlat.c; exec to main()): what registration adds to
# the start of a known file's program, which asks the daemon nothing when
# the file is on its board (drti.c); 200 more starts time drti's
# constructor itself inside the process (ctorbench.c cold: the
# registration's whole cost at a start); and, timed request by request
# (bench/helper/loadclient.c), the protocol's requests:
#   - uid 4242's REGISTER of a file the daemon knows, as drti sends it when
#     the board cannot answer (no board, a stale one): 400, 25 ms apart;
#   - uid 4242's new files of 10 sites: 60 copies, one REGISTER each, 150 ms apart;
#   - root's LIST (the protocol request behind `dtrace -l`): 300, 30 ms apart;
#   - root's `dtrace -l` (the whole command, its exec included): 50 runs.
# Then the daemon's CPU (user+system over the window) and memory (VmHWM,
# VmRSS), and, once the load stops, what is left: nobody's events (must
# reach 0) and the time they took to go.
set -eu
# shellcheck source=bench/helper/daemonbench.sh
. "$(dirname "$0")/daemonbench.sh"
secs=${2:-60}
load=${3:-big+flood}
bh_setup loadtest "${1:-build}" tests/security/flood tests/crash/crashclient dtrace/dtrace
flood="$builddir/tests/security/flood"
hold="$builddir/tests/crash/crashclient"
dtrace="$builddir/dtrace/dtrace"
TRACEFS=/sys/kernel/tracing
pids=""
stop_all() {
	local p
	exec 9>&- 2>/dev/null || true
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	if [ -n "${dpid:-}" ]; then
		kill "$dpid" 2>/dev/null || true
		wait "$dpid" 2>/dev/null || true
	fi
}
bh_on_exit stop_all
bh_loadclient
bh_lib big big 12000
bh_lib ten ten 10 1 ", x"
bh_lib hostile hostile 10
# the -G program uid 4242 starts, and the harness that starts it
printf 'provider %sst { probe tick(int); };\n' "$P" >"$w/st.d"
"$dtrace" -h -s "$w/st.d" -o "$w/st.h"
printf '#include "st.h"\n#define BENCHPROV_TICK %sST_TICK\n' "${P^^}" >"$w/bp.h"
gcc -O2 -I"$top/include" -I"$w" -c "$top/bench/helper/target.c" -o "$w/target.o"
"$dtrace" -G -s "$w/st.d" -o "$w/st-prov.o" "$w/target.o"
gcc "$w/target.o" "$w/st-prov.o" -o "$w/target"
gcc -O2 -I"$top/include" -I"$top/core" "$top/bench/helper/startlat.c" -o "$w/startlat"
# drti's constructor timed inside a process at its start
bh_ctorbench "$dtrace" "$w/st.d" "${P}st" "$w/ctorbench" || exit 1
mkdir -m 0755 "$w/big" "$w/known" "$w/new" "$w/flood"
for i in 1 2; do cp "$w/big.so" "$w/big/libbig$i.so"; done
cp "$w/ten.so" "$w/known/libten.so"
for i in $(seq 60); do cp "$w/ten.so" "$w/new/libten$i.so"; done
for i in $(seq 300); do cp "$w/hostile.so" "$w/flood/libh$i.so"; done
chmod -R a+rX "$w"

# This tree's daemon times its answers from their accept (--test-timing; an
# older one, HELPERD=, may not know the option: HELPERD_ARGS=--test-timing
# for one that does).
timing=--test-timing
[ -z "${HELPERD:-}" ] || timing=
# shellcheck disable=SC2086 # (HELPERD_ARGS: words)
"$helperd" -f --socket "$sock" --linger 0 --test-worker-delay "400:$w/flood/*" $timing \
	${HELPERD_ARGS:-} 2>"$w/daemon.log" &
dpid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { cat "$w/daemon.log" >&2; exit 1; }
cpu() { awk '{print $14 + $15}' "/proc/$dpid/stat"; }
mem() { awk '/^(VmHWM|VmRSS)/ {printf "%s %d MiB  ", $1, $2 / 1024}' "/proc/$dpid/status"; }
events() { grep -c "^p:sdt_${P}$1/" "$TRACEFS/uprobe_events" || true; }

# uid 4242's known file: registered, held for the whole run.
mkfifo "$w/known.in"
setpriv --reuid=4242 --regid=4242 --clear-groups -- "$hold" hold "$w/known/libten.so" \
	<"$w/known.in" >"$w/known.out" 2>&1 &
pids="$pids $!"
exec 8>"$w/known.in"
for _ in $(seq 300); do grep -q '^ready' "$w/known.out" && break; sleep 0.1; done
# uid 4242's -G program: one copy runs throughout, so its file stays known
setpriv --reuid=4242 --regid=4242 --clear-groups -- "$w/target" wait <"$w/known.in" >/dev/null &
pids="$pids $!"
setpriv --reuid=4242 --regid=4242 --clear-groups -- "$w/ctorbench" hold <"$w/known.in" >/dev/null &
pids="$pids $!"

# nobody's load.
end=$(($(date +%s) + secs))
case $load in *big*) ;; *) end=0 ;; esac
(
	i=0
	while [ "$(date +%s)" -lt "$end" ]; do
		i=$((i % 2 + 1))
		CRASHCLIENT_WAIT_MS=600000 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
			"$hold" hold "$w/big/libbig$i.so" </dev/null >>"$w/big.out" 2>&1 &
		echo $! >"$w/big.pid"
		wait $! || true
	done
) &
pids="$pids $!"
mkfifo "$w/hold"
case $load in
*flood*)
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$flood" "$secs" "$w"/flood/*.so <"$w/hold" >"$w/flood.out" 2>&1 &
	pids="$pids $!"
	exec 9>"$w/hold"
	;;
esac
case $load in *big*) for _ in $(seq 600); do [ "$(events big)" -gt 0 ] && break; sleep 0.1; done ;; esac
echo "nobody's load on: $(events big) of its big events written"

# The measurements, side by side.
c0=$(cpu)
t0=$(date +%s%N)
setpriv --reuid=4242 --regid=4242 --clear-groups -- \
	"$w/loadclient" known 400 25 "$w/known/libten.so" >"$w/r.known" &
m1=$!
setpriv --reuid=4242 --regid=4242 --clear-groups -- \
	"$w/loadclient" new 150 "$w"/new/libten*.so >"$w/r.new" &
m2=$!
"$w/loadclient" list 300 30 >"$w/r.list" &
m3=$!
setpriv --reuid=4242 --regid=4242 --clear-groups -- \
	"$w/startlat" lat 200 "disabled|USDTKIT_DISABLE=1|$w/target" "known|USDTKIT_HELPER_SOCKET=$sock|$w/target" >"$w/r.start" &
m4=$!
(
	for _ in $(seq 200); do
		USDTKIT_DISABLE=1 setpriv --reuid=4242 --regid=4242 --clear-groups -- "$w/ctorbench" cold
		sleep 0.02
	done >"$w/r.ctor"
) &
m5=$!
: >"$w/dl.times"
for _ in $(seq 50); do
	a=$(date +%s%N)
	"$dtrace" -l >/dev/null 2>&1 || true
	echo $((($(date +%s%N) - a) / 1000)) >>"$w/dl.times"
	sleep 0.05
done
wait $m1 $m2 $m3 $m4 $m5
t1=$(date +%s%N)
c1=$(cpu)
hz=$(getconf CLK_TCK)
echo "during the load ($(((t1 - t0) / 1000000)) ms, big events now $(events big)):"
awk '$1 == "known" { k = $0 } $1 == "disabled" { d = $0 }
	END { split(k, a); split(d, b)
		printf "  uid 4242, a known file'"'"'s program start, exec to main() (us): n=200 with registration p50=%d p99=%d, disabled p50=%d p99=%d; added (paired) p50=%d p99=%d\n", a[2], a[8], b[2], b[8], a[6], a[9] }' "$w/r.start"
sort -n "$w/r.ctor" | awk '{v[NR] = $1} END {printf "  uid 4242, drti'"'"'s constructor at a known file'"'"'s start (us): n=%d p50=%d p90=%d p99=%d max=%d\n", NR, v[int(NR/2)+1], v[int(NR*0.9)+1], v[int(NR*0.99)+1], v[NR]}'
echo "  uid 4242, known file REGISTER (us): $(cat "$w/r.known")"
echo "  uid 4242, new 10-site file REGISTER (us): $(cat "$w/r.new")"
echo "  root LIST (us): $(cat "$w/r.list")"
sort -n "$w/dl.times" | awk '{v[NR] = $1} END {printf "  root dtrace -l (us): n=%d p50=%d p90=%d p99=%d max=%d\n", NR, v[int(NR/2)+1], v[int(NR*0.9)+1], v[int(NR*0.99)+1], v[NR]}'
echo "  daemon CPU: $(((c1 - c0) * 1000 / hz)) ms over $(((t1 - t0) / 1000000)) ms; $(mem)"
echo "  nobody: $(grep -c '^status=0' "$w/big.out" || true) big registrations answered 0, $(grep -vc '^status=0\|^ready' "$w/big.out" || true) other lines; flood: $(head -1 "$w/flood.out" 2>/dev/null)"

# The load stops: everything of nobody's goes.
exec 9>&-
for p in $pids; do kill "$p" 2>/dev/null || true; done
# (the registration under way, its process gone: cut short, then removed)
if [ -s "$w/big.pid" ]; then kill "$(cat "$w/big.pid")" 2>/dev/null || true; fi
s0=$(date +%s%N)
for _ in $(seq 3000); do
	[ "$(events big)" -eq 0 ] && [ "$(events hostile)" -eq 0 ] && break
	sleep 0.1
done
echo "after the load: big events $(events big), hostile events $(events hostile), gone in $((($(date +%s%N) - s0) / 1000000)) ms; $(mem)"
exec 8>&-
# The daemon's own view: each answer from its accept (printed at its exit).
kill "$dpid"
wait "$dpid" 2>/dev/null || true
dpid=
if grep -q '^usdtkit-helperd: info: timing: ' "$w/daemon.log"; then
	echo "in the daemon, from the accept and from the reading of the request to the answer:"
	sed -n 's/^usdtkit-helperd: info: timing: /  /p' "$w/daemon.log"
fi
