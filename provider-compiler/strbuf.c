/* SPDX-License-Identifier: MIT */
/* Small allocation helpers the front end shares: growable strings and arrays. */
#include "front.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		char *ns;

		while (cap < b->len + n + 1)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

void sb_putc(struct sbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

char *sb_take(struct sbuf *b)
{
	char *s = b->s;

	if (b->oom) {
		free(s);
		s = NULL;
	} else if (!s) {
		s = calloc(1, 1);
	}
	memset(b, 0, sizeof(*b));
	return s;
}

void sb_free(struct sbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

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
