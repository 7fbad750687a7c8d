/* SPDX-License-Identifier: MIT */
/*
 * <usdtkit/runtime.h>: USDT providers declared while the program runs.
 *
 * A program that cannot know its probes when it is compiled (a language
 * runtime, a plugin host) creates a provider, adds probes with typed
 * arguments, and loads it. Loading builds, in memory, a small ELF shared
 * object for the running architecture whose probe sites carry the same
 * `.note.stapsdt` notes, `.probes` semaphores and `.note.usdtkit` metadata
 * as a compiled provider, maps it with the dynamic loader from a memfd (no
 * file is left anywhere), and registers it with usdtkit-helperd when one
 * runs. bpftrace, perf, gdb, `dtrace -l` and the helper then see it exactly
 * as they see a compiled probe. The design is runtime/README.md; the manual
 * is usdtkit-runtime(3).
 *
 *	usdtkit_provider *p = usdtkit_provider_create("myapp", NULL);
 *	usdtkit_probe *q = usdtkit_probe_add(p, "request-start", 2,
 *	                                     USDTKIT_STRING, USDTKIT_INT64);
 *	if (!q || usdtkit_provider_load(p) != 0)
 *		fprintf(stderr, "%s\n", usdtkit_provider_error(p));
 *	...
 *	usdtkit_probe_fire(q, path, (int64_t)len);   (disabled: a load and a branch)
 *	...
 *	usdtkit_provider_destroy(p);
 *
 * Errors: a function that fails returns NULL or -1, sets errno, and leaves
 * a one-line message in usdtkit_provider_error(). Nothing is ever printed.
 *
 * Threads: firing and usdtkit_probe_enabled() may run in any thread at any
 * time, also while another thread loads or unloads the provider (a probe
 * then fires into the object it saw, or not at all). Creating, adding,
 * loading, unloading and destroying one provider must not overlap each
 * other; usdtkit_provider_destroy() must be the last use of the provider and
 * of its probes, as free() is.
 */
#ifndef USDTKIT_RUNTIME_H
#define USDTKIT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct usdtkit_provider usdtkit_provider;
typedef struct usdtkit_probe usdtkit_probe;

/*
 * Argument types. The integer values are SystemTap's argument sizes, minus
 * for signed ([-]SIZE in `.note.stapsdt`), as libstapsdt's ArgType_t.
 * A USDTKIT_STRING argument is a `const char *` that tracers read as a
 * string (bpftrace str(argN); the helper's tracefs events decode it).
 */
typedef enum usdtkit_type {
	USDTKIT_INT8 = -1,
	USDTKIT_UINT8 = 1,
	USDTKIT_INT16 = -2,
	USDTKIT_UINT16 = 2,
	USDTKIT_INT32 = -4,
	USDTKIT_UINT32 = 4,
	USDTKIT_INT64 = -8,
	USDTKIT_UINT64 = 8,
	USDTKIT_POINTER = 16, /* void *: the address, 64 bits on LP64 */
	USDTKIT_STRING = 17   /* const char *, NUL-terminated */
} usdtkit_type;

/* The most arguments a probe can carry: as many as a <sys/sdt.h> probe. */
#define USDTKIT_MAX_ARGS 12
/* The longest provider or probe name, after '-' is spelled "__". */
#define USDTKIT_MAX_NAME 63

/*
 * A new, empty provider. `name` and probe names are what DTrace users
 * write ("electric-moray", "client-error"): letters, digits, '_' and '-',
 * not starting with a digit; each '-' appears as "__" in the notes (the
 * DTrace convention, so `dtrace -l` shows a probe's '-' again). `module`
 * (may be NULL) names the in-memory object: the memfd is
 * "usdtkit:<module>", "usdtkit:<provider>" without one, which maps and
 * `dtrace -l`'s module column show as "memfd:usdtkit:<...>". NULL with
 * errno EINVAL (bad name) or ENOMEM; no message is kept (there is no
 * provider to keep it).
 */
usdtkit_provider *usdtkit_provider_create(const char *name, const char *module);

/*
 * Adds a probe with `nargs` arguments of the given types (as `int`s, the
 * enum's values). Allowed before the first load and between loads (the
 * next load includes it). NULL on error: bad name or type, more than
 * USDTKIT_MAX_ARGS arguments, a probe of that name already there (EEXIST),
 * or the provider is loaded (EBUSY: unload first).
 */
usdtkit_probe *usdtkit_probe_add(usdtkit_provider *p, const char *name, int nargs, ...);
/* The same with the types in an array. */
usdtkit_probe *usdtkit_probe_addv(usdtkit_provider *p, const char *name, int nargs,
				  const usdtkit_type *types);

/*
 * Builds the object, maps it and registers it (usdtkit-helperd, when it
 * runs; bounded by USDTKIT_HELPER_TIMEOUT_MS like every compiled
 * provider's registration). 0, or -1 with errno: EALREADY (loaded
 * already), ENOENT (no probes), ENOTSUP (an architecture without runtime
 * providers), or whatever memfd_create or the dynamic loader reported,
 * with the loader's own words in the message.
 */
int usdtkit_provider_load(usdtkit_provider *p);

/*
 * Unregisters the provider and makes its probes inert: firing them fails
 * (-1, ESRCH) until the next load. The object stays mapped until destroy,
 * so that a thread still firing never touches unmapped memory; a later
 * load with no probe added since maps nothing new. -1 with EALREADY when it
 * is not loaded.
 */
int usdtkit_provider_unload(usdtkit_provider *p);

/* Unloads if needed and frees everything: the provider, its probes, its objects. */
void usdtkit_provider_destroy(usdtkit_provider *p);

/* The last error's message ("" when none); valid until the next call on p. */
const char *usdtkit_provider_error(const usdtkit_provider *p);

/*
 * Fires the probe with its arguments, one per declared type: int8..int32
 * and uint8..uint16 as int, uint32 as unsigned int, int64 and uint64 as
 * int64_t and uint64_t, pointers as void *, strings as const char *.
 * While no tracer is attached it costs the call, one load and a branch,
 * and reads no argument. 0 (fired, or no tracer attached); -1 with errno
 * ESRCH when the provider is not loaded.
 */
int usdtkit_probe_fire(const usdtkit_probe *q, ...);
/* The same with `argc` values already widened to 64 bits (bindings); extra ones are ignored,
 * missing ones are 0. */
int usdtkit_probe_fire_argv(const usdtkit_probe *q, int argc, const uint64_t *argv);

/* Whether a tracer is attached: one load of the semaphore the kernel counts. 0 when not loaded. */
int usdtkit_probe_enabled(const usdtkit_probe *q);

/*
 * The address of the probe's semaphore (an unsigned short the kernel
 * increments per attached tracer) in the loaded object, or NULL when the
 * provider is not loaded: for bindings that test it without a call. It
 * stays readable until usdtkit_provider_destroy(), also after an unload
 * (then it is simply no longer counted).
 */
const volatile unsigned short *usdtkit_probe_semaphore(const usdtkit_probe *q);

/* The probe's name as given, its provider, its argument count and types. */
const char *usdtkit_probe_name(const usdtkit_probe *q);
usdtkit_provider *usdtkit_probe_provider(const usdtkit_probe *q);
int usdtkit_probe_nargs(const usdtkit_probe *q);
usdtkit_type usdtkit_probe_arg_type(const usdtkit_probe *q, int i);

/* The provider's name as given, and whether it is loaded (1) or not (0). */
const char *usdtkit_provider_name(const usdtkit_provider *p);
int usdtkit_provider_loaded(const usdtkit_provider *p);

#ifdef __cplusplus
}
#endif

#endif /* USDTKIT_RUNTIME_H */
