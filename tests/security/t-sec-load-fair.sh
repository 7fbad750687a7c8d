#!/bin/bash
# Another user is served while one user loads the daemon (issue 33, item 5;
# docs/SECURITY.md invariant 16; the figures are bench/helper/loadtest.sh's).
# nobody registers a library of 12,000 sites (tens of seconds of tracefs
# writes, bulk work) and floods the parse queue with 100 slow hostile files
# (each parse made to take 400 ms, --test-worker-delay); meanwhile uid 4242
# registers a file the daemon knows (20 times) and 5 new files of 10 sites,
# and root sends LIST (10 times). The verdicts, none of which depends on
# the machine's load:
#   - nothing is lost: every one of those requests is answered, status 0,
#     the new files with their 10 probes;
#   - each of uid 4242's new files is answered while nobody's writing is
#     still under way (its "registered" line not logged yet);
#   - no job of uid 4242 waits behind nobody's batch of writing: the daemon
#     times each stage (--test-timing) and counts the writer's slices run
#     between a job's queuing and its first slice: at most 1 (the slice
#     under way, which another uid's job ends at its next batch: writer.c),
#     never nobody's whole registration;
#   - when the load stops, nothing of nobody's is left and the daemon
#     answers.
# The waits are bounded (120 s and more) only so that a daemon that never
# answers fails.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
id nobody >/dev/null 2>&1 || fail "no user nobody"
FLOOD="$USDTKIT_BUILDDIR/tests/security/flood"
HOLD="$USDTKIT_BUILDDIR/tests/crash/crashclient"
for x in "$FLOOD" "$HOLD" "$HDCLIENT"; do [ -x "$x" ] || fail "no $x: build first"; done
NB=12000
NF=100
HD_DEBUG=
export HDCLIENT_WAIT_MS=120000 CRASHCLIENT_WAIT_MS=120000

# --- the files: nobody's big one and its hostile ones, uid 4242's ---
chmod 711 "$T"
mkdir -m 0755 "$T/big" "$T/flood" "$T/known" "$T/new"
lib() { # C-FILE SO NSITES PROVIDER
	{
		echo '#include <sys/sdt.h>'
		echo 'void lib_call(int x);'
		echo 'void lib_call(int x) {'
		echo '	if (x != 42) return;'
		for i in $(seq 0 $(($3 - 1))); do echo "	STAP_PROBE1(${P}$4, p$i, x);"; done
		echo '}'
	} >"$1"
	gcc -O0 -fPIC -shared -I"$SDT_INC" "$1" -o "$2" || fail "building $2"
}
lib "$T/big/big.c" "$T/big/libbig.so" "$NB" big
lib "$T/flood/h.c" "$T/flood/h.so" 10 hostile
lib "$T/known/ten.c" "$T/known/libten.so" 10 ten
for i in $(seq "$NF"); do cp "$T/flood/h.so" "$T/flood/libh$i.so"; done
for i in 1 2 3 4 5; do cp "$T/known/libten.so" "$T/new/libten$i.so"; done
chmod -R a+rX "$T/big" "$T/flood" "$T/known" "$T/new"
events() { grep -c "^p:sdt_${P}$1/" <(uprobe_events) || true; }
logged() { grep -qE "$1" "$DLOG.new"; }
REG_RE="info: registered $T/big/libbig.so "

start_daemon --test-timing --test-worker-delay "400:$T/flood/*"

# uid 4242's known file: registered now, held by a process of its own.
mkfifo "$T/known.in"
setpriv --reuid=4242 --regid=4242 --clear-groups -- "$HOLD" hold "$T/known/libten.so" \
	<"$T/known.in" >"$T/known.out" 2>&1 &
exec 8>"$T/known.in"
at_exit "exec 8>&-"
wait_until 60 "uid 4242's known file to register" grep -q '^ready' "$T/known.out"
grep -q '^status=0 nprobes=10' "$T/known.out" || fail "uid 4242's known file: $(cat "$T/known.out")"

# nobody's load: the big file held until fd 9 closes, the flood until fd 7 does.
mkfifo "$T/hold" "$T/hold2"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$FLOOD" 600 "$T/big/libbig.so" <"$T/hold" >"$T/big.out" 2>&1 &
big_pid=$!
exec 9>"$T/hold"
at_exit "exec 9>&-; kill $big_pid 2>/dev/null || true"
wait_until 120 "nobody's big events to be written" eval '[ "$(events big)" -gt 0 ]'
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$FLOOD" 60 "$T"/flood/libh*.so <"$T/hold2" >"$T/flood.out" 2>&1 &
flood_pid=$!
exec 7>"$T/hold2"
at_exit "exec 7>&-; kill $flood_pid 2>/dev/null || true"
logged "$REG_RE" && fail "nobody's $NB sites were written before anything could be checked"
echo "nobody's load on: $(events big) of $NB big events written"

# --- the requests, side by side with the load ---
for i in 1 2 3 4 5; do
	setpriv --reuid=4242 --regid=4242 --clear-groups -- \
		"$HDCLIENT" dlreg "$T/new/libten$i.so" >"$T/new$i.out" &
	for k in 1 2 3 4; do
		setpriv --reuid=4242 --regid=4242 --clear-groups -- \
			"$HDCLIENT" dlreg "$T/known/libten.so" >"$T/known$i.$k.out"
	done
	"$HDCLIENT" list >"$T/list$i.out"
	"$HDCLIENT" list >"$T/list$i.b.out"
	wait $!
done
written=$(events big)
logged "$REG_RE" && fail "nobody's writing ended before uid 4242's requests were answered" \
	"(a machine this fast cannot show the order: nothing checked)"
for f in "$T"/known*.*.out "$T"/list*.out; do
	grep -q '^status=0' "$f" || fail "$(basename "$f"): $(cat "$f")"
done
for i in 1 2 3 4 5; do
	grep -q '^status=0 nprobes=10' "$T/new$i.out" || fail "uid 4242's new file $i: $(cat "$T/new$i.out")"
done
echo "ok: 20 known REGISTERs, 5 new files and 10 LISTs answered while nobody's writing was under way ($written of $NB)"

# --- the load stops: nothing of nobody's is left ---
exec 7>&- 9>&-
wait "$big_pid" "$flood_pid" 2>/dev/null || true
wait_until 300 "nobody's events to be removed" eval '[ "$(events big)" -eq 0 ] && [ "$(events hostile)" -eq 0 ]'
echo "ok: nothing of nobody's left"
daemon_healthy
exec 8>&-
stop_daemon
# --- the daemon's own count: slices run before each of uid 4242's jobs ---
slices=$(sed -n 's/.*timing: stage, uid 4242: a small writer job, first of its uid.s: slices run before its first (count): .* max=\([0-9]*\)$/\1/p' "$DLOG")
[ -n "$slices" ] || fail "no count of the writer's slices for uid 4242 in the daemon's timing: $(grep timing "$DLOG")"
[ "$slices" -le 1 ] || fail "a job of uid 4242 waited for $slices of the writer's slices (at most the one under way)"
echo "ok: each of uid 4242's writer jobs waited for at most $slices slice of another's"
grep 'timing: stage, uid 4242' "$DLOG" | sed 's/^usdtkit-helperd: info: /  /'
HD_OK=1
