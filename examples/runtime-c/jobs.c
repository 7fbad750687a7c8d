/* SPDX-License-Identifier: MIT */
/*
 * A job runner whose probes are declared while it runs: the provider's name
 * comes from the command line, as a plugin host or a language runtime would
 * take it from its configuration. See README.md.
 *
 *   ./jobs [PROVIDER [JOBS [INTERVAL_MS]]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <usdtkit/runtime.h>

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "jobs";
	int jobs = argc > 2 ? atoi(argv[2]) : 10, ms = argc > 3 ? atoi(argv[3]) : 200, i;
	usdtkit_provider *p = usdtkit_provider_create(name, NULL);
	usdtkit_probe *start, *done;
	char label[64];

	if (!p) {
		fprintf(stderr, "jobs: '%s' cannot name a provider\n", name);
		return 1;
	}
	start = usdtkit_probe_add(p, "job-start", 2, USDTKIT_INT64, USDTKIT_STRING);
	done = usdtkit_probe_add(p, "job-done", 3, USDTKIT_INT64, USDTKIT_INT32, USDTKIT_UINT64);
	if (!start || !done || usdtkit_provider_load(p) != 0) {
		fprintf(stderr, "jobs: %s\n", usdtkit_provider_error(p));
		usdtkit_provider_destroy(p);
		return 1;
	}
	for (i = 1; i <= jobs; i++) {
		struct timespec t0, t1;
		uint64_t us;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* The label is made only for a tracer: untraced, this is one load of the semaphore.
		 */
		if (usdtkit_probe_enabled(start)) {
			snprintf(label, sizeof(label), "job %d of %d", i, jobs);
			usdtkit_probe_fire(start, (int64_t)i, label);
		}
		usleep((useconds_t)ms * 1000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 +
				(t1.tv_nsec - t0.tv_nsec) / 1000);
		usdtkit_probe_fire(done, (int64_t)i, i % 3 ? 0 : -1, us);
	}
	printf("ran %d jobs\n", jobs);
	usdtkit_provider_destroy(p);
	return 0;
}
