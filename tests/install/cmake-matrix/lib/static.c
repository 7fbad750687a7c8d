#include "bsbeta.h"

long bs_static(long x);
long bs_static(long x)
{
	long total = x + 1000;

	BSBETA_SUM(total);
	if (BSBETA_IDLE_ENABLED())
		BSBETA_IDLE();
	return total;
}
