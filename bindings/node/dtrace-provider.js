// SPDX-License-Identifier: MIT
//
// dtrace-provider.js: the `dtrace-provider` API (0.8.8) on Linux, over
// libusdtkit-runtime. This file owns the behaviour, copied from
// dtrace-provider 0.8.8 (README.md lists it and the few differences);
// addon.c owns the native objects and their lifetimes.
//
// The point of the API is that a disabled probe costs nothing: fire(cb)
// calls cb, and converts and fires what it returns, only while a tracer is
// attached. Here that test is one read of the probe's semaphore, the
// unsigned short the kernel counts attached tracers in, through a
// Uint16Array the addon made over it (an external ArrayBuffer): no native
// call. The view is made again at every enable(), since a new load may map
// a new object; it is null while the provider is not loaded.

'use strict';

const path = require('path');

// Where the addon is: $USDTKIT_NODE_ADDON (the meson build's, for usdtkit's
// tests), else node-gyp's build/ in this directory. Without it the API is a
// stub whose probes never fire, as dtrace-provider's is where it has no
// binding, unless NODE_DTRACE_PROVIDER_REQUIRE=hard.
function loadBinding() {
	const env = process.env.USDTKIT_NODE_ADDON;
	const candidates = env
		? [path.resolve(env)]
		: ['Release', 'Debug'].map((b) =>
				path.join(__dirname, 'build', b, 'usdtkit_dtrace_provider.node'));
	let first = null;
	for (const file of candidates) {
		try {
			return require(file);
		} catch (e) {
			if (first === null)
				first = e;
		}
	}
	if (process.env.NODE_DTRACE_PROVIDER_REQUIRE === 'hard')
		throw first;
	return null;
}

const binding = loadBinding();

// dtrace-provider's stub, for a package whose addon is missing.
function DTraceProviderStub() {}
DTraceProviderStub.prototype.addProbe = function (name) {
	const p = { fire: function () {} };
	this[name] = p;
	return p;
};
DTraceProviderStub.prototype.enable = function () {};
DTraceProviderStub.prototype.fire = function () {};
DTraceProviderStub.prototype.disable = function () {};

// How an argument is converted: dtrace-provider matches the type's prefix,
// and anything else is a string.
const INT = 0;
const STRING = 1;
const JSONTEXT = 2;
const stringify = JSON.stringify;

function kindOf(type) {
	if (type.startsWith('json'))
		return JSONTEXT;
	if (type.startsWith('char *'))
		return STRING;
	if (type.startsWith('int'))
		return INT;
	return STRING;
}

// The probes' and providers' state, out of sight of for-in, Object.keys and
// JSON.stringify: a provider's own properties are its probes' names.
const kProv = Symbol('provider');
const kName = Symbol('name');
const kKinds = Symbol('kinds');
const kTypes = Symbol('types');
const kProbe = Symbol('probe'); // the addon's handle, or null
const kSem = Symbol('semaphore'); // Uint16Array, or null while not loaded
const kState = Symbol('state');

function DTraceProbe(prov, name, kinds, types) {
	this[kProv] = prov;
	this[kName] = name;
	this[kKinds] = kinds;
	this[kTypes] = types;
	this[kProbe] = null;
	this[kSem] = null;
	// The probe keeps its provider alive (dtrace-provider's test gc-provider).
	Object.defineProperty(this, '__prov__', { value: prov });
}

// Disabled: one typed-array read, and back (no closure is called, no
// argument is converted, nothing native is called).
DTraceProbe.prototype.fire = function (cb) {
	if (typeof cb !== 'function')
		throw new TypeError('Must give probe value callback as first argument');
	const s = this[kSem];
	if (s === null || s[0] === 0)
		return undefined;
	return fireEnabled(this, cb, arguments, 1);
};

// Calls cb with the extra arguments of fire(), `this` the probe; fires what
// it returns when that is an array. true once fired.
function fireEnabled(probe, cb, args, from) {
	const extra = [];
	for (let i = from; i < args.length; i++)
		extra.push(args[i]);
	let r;
	try {
		r = cb.apply(probe, extra);
	} catch (e) {
		// dtrace-provider reports it as uncaught (process 'uncaughtException').
		binding.fatal(e);
		return undefined;
	}
	if (!Array.isArray(r))
		return undefined;
	const kinds = probe[kKinds];
	const values = new Array(kinds.length);
	for (let i = 0; i < kinds.length; i++) {
		const v = r[i];
		if (kinds[i] === INT)
			values[i] = v === undefined ? 0 : +v;
		else if (v === undefined)
			values[i] = 'undefined';
		else if (kinds[i] === STRING)
			values[i] = String(v);
		else
			values[i] = String(stringify(v));
	}
	binding.fire(probe[kProbe], values);
	return true;
}

// Where the runtime refuses external ArrayBuffers: a native call per test.
function semaphoreByCall(handle) {
	return {
		get 0() {
			return binding.enabled(handle) ? 1 : 0;
		},
	};
}

// (USDTKIT_NODE_SEMAPHORE_BY_CALL=1: that path on any Node, for the tests)
const byCall = process.env.USDTKIT_NODE_SEMAPHORE_BY_CALL === '1';

function refresh(probe) {
	const view = byCall ? false : binding.semaphore(probe[kProbe]);
	probe[kSem] = view === false ? semaphoreByCall(probe[kProbe]) : view;
}

function DTraceProvider(name, module) {
	if (typeof name !== 'string')
		throw new TypeError('Must give provider name as argument');
	if (arguments.length === 2 && typeof module !== 'string')
		throw new TypeError('Must give module name as argument');
	if (arguments.length > 2)
		throw new Error('Expected only provider name and module as arguments');
	const mod = arguments.length === 2 ? module : null;
	Object.defineProperty(this, kState, {
		value: {
			name,
			module: mod,
			gen: binding.create(name, mod), // the library's provider
			inGen: 0, // probes[0..inGen) are in gen
			stale: false, // a probe of gen was removed: the next enable makes a new one
			loaded: false,
			probes: [], // the live probes, in the order added
		},
	});
}

// addProbe(name, type...): the probe, also as this[name]. Unlike
// dtrace-provider (which allowed 32), at most 12 arguments, usdtkit's limit,
// and names usdtkit refuses throw here rather than never fire.
DTraceProvider.prototype.addProbe = function (name) {
	const st = this[kState];
	const key = String(name);
	const kinds = [];
	const types = [];
	for (let i = 1; i < arguments.length; i++) {
		const k = kindOf(String(arguments[i]));
		kinds.push(k);
		types.push(k === INT ? binding.INT64 : binding.STRING);
	}
	if (types.length > binding.MAX_ARGS)
		throw new Error(`probe '${key}' has ${types.length} arguments: ` +
			`usdtkit probes have at most ${binding.MAX_ARGS}`);
	binding.check(key, types);
	const probe = new DTraceProbe(this, key, kinds, types);
	this[key] = probe;
	// A second probe of a name is never enabled, as in dtrace-provider.
	if (!st.probes.some((p) => p[kName] === key))
		st.probes.push(probe);
	return probe;
};

// removeProbe(probe): true; the probe is inert from now on, and leaves the
// provider at its next enable.
DTraceProvider.prototype.removeProbe = function (probe) {
	const st = this[kState];
	if (probe === null || typeof probe !== 'object' || !(kProv in probe))
		throw new TypeError('Must give probe as argument');
	delete this[probe[kName]];
	const i = st.probes.indexOf(probe);
	if (i < 0)
		throw new Error(`failed to remove probe ${st.name}:${probe[kName]}`);
	st.probes.splice(i, 1);
	if (i < st.inGen) {
		st.inGen--;
		st.stale = true;
	}
	probe[kProbe] = null;
	probe[kSem] = null;
	return true;
};

// enable(): the probes become visible to tracers. Again while enabled: nothing.
DTraceProvider.prototype.enable = function () {
	const st = this[kState];
	if (st.loaded)
		return;
	if (st.probes.length === 0)
		throw new Error('no probes defined');
	if (st.stale) {
		st.gen = binding.create(st.name, st.module);
		st.inGen = 0;
		st.stale = false;
	}
	for (; st.inGen < st.probes.length; st.inGen++) {
		const p = st.probes[st.inGen];
		p[kProbe] = binding.add(st.gen, p[kName], p[kTypes]);
	}
	binding.load(st.gen);
	st.loaded = true;
	for (const p of st.probes)
		refresh(p);
};

// disable(): the probes are gone for tracers, and fire() calls nothing.
DTraceProvider.prototype.disable = function () {
	const st = this[kState];
	if (!st.loaded)
		return;
	for (const p of st.probes)
		p[kSem] = null;
	st.loaded = false;
	binding.unload(st.gen);
};

// fire(name, cb, ...): probe `name`'s fire; true whenever it is a probe of
// this provider (fired or not), undefined for any other name.
DTraceProvider.prototype.fire = function (name, cb) {
	if (typeof name !== 'string')
		throw new TypeError('Must give probe name as first argument');
	if (typeof cb !== 'function')
		throw new TypeError('Must give probe value callback as second argument');
	const probe = this[name];
	if (probe === null || typeof probe !== 'object' || probe[kProv] !== this)
		return undefined;
	const s = probe[kSem];
	if (s !== null && s[0] !== 0)
		fireEnabled(probe, cb, arguments, 2);
	return true;
};

const Provider = binding ? DTraceProvider : DTraceProviderStub;

exports.DTraceProvider = Provider;
exports.createDTraceProvider = function (name, module) {
	if (arguments.length === 2)
		return new exports.DTraceProvider(name, module);
	return new exports.DTraceProvider(name);
};
