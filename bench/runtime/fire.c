/* SPDX-License-Identifier: MIT */
/*
 * What firing a probe costs: a runtime provider's usdtkit_probe_fire()
 * against a compiled <sys/sdt.h> probe behind its `_ENABLED()` semaphore
 * test (SystemTap's header, the reference), in a tight loop.
 *
 *   fire MODE N REPEAT     best ns per iteration over REPEAT loops of N
 *   fire load NPROBES R    median microseconds of R create+add+load+destroy
 *
 * MODE: none (the loop alone), compiled (`if (ENABLED()) STAP_PROBE2`),
 * rt (usdtkit_probe_fire with two arguments), rt-enabled (usdtkit_probe_enabled).
 * With BENCH_WAIT set, the program prints "ready PID" and waits (at most
 * 20 s) until a tracer is attached to the mode's probe, its semaphore
 * raised, before the loops: the enabled costs (run.sh, node/run.sh).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

#include <usdtkit/runtime.h>

__attribute__((visibility("hidden"),
	       section(".probes"))) volatile unsigned short benchc_hit_semaphore;
#define BENCHC_HIT_ENABLED() __builtin_expect(benchc_hit_semaphore != 0, 0)

static usdtkit_probe *rt_hit;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

__attribute__((noinline)) static long loop(const char *mode, long n)
{
	long acc = 1, i;

	if (strcmp(mode, "compiled") == 0) {
		for (i = 0; i < n; i++) {
			acc = acc * 31 + i;
			if (BENCHC_HIT_ENABLED())
				STAP_PROBE2(benchc, hit, i, "x");
		}
	} else if (strcmp(mode, "rt") == 0) {
		for (i = 0; i < n; i++) {
			acc = acc * 31 + i;
			usdtkit_probe_fire(rt_hit, (int64_t)i, "x");
		}
	} else if (strcmp(mode, "rt-enabled") == 0) {
		for (i = 0; i < n; i++) {
			acc = acc * 31 + i;
			if (usdtkit_probe_enabled(rt_hit))
				acc++;
		}
	} else {
		for (i = 0; i < n; i++) {
			acc = acc * 31 + i;
			__asm__ volatile("" : "+r"(acc));
		}
	}
	return acc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int load_bench(int nprobes, int runs)
{
	double *t = calloc((size_t)runs, sizeof(*t));
	char name[32];
	int r, i;

	for (r = 0; r < runs; r++) {
		double t0 = now_ns();
		usdtkit_provider *p = usdtkit_provider_create("benchload", NULL);

		for (i = 0; i < nprobes; i++) {
			snprintf(name, sizeof(name), "probe%d", i);
			usdtkit_probe_add(p, name, 2, USDTKIT_INT64, USDTKIT_STRING);
		}
		if (usdtkit_provider_load(p) != 0) {
			fprintf(stderr, "%s\n", usdtkit_provider_error(p));
			return 1;
		}
		t[r] = (now_ns() - t0) / 1e3;
		usdtkit_provider_destroy(p);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	printf("%.1f\n", t[runs / 2]);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	usdtkit_provider *p;
	long n, acc = 0;
	int repeat, r;
	double best = 1e30;

	if (argc != 4)
		return 2;
	if (strcmp(argv[1], "load") == 0)
		return load_bench(atoi(argv[2]), atoi(argv[3]));
	n = atol(argv[2]);
	repeat = atoi(argv[3]);
	p = usdtkit_provider_create("benchrt", NULL);
	rt_hit = usdtkit_probe_add(p, "hit", 2, USDTKIT_INT64, USDTKIT_STRING);
	if (!rt_hit || usdtkit_provider_load(p) != 0) {
		fprintf(stderr, "%s\n", usdtkit_provider_error(p));
		return 1;
	}
	if (getenv("BENCH_WAIT")) {
		int compiled = strcmp(argv[1], "compiled") == 0, i;

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (i = 0; i < 2000; i++) {
			if (compiled ? BENCHC_HIT_ENABLED() : usdtkit_probe_enabled(rt_hit))
				break;
			usleep(10000);
		}
		if (i == 2000) {
			fprintf(stderr, "fire: no tracer attached in 20 s\n");
			return 1;
		}
	}
	for (r = 0; r < repeat; r++) {
		double t0 = now_ns(), dt;

		acc += loop(argv[1], n);
		dt = (now_ns() - t0) / (double)n;
		if (dt < best)
			best = dt;
	}
	printf("%.3f %ld\n", best, acc & 1);
	usdtkit_provider_destroy(p);
	return 0;
}
