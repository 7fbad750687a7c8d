/*
 * Appended by bench/helper/run.sh to the provider source that `dtrace -G -k`
 * generated (semaphores, note, drti), so that it can call drti's own static
 * functions and time them inside one process, with nothing added to the
 * product: what a module load performs (configure, then usdt_drti_load:
 * the socket's access(), the board check, and REGISTER with its answer
 * only when the board does not list the file), the board check alone, and
 * UNREGISTER as at dlclose (waiting). (Exit sends nothing.)
 *
 * Compiled with -DCTORBENCH_PROVIDER=<the provider> and our include/.
 *
 *   ctorbench N   prints "load MED P90", "board MED P90", "dlclose MED P90" in µs
 *   ctorbench hold  stays (registered) until stdin closes
 *   ctorbench cold [keep]
 *                 run with USDTKIT_DISABLE=1, so that the real constructor at
 *                 start-up only scans the environment: main() then removes
 *                 the variable (unless "keep") and times one call of the
 *                 constructor itself, cold as at a real start (first calls
 *                 through the PLT, untouched code pages); prints µs
 */
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>

static double ctorbench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int ctorbench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void ctorbench_report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), ctorbench_cmp);
	printf("%s %.2f %.2f\n", what, v[n / 2], v[(n * 9) / 10]);
}

int main(int argc, char **argv)
{
	static double v[100000];
	struct usdt_drti_result res;
	int n = argc > 1 ? atoi(argv[1]) : 1000, i;
	double t0;

	if (argc > 1 && !strcmp(argv[1], "hold")) {
		/* registered by the constructor at start: keep the module known */
		char c;

		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "cold")) {
		if (argc == 2)
			unsetenv("USDTKIT_DISABLE");
		t0 = ctorbench_now();
		usdt_drti_init();
		printf("%.2f\n", ctorbench_now() - t0);
		return 0;
	}

	if (n < 1 || n > 100000)
		return 2;
	/* a site of the provider: the daemon refuses a module without probes */
	STAP_PROBE1(CTORBENCH_PROVIDER, tick, n);
	for (i = 0; i < n; i++) {
		t0 = ctorbench_now();
		usdt_drti_enabled = usdt_drti_configure();
		if (usdt_drti_enabled)
			usdt_drti_load();
		v[i] = ctorbench_now() - t0;
	}
	ctorbench_report("load", v, n);
	for (i = 0; i < n; i++) {
		t0 = ctorbench_now();
		(void)usdt_drti_known();
		v[i] = ctorbench_now() - t0;
	}
	ctorbench_report("board", v, n);
	for (i = 0; i < n; i++) {
		t0 = ctorbench_now();
		(void)usdt_drti_request(USDT_MSG_UNREGISTER, 1, &res);
		v[i] = ctorbench_now() - t0;
		usdt_drti_register("register module", 0);
	}
	ctorbench_report("dlclose", v, n);
	return 0;
}
