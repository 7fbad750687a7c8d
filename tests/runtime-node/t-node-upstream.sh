#!/bin/bash
# dtrace-provider's own example, run unchanged against our package: the
# code blocks of the README in the real dtrace-provider 0.8.8 tarball
# (`npm pack` from the npm registry, at test time: its code is not ours to
# keep), resolved by `require('dtrace-provider')` to bindings/node. The
# first block (create the provider, add the probes, enable) runs once; the
# two blocks that fire (through the provider, through the probes) run every
# 20 ms, so that bpftrace can attach by pid; bpftrace reads exactly what
# they return.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_tracefs
need_bpftrace
need_node_addon
command -v npm >/dev/null || fail "npm is not installed (scripts/deps.sh installs nodejs)"

(cd "$T" && HOME="$T" npm_config_cache="$T/npm-cache" timeout 60 npm pack --silent \
	dtrace-provider@0.8.8) >"$T/pack.log" 2>&1 ||
	skip "the npm registry did not give dtrace-provider@0.8.8: $(tail -1 "$T/pack.log")"
tar -xzf "$T/dtrace-provider-0.8.8.tgz" -C "$T" package/README.md
# The README's javascript blocks, in order: setup, fire via the provider, fire via the probes.
awk -v t="$T" '/^```javascript$/ { n++; on = 1; next } /^```$/ { on = 0; next }
	on && n <= 3 { print > (t "/block" n ".js") }' "$T/package/README.md"
for i in 1 2 3; do [ -s "$T/block$i.js" ] || fail "the README has no javascript block $i"; done
grep -q "createDTraceProvider(\"nodeapp\")" "$T/block1.js" || fail "block 1 is not the provider's setup"

mkdir -p "$T/app/node_modules"
ln -s "$NODE_PKG" "$T/app/node_modules/dtrace-provider"
{
	cat "$T/block1.js"
	echo 'console.log("ready " + process.pid);'
	echo 'setInterval(function () {'
	cat "$T/block2.js" "$T/block3.js"
	echo '}, 20);'
} >"$T/app/example.js"
(cd "$T/app" && exec env "${NODE_ENV[@]}" node example.js) >"$T/ex.out" 2>"$T/ex.err" &
pid=$!
at_exit "kill $pid 2>/dev/null"
wait_until 20 "the example to start" grep -q '^ready' "$T/ex.out"
BT_ARGS="-p $pid" bt_start "$T/bt.out" '
usdt:*:nodeapp:probe1 { printf("probe1 %d %d\n", arg0, arg1); }
usdt:*:nodeapp:probe2 { printf("probe2 %s\n", str(arg0)); }'
bt_stop '^probe1 1 2$' 4 '^probe2 hello, dtrace via provider$' 2 '^probe2 hello, dtrace via probe$' 2
grep -E '^probe[12] ' "$T/bt.out" | grep -vE '^(probe1 1 2|probe2 hello, dtrace via (provider|probe))$' &&
	fail "bpftrace read other values (above)"
kill "$pid"
wait "$pid" 2>/dev/null || true
[ ! -s "$T/ex.err" ] || { cat "$T/ex.err" >&2; fail "the example wrote to stderr"; }
exit 0
