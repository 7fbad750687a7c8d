#!/bin/bash
# The daemon's own files (issue 33, item 3; docs/SECURITY.md invariant 12):
# whoever can write to the state or the socket directory can put anything
# at the names the daemon opens: a FIFO at STATE.journal hung the daemon
# before it was ready (its open for writing waited for a reader), a file of
# nobody's received the journal, a symlink left the daemon without one.
#  1. Directories others can write (nobody's, world-writable even sticky,
#     group-writable): the daemon refuses to start, promptly, with one
#     message, even with nobody's FIFO planted in it as the journal.
#  2. In a directory of root's, what an earlier writer may have left at the
#     journal's name: a FIFO of nobody's, a regular file of nobody's, a
#     symlink to a file of root's. The daemon starts (never waits on the
#     FIFO), writes none of them, and its journal is a new regular file of
#     root's, mode 0600.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
id nobody >/dev/null 2>&1 || fail "no user nobody"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
# A generous bound for an answer that takes milliseconds (start-up, refusal).
BOUND_S=$((20 * TIME_FACTOR))

# 1. Runs the daemon on a socket in DIR: it must exit non-zero within the
# bound, saying why. A daemon still running then (waiting on the FIFO) is killed.
expect_refused() { # DIR WHY
	local log="$T/refused.log" pid status=0
	: >"$log"
	"$HELPERD" -f --socket "$1/h.sock" --linger 0 2>"$log" &
	pid=$!
	if ! poll_until "$BOUND_S" eval '! running "$pid"'; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		cat "$log" >&2
		fail "$2: the daemon did not exit within $BOUND_S s (hung on what stood in $1?)"
	fi
	wait "$pid" || status=$?
	[ "$status" -ne 0 ] || { cat "$log" >&2; fail "$2: the daemon exited 0"; }
	grep -q "refusing to start: the socket directory is not safe: $1" "$log" ||
		{ cat "$log" >&2; fail "$2: not the one message"; }
	[ ! -e "$1/h.sock" ] || fail "$2: a socket was left in $1"
	echo "ok: refused: $2"
}
chmod 711 "$T"
install -d -o nobody -m 0755 "$T/nobodys"
as_nobody mkfifo "$T/nobodys/h.sock.state.journal"
expect_refused "$T/nobodys" "a directory of nobody's, nobody's FIFO as the journal"
install -d -m 1777 "$T/world"
as_nobody mkfifo "$T/world/h.sock.state.journal"
expect_refused "$T/world" "a sticky world-writable directory, nobody's FIFO as the journal"
install -d -m 0775 "$T/group"
expect_refused "$T/group" "a group-writable directory"

# 2. Planted at the journal's name in a directory of root's; the daemon must
# be ready within the bound, and its journal then a new file of its own.
JOURNAL="$SOCK.state.journal"
planted_start() { # WHAT
	local pid
	rm -f "$DLOG.new"
	"$HELPERD" -f --debug --socket "$SOCK" --linger 0 2>>"$DLOG.new" &
	pid=$!
	DAEMON_PID=$pid
	if ! poll_until "$BOUND_S" grep -q ': ready' "$DLOG.new"; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		DAEMON_PID=""
		fail "$1: the daemon was not ready within $BOUND_S s"
	fi
	stop_daemon
	[ -f "$JOURNAL" ] && [ ! -L "$JOURNAL" ] || fail "$1: the journal is not a regular file"
	[ "$(stat -c '%u %a %h' "$JOURNAL")" = "0 600 1" ] ||
		fail "$1: the journal is $(stat -c 'uid %u mode %a links %h' "$JOURNAL"), not a new file of root's"
	head -1 "$JOURNAL" | grep -q '^usdtkit-helperd-journal ' || fail "$1: the journal has no header"
}
rm -f "$JOURNAL"
mkfifo "$JOURNAL"
chown nobody "$JOURNAL"
planted_start "nobody's FIFO as the journal"
echo "ok: a FIFO as the journal: not waited on, replaced"

rm -f "$JOURNAL"
echo "nobody's" >"$JOURNAL"
chown nobody "$JOURNAL"
ln "$JOURNAL" "$T/nobodys-file" # what nobody would still hold
planted_start "a file of nobody's as the journal"
[ "$(cat "$T/nobodys-file")" = "nobody's" ] || fail "the daemon wrote into nobody's file"
echo "ok: a file of nobody's as the journal: not written, replaced"

rm -f "$JOURNAL"
echo victim >"$T/victim"
chmod 600 "$T/victim"
ln -s "$T/victim" "$JOURNAL"
planted_start "a symlink as the journal"
[ "$(cat "$T/victim")" = victim ] || fail "the daemon wrote through the symlink"
echo "ok: a symlink as the journal: not followed, replaced"

# And the journal of an earlier run, its own, is kept (appended to, not replaced).
ino=$(stat -c %i "$JOURNAL")
start_daemon
stop_daemon
[ "$(stat -c %i "$JOURNAL")" = "$ino" ] || fail "the daemon's own journal was replaced"
echo "ok: the daemon's own journal is kept"
HD_OK=1
