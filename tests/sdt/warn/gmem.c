/* SPDX-License-Identifier: MIT */
/* GLib's gmem.c: the pointer is traced after free(), the old pointer after realloc(). */
#include <stdlib.h>
#include "probes.h"

void *wp_malloc(size_t n_bytes)
{
	void *mem = malloc(n_bytes);
	WARNPAT_MEM_ALLOC((void *)mem, (unsigned int)n_bytes);
	return mem;
}

void wp_free(void *mem)
{
	free(mem);
	WARNPAT_MEM_FREE((void *)mem);
}

void wp_free_sized(void *mem, size_t size)
{
	(void)size;
	free(mem);
	WARNPAT_MEM_FREE((void *)mem);
}

void *wp_realloc(void *mem, size_t n_bytes)
{
	void *newmem;
	if (n_bytes) {
		newmem = realloc(mem, n_bytes);
		WARNPAT_MEM_REALLOC((void *)newmem, (void *)mem, (unsigned int)n_bytes, 0);
		if (newmem)
			return newmem;
		abort();
	}
	free(mem);
	WARNPAT_MEM_REALLOC((void *)NULL, (void *)mem, 0, 0);
	return NULL;
}

void *wp_try_realloc(void *mem, size_t n_bytes)
{
	void *newmem;
	if (n_bytes) {
		newmem = realloc(mem, n_bytes);
	} else {
		newmem = NULL;
		free(mem);
	}
	WARNPAT_MEM_REALLOC((void *)newmem, (void *)mem, (unsigned int)n_bytes, 1);
	return newmem;
}
