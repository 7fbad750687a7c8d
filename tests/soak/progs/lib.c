// SPDX-License-Identifier: MIT
/* The soak's dlopen'ed module (provider ${P}la or ${P}lb, named by soak.h). */
#include "soak.h"

void soak_lib_call(int x);
void soak_lib_call(int x)
{
	SOAK_CALL(x);
}
