// SPDX-License-Identifier: MIT
/* The growable string of strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool usdt_sb_reserve(struct usdt_sbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 32;
	char *ns;

	if (b->oom)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	while (cap < b->len + n + 1)
		cap *= 2;
	ns = realloc(b->s, cap);
	if (!ns) {
		b->oom = true;
		return false;
	}
	b->s = ns;
	b->cap = cap;
	return true;
}

void usdt_sb_putn(struct usdt_sbuf *b, const char *s, size_t n)
{
	if (!usdt_sb_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void usdt_sb_puts(struct usdt_sbuf *b, const char *s)
{
	usdt_sb_putn(b, s, strlen(s));
}

void usdt_sb_putc(struct usdt_sbuf *b, char c)
{
	usdt_sb_putn(b, &c, 1);
}

void usdt_sb_printf(struct usdt_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (!usdt_sb_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *usdt_sb_take(struct usdt_sbuf *b)
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

void usdt_sb_free(struct usdt_sbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}
