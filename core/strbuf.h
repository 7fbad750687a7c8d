/* SPDX-License-Identifier: MIT */
/*
 * A growable string: the front end builds names and text in it, the
 * daemon's journal its records, the parse worker its answer (bytes: putn). `oom` is sticky (an
 * allocation failure, or a format vsnprintf refused), so callers append freely and check once at
 * the end.
 */
#ifndef USDT_STRBUF_H
#define USDT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h" /* USDT_PRINTF */

struct usdt_sbuf {
	char *s; /* NUL-terminated once anything was appended */
	size_t len, cap;
	bool oom;
};

/*
 * Room for n more bytes and the NUL after them (s + len up to cap - 1 is
 * the caller's to fill, then len grows); false (and oom set) when there is none.
 */
bool usdt_sb_reserve(struct usdt_sbuf *b, size_t n);
void usdt_sb_putn(struct usdt_sbuf *b, const char *s, size_t n);
void usdt_sb_puts(struct usdt_sbuf *b, const char *s);
void usdt_sb_putc(struct usdt_sbuf *b, char c);
void usdt_sb_printf(struct usdt_sbuf *b, const char *fmt, ...) USDT_PRINTF(2, 3);
/* Hands the string over (NULL after a failure) and resets b. */
char *usdt_sb_take(struct usdt_sbuf *b);
void usdt_sb_free(struct usdt_sbuf *b);

#endif
