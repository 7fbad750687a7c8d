#include "pg_trace.h"

int acquire_lock(unsigned int relid, int mode);

int acquire_lock(unsigned int relid, int mode)
{
	const char *tranche = "LockManager";

	TRACE_POSTGRESQL_LWLOCK_ACQUIRE(tranche, mode);
	TRACE_POSTGRESQL_LOCK_WAIT_START(5, relid, 0, 0, 0, mode);
	TRACE_POSTGRESQL_LOCK_WAIT_DONE(5, relid, 0, 0, 0, mode);
	return mode;
}
