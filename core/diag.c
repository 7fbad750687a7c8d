/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics, formatted the way gcc and clang do so that editors and CI logs
 * pick them up: "file:line:col: error: message", then the source line and a
 * caret under the column.
 */
#include "diag.h"

#include <stdarg.h>
#include <string.h>

void usdt_diag_init(struct usdt_diag *d, FILE *out, const char *progname)
{
	d->out = out;
	d->progname = progname;
	d->errors = 0;
	d->warnings = 0;
	d->tags = false;
}

static void show_source(FILE *out, unsigned line, unsigned col, const char *text)
{
	const char *end = strchr(text, '\n');
	size_t len = end ? (size_t)(end - text) : strlen(text);
	unsigned i;

	if (len && text[len - 1] == '\r')
		len--;
	fprintf(out, "%5u | %.*s\n      | ", line, (int)len, text);
	/* Keep tabs so the caret lines up under a tab-indented source line. */
	for (i = 1; i < col && i <= len; i++)
		fputc(text[i - 1] == '\t' ? '\t' : ' ', out);
	fputs("^\n", out);
}

static void vreport(struct usdt_diag *d, const char *kind, const char *file, unsigned line,
		    unsigned col, const char *line_text, const char *fmt, va_list ap)
    USDT_PRINTF(7, 0);

static void vreport(struct usdt_diag *d, const char *kind, const char *file, unsigned line,
		    unsigned col, const char *line_text, const char *fmt, va_list ap)
{
	if (file && line && col)
		fprintf(d->out, "%s:%u:%u: %s: ", file, line, col, kind);
	else if (file && line)
		fprintf(d->out, "%s:%u: %s: ", file, line, kind);
	else if (file)
		fprintf(d->out, "%s: %s: ", file, kind);
	else
		fprintf(d->out, "%s: %s: ", d->progname, kind);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	if (line_text && line)
		show_source(d->out, line, col, line_text);
}

void usdt_error_at(struct usdt_diag *d, const char *file, unsigned line, unsigned col,
		   const char *line_text, const char *fmt, ...)
{
	va_list ap;

	d->errors++;
	va_start(ap, fmt);
	vreport(d, "error", file, line, col, line_text, fmt, ap);
	va_end(ap);
}

void usdt_error_tag_at(struct usdt_diag *d, const char *tag, const char *file, unsigned line,
		       unsigned col, const char *line_text, const char *fmt, ...)
{
	va_list ap;

	if (!d->tags || !tag) {
		va_start(ap, fmt);
		d->errors++;
		vreport(d, "error", file, line, col, line_text, fmt, ap);
		va_end(ap);
		return;
	}
	d->errors++;
	fprintf(d->out, "%s: %s: [%s] ", d->progname, file ? file : "error", tag);
	if (line)
		fprintf(d->out, "line %u: ", line);
	va_start(ap, fmt);
	vfprintf(d->out, fmt, ap);
	va_end(ap);
	fputc('\n', d->out);
}

void usdt_warning_at(struct usdt_diag *d, const char *file, unsigned line, unsigned col,
		     const char *line_text, const char *fmt, ...)
{
	va_list ap;

	d->warnings++;
	va_start(ap, fmt);
	vreport(d, "warning", file, line, col, line_text, fmt, ap);
	va_end(ap);
}

void usdt_note_at(struct usdt_diag *d, const char *file, unsigned line, unsigned col,
		  const char *line_text, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(d, "note", file, line, col, line_text, fmt, ap);
	va_end(ap);
}

void usdt_error(struct usdt_diag *d, const char *fmt, ...)
{
	va_list ap;

	d->errors++;
	va_start(ap, fmt);
	vreport(d, "error", NULL, 0, 0, NULL, fmt, ap);
	va_end(ap);
}

void usdt_warning(struct usdt_diag *d, const char *fmt, ...)
{
	va_list ap;

	d->warnings++;
	va_start(ap, fmt);
	vreport(d, "warning", NULL, 0, 0, NULL, fmt, ap);
	va_end(ap);
}
