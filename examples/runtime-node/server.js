// examples/runtime-node/server.js: a pretend request loop with the probes a
// dtrace-provider user writes. `node server.js [COUNT]`: COUNT requests,
// one every 100 ms (default: until interrupted).
'use strict';
// An application depends on dtrace-provider; this example takes usdtkit's
// from the checkout (README.md says how to build it).
const d = require('../../bindings/node');

const dtp = d.createDTraceProvider('nodeapp');
dtp.addProbe('request-start', 'int', 'char *');
dtp.addProbe('request-done', 'int', 'int', 'json');
dtp.enable();

const count = Number(process.argv[2] || Infinity);
const paths = ['/', '/users', '/users/42', '/search?q=usdt'];
let id = 0;

function handle() {
	const req = { id: ++id, path: paths[id % paths.length], started: Date.now() };
	// The callbacks run only while a tracer is attached.
	dtp.fire('request-start', (r) => [r.id, r.path], req);
	const status = req.path === '/users/42' ? 404 : 200;
	dtp.fire('request-done', () => [req.id, status, { path: req.path, bytes: 100 * req.id }]);
	if (id < count)
		setTimeout(handle, 100);
	else
		dtp.disable();
}

console.log(`pid ${process.pid}: ${count} requests`);
handle();
