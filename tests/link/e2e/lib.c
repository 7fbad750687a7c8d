/* Linked shared library: returns whether its semaphore-guarded probe is enabled. */
#include "shared.h"

#ifdef __cplusplus
extern "C" {
#endif
int POLL_FN(int i);
#ifdef __cplusplus
}
#endif

int POLL_FN(int i)
{
	if (E2ESHARED_WORK_ENABLED()) {
		E2ESHARED_WORK(i);
		return 1;
	}
	return 0;
}
