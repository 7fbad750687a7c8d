/*
 * Probes for the helper tests, with semaphores (this whole translation unit
 * uses them: sdt.h's semaphores are all-or-nothing per TU). The values come
 * from argv so the compiler cannot fold them into immediates, except the
 * deliberate constant 42.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The provider name; tests make it unique per run with -DPROV=... */
#ifndef PROV
#define PROV hlpt
#endif
#define SEMA_(p, n) p##_##n##_semaphore
#define SEMA(p, n) SEMA_(p, n)

__extension__ unsigned short SEMA(PROV, vals) __attribute__((unused, section(".probes")));
__extension__ unsigned short SEMA(PROV, twice) __attribute__((unused, section(".probes")));

void hlpt_nosema(int i);
int hlpt_run(int argc, char **argv);

/* argv: ITERATIONS STOPFILE STRING C H I LL UC US UI ULL */
int hlpt_run(int argc, char **argv)
{
	int iters, it;
	const char *stop, *str;
	signed char c;
	short h;
	int i;
	long long ll;
	unsigned char uc;
	unsigned short us;
	unsigned int ui;
	unsigned long long ull;

	if (argc != 12) {
		fprintf(stderr, "usage: ITERATIONS STOPFILE STRING C H I LL UC US UI ULL\n");
		return 2;
	}
	iters = atoi(argv[1]);
	stop = argv[2];
	str = argv[3];
	c = (signed char)strtol(argv[4], NULL, 0);
	h = (short)strtol(argv[5], NULL, 0);
	i = (int)strtol(argv[6], NULL, 0);
	ll = strtoll(argv[7], NULL, 0);
	uc = (unsigned char)strtoul(argv[8], NULL, 0);
	us = (unsigned short)strtoul(argv[9], NULL, 0);
	ui = (unsigned int)strtoul(argv[10], NULL, 0);
	ull = strtoull(argv[11], NULL, 0);
	for (it = 0; it < iters; it++) {
		if (access(stop, F_OK) == 0)
			break;
		printf("sema=%u\n", (unsigned)SEMA(PROV, vals));
		fflush(stdout);
		STAP_PROBE10(PROV, vals, c, h, i, ll, uc, us, ui, ull, str, 42);
		if (it % 2)
			STAP_PROBE1(PROV, twice, it);
		else
			STAP_PROBE1(PROV, twice, -it);
		hlpt_nosema(it);
		usleep(50000);
	}
	return 0;
}
