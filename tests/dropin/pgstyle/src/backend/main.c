#include <stdio.h>
#include <stdlib.h>

#include "pg_trace.h"

void exec_simple_query(const char *query, unsigned int xid);
int acquire_lock(unsigned int relid, int mode);

int main(int argc, char **argv)
{
	unsigned int xid = argc > 2 ? (unsigned int)atoi(argv[2]) : 700;
	int i;

	TRACE_POSTGRESQL_CHECKPOINT_START(argc);
	for (i = 0; i < (argc > 1 ? atoi(argv[1]) : 1); i++) {
		TRACE_POSTGRESQL_TRANSACTION_START(xid + i);
		exec_simple_query(i % 2 ? "UPDATE t SET x = 1" : "SELECT 1", xid + i);
		acquire_lock(16384 + i, i % 8);
		TRACE_POSTGRESQL_TRANSACTION_COMMIT(xid + i);
	}
	return 0;
}
