/* SPDX-License-Identifier: MIT */
/*
 * The cost of a disabled probe in a tight loop. One variant per build (-DVARIANT=...):
 *   0 none    the loop alone
 *   1 reg     STAP_PROBE3 with arguments already in registers and a constant
 *   2 global  STAP_PROBE2 with a global argument (SystemTap leaves it as symbol(%rip))
 *   3 guard   if (ENABLED()) STAP_PROBE2(...), the semaphore test of `dtrace -h` headers
 * Built against usdtkit's header (-I include) or SystemTap's (the default include path).
 * `bench N REPEAT` runs the loop N times, REPEAT times, and prints the best ns per iteration.
 */
#if VARIANT == 3
#define _SDT_HAS_SEMAPHORES 1
#endif
#include <sys/sdt.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if VARIANT == 3
__attribute__((visibility("hidden"), section(".probes"))) unsigned short bench_guard_semaphore;
/* A volatile read, as usdtkit's `dtrace -h` writes it: with SystemTap's plain
 * __builtin_expect(sem, 0) gcc hoists the load out of this loop, and a tracer attaching while
 * the loop runs would never be seen. */
#define BENCH_GUARD_ENABLED()                                                                      \
	__builtin_expect(*(volatile unsigned short *)&bench_guard_semaphore != 0, 0)
#endif

int g_value = 7;
long bench_loop(long n);

__attribute__((noinline)) long bench_loop(long n)
{
	long acc = 1, i;

	for (i = 0; i < n; i++) {
		acc = acc * 31 + i;
#if VARIANT == 1
		STAP_PROBE3(bench, reg, i, acc, 42);
#elif VARIANT == 2
		STAP_PROBE2(bench, global, i, g_value);
#elif VARIANT == 3
		if (BENCH_GUARD_ENABLED())
			STAP_PROBE2(bench, guard, i, acc);
#endif
	}
	return acc;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000L;
	int repeat = argc > 2 ? atoi(argv[2]) : 7, r;
	double best = 1e300;
	long sink = 0;

	for (r = 0; r < repeat; r++) {
		double t0 = now_ns();

		sink += bench_loop(n);
		t0 = now_ns() - t0;
		if (t0 < best)
			best = t0;
	}
	printf("%.4f %ld\n", best / n, sink & 1);
	return 0;
}
