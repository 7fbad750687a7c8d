/* The dlopen'ed module of tests/helperd (provider ${P}lib). */
#include "names.h"

void lib_call(int x);
void lib_call(int x)
{
	LIB_CALL(x);
}
