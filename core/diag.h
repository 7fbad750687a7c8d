/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: the one place that formats what usdtkit tells a user.
 *
 *   probes.d:12:9: error: probe 'start' redeclared with another signature
 *      12 |   probe start(int, char *);
 *         |         ^
 *
 * Libraries never print and never exit: they call usdt_error_at() and friends
 * and return an error code; the command decides the exit status from
 * diag->errors.
 */
#ifndef USDT_DIAG_H
#define USDT_DIAG_H

#include <stdbool.h>
#include <stdio.h>

struct usdt_diag {
	FILE *out;	      /* usually stderr */
	const char *progname; /* "dtrace": prefix of messages with no location */
	unsigned errors;
	unsigned warnings;
	/*
	 * DTrace's form (dtrace -xerrtags): an error with a tag is one line,
	 * "dtrace: <file>: [TAG] line N: message", no column, no source line
	 * (<file> is then the caller's phrase: "failed to compile script x.d").
	 */
	bool tags;
};

void usdt_diag_init(struct usdt_diag *d, FILE *out, const char *progname);

/*
 * A message at file:line:col. `line_text` points at the start of that line in
 * the source (it may run on past the line: only up to the first newline is
 * shown), or is NULL when no source is at hand; a caret is then not drawn.
 */
#if defined(__GNUC__)
#define USDT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define USDT_PRINTF(f, a)
#endif

void usdt_error_at(struct usdt_diag *d, const char *file, unsigned line, unsigned col,
		   const char *line_text, const char *fmt, ...) USDT_PRINTF(6, 7);
/*
 * An error of a language that names its errors (D's "D_SYNTAX", ...): the
 * tag is the error's kind, shown in DTrace's form when d->tags is set.
 */
void usdt_error_tag_at(struct usdt_diag *d, const char *tag, const char *file, unsigned line,
		       unsigned col, const char *line_text, const char *fmt, ...) USDT_PRINTF(7, 8);
void usdt_warning_at(struct usdt_diag *d, const char *file, unsigned line, unsigned col,
		     const char *line_text, const char *fmt, ...) USDT_PRINTF(6, 7);
void usdt_note_at(struct usdt_diag *d, const char *file, unsigned line, unsigned col,
		  const char *line_text, const char *fmt, ...) USDT_PRINTF(6, 7);

/* "dtrace: error: ..." for what has no source position (options, objects, I/O). */
void usdt_error(struct usdt_diag *d, const char *fmt, ...) USDT_PRINTF(2, 3);
void usdt_warning(struct usdt_diag *d, const char *fmt, ...) USDT_PRINTF(2, 3);

#endif /* USDT_DIAG_H */
