/* SPDX-License-Identifier: MIT */
/*
 * addon.c: the native half of the Node binding, over libusdtkit-runtime
 * through Node-API only (node_api.h, NAPI_VERSION 8: any Node from 12.22 on,
 * no V8 or libnode symbols, one .node file for every Node version).
 *
 * It owns the lifetimes; dtrace-provider.js owns the behaviour. A provider
 * "generation" is one usdtkit_provider: the JS provider makes a new one
 * only when a probe was removed (the library cannot take a probe out of a
 * provider). A generation is destroyed when nothing can reach its memory
 * any more, counted in `refs`: the JS handle of the generation, the handle
 * of each of its probes, and each Uint16Array viewing one of its
 * semaphores. The last one matters: a view that outlived the object it
 * reads would be a SIGSEGV, and the library keeps a semaphore readable
 * until usdtkit_provider_destroy(), so the view's finalizer decides when.
 *
 * The disabled path never comes here: JS reads the semaphore through the
 * view. Only where external ArrayBuffers are refused (a V8 sandbox, e.g.
 * Electron) does semaphore() return false and JS call enabled() instead.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <node_api.h>
#include <usdtkit/runtime.h>

struct generation {
	usdtkit_provider *p;
	unsigned refs;
};

/* What a JS probe holds: its probe in one generation, which it keeps alive. */
struct probe_ref {
	struct generation *g;
	usdtkit_probe *q;
};

static void gen_unref(struct generation *g)
{
	if (--g->refs > 0)
		return;
	usdtkit_provider_destroy(g->p);
	free(g);
}

static void gen_finalize(napi_env env, void *data, void *hint)
{
	gen_unref(data);
}

static void probe_finalize(napi_env env, void *data, void *hint)
{
	struct probe_ref *r = data;

	gen_unref(r->g);
	free(r);
}

static void view_finalize(napi_env env, void *data, void *hint)
{
	gen_unref(hint);
}

/* Throws an Error (NULL for `code`) and returns NULL, for `return throw_error(...)`. */
static napi_value throw_error(napi_env env, const char *msg)
{
	napi_throw_error(env, NULL, msg);
	return NULL;
}

static napi_value throw_type_error(napi_env env, const char *msg)
{
	napi_throw_type_error(env, NULL, msg);
	return NULL;
}

/* The call's arguments; exactly `n` are expected (dtrace-provider.js passes them). */
static int get_args(napi_env env, napi_callback_info info, size_t n, napi_value *argv)
{
	size_t argc = n;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok)
		return -1;
	if (argc < n) {
		throw_type_error(env, "usdtkit addon: missing argument");
		return -1;
	}
	return 0;
}

/* A JS string as a new C string (free() it), or NULL with an exception pending. */
static char *get_string(napi_env env, napi_value v)
{
	size_t len;
	char *s;

	if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
		throw_type_error(env, "usdtkit addon: a string was expected");
		return NULL;
	}
	s = malloc(len + 1);
	if (!s) {
		throw_error(env, "out of memory");
		return NULL;
	}
	napi_get_value_string_utf8(env, v, s, len + 1, &len);
	return s;
}

static void *get_external(napi_env env, napi_value v)
{
	void *data = NULL;

	if (napi_get_value_external(env, v, &data) != napi_ok)
		throw_type_error(env, "usdtkit addon: not a handle of this addon");
	return data;
}

/* A JS array of type numbers (USDTKIT_*), at most USDTKIT_MAX_ARGS; -1 with an exception. */
static int get_types(napi_env env, napi_value arr, usdtkit_type *types)
{
	uint32_t n, i;
	int32_t t;
	napi_value v;

	if (napi_get_array_length(env, arr, &n) != napi_ok || n > USDTKIT_MAX_ARGS) {
		throw_type_error(env, "usdtkit addon: bad argument types");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (napi_get_element(env, arr, i, &v) != napi_ok ||
		    napi_get_value_int32(env, v, &t) != napi_ok) {
			throw_type_error(env, "usdtkit addon: bad argument types");
			return -1;
		}
		types[i] = (usdtkit_type)t;
	}
	return (int)n;
}

static napi_value wrap_external(napi_env env, void *data, napi_finalize fin)
{
	napi_value v;

	if (napi_create_external(env, data, fin, NULL, &v) != napi_ok) {
		fin(env, data, NULL);
		return NULL;
	}
	return v;
}

/* create(name, module|null): a new generation's handle. */
static napi_value create(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	napi_valuetype t;
	char *name, *module = NULL;
	struct generation *g;
	char msg[200];

	if (get_args(env, info, 2, argv) != 0 || !(name = get_string(env, argv[0])))
		return NULL;
	napi_typeof(env, argv[1], &t);
	if (t == napi_string && !(module = get_string(env, argv[1]))) {
		free(name);
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g)
		g->p = usdtkit_provider_create(name, module);
	if (!g || !g->p) {
		if (errno == EINVAL)
			snprintf(msg, sizeof(msg),
				 "bad provider name '%.64s': letters, digits, '_' and '-', not "
				 "starting with a digit, at most %d characters",
				 name, USDTKIT_MAX_NAME);
		else
			snprintf(msg, sizeof(msg), "cannot create provider '%.64s': %s", name,
				 strerror(errno));
		free(g);
		free(name);
		free(module);
		return throw_error(env, msg);
	}
	free(name);
	free(module);
	g->refs = 1;
	return wrap_external(env, g, gen_finalize);
}

/*
 * check(name, types): throws the library's own message when usdtkit would
 * refuse such a probe, so that addProbe fails at once, also while the
 * provider is loaded (when the probe is only added at the next enable).
 */
static napi_value check(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	usdtkit_type types[USDTKIT_MAX_ARGS];
	usdtkit_provider *scratch;
	char *name;
	int n;

	if (get_args(env, info, 2, argv) != 0 || (n = get_types(env, argv[1], types)) < 0 ||
	    !(name = get_string(env, argv[0])))
		return NULL;
	scratch = usdtkit_provider_create("check", NULL);
	if (!scratch) {
		free(name);
		return throw_error(env, "out of memory");
	}
	if (!usdtkit_probe_addv(scratch, name, n, types))
		throw_error(env, usdtkit_provider_error(scratch));
	usdtkit_provider_destroy(scratch);
	free(name);
	return NULL;
}

/* add(generation, name, types): the new probe's handle. */
static napi_value add(napi_env env, napi_callback_info info)
{
	napi_value argv[3];
	usdtkit_type types[USDTKIT_MAX_ARGS];
	struct generation *g;
	struct probe_ref *r;
	usdtkit_probe *q;
	char *name;
	int n;

	if (get_args(env, info, 3, argv) != 0 || !(g = get_external(env, argv[0])) ||
	    (n = get_types(env, argv[2], types)) < 0 || !(name = get_string(env, argv[1])))
		return NULL;
	q = usdtkit_probe_addv(g->p, name, n, types);
	free(name);
	if (!q)
		return throw_error(env, usdtkit_provider_error(g->p));
	r = malloc(sizeof(*r));
	if (!r)
		return throw_error(env, "out of memory");
	r->g = g;
	r->q = q;
	g->refs++;
	return wrap_external(env, r, probe_finalize);
}

static napi_value load(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	struct generation *g;

	if (get_args(env, info, 1, argv) != 0 || !(g = get_external(env, argv[0])))
		return NULL;
	if (usdtkit_provider_load(g->p) != 0)
		return throw_error(env, usdtkit_provider_error(g->p));
	return NULL;
}

static napi_value unload(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	struct generation *g;

	if (get_args(env, info, 1, argv) != 0 || !(g = get_external(env, argv[0])))
		return NULL;
	if (usdtkit_provider_unload(g->p) != 0 && errno != EALREADY)
		return throw_error(env, usdtkit_provider_error(g->p));
	return NULL;
}

/*
 * semaphore(probe): a Uint16Array of length 1 over the probe's semaphore
 * (the kernel's count of attached tracers), null when the provider is not
 * loaded, false when this runtime refuses external ArrayBuffers.
 */
static napi_value semaphore(napi_env env, napi_callback_info info)
{
	napi_value argv[1], ab, view, result;
	const volatile unsigned short *sem;
	struct probe_ref *r;
	napi_status st;

	if (get_args(env, info, 1, argv) != 0 || !(r = get_external(env, argv[0])))
		return NULL;
	sem = usdtkit_probe_semaphore(r->q);
	if (!sem) {
		napi_get_null(env, &result);
		return result;
	}
	st = napi_create_external_arraybuffer(env, (void *)sem, sizeof(*sem), view_finalize, r->g,
					      &ab);
	if (st == napi_no_external_buffers_allowed) {
		napi_get_boolean(env, false, &result);
		return result;
	}
	if (st != napi_ok)
		return throw_error(env, "cannot create a view of the probe's semaphore");
	r->g->refs++;
	if (napi_create_typedarray(env, napi_uint16_array, 1, ab, 0, &view) != napi_ok)
		return throw_error(env, "cannot create a view of the probe's semaphore");
	return view;
}

static napi_value enabled(napi_env env, napi_callback_info info)
{
	napi_value argv[1], result;
	struct probe_ref *r;

	if (get_args(env, info, 1, argv) != 0 || !(r = get_external(env, argv[0])))
		return NULL;
	napi_get_boolean(env, usdtkit_probe_enabled(r->q) != 0, &result);
	return result;
}

/*
 * An "int" argument as V8's IntegerValue() makes it, which is what
 * dtrace-provider fired: truncated toward zero, NaN 0, saturated at the
 * int64 range. (napi_get_value_int64 would make the infinities 0.)
 */
static int64_t js_integer(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 9223372036854775808.0)
		return INT64_MAX;
	if (d <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

/*
 * fire(probe, values): fires with values already converted by JS, one per
 * declared argument: numbers for integers, strings for strings.
 */
static napi_value fire(napi_env env, napi_callback_info info)
{
	napi_value argv[2], v;
	uint64_t args[USDTKIT_MAX_ARGS];
	char *strs[USDTKIT_MAX_ARGS];
	struct probe_ref *r;
	int i, n, nstrs = 0;
	double d;

	if (get_args(env, info, 2, argv) != 0 || !(r = get_external(env, argv[0])))
		return NULL;
	n = usdtkit_probe_nargs(r->q);
	for (i = 0; i < n; i++) {
		if (napi_get_element(env, argv[1], (uint32_t)i, &v) != napi_ok)
			goto out;
		if (usdtkit_probe_arg_type(r->q, i) == USDTKIT_STRING) {
			if (!(strs[nstrs] = get_string(env, v)))
				goto out;
			args[i] = (uint64_t)(uintptr_t)strs[nstrs++];
		} else {
			if (napi_get_value_double(env, v, &d) != napi_ok) {
				throw_type_error(env, "usdtkit addon: a number was expected");
				goto out;
			}
			args[i] = (uint64_t)js_integer(d);
		}
	}
	usdtkit_probe_fire_argv(r->q, n, args);
out:
	while (nstrs > 0)
		free(strs[--nstrs]);
	return NULL;
}

/* fatal(error): what dtrace-provider does with an exception of the fire callback. */
static napi_value fatal(napi_env env, napi_callback_info info)
{
	napi_value argv[1];

	if (get_args(env, info, 1, argv) == 0)
		napi_fatal_exception(env, argv[0]);
	return NULL;
}

static int export_int(napi_env env, napi_value exports, const char *name, int32_t value)
{
	napi_value v;

	if (napi_create_int32(env, value, &v) != napi_ok)
		return -1;
	return napi_set_named_property(env, exports, name, v) == napi_ok ? 0 : -1;
}

/*
 * The entry point node looks up in every .node file (what NAPI_MODULE_INIT
 * defines, spelled out to declare it first). Without the newer
 * node_api_module_get_api_version_v1, node takes the module for version 8.
 */
NAPI_MODULE_EXPORT napi_value napi_register_module_v1(napi_env env, napi_value exports);

NAPI_MODULE_EXPORT napi_value napi_register_module_v1(napi_env env, napi_value exports)
{
	static const napi_property_descriptor fns[] = {
	    {"create", NULL, create, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"check", NULL, check, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"add", NULL, add, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"load", NULL, load, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"unload", NULL, unload, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"semaphore", NULL, semaphore, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"enabled", NULL, enabled, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"fire", NULL, fire, NULL, NULL, NULL, napi_enumerable, NULL},
	    {"fatal", NULL, fatal, NULL, NULL, NULL, napi_enumerable, NULL},
	};

	if (napi_define_properties(env, exports, sizeof(fns) / sizeof(fns[0]), fns) != napi_ok ||
	    export_int(env, exports, "INT64", USDTKIT_INT64) != 0 ||
	    export_int(env, exports, "STRING", USDTKIT_STRING) != 0 ||
	    export_int(env, exports, "MAX_ARGS", USDTKIT_MAX_ARGS) != 0)
		return NULL;
	return exports;
}
