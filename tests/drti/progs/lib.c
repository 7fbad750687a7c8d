/* The dlopen'ed library of tests/drti: one probe, its own -G object. */
#include "names.h"

int drti_lib_call(int x);
int drti_lib_call(int x)
{
	LIB_CALL(x);
	return x + 1;
}
