/* SPDX-License-Identifier: MIT */
/*
 * The ABI of <libstapsdt.h>, checked at compile time against what was
 * measured on libstapsdt 0.1.1 (0d53f98) itself, built with gcc 12 on
 * x86-64: the offsets and sizes bindings mirror, and the enum values they
 * pass. Compiled twice: with <errno.h> first (ERRNO_FIRST: the member is
 * only `sdtErrno`) and without (`errno` is the same member). Prints "abi ok".
 */
#ifdef ERRNO_FIRST
#include <errno.h>
#endif
#include <libstapsdt.h>

#include <stddef.h>
#include <stdio.h>

#define CHECK(expr) _Static_assert(expr, #expr)

CHECK(offsetof(SDTProvider_t, name) == 0);
CHECK(offsetof(SDTProvider_t, probes) == 8);
CHECK(offsetof(SDTProvider_t, sdtErrno) == 16);
#ifndef ERRNO_FIRST
CHECK(offsetof(SDTProvider_t, errno) == 16);
#endif
CHECK(offsetof(SDTProvider_t, error) == 24);
CHECK(offsetof(SDTProvider_t, _handle) == 32);
CHECK(offsetof(SDTProvider_t, _filename) == 40);
CHECK(offsetof(SDTProvider_t, _memfd) == 48);
CHECK(offsetof(SDTProvider_t, _use_memfd) == 52);
CHECK(sizeof(SDTProvider_t) == 56);

CHECK(offsetof(SDTProbe_t, name) == 0);
CHECK(offsetof(SDTProbe_t, argFmt) == 8);
CHECK(offsetof(SDTProbe_t, _fire) == 32);
CHECK(offsetof(SDTProbe_t, provider) == 40);
CHECK(offsetof(SDTProbe_t, argCount) == 48);
CHECK(sizeof(SDTProbe_t) == 56);

CHECK(offsetof(SDTProbeList_t, probe) == 0);
CHECK(offsetof(SDTProbeList_t, next) == 56);
CHECK(sizeof(SDTProbeList_t) == 64);

CHECK(sizeof(ArgType_t) == 4 && sizeof(SDTError_t) == 4 && sizeof(MemFDOption_t) == 4);
CHECK(MAX_ARGUMENTS == 6);
CHECK(noarg == 0 && uint8 == 1 && int8 == -1 && uint16 == 2 && int16 == -2);
CHECK(uint32 == 4 && int32 == -4 && uint64 == 8 && int64 == -8);
CHECK(noError == -1 && elfCreationError == 0 && tmpCreationError == 1);
CHECK(sharedLibraryOpenError == 2 && symbolLoadingError == 3 && sharedLibraryCloseError == 4);
CHECK(memfd_disabled == 0 && memfd_enabled == 1);

/* The functions' types, as libstapsdt declares them. */
static SDTProvider_t *(*const f_init)(const char *) = providerInit;
static int (*const f_memfd)(SDTProvider_t *, const MemFDOption_t) = providerUseMemfd;
static SDTProbe_t *(*const f_add)(SDTProvider_t *, const char *, int, ...) = providerAddProbe;
static int (*const f_load)(SDTProvider_t *) = providerLoad;
static int (*const f_unload)(SDTProvider_t *) = providerUnload;
static void (*const f_destroy)(SDTProvider_t *) = providerDestroy;
static void (*const f_fire)(SDTProbe_t *, ...) = probeFire;
static int (*const f_enabled)(SDTProbe_t *) = probeIsEnabled;

int main(void)
{
	SDTProvider_t p = {0};

	/* Both spellings name one member where both exist. */
	p.sdtErrno = sharedLibraryOpenError;
#ifndef ERRNO_FIRST
	if (p.errno != sharedLibraryOpenError)
		return 1;
#else
	errno = 0; /* the macro still works */
	if (p.sdtErrno != sharedLibraryOpenError || errno != 0)
		return 1;
#endif
	if (!f_init || !f_memfd || !f_add || !f_load || !f_unload || !f_destroy || !f_fire ||
	    !f_enabled)
		return 1;
	printf("abi ok\n");
	return 0;
}
