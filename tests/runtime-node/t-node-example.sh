#!/bin/bash
# examples/runtime-node/server.js, unchanged, traced as its README says
# (bpftrace -p PID, the README's probe clauses): exact values.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
need_node_addon
need_bpftrace
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"
EX="$USDTKIT_SRCDIR/examples/runtime-node"

env "${NODE_ENV[@]}" node "$EX/server.js" 60 >"$T/server.out" 2>"$T/server.err" &
SPID=$!
at_exit 'stop_bg "$SPID" TERM 5'
wait_until 10 "server.js to start" grep -qs "^pid $SPID: 60 requests" "$T/server.out"
wait_until 10 "server.js to enable its provider" grep -q 'memfd:usdtkit:nodeapp' "/proc/$SPID/maps"
# The README's bpftrace program: its block's -e '...'.
script=$(readme_block "$EX/README.md" trace | sed -n "/-e '/,/'\$/p" | sed "1s/.*-e '//; \$s/'\$//")
[ -n "$script" ] || fail "no bpftrace program in the README's 'trace' block"
BT_ARGS="-p $SPID" bt_start "$T/bt" "$script"
bt_stop '^done ' 3
grep -E '^(start|done) ' "$T/bt" | head -6 >"$T/got"
# The values follow from the request id (server.js).
paths=(/ /users /users/42 '/search?q=usdt')
: >"$T/want"
while read -r what n rest; do
	path=${paths[$((n % 4))]}
	status=200
	[ "$path" = /users/42 ] && status=404
	if [ "$what" = start ]; then
		echo "start $n $path"
	else
		echo "done $n $status {\"path\":\"$path\",\"bytes\":$((100 * n))}"
	fi >>"$T/want"
done <"$T/got"
diff -u "$T/want" "$T/got" >&2 || fail "server.js's probes: other values"
[ "$(wc -l <"$T/got")" -ge 5 ] || fail "too few firings traced"
echo PASS
