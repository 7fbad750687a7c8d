/* The shared library of bench/helper's dlopen variant: one probe, its own -G object. */
#include "bp.h"

void bench_lib_tick(int x);

void bench_lib_tick(int x)
{
	BENCHPROV_TICK(x);
}
