#include "gtrace-private.h"
#include "miniglib.h"

int g_main_dispatch(const char *source_name, int (*fn)(void *), void *data)
{
	int r;

	TRACE(GLIB_MAIN_BEFORE_DISPATCH((char *)source_name, (void *)0, (void *)0, data));
	r = fn(data);
	TRACE(GLIB_MAIN_DISPATCH((char *)source_name, data, r));
	return r;
}

/* Without semaphores _ENABLED() is constantly true. */
int g_trace_dispatch_enabled(void)
{
	return TRACE_ENABLED(GLIB_MAIN_DISPATCH);
}
