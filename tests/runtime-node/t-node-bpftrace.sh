#!/bin/bash
# The Node binding under bpftrace (-p PID): the exact values of "int",
# "char *" and "json" arguments, with dtrace-provider's defaults for the
# missing ones (0, "undefined") and extra ones ignored; the callback is
# called only while bpftrace is attached (the semaphore read in JS flips);
# enable/disable cycles fire only while enabled (dtrace-provider's
# enabled-disabled); a probe added after enable fires
# after disable+enable (add-probes); ten providers of one name with
# different modules are ten (disambiguation); the fallback where external
# ArrayBuffers are refused behaves the same.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
need_node_addon
need_bpftrace
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"

node_start
js_expect 'D.p = d.createDTraceProvider("nodeapp");
	D.a = D.p.addProbe("args", "int", "char *", "json", "int", "char *", "json");
	D.t = D.p.addProbe("typed", "int32_t", "weird", "jsonish", "char *name");
	D.e = D.p.addProbe("client-error", "int", "char *");
	D.c = D.p.addProbe("cyc", "int");
	D.p.enable(); 1' 'ok 1'

# No tracer: the callback is not called.
js_expect 'D.a.fire(counted("pre", [1, "x", 2]))' 'ok undefined'
js_expect 'calls.pre' 'ok 0'

BT_ARGS="-p $NODE_PID" bt_start "$T/bt" '
usdt:*:nodeapp:args { printf("args %ld|%s|%s|%ld|%s|%s\n", arg0, str(arg1), str(arg2), arg3, str(arg4), str(arg5)); }
usdt:*:nodeapp:typed { printf("typed %ld|%s|%s|%s\n", arg0, str(arg1), str(arg2), str(arg3)); }
usdt:*:nodeapp:client__error { printf("error %ld|%s\n", arg0, str(arg1)); }'
bt_warm 'D.a.fire(() => [-99, "warm"]); D.t.fire(() => [-99, "warm"]); D.e.fire(() => [-99, "warm"])' \
	'^(args|typed|error) -99\|warm' 3
js_expect 'D.a.fire(counted("on", [42, "forty-two", {a: [1, "x"], b: null}]))' 'ok true'
js_expect 'calls.on' 'ok 1'
js_expect 'D.a.fire(() => [-7, "", "s", "12", null, undefined, "extra", 9])' 'ok true'
js_expect 'D.a.fire(() => [2 ** 62, "caf\u00e9 \u2603", [], -(2 ** 62), "a\u0000b", 0.5])' 'ok true'
js_expect 'D.a.fire(() => [-Infinity, 1, 2, Infinity, 3, 4])' 'ok true'
js_expect 'D.a.fire(() => [NaN, {}, () => 1, 1.9, true, "x"])' 'ok true'
js_expect 'D.a.fire(() => [-1.9])' 'ok true'
# Not an array: no firing, undefined.
js_expect 'D.a.fire(() => "no")' 'ok undefined'
js_expect 'D.a.fire(() => ({0: 1, length: 1}))' 'ok undefined'
# Types dtrace-provider matches by prefix; anything else is "char *".
js_expect 'D.t.fire(() => [300, 5, {k: 1}, "n"])' 'ok true'
# provider.fire: the extra arguments reach the callback, `this` is the probe.
js_expect 'D.p.fire("client-error", function (a, b) { return [a, b + (this === D.e)]; }, -5, "x")' \
	'ok true'
js_expect 'D.e.fire(function (a, b, c) { return [a + b + c, String(this === D.e)]; }, 1, 2, 3)' \
	'ok true'
# (the patterns leave the warm-up's -99 out)
bt_stop '^args (-?[0-8]|-9[0-8])' 6 '^typed [0-9]' 1 '^error -?[0-8]' 2
grep -E '^(args|typed|error) ' "$T/bt" | grep -v '^[a-z]* -99|warm' >"$T/got" || true
cat >"$T/want" <<'OUT'
args 42|forty-two|{"a":[1,"x"],"b":null}|0|undefined|undefined
args -7||"s"|12|null|undefined
args 4611686018427387904|café ☃|[]|-4611686018427387904|a|0.5
args -9223372036854775808|1|2|9223372036854775807|3|4
args 0|[object Object]|undefined|1|true|"x"
args -1|undefined|undefined|0|undefined|undefined
typed 300|5|{"k":1}|n
error -5|xtrue
error 6|true
OUT
diff -u "$T/want" "$T/got" >&2 || fail "bpftrace read other values"

# Detached: the semaphore drops to 0 and the callback is no longer called.
wait_until 10 "probe.fire to stop calling its callback" \
	eval '[ "$(js "D.a.fire(counted(\"post\", [1]))")" = "ok undefined" ]'
js_expect 'D.a.fire(counted("post", [1])); calls.post' 'ok 0'

# enable/disable cycles (dtrace-provider's enabled-disabled): each load
# maps a new object, so each is traced by a new bpftrace; a disabled
# provider's probe neither calls nor fires, its provider.fire says true.
for i in 1 2 3; do
	BT_ARGS="-p $NODE_PID" bt_start "$T/bt" 'usdt:*:nodeapp:cyc { printf("cyc %ld\n", arg0); }'
	bt_warm 'D.c.fire(() => [-1])' '^cyc -1$' 1
	js_expect "D.p.enable(); D.c.fire(() => [$i]); D.p.disable();
		[D.c.fire(counted('off', [100 + $i])), D.p.fire('cyc', counted('off2', [200])),
			calls.off + calls.off2]" 'ok [null,true,0]'
	bt_stop '^cyc [0-9]' 1
	grep '^cyc [0-9]' "$T/bt" >"$T/got"
	echo "cyc $i" | diff -u - "$T/got" >&2 || fail "enable/disable cycle $i: other firings"
	js_expect 'D.p.enable(); D.p.enable(); 1' 'ok 1'
done

# A probe added while enabled is not there until disable and enable.
js_expect 'D.late = D.p.addProbe("late", "int", "char *"); D.late.fire(counted("late", [1, "a"]))' \
	'ok undefined'
js_expect 'D.p.disable(); D.p.enable(); calls.late' 'ok 0'
BT_ARGS="-p $NODE_PID" bt_start "$T/bt" '
usdt:*:nodeapp:late { printf("late %ld|%s\n", arg0, str(arg1)); }
usdt:*:nodeapp:cyc { printf("cyc %ld\n", arg0); }'
bt_warm 'D.late.fire(() => [-1, "warm"]); D.c.fire(() => [-1])' '^(late -1\|warm|cyc -1)$' 2
js_expect 'D.late.fire(() => [2, "b"]) && D.c.fire(() => [11])' 'ok true'
bt_stop '^late 2' 1 '^cyc 11' 1
expect_grep '^late 2\|b$' "$T/bt" "the probe added after enable"
expect_grep '^cyc 11$' "$T/bt" "a probe of the first load, after the reload"

# Ten providers of one name, told apart by their modules (dtrace-provider's
# disambiguation and create-destroy).
js_expect 'D.many = []; for (let i = 0; i < 10; i++) {
		const p = d.createDTraceProvider("manyprov", "mod" + i); p.addProbe("m", "int", "char *");
		p.enable(); D.many.push(p);
	} D.many.length' 'ok 10'
[ "$(grep -oE '/memfd:usdtkit:mod[0-9] ' "/proc/$NODE_PID/maps" | sort -u | wc -l)" = 10 ] ||
	fail "the ten modules are not mapped as /memfd:usdtkit:modN"
# bpftrace 0.17 with -p keys probes by provider and name, across modules:
# usdt:*:manyprov:m is one of the ten. Each module is named by its path,
# without -p (bpftrace then reads that file alone).
bts=""
for fd in /proc/$NODE_PID/fd/*; do
	case $(readlink "$fd") in "/memfd:usdtkit:mod"[0-9]" (deleted)")
		bts+="usdt:$fd:manyprov:m { printf(\"m %ld|%s\\n\", arg0, str(arg1)); } " ;;
	esac
done
bt_start "$T/bt" "$bts"
bt_warm 'D.many.forEach((p, i) => p.m.fire(() => [-1, "warm" + i]))' '^m -1\|warm' 10
js_expect 'D.many.filter((p, i) => p.fire("m", () => [i, "mod" + i])).length' 'ok 10'
bt_stop '^m [0-9]' 10
grep '^m [0-9]' "$T/bt" | sort -t' ' -k2n >"$T/got"
for i in $(seq 0 9); do echo "m $i|mod$i"; done | diff -u - "$T/got" >&2 ||
	fail "ten providers of one name: other firings"
node_stop

# Where external ArrayBuffers are refused (forced here), the test is a
# native call, with the same results.
USDTKIT_NODE_SEMAPHORE_BY_CALL=1 node_start
js_expect 'D.p = d.createDTraceProvider("bycall"); D.b = D.p.addProbe("b", "int"); D.p.enable();
	D.b.fire(counted("b", [1]))' 'ok undefined'
BT_ARGS="-p $NODE_PID" bt_start "$T/bt" 'usdt:*:bycall:b { printf("b %ld\n", arg0); }'
bt_warm 'D.b.fire(() => [-1])' '^b -1$' 1
js_expect 'D.b.fire(counted("b", [5]))' 'ok true'
bt_stop '^b 5' 1
expect_grep '^b 5$' "$T/bt" "the probe fired through the native test"
wait_until 10 "the native test to see the tracer gone" \
	eval '[ "$(js "D.b.fire(counted(\"b\", [6]))")" = "ok undefined" ]'
js_expect 'calls.b' 'ok 0'
node_stop
echo PASS
