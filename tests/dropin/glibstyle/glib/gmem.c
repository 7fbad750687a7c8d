#include <stdlib.h>

#include "gtrace-private.h"
#include "miniglib.h"

void *g_malloc(size_t n)
{
	void *p = malloc(n);

	TRACE(GLIB_MEM_ALLOC((void *)p, (unsigned int)n, 0, 0));
	return p;
}

void g_free(void *p)
{
	TRACE(GLIB_MEM_FREE((void *)p));
	free(p);
}
