/* SPDX-License-Identifier: MIT */
/* The one clock function (clock.h). */
#include "clock.h"

int64_t usdt_clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
