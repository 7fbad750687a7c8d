/* SPDX-License-Identifier: MIT */
/* const and volatile values: a constant, a const local, a volatile counter and register. */
#include "probes.h"

static const int wp_limit = 64;
extern volatile long wp_ticks;
extern const volatile int wp_hwreg;

void wp_values(const unsigned char *buf)
{
	const int n = wp_limit * 2;
	volatile int seen = 0;

	WARNPAT_VALUES(n, wp_ticks, wp_hwreg, buf[0]);
	seen = 1;
	WARNPAT_VALUES(seen, (long)wp_limit, 0, (unsigned char)seen);
}
