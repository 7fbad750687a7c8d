/* SPDX-License-Identifier: MIT */
/*
 * A program written as libstapsdt's documentation shows (its README and
 * example/demo.c): providerInit, providerAddProbe with ArgType_t
 * arguments, providerLoad (printing provider->error when it fails), then
 * probeIsEnabled/probeFire in a loop, providerUnload, providerDestroy.
 *
 *	demo PROVIDER
 *
 * Prints "loaded pid=PID enabled=0", waits (up to 20 s) for a tracer, saying
 * "enabled=1" when probeIsEnabled() turns 1, fires round after round of
 * known values (round i: see below) while it stays 1, says "rounds=N" and
 * "enabled=0" when the tracer has gone, and exits 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h> /* before <libstapsdt.h>: the errno member trap */
#include <libstapsdt.h>

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Polls probeIsEnabled() every 10 ms until it is `want`: 0, or -1 after 20 s. */
static int wait_enabled(SDTProbe_t *probe, int want)
{
	for (int i = 0; i < 2000; i++) {
		if (probeIsEnabled(probe) == want)
			return 0;
		nap_ms(10);
	}
	return -1;
}

int main(int argc, char *argv[])
{
	SDTProvider_t *provider;
	SDTProbe_t *sizes, *pair, *dashed;

	if (argc < 2) {
		printf("usage: demo PROVIDER\n");
		return 2;
	}
	provider = providerInit(argv[1]);
	sizes = providerAddProbe(provider, "sizes", 6, uint8, int8, uint16, int16, int32, uint64);
	pair = providerAddProbe(provider, "pair", 2, uint64, int64);
	dashed = providerAddProbe(provider, "req-done", 1, uint32);
	if (!sizes || !pair || !dashed || providerLoad(provider) == -1) {
		printf("Something went wrong: %s\n", provider->error);
		return 1;
	}
	printf("loaded pid=%d enabled=%d\n", (int)getpid(), probeIsEnabled(sizes));
	fflush(stdout);

	if (wait_enabled(sizes, 1) != 0) {
		printf("no tracer came\n");
		return 1;
	}
	printf("enabled=1\n");
	fflush(stdout);
	/*
	 * A tracer's semaphore count rises a little before its programs run:
	 * fire a round every 20 ms while it stays attached, not once.
	 */
	uint64_t i;
	for (i = 0; probeIsEnabled(sizes) && i < 1000; i++) {
		/* libstapsdt reads every argument as a uint64_t: pass them so. */
		probeFire(sizes, (uint64_t)200 + i % 50, (uint64_t)(int64_t)-5, (uint64_t)65000,
			  (uint64_t)(int64_t)-300, (uint64_t)(int64_t)-100000,
			  ((uint64_t)1 << 40) + i);
		probeFire(pair, i, (uint64_t)(int64_t)(-5000000000LL - (int64_t)i));
		probeFire(dashed, (uint64_t)4000000000u + i);
		nap_ms(20);
	}
	printf("rounds=%llu\n", (unsigned long long)i);
	if (wait_enabled(sizes, 0) != 0) {
		printf("the tracer did not go\n");
		return 1;
	}
	printf("enabled=0\n");
	if (providerUnload(provider) != 0) {
		printf("unload: %s\n", provider->error);
		return 1;
	}
	providerDestroy(provider);
	return 0;
}
