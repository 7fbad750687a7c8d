/*
 * The program bench/helper/run.sh starts: a probe (disabled), and at the top
 * of main() the CLOCK_MONOTONIC time written to stdout for startlat. With
 * an argument it then waits until stdin closes (for the memory measurement:
 * the process stays registered meanwhile). Built with -DBENCH_LIB, its probe
 * lives in a shared library (libprobe.c, with its own -G object) instead.
 */
#include <time.h>
#include <unistd.h>

#ifdef BENCH_LIB
void bench_lib_tick(int x);
#define BENCHPROV_TICK(x) bench_lib_tick(x)
#else
#include "bp.h"
#endif

int main(int argc, char **argv)
{
	struct timespec t;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (write(1, &t, sizeof(t)) != (ssize_t)sizeof(t))
		return 1;
	BENCHPROV_TICK(argc);
	if (argc > 1)
		while (read(0, &c, 1) > 0)
			;
	(void)argv;
	return 0;
}
