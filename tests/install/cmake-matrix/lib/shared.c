#include "bsalpha.h"

int bs_shared(int x);
int bs_shared(int x)
{
	BSALPHA_HIT(2, "shared");
	return x * 2;
}
