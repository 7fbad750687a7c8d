#include <stdio.h>
#include <string.h>

#include "pg_trace.h"

void exec_simple_query(const char *query, unsigned int xid);

void exec_simple_query(const char *query, unsigned int xid)
{
	char status[64];
	const char *st = status;

	TRACE_POSTGRESQL_QUERY_START(query);
	TRACE_POSTGRESQL_QUERY_PARSE_START(query);
	/* Only built while someone is tracing. */
	if (TRACE_POSTGRESQL_STATEMENT_STATUS_ENABLED()) {
		snprintf(status, sizeof(status), "%s %u", strchr(query, ' ') ? "ok" : "?", xid);
		TRACE_POSTGRESQL_STATEMENT_STATUS(st);
	}
	TRACE_POSTGRESQL_BUFFER_READ_DONE(0, xid * 2, 1663, 5, 16384, -1, (unsigned char)(xid & 1));
	TRACE_POSTGRESQL_QUERY_DONE(query);
}
