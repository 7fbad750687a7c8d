#!/bin/bash
# A Node program's provider (bindings/node, dtrace-provider's API) traced by
# a D script with -p. fire()'s callback runs only while the probe is
# enabled, so the program counts its traced firings and stops after three:
# the output is exact. The program's end ends the run (the exit dump).
# Skips when the build has no Node addon (tests/runtime-node/lib.sh).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
. "$USDTKIT_SRCDIR/tests/runtime-node/lib.sh"
need_engine
need_node_addon

# The program fires once its probe is enabled, and the semaphore is raised
# with each site's link, a moment before all are attached: on a loaded
# machine a firing can fall in between and is not traced, not what this
# test checks. So a run whose output lacks
# firings is tried again, three runs in all; a wrong line fails at once.
P=$(node_unique dtnode)
want="/n1 10\n/n2 20\n/n3 30\n\n$(printf ' %16d\\n' 60)"
for try in 1 2 3; do
	node_start
	js_expect "D.p = d.createDTraceProvider('$P', '${P}mod');
	D.r = D.p.addProbe('request-start', 'char *', 'int');
	D.p.enable(); D.n = 0;
	D.t = setInterval(() => {
		D.r.fire(() => { D.n++; return ['/n' + D.n, D.n * 10]; });
		if (D.n >= 3) { clearInterval(D.t); process.exit(0); }
	}, 5); 1" 'ok 1'
	dt 0 -q -p "$NODE_PID" -n "$P\$target:::request-start { printf(\"%s %d\\n\", copyinstr(arg0), arg1); @s = sum(arg1); }"
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }
	printf '%b' "$want" | cmp -s - "$T/out" && break
	grep -vxE '/n[1-3] [123]0|| +[0-9]+' "$T/out" >&2 && { same "$T/out" "$want" "a Node provider under dtrace -p"; }
	echo "run $try: a firing before dtrace attached was not traced:" >&2
	cat "$T/out" >&2
	stop_bg "$NODE_PID" TERM 5
	NODE_PID=""
	[ "$try" -lt 3 ] || same "$T/out" "$want" "a Node provider under dtrace -p (three runs)"
done
NODE_PID=""
exit 0
