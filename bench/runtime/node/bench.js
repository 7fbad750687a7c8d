// bench/runtime/node/bench.js: ns per probe.fire(cb) of the Node binding
// (run.sh sets USDTKIT_NODE_ADDON and runs it).
//   node bench.js disabled N [STUB_DIR]   probe.fire(cb), provider.fire(name, cb),
//       and, given the unpacked dtrace-provider 0.8.8, its Linux stub's fire:
//       best of 5 runs of N, after a warm-up
//   node bench.js enabled N               waits until a tracer is attached
//       (the callback gets called), then one run of N enabled firings
'use strict';
const path = require('path');
const [mode, nArg, stubDir] = process.argv.slice(2);
const N = Number(nArg);

function args(i) {
	return [i, 'hello'];
}

function best(fn) {
	let b = Infinity;
	fn(N / 10);
	for (let r = 0; r < 5; r++) {
		const t = process.hrtime.bigint();
		fn(N);
		const ns = Number(process.hrtime.bigint() - t) / N;
		if (ns < b)
			b = ns;
	}
	return b;
}

function setup(d) {
	const dtp = d.createDTraceProvider('benchprov');
	const hit = dtp.addProbe('hit', 'int', 'char *');
	dtp.enable();
	return [dtp, hit];
}

const ours = require(path.join(__dirname, '../../../bindings/node'));
const [dtp, hit] = setup(ours);
if (mode === 'disabled') {
	const out = {};
	out.probe = best((n) => {
		for (let i = 0; i < n; i++)
			hit.fire(args, i);
	});
	out.provider = best((n) => {
		for (let i = 0; i < n; i++)
			dtp.fire('hit', args, i);
	});
	if (stubDir) {
		process.env.NODE_DTRACE_PROVIDER_REQUIRE = '';
		const [, shit] = setup(require(path.resolve(stubDir, 'dtrace-provider.js')));
		out.stub = best((n) => {
			for (let i = 0; i < n; i++)
				shit.fire(args, i);
		});
	}
	console.log(JSON.stringify(out));
} else {
	console.log('ready ' + process.pid);
	let on = false;
	const deadline = Date.now() + 20000;
	(function poll() {
		hit.fire(() => {
			on = true;
			return [0, 'x'];
		});
		if (!on && Date.now() < deadline)
			return setTimeout(poll, 10);
		if (!on) {
			console.error('bench.js: no tracer attached in 20 s');
			process.exit(1);
		}
		const t = process.hrtime.bigint();
		for (let i = 0; i < N; i++)
			hit.fire(args, i);
		console.log(JSON.stringify({ probe: Number(process.hrtime.bigint() - t) / N }));
	})();
}
