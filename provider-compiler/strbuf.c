/* SPDX-License-Identifier: MIT */
/* Small allocation helpers the front end shares: strings (interned too) and growable arrays
 * (its growable string is the core's: core/strbuf.h). */
#include "front.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *fe_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

int fe_grow(void **pp, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *np;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap <= n)
		ncap *= 2;
	if (ncap > SIZE_MAX / elem)
		return -1;
	np = realloc(*pp, ncap * elem);
	if (!np)
		return -1;
	*pp = np;
	*cap = ncap;
	return 0;
}

int fe_grow_pow2(void **pp, size_t n, size_t elem)
{
	size_t ncap;
	void *np;

	/* The capacity is implicit: 8 below 8 elements, else the power of two >= n. */
	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return 0;
	ncap = n < 8 ? 8 : n * 2;
	if (ncap > SIZE_MAX / elem)
		return -1;
	np = realloc(*pp, ncap * elem);
	if (!np)
		return -1;
	*pp = np;
	return 0;
}

/* The one copy of a string the front end keeps (file names): equal strings
 * are one pointer. */
const char *fe_intern(struct front *fe, const char *s, size_t n)
{
	size_t i;
	char *d;

	for (i = 0; i < fe->nstrings; i++)
		if (strlen(fe->strings[i]) == n && memcmp(fe->strings[i], s, n) == 0)
			return fe->strings[i];
	if (fe_grow((void **)&fe->strings, &fe->capstrings, fe->nstrings, sizeof(char *)))
		return NULL;
	d = fe_strndup(s, n);
	if (d)
		fe->strings[fe->nstrings++] = d;
	return d;
}
