/* SPDX-License-Identifier: MIT */
/*
 * <libstapsdt.h>: libstapsdt's API (linux-usdt/libstapsdt 0.1.1), offered by
 * usdtkit's libstapsdt.so.0 over libusdtkit-runtime (runtime/stapsdt/README.md
 * says what is the same and what differs).
 *
 * The names, enum values, return values and struct layouts are libstapsdt's,
 * so that programs and bindings written for it (python-stapsdt, node-usdt,
 * DynamicProbes, salp) work unchanged, including those that read the struct
 * fields. One thing is spelled differently: libstapsdt names a member of
 * SDTProvider_t `errno`, which stops compiling once <errno.h> has made errno
 * a macro. Here that member is `sdtErrno`, and `errno` is the same member
 * (a union) when errno is not a macro at this point.
 */
#ifndef _LIBSTAPSDT_H
#define _LIBSTAPSDT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The most arguments a probe can have, as in libstapsdt. */
#define MAX_ARGUMENTS 6

/* What went wrong, in SDTProvider_t's sdtErrno; provider->error says it in words. */
typedef enum {
	noError = -1,
	elfCreationError = 0,
	tmpCreationError = 1,
	sharedLibraryOpenError = 2,
	symbolLoadingError = 3,
	sharedLibraryCloseError = 4,
} SDTError_t;

/* An argument's type: SystemTap's size in bytes, negative when signed. */
typedef enum {
	noarg = 0,
	uint8 = 1,
	int8 = -1,
	uint16 = 2,
	int16 = -2,
	uint32 = 4,
	int32 = -4,
	uint64 = 8,
	int64 = -8,
} ArgType_t;

/* Accepted for compatibility: the object is always in memory (a memfd). */
typedef enum {
	memfd_disabled = 0,
	memfd_enabled = 1,
} MemFDOption_t;

struct SDTProvider;

typedef struct SDTProbe {
	char *name;
	ArgType_t argFmt[MAX_ARGUMENTS];
	void *_fire; /* the probe's stub in the loaded object, NULL when not loaded */
	struct SDTProvider *provider;
	int argCount;
} SDTProbe_t;

/* The provider's probes, the last added first. */
typedef struct SDTProbeList_ {
	SDTProbe_t probe;
	struct SDTProbeList_ *next;
} SDTProbeList_t;

typedef struct SDTProvider {
	char *name;
	SDTProbeList_t *probes;
	union {
		SDTError_t sdtErrno; /* the last error, noError when none */
#ifndef errno
		SDTError_t errno; /* libstapsdt's spelling of the same member */
#endif
	};
	char *error; /* the last error's message, NULL when none */

	/* private */
	void *_handle;	 /* the loaded object's dlopen() handle */
	char *_filename; /* its name: /proc/<pid>/fd/<memfd> */
	int _memfd;
	MemFDOption_t _use_memfd;
} SDTProvider_t;

/* A new provider with no probes; NULL only when out of memory. */
SDTProvider_t *providerInit(const char *name);

/* Records the option before the first load: 1; 0 once loaded. */
int providerUseMemfd(SDTProvider_t *provider, const MemFDOption_t use_memfd);

/* Adds a probe with `argCount` ArgType_t arguments; NULL (provider->error says why) on error. */
SDTProbe_t *providerAddProbe(SDTProvider_t *provider, const char *name, int argCount, ...);

/* Builds, maps and registers the provider's object: 0, or -1 (provider->error says why). */
int providerLoad(SDTProvider_t *provider);

/* Makes the probes inert until the next load: 0, or -1. */
int providerUnload(SDTProvider_t *provider);

/* Unloads and frees the provider and its probes. */
void providerDestroy(SDTProvider_t *provider);

/* Fires the probe: argCount values, each read as a uint64_t. */
void probeFire(SDTProbe_t *probe, ...);

/* Whether a tracer is attached to the probe: 1 or 0. */
int probeIsEnabled(SDTProbe_t *probe);

#ifdef __cplusplus
}
#endif

#endif /* _LIBSTAPSDT_H */
