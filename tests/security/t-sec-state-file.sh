#!/bin/bash
# The state file names events for the daemon to remove at start and aliases
# to unmount and unlink. The daemon must not take orders from a file
# someone else put there (a directory others could write once; the daemon
# now refuses to start in one: t-sec-own-files), and no line of any state
# file may name a file outside the alias directory.
#  1. A state file owned by nobody, naming a foreign event: ignored, the
#     event kept.
#  2. A root-owned state file whose alias path climbs out of
#     /run/usdtkit/files with "..": the file it names is not unlinked.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_tracefs
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"

# 1. A foreign event, and a state file of nobody's that claims it.
foreign="sdt_${P}foreign/ev"
echo "p:$foreign /bin/true:0x0" >>"$TRACEFS/uprobe_events" || fail "creating the foreign event"
printf 'usdtkit-helperd-state 1\nsite 1 2 sdt_%sforeign ev 0x0 - /bin/true\n' "$P" >"$SOCK.state"
chown nobody "$SOCK.state"
chmod 644 "$SOCK.state"
start_daemon
uprobe_event_line "$foreign" | grep -q " /bin/true:" || fail "the foreign event was removed on a state file of nobody's"
expect_grep "$SOCK.state: not a regular file of ours writable by us alone: ignored" "$DLOG.new" "the refusal logged"
stop_daemon
remove_uprobe_event "$foreign"
echo "ok: a state file of nobody's is ignored"

# 2. "..": a way out of the alias directory.
mkdir -p /run/usdtkit/files
victim=$(mktemp /run/usdtkit/sec-victim.XXXXXX)
at_exit "rm -f '$victim'"
rm -f "$SOCK.state"
printf 'usdtkit-helperd-state 1\nsite 1 2 sdt_%sx ev 0x10 - /run/usdtkit/files/../%s\n' "$P" "${victim##*/}" >"$SOCK.state"
chmod 600 "$SOCK.state"
start_daemon
stop_daemon
[ -e "$victim" ] || fail "the daemon unlinked $victim, named by a state file as an alias"
echo "ok: an alias path with .. is not unmounted nor unlinked"
HD_OK=1
