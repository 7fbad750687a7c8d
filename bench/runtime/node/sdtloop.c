/* SPDX-License-Identifier: MIT */
/*
 * The compiled probe the Node numbers are set against: a <sys/sdt.h> probe
 * with a semaphore guard, as `dtrace -h` headers write it, with the two
 * arguments bench.js fires (an int64 and a string).
 *   sdtloop N          ns per disabled iteration (best of 5 runs of N)
 *   sdtloop N wait     waits until a tracer attached (the semaphore), then
 *                      ns per enabled firing (1 run of N)
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((section(".probes"))) unsigned short benchprov_hit_semaphore;
#define HIT_ENABLED() __builtin_expect(*(volatile unsigned short *)&benchprov_hit_semaphore != 0, 0)

long loop(long n);

__attribute__((noinline)) long loop(long n)
{
	static const char msg[] = "hello";
	long i, acc = 0;

	for (i = 0; i < n; i++) {
		acc += i;
		if (HIT_ENABLED())
			STAP_PROBE2(benchprov, hit, i, msg);
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
	int wait = argc > 2 && strcmp(argv[2], "wait") == 0;
	double best = 1e300, t;
	int r, i;

	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (i = 0; i < 2000 && !HIT_ENABLED(); i++)
			usleep(10000);
		if (!HIT_ENABLED()) {
			fprintf(stderr, "sdtloop: no tracer attached in 20 s\n");
			return 1;
		}
	}
	for (r = 0; r < (wait ? 1 : 5); r++) {
		t = now_ns();
		if (loop(n) == -1)
			return 1;
		t = (now_ns() - t) / (double)n;
		if (t < best)
			best = t;
	}
	printf("%.2f\n", best);
	return 0;
}
