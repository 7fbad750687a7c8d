#!/bin/bash
# The dtrace-provider API without a tracer (bindings/node): what it returns,
# what it throws, and that a probe no tracer is attached to never calls its
# callback, before enable, while enabled, after disable. The values are
# dtrace-provider 0.8.8's (its src/*.cc); where usdtkit differs on purpose
# (at most 12 arguments, names usdtkit refuses), the error is checked.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
need_node_addon
# No daemon: registration must fail fast, not wait.
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"

node_start
js_expect 'D.p = d.createDTraceProvider("nodeapp"); D.p.constructor.name' 'ok "DTraceProvider"'
js_expect 'D.p1 = D.p.addProbe("p1", "int", "char *", "json"); D.p1.constructor.name' \
	'ok "DTraceProbe"'
js_expect 'D.p.p1 === D.p1 && D.p1.__prov__ === D.p' 'ok true'
# The provider's own enumerable properties are its probes; a probe has none.
js_expect 'D.p.addProbe("client-error", "int"); Object.keys(D.p)' 'ok ["p1","client-error"]'
js_expect 'Object.keys(D.p1).length + Object.getOwnPropertyNames(D.p1).length' 'ok 1'
js_expect 'Reflect.deleteProperty(D.p1, "__prov__")' 'ok false'

# Not enabled yet: probe.fire returns undefined, provider.fire true, no call.
js_expect 'D.p1.fire(counted("a", [1, "x", {}]))' 'ok undefined'
js_expect 'D.p.fire("p1", counted("b", [1]), 1, 2)' 'ok true'
js_expect 'calls.a + calls.b' 'ok 0'
js_expect 'D.p.enable(); D.p.enable(); "twice"' 'ok "twice"'
js_expect 'D.p1.fire(counted("a", [1, "x", {}]))' 'ok undefined'
js_expect 'D.p.fire("client-error", counted("b", [1]))' 'ok true'
js_expect 'calls.a + calls.b' 'ok 0'
# Other names: undefined, silently (also inherited ones and another provider's probe).
js_expect 'D.q = d.createDTraceProvider("other"); D.qp = D.q.addProbe("qp"); D.q.enable(); D.p.qp = D.qp; 1' \
	'ok 1'
for name in nope toString __proto__ constructor qp enable; do
	js_expect "D.p.fire(\"$name\", counted(\"c\", [1]))" 'ok undefined'
done
js_expect 'calls.c' 'ok 0'
js_expect 'D.p.disable(); D.p.disable(); D.p1.fire(counted("a", [1]))' 'ok undefined'

# TypeErrors, with dtrace-provider's messages.
js_expect 'D.p1.fire()' 'err TypeError: Must give probe value callback as first argument'
js_expect 'D.p1.fire([1])' 'err TypeError: Must give probe value callback as first argument'
js_expect 'D.p.fire(1, () => [])' 'err TypeError: Must give probe name as first argument'
js_expect 'D.p.fire("p1")' 'err TypeError: Must give probe value callback as second argument'
js_expect 'new d.DTraceProvider()' 'err TypeError: Must give provider name as argument'
js_expect 'd.createDTraceProvider(42)' 'err TypeError: Must give provider name as argument'
js_expect 'd.createDTraceProvider("x", 42)' 'err TypeError: Must give module name as argument'
js_expect 'new d.DTraceProvider("x", "m", 3)' \
	'err Error: Expected only provider name and module as arguments'
js_expect 'd.createDTraceProvider("empty").enable()' 'err Error: no probes defined'

# usdtkit's limits: 12 arguments, names that are identifiers once '-' is '__'.
js_expect 'D.p.addProbe("many", ...Array(12).fill("int")).constructor.name' 'ok "DTraceProbe"'
js_expect 'D.p.addProbe("toomany", ...Array(13).fill("int"))' \
	'err Error: probe '\''toomany'\'' has 13 arguments: usdtkit probes have at most 12'
js_expect '"toomany" in D.p' 'ok false'
got=$(js 'D.p.addProbe("bad name", "int")')
[[ $got == "err Error: "*"bad name"* ]] || fail "a probe name with a space: $got"
got=$(js 'D.p.addProbe("9lives")')
[[ $got == "err Error: "*"9lives"* ]] || fail "a probe name starting with a digit: $got"
got=$(js 'd.createDTraceProvider("no.dots")')
[[ $got == "err Error: bad provider name 'no.dots'"* ]] || fail "a bad provider name: $got"
got=$(js "d.createDTraceProvider(\"$(printf 'x%.0s' $(seq 64))\")")
[[ $got == "err Error: bad provider name"* ]] || fail "a 64-character provider name: $got"
js_expect 'd.createDTraceProvider("electric-moray", "mymod").addProbe("a-b-c").constructor.name' \
	'ok "DTraceProbe"'

# removeProbe: true, then the name is gone and the probe inert; twice throws.
js_expect 'D.p.removeProbe(D.p.many)' 'ok true'
js_expect '"many" in D.p' 'ok false'
js_expect 'D.p.removeProbe(D.p1); D.p.removeProbe(D.p1)' 'err Error: failed to remove probe nodeapp:p1'
js_expect 'D.p.removeProbe({})' 'err TypeError: Must give probe as argument'
js_expect 'D.p.enable(); Object.keys(D.p)' 'ok ["client-error","qp"]'

# An unreferenced provider survives gc as long as one of its probes is
# referenced (dtrace-provider's gc-provider); a dropped one is collected
# without harm.
node_stop
node_start --expose-gc
js_expect 'D.keep = d.createDTraceProvider("gcprov").addProbe("gp", "int"); D.keep.__prov__.enable(); gc(); 1' \
	'ok 1'
js_expect 'for (let i = 0; i < 50; i++) { const x = d.createDTraceProvider("gone"); x.addProbe("g"); x.enable(); } gc(); gc(); D.keep.fire(counted("g", [1]))' \
	'ok undefined'
js_expect 'D.keep.__prov__.disable(); D.keep.__prov__.enable(); gc(); D.keep.fire(() => [1])' \
	'ok undefined'
node_stop

# Without its addon, the package is dtrace-provider's stub, silently; with
# NODE_DTRACE_PROVIDER_REQUIRE=hard, require throws.
out=$(USDTKIT_NODE_ADDON="$T/none.node" NODE_DTRACE_PROVIDER_REQUIRE= node -e '
	const d = require(process.env.USDTKIT_NODE_PKG);
	const p = d.createDTraceProvider("x"); const q = p.addProbe("y", "int"); p.enable();
	console.log(d.DTraceProvider.name, q.fire(() => { throw 1; }), p.fire("y", () => 1));') ||
	fail "the stub: node exited $?"
expect_eq "$out" "DTraceProviderStub undefined undefined" "the stub"
USDTKIT_NODE_ADDON="$T/none.node" node -e 'require(process.env.USDTKIT_NODE_PKG)' 2>"$T/hard.err" &&
	fail "NODE_DTRACE_PROVIDER_REQUIRE=hard: require did not throw"
expect_grep "Cannot find module '$T/none.node'" "$T/hard.err" "hard: the error names the addon"
echo PASS
