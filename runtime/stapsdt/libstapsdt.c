/* SPDX-License-Identifier: MIT */
/*
 * libstapsdt.so.0: libstapsdt's API (<libstapsdt.h>) over libusdtkit-runtime.
 * This file owns the translation, and nothing else: the object, its notes,
 * its semaphores and its registration are the runtime library's.
 *
 * Each SDTProvider_t and each SDTProbeList_t node is the first member of a
 * larger struct of ours, so that the layouts callers see are exactly
 * libstapsdt's while the usdtkit provider and probes travel with them.
 * libstapsdt's behaviours that callers can see are kept (README.md lists
 * them): loading a provider with no probes or loading it twice succeeds; a
 * probe added while loaded joins the next load and stays inert until then;
 * unloading what is not loaded succeeds; the error strings are its own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, asprintf, dladdr */
#endif
#include "libstapsdt.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <usdtkit/runtime.h>

/*
 * libstapsdt's messages for its SDTError_t codes (its src/errors.c), as
 * literals so that the compiler checks each use. symbolLoadingError has
 * none here: a load either maps every probe or fails before.
 */
#define MSG_ELF_CREATION "failed to create Elf shared library for provider '%s'"
#define MSG_TMP_CREATION "failed to create temporary file"
#define MSG_LIBRARY_OPEN "failed to open shared library '%s': %s"
#define MSG_LIBRARY_CLOSE "failed to close shared library '%s' for provider '%s': %s"

struct stapsdt_provider {
	SDTProvider_t pub;    /* first: callers hold &pub */
	usdtkit_provider *rt; /* NULL: usdtkit refused the provider's name */
	char *object;	      /* "usdtkit:NAME": the object's name (maps, dtrace -l) */
	int loaded;	      /* loaded as libstapsdt sees it (also with no probes) */
};

enum probe_state {
	PROBE_ADDED,   /* rt is a probe of the usdtkit provider */
	PROBE_PENDING, /* added while loaded: joins the next load */
	PROBE_REFUSED, /* usdtkit refused it at a load: inert for good */
};

struct stapsdt_probe {
	SDTProbeList_t node; /* first: callers hold &node.probe */
	usdtkit_probe *rt;   /* written by a load while other threads may fire */
	enum probe_state state;
};

static struct stapsdt_provider *provider_of(SDTProvider_t *provider)
{
	return (struct stapsdt_provider *)provider;
}

static struct stapsdt_probe *probe_of(SDTProbe_t *probe)
{
	return (struct stapsdt_probe *)probe;
}

static struct stapsdt_probe *node_probe(SDTProbeList_t *node)
{
	return (struct stapsdt_probe *)node;
}

/*
 * Sets the error as libstapsdt does: the code, and the message in a new
 * string. Errors libstapsdt has no code for (it accepts what usdtkit
 * refuses) are a message and noError.
 */
static void set_error(SDTProvider_t *provider, SDTError_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_error(SDTProvider_t *provider, SDTError_t code, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(provider->error);
	provider->error = msg;
	provider->sdtErrno = code;
}

static char *copy_string(const char *s)
{
	return s ? strdup(s) : NULL;
}

SDTProvider_t *providerInit(const char *name)
{
	struct stapsdt_provider *sp;
	char *object = NULL;

	if (!name)
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp || !(sp->pub.name = copy_string(name)) ||
	    asprintf(&object, "usdtkit:%s", name) < 0) {
		if (sp)
			free(sp->pub.name);
		free(sp);
		return NULL;
	}
	sp->pub.sdtErrno = noError;
	sp->pub._memfd = -1;
	sp->pub._use_memfd = memfd_enabled;
	sp->object = object;
	sp->rt = usdtkit_provider_create(name, NULL);
	return &sp->pub;
}

int providerUseMemfd(SDTProvider_t *provider, const MemFDOption_t use_memfd)
{
	if (!provider || provider_of(provider)->loaded)
		return 0;
	provider->_use_memfd = use_memfd;
	return 1;
}

/* libstapsdt's noarg becomes a 64-bit value: its "0@%rdi" had no size a tracer reads. */
static int to_usdtkit_type(ArgType_t t, usdtkit_type *out)
{
	switch (t) {
	case noarg:
		*out = USDTKIT_UINT64;
		return 0;
	case uint8:
	case int8:
	case uint16:
	case int16:
	case uint32:
	case int32:
	case uint64:
	case int64:
		*out = (usdtkit_type)t;
		return 0;
	}
	return -1;
}

/* Adds the node's probe to the usdtkit provider: 0, or -1 with provider->error set. */
static int add_to_runtime(struct stapsdt_provider *sp, struct stapsdt_probe *q)
{
	usdtkit_type types[MAX_ARGUMENTS];
	SDTProbe_t *probe = &q->node.probe;
	usdtkit_probe *rt;
	int i;

	if (!sp->rt) {
		set_error(&sp->pub, noError,
			  "usdtkit: provider '%s': bad name: letters, digits, '_' and '-', "
			  "not starting with a digit",
			  sp->pub.name);
		return -1;
	}
	for (i = 0; i < probe->argCount; i++) {
		if (to_usdtkit_type(probe->argFmt[i], &types[i]) != 0) {
			set_error(
			    &sp->pub, noError,
			    "usdtkit: provider '%s': probe '%s': argument %d has no ArgType_t %d",
			    sp->pub.name, probe->name, i, (int)probe->argFmt[i]);
			return -1;
		}
	}
	rt = usdtkit_probe_addv(sp->rt, probe->name, probe->argCount, types);
	if (!rt) {
		set_error(&sp->pub, noError, "%s", usdtkit_provider_error(sp->rt));
		return -1;
	}
	__atomic_store_n(&q->rt, rt, __ATOMIC_RELEASE);
	q->state = PROBE_ADDED;
	return 0;
}

SDTProbe_t *providerAddProbe(SDTProvider_t *provider, const char *name, int argCount, ...)
{
	struct stapsdt_provider *sp = provider_of(provider);
	struct stapsdt_probe *q;
	va_list ap;
	int i;

	if (!provider || !name)
		return NULL;
	/* libstapsdt writes past argFmt[] here; refuse instead. */
	if (argCount < 0 || argCount > MAX_ARGUMENTS) {
		set_error(
		    provider, noError,
		    "usdtkit: provider '%s': probe '%s': %d arguments; libstapsdt has 0 to %d",
		    provider->name, name, argCount, MAX_ARGUMENTS);
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q || !(q->node.probe.name = copy_string(name))) {
		free(q);
		return NULL;
	}
	va_start(ap, argCount);
	for (i = 0; i < argCount; i++)
		q->node.probe.argFmt[i] = va_arg(ap, ArgType_t);
	va_end(ap);
	q->node.probe.argCount = argCount;
	q->node.probe.provider = provider;

	if (sp->loaded) {
		q->state = PROBE_PENDING;
	} else if (add_to_runtime(sp, q) != 0) {
		free(q->node.probe.name);
		free(q);
		return NULL;
	}
	q->node.next = provider->probes;
	provider->probes = &q->node;
	return &q->node.probe;
}

/*
 * The loaded object's own dlopen() handle and name, as libstapsdt fills
 * _handle, _filename and _memfd, and each probe's stub (its dynamic symbol
 * is the probe's name) in _fire. Found from a semaphore's address; a
 * reference of our own, dropped at unload.
 */
static void fill_loaded_fields(struct stapsdt_provider *sp)
{
	const volatile unsigned short *sema = NULL;
	SDTProbeList_t *node;
	Dl_info info;
	void *handle;

	for (node = sp->pub.probes; node && !sema; node = node->next)
		if (node_probe(node)->state == PROBE_ADDED)
			sema = usdtkit_probe_semaphore(node_probe(node)->rt);
	if (!sema || !dladdr((const void *)sema, &info) || !info.dli_fname)
		return;
	handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!handle)
		return;
	sp->pub._handle = handle;
	sp->pub._filename = copy_string(info.dli_fname);
	if (!sp->pub._filename || sscanf(info.dli_fname, "/proc/%*d/fd/%d", &sp->pub._memfd) != 1)
		sp->pub._memfd = -1;
	for (node = sp->pub.probes; node; node = node->next)
		if (node_probe(node)->state == PROBE_ADDED)
			node->probe._fire = dlsym(handle, node->probe.name);
}

static void clear_loaded_fields(struct stapsdt_provider *sp)
{
	SDTProbeList_t *node;

	for (node = sp->pub.probes; node; node = node->next)
		node->probe._fire = NULL;
	free(sp->pub._filename);
	sp->pub._filename = NULL;
	sp->pub._memfd = -1;
	sp->pub._handle = NULL;
}

/* Drops our reference to the object: 0, or -1 with provider->error set. */
static int close_handle(struct stapsdt_provider *sp)
{
	int rc = 0;

	if (sp->pub._handle && dlclose(sp->pub._handle) != 0) {
		set_error(&sp->pub, sharedLibraryCloseError, MSG_LIBRARY_CLOSE, sp->pub._filename,
			  sp->pub.name, dlerror());
		rc = -1;
	}
	clear_loaded_fields(sp);
	return rc;
}

/* Adds the probes of the list that wait for a load: 0, or -1 when usdtkit refused one. */
static int add_pending(struct stapsdt_provider *sp)
{
	SDTProbeList_t *node;
	int rc = 0;

	for (node = sp->pub.probes; node; node = node->next) {
		struct stapsdt_probe *q = node_probe(node);

		if (q->state != PROBE_PENDING)
			continue;
		if (sp->loaded && usdtkit_provider_loaded(sp->rt)) {
			/* Adding needs the provider unloaded; the load below maps all probes anew.
			 */
			(void)close_handle(sp);
			(void)usdtkit_provider_unload(sp->rt);
		}
		sp->loaded = 0;
		if (add_to_runtime(sp, q) != 0) {
			q->state = PROBE_REFUSED;
			rc = -1;
		}
	}
	return rc;
}

static int has_pending(const struct stapsdt_provider *sp)
{
	const SDTProbeList_t *node;

	for (node = sp->pub.probes; node; node = node->next)
		if (((const struct stapsdt_probe *)node)->state == PROBE_PENDING)
			return 1;
	return 0;
}

static int has_added(const struct stapsdt_provider *sp)
{
	const SDTProbeList_t *node;

	for (node = sp->pub.probes; node; node = node->next)
		if (((const struct stapsdt_probe *)node)->state == PROBE_ADDED)
			return 1;
	return 0;
}

/*
 * A failed usdtkit load in libstapsdt's terms: the dynamic loader's refusal
 * (ELIBBAD) is its shared library open error, with the loader's words; the
 * object not built (architecture, size, memory) its Elf creation error;
 * anything else failed on the memfd, its temporary file.
 */
static void load_error(struct stapsdt_provider *sp, int err)
{
	switch (err) {
	case ELIBBAD:
		set_error(&sp->pub, sharedLibraryOpenError, MSG_LIBRARY_OPEN, sp->object,
			  usdtkit_provider_error(sp->rt));
		break;
	case ENOTSUP:
	case E2BIG:
	case ENOMEM:
		set_error(&sp->pub, elfCreationError, MSG_ELF_CREATION, sp->pub.name);
		break;
	default:
		set_error(&sp->pub, tmpCreationError, MSG_TMP_CREATION);
	}
}

int providerLoad(SDTProvider_t *provider)
{
	struct stapsdt_provider *sp = provider_of(provider);

	if (!provider)
		return -1;
	if (!sp->rt) {
		set_error(provider, elfCreationError, MSG_ELF_CREATION, provider->name);
		return -1;
	}
	if (has_pending(sp) && add_pending(sp) != 0) {
		set_error(provider, elfCreationError, MSG_ELF_CREATION, provider->name);
		return -1;
	}
	if (sp->loaded)
		return 0;
	/* libstapsdt loads an object with no probes; usdtkit has nothing to load. */
	if (has_added(sp) && usdtkit_provider_load(sp->rt) != 0) {
		load_error(sp, errno);
		return -1;
	}
	sp->loaded = 1;
	fill_loaded_fields(sp);
	return 0;
}

int providerUnload(SDTProvider_t *provider)
{
	struct stapsdt_provider *sp = provider_of(provider);
	int rc;

	if (!provider)
		return -1;
	if (!sp->loaded)
		return 0;
	rc = close_handle(sp);
	if (usdtkit_provider_loaded(sp->rt) && usdtkit_provider_unload(sp->rt) != 0) {
		set_error(provider, sharedLibraryCloseError, MSG_LIBRARY_CLOSE, provider->name,
			  provider->name, usdtkit_provider_error(sp->rt));
		rc = -1;
	}
	sp->loaded = 0;
	return rc;
}

void providerDestroy(SDTProvider_t *provider)
{
	struct stapsdt_provider *sp = provider_of(provider);
	SDTProbeList_t *node, *next;

	if (!provider)
		return;
	(void)close_handle(sp);
	usdtkit_provider_destroy(sp->rt);
	for (node = provider->probes; node; node = next) {
		next = node->next;
		free(node->probe.name);
		free(node_probe(node));
	}
	free(provider->name);
	free(provider->error);
	free(sp->object);
	free(sp);
}

void probeFire(SDTProbe_t *probe, ...)
{
	uint64_t args[MAX_ARGUMENTS];
	usdtkit_probe *rt;
	va_list ap;
	int i, n;

	if (!probe)
		return;
	rt = __atomic_load_n(&probe_of(probe)->rt, __ATOMIC_ACQUIRE);
	if (!rt || !usdtkit_probe_enabled(rt))
		return;
	n = probe->argCount;
	va_start(ap, probe);
	for (i = 0; i < n; i++)
		args[i] = va_arg(ap, uint64_t);
	va_end(ap);
	(void)usdtkit_probe_fire_argv(rt, n, args);
}

int probeIsEnabled(SDTProbe_t *probe)
{
	usdtkit_probe *rt;

	if (!probe)
		return 0;
	rt = __atomic_load_n(&probe_of(probe)->rt, __ATOMIC_ACQUIRE);
	return rt && usdtkit_probe_enabled(rt) ? 1 : 0;
}
