#include "bsalpha.h"

int bs_shared(int x);
int bs_shared(int x)
{
	/* (on the stack: a literal's page may not be mapped in yet when bpftrace reads it) */
	char what[8] = "shared";

	BSALPHA_HIT(2, what);
	return x * 2;
}
