#!/bin/bash
# One user cannot fill the parse queue (issue 33, item 2; docs/SECURITY.md
# invariant 14). nobody maps 300 distinct copies of a probed library whose
# parses hang (slow hostile files: --test-worker-delay on their paths) and
# REGISTERs each, again and again while refused, until the daemon refuses
# it for a full queue or a full share. Then root's and another user's
# (uid 4242) new files must register at once. Before the fix one uid could
# hold all 256 places of the queue: every other new file, root's too, was
# refused -EAGAIN.
#   - precondition: the daemon refused nobody for a full queue or share;
#   - nobody held at most its share (32) of the queue;
#   - root's and uid 4242's new files: status 0 with probes, each within a
#     sanity bound (5 s; typically tens of ms);
#   - the flood ends: the daemon is healthy, nothing of nobody's remains.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
id nobody >/dev/null 2>&1 || fail "no user nobody"
FLOOD="$USDTKIT_BUILDDIR/tests/security/flood"
[ -x "$FLOOD" ] || fail "no $FLOOD: build first"
N=300
SHARE=32
BOUND_MS=$(bound_ms 5000)

build_progs gcc
chmod 711 "$T"
chmod -R a+rX "$B"
install -d -o nobody -m 0755 "$T/flood"
for i in $(seq "$N"); do
	mkdir "$T/flood/$i"
	cp "$LIB" "$T/flood/$i/liblib.so"
done
mkdir -m 0755 "$T/root" "$T/other"
cp "$LIB" "$T/root/liblib.so"
cp "$LIB" "$T/other/liblib.so"
chmod -R a+rX "$T/root" "$T/other"
start_daemon --parse-timeout 120000 --test-worker-delay "600000:$T/flood/*"

# nobody floods for at most 60 s, holding its mappings until fd 9 closes.
mkfifo "$T/hold"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$FLOOD" 60 "$T"/flood/*/liblib.so <"$T/hold" >"$T/flood.out" 2>&1 &
flood_pid=$!
exec 9>"$T/hold"
at_exit "exec 9>&-; kill $flood_pid 2>/dev/null || true"
refused_re='uid 65534: [0-9]+ parses running or queued, its share|parses running or queued: .*/flood/'
wait_until 90 "the daemon to refuse nobody for a full queue or share" \
	grep -qE "$refused_re" "$DLOG.new"
held=$(grep -oE "/flood/[0-9]+/liblib.so: parse (queued|started)" "$DLOG.new" |
	cut -d: -f1 | sort -u | wc -l)
echo "nobody holds $held parses"

# Root's and another user's new files, meanwhile.
export HDCLIENT_WAIT_MS=30000
for who in root other; do
	t0=$(_now_us)
	if [ "$who" = root ]; then
		"$HDCLIENT" dlreg "$T/root/liblib.so" >"$T/$who.out"
	else
		setpriv --reuid=4242 --regid=4242 --clear-groups -- \
			"$HDCLIENT" dlreg "$T/other/liblib.so" >"$T/$who.out"
	fi
	ms=$((($(_now_us) - t0) / 1000))
	grep -qE '^status=0 nprobes=[1-9]' "$T/$who.out" ||
		fail "$who's new file during nobody's flood: $(cat "$T/$who.out") (nobody holds $held parses)"
	[ "$ms" -lt "$BOUND_MS" ] || fail "$who's new file took $ms ms during the flood"
	echo "ok: $who's new file registered during the flood ($ms ms)"
done
[ "$held" -le "$SHARE" ] || fail "nobody held $held parses, more than its share ($SHARE)"
echo "ok: nobody held $held parses (its share: $SHARE)"

# The flood ends: its parses are abandoned, the daemon serves on.
exec 9>&-
kill "$flood_pid" 2>/dev/null || true # (still retrying what was refused)
wait "$flood_pid" 2>/dev/null || true
daemon_healthy
wait_until 30 "nobody's parses to be abandoned" \
	eval '[ "$(grep -c "flood/.*nobody waits for its parse any more" "$DLOG.new")" -ge 1 ]'
[ -z "$(grep -E "/flood/" <(uprobe_events) || true)" ] || fail "events of nobody's files remain"
echo "ok: the flood ended, nothing of it remains"
HD_OK=1
