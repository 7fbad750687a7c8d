/* SPDX-License-Identifier: MIT */
/*
 * libstapsdt's behaviours that callers see, through usdtkit's libstapsdt.so.0
 * (runtime/stapsdt/README.md): loading with no probes or twice, unloading
 * what is not loaded, probes added while loaded, providerUseMemfd, the
 * fields bindings read (probes, error, the errno member, _handle, _fire,
 * _filename, _memfd), and the refusals libstapsdt does not have (more than
 * MAX_ARGUMENTS arguments, unknown types, names usdtkit cannot carry).
 * Prints one line per check that failed and "behaviour ok" when none did.
 */
#define _GNU_SOURCE
#include <errno.h> /* first: the header must still compile */
#include <libstapsdt.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if (!(expr)) {                                                                     \
			printf("FAILED line %d: %s\n", __LINE__, #expr);                           \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The memfd the object lives in, named as libstapsdt names its own. */
static void check_loaded_fields(SDTProvider_t *p, const char *module)
{
	char want[64], link[256];
	ssize_t n;

	CHECK(p->_handle != NULL);
	snprintf(want, sizeof(want), "/proc/%d/fd/%d", (int)getpid(), p->_memfd);
	CHECK(p->_memfd > 2 && streq(p->_filename, want));
	n = readlink(want, link, sizeof(link) - 1);
	CHECK(n > 0);
	link[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "/memfd:%s (deleted)", module);
	CHECK(streq(link, want));
	if (!streq(link, want))
		printf("  %s is %s\n", p->_filename, link);
	for (SDTProbeList_t *n = p->probes; n; n = n->next)
		CHECK(n->probe._fire && n->probe._fire == dlsym(p->_handle, n->probe.name));
}

static void no_probes(void)
{
	SDTProvider_t *p = providerInit("stbempty");

	CHECK(p && p->probes == NULL && p->error == NULL && p->sdtErrno == noError);
	CHECK(providerUnload(p) == 0); /* not loaded: 0, as libstapsdt */
	CHECK(providerLoad(p) == 0);   /* no probes: libstapsdt loads an empty object */
	CHECK(p->error == NULL && p->sdtErrno == noError);
	CHECK(providerUseMemfd(p, memfd_disabled) == 0); /* loaded */
	CHECK(providerUnload(p) == 0);
	CHECK(providerUnload(p) == 0);
	providerDestroy(p);
}

static void load_twice_and_list(void)
{
	SDTProvider_t *p = providerInit("stbtwice");
	SDTProbe_t *a, *b, *c;
	void *fire;

	CHECK(providerUseMemfd(p, memfd_enabled) == 1);
	CHECK(p->_use_memfd == memfd_enabled && p->_memfd == -1);
	a = providerAddProbe(p, "first", 0);
	b = providerAddProbe(p, "second", 3, uint8, int32, int64);
	CHECK(a && b);
	/* The list, the last added first, as bindings walk it. */
	CHECK(p->probes && &p->probes->probe == b && &p->probes->next->probe == a);
	CHECK(p->probes->next->next == NULL);
	CHECK(streq(b->name, "second") && b->argCount == 3 && b->provider == p);
	CHECK(b->argFmt[0] == uint8 && b->argFmt[1] == int32 && b->argFmt[2] == int64);
	CHECK(b->argFmt[3] == noarg && b->argFmt[5] == noarg && a->argCount == 0);
	CHECK(a->_fire == NULL && probeIsEnabled(a) == 0);

	CHECK(providerLoad(p) == 0);
	check_loaded_fields(p, "usdtkit:stbtwice");
	fire = b->_fire;
	CHECK(providerLoad(p) == 0); /* twice: 0, as libstapsdt */
	CHECK(b->_fire == fire && p->error == NULL);
	CHECK(probeIsEnabled(b) == 0);
	probeFire(b, (uint64_t)1, (uint64_t)2, (uint64_t)3); /* no tracer: nothing */

	/* Added while loaded: inert until the next load, which maps every probe. */
	c = providerAddProbe(p, "late-one", 1, uint64);
	CHECK(c && &p->probes->probe == c && c->_fire == NULL && probeIsEnabled(c) == 0);
	probeFire(c, (uint64_t)7);
	CHECK(b->_fire != NULL);
	CHECK(providerLoad(p) == 0);
	check_loaded_fields(p, "usdtkit:stbtwice");

	CHECK(providerUnload(p) == 0);
	CHECK(p->_handle == NULL && p->_filename == NULL && p->_memfd == -1);
	CHECK(a->_fire == NULL && b->_fire == NULL && c->_fire == NULL);
	CHECK(providerUseMemfd(p, memfd_disabled) == 1 && p->_use_memfd == memfd_disabled);
	CHECK(providerLoad(p) == 0); /* again after unload; memfd_disabled is only recorded */
	check_loaded_fields(p, "usdtkit:stbtwice");
	providerDestroy(p); /* loaded: destroy unloads */
}

static void refusals(void)
{
	SDTProvider_t *p = providerInit("stbrefuse");
	SDTProbe_t *ok;

	/* libstapsdt writes a 7th type past argFmt[]; usdtkit's refuses. */
	CHECK(providerAddProbe(p, "seven", 7, int8, int8, int8, int8, int8, int8, int8) == NULL);
	CHECK(streq(p->error, "usdtkit: provider 'stbrefuse': probe 'seven': 7 arguments; "
			      "libstapsdt has 0 to 6"));
	CHECK(p->sdtErrno == noError && p->probes == NULL);
	CHECK(providerAddProbe(p, "neg", -1) == NULL);
	CHECK(providerAddProbe(p, "odd", 1, (ArgType_t)3) == NULL);
	CHECK(streq(p->error,
		    "usdtkit: provider 'stbrefuse': probe 'odd': argument 0 has no ArgType_t 3"));
	/* Six is the most, and noarg is taken as a 64-bit value. */
	ok = providerAddProbe(p, "six", 6, uint8, int8, uint16, int16, noarg, int64);
	CHECK(ok && ok->argCount == 6 && ok->argFmt[4] == noarg);
	CHECK(providerAddProbe(p, "six", 0) == NULL); /* usdtkit: one probe per name */
	CHECK(streq(p->error, "usdtkit: provider 'stbrefuse': probe 'six' is already declared"));
	CHECK(providerAddProbe(p, "bad name", 0) == NULL);
	CHECK(streq(p->error,
		    "usdtkit: provider 'stbrefuse': probe name 'bad name' has a character "
		    "other than letters, digits, '_' and '-'"));
	CHECK(p->probes && &p->probes->probe == ok && p->probes->next == NULL);
	CHECK(providerLoad(p) == 0);
	providerDestroy(p);

	/* A provider name usdtkit cannot carry: libstapsdt's Elf creation error at load. */
	p = providerInit("no good");
	CHECK(p != NULL);
	CHECK(providerAddProbe(p, "x", 0) == NULL);
	CHECK(streq(p->error, "usdtkit: provider 'no good': bad name: letters, digits, '_' and "
			      "'-', not starting with a digit"));
	CHECK(providerLoad(p) == -1);
	CHECK(p->sdtErrno == elfCreationError);
	CHECK(streq(p->error, "failed to create Elf shared library for provider 'no good'"));
	providerDestroy(p);

	/* A probe added while loaded that usdtkit refuses fails that load, once. */
	p = providerInit("stblate");
	ok = providerAddProbe(p, "fine", 0);
	CHECK(providerLoad(p) == 0);
	CHECK(providerAddProbe(p, "not fine", 0) != NULL);
	CHECK(providerLoad(p) == -1 && p->sdtErrno == elfCreationError);
	CHECK(streq(p->error, "failed to create Elf shared library for provider 'stblate'"));
	CHECK(ok->_fire == NULL);
	CHECK(providerLoad(p) == 0 && ok->_fire != NULL);
	providerDestroy(p);

	providerDestroy(NULL);
	CHECK(providerInit(NULL) == NULL);
}

int main(void)
{
	no_probes();
	load_twice_and_list();
	refusals();
	if (failures)
		return 1;
	printf("behaviour ok\n");
	return 0;
}
