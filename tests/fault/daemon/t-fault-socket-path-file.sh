#!/bin/bash
# Fault: the socket path is taken by a regular file (a stray file, a wrong
# --socket). Guarantees: the daemon refuses to start, with an error naming
# the path and what to do, and never deletes or alters the file (content,
# mode, mtime, inode); a probed program whose USDTKIT_HELPER_SOCKET names the
# file runs exactly as with registration disabled, within drti's documented
# bound (its timeout; here it does not even wait: ECONNREFUSED, one attempt).
# Meanwhile a daemon on another socket keeps serving.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
need_tracefs
build_progs gcc
F="$T/taken.sock"
printf 'not a socket: a file someone needs\n' >"$F"
chmod 0640 "$F"
touch -d '2020-01-01 12:00' "$F"
ident() { stat -c '%i %a %s %Y %F' "$F"; sha256sum <"$F"; }
id0=$(ident)

# Another daemon serves meanwhile (on $SOCK).
start_daemon
prog_start a
wait_events 2 "the program of the serving daemon"

# Refused, by --socket and by USDTKIT_HELPER_SOCKET alike.
for how in option env; do
	rc=0
	if [ $how = option ]; then
		timeout 20 "$HELPERD" -f --socket "$F" 2>"$T/refused" || rc=$?
	else
		USDTKIT_HELPER_SOCKET="$F" timeout 20 "$HELPERD" -f 2>"$T/refused" || rc=$?
	fi
	expect_eq "$rc" 1 "exit status when the socket path is a regular file ($how)"
	expect_grep "$F exists and is not a socket \\(a regular file\\): refusing to start" "$T/refused" \
		"the error names the path ($how)"
	expect_grep "Remove or rename it .*or give the daemon another path \\(--socket, USDTKIT_HELPER_SOCKET\\)" \
		"$T/refused" "the error says what to do ($how)"
	expect_eq "$(ident)" "$id0" "the file after the refusal ($how)"
done
[ -e "$F.state" ] && fail "a refused daemon created $F.state"

# A program pointed at the file: output unchanged, no wait.
USDTKIT_DISABLE=1 run_prog >"$T/expected"
expect_grep '^fired 3$' "$T/expected" "the program's own output"
t0=$(date +%s%N)
USDTKIT_HELPER_SOCKET="$F" USDTKIT_HELPER_TIMEOUT_MS=5000 USDTKIT_DEBUG=1 run_prog >"$T/got"
ms=$((($(date +%s%N) - t0) / 1000000))
cmp -s "$T/expected" "$T/got" || { diff "$T/expected" "$T/got" >&2; fail "the program's output differs"; }
expect_grep 'ECONNREFUSED' "$T/prog.err" "drti's account of the connection"
expect_no_grep 'attempts' "$T/prog.err" "drti retried a refused connection"
echo "a program whose socket path is a regular file ran in $ms ms (drti timeout 5000 ms)"
# (not scaled by bound_ms: 5000 ms is the drti timeout it must not wait for)
[ "$ms" -lt 5000 ] || fail "the program took $ms ms: it waited for the timeout"
expect_eq "$(ident)" "$id0" "the file after the program"

# The serving daemon was never disturbed.
daemon_healthy
prog_stop a
wait_events 0 "after the program"
HD_OK=1
exit 0
