/* A shared library with its own -G object: its probes are listed under its own module name. */
#include "lib.h"
#include "lib_prov.h"

__attribute__((noinline)) int lib_work(int n)
{
	LTLIB_WORK_ITEM(n, (char *)"lib");
	return n * 2;
}
