// tests/runtime-node/driver.js: a Node process the shell tests drive line
// by line (lib.sh's js). Each line of stdin is JavaScript run in one shared
// scope (`d` is the package, `D` a place for the test's objects, `calls`
// counts callbacks that count themselves); each answer is one line:
// "ok <JSON of the value>" or "err <constructor name>: <message>".
'use strict';
const readline = require('readline');
const d = require(process.env.USDTKIT_NODE_PKG);
const D = {};
const calls = {};
// A fire callback that counts its calls under `name` and returns `args`.
function counted(name, args) {
	calls[name] = 0;
	return function () {
		calls[name]++;
		return args;
	};
}
function show(v) {
	if (v === undefined)
		return 'undefined';
	return JSON.stringify(v);
}
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
	let out;
	try {
		out = 'ok ' + show(eval(line));
	} catch (e) {
		out = 'err ' + (e && e.constructor ? e.constructor.name : typeof e) + ': ' +
			(e && e.message);
	}
	process.stdout.write(out.replace(/\n/g, ' ') + '\n');
});
rl.on('close', () => process.exit(0));
void d, D, counted;
process.stdout.write('ready ' + process.pid + '\n');
