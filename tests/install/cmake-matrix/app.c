#include <stdio.h>
#include <stdlib.h>

#include "bsalpha.h"
#include "bsgamma.h"

int bs_shared(int x);
long bs_static(long x);

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)atoi(argv[1]) : 1, i;
	char what[8] = "app"; /* (on the stack, as in lib/shared.c) */
	long sum = 0;

	for (i = 0; i < n; i++) {
		BSALPHA_HIT(1, what);
		BSGAMMA_TICK_TOCK(i);
		sum += bs_static(bs_shared((int)i));
	}
	printf("sum %ld\n", sum);
	return 0;
}
