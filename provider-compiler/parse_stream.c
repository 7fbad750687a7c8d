/* SPDX-License-Identifier: MIT */
/*
 * The parser's token stream, its diagnostics and its recovery: what every
 * part of the grammar (parser.c, parse_*.c) moves and reports with.
 *
 * advance() is the only way the grammar moves on. It reads directive lines
 * wherever they appear (through ps->directive: parse_directive.c), so the grammar never sees one,
 * and once the error limit or an allocation failure has stopped the parse it
 * jumps to end of file, where every loop ends. Every error goes through
 * verror(), which drops it (counted) while system-header text is read, and
 * gives up on the file after MAX_ERRORS. Recovery is by bracket balance over
 * real tokens: skip_balanced() steps over a group, skip_statement_to() to
 * the next ';' at depth 0, never past a '}' that closes an enclosing block
 * nor a `provider` keyword, so that a slip cannot swallow a provider.
 */
#include "parse_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ERRORS 100 /* per usdt_parse() call */

/*
 * The next token. Directive lines are handled here, wherever they appear (a
 * line marker may sit between two parameters), so the grammar never sees
 * them; the token before a directive stays "previous", so that a missing ';'
 * is reported after the last real token.
 */
void advance(struct parser *ps)
{
	ps->prev = ps->cur;
	if (ps->stop || ps->oom) {
		/* Every loop ends at end of file: the quickest way out. */
		ps->lx.p = ps->lx.end;
		ps->lx.in_directive = false;
	}
	lex_next(&ps->lx, &ps->cur);
	while (!ps->in_directive && ps->cur.kind == T_HASH) {
		struct token prev = ps->prev;

		ps->in_directive = true;
		ps->directive(ps);
		ps->in_directive = false;
		ps->prev = prev;
	}
}

static void USDT_PRINTF(4, 0) verror(struct parser *ps, struct usdt_loc loc, const char *line_text,
				     const char *fmt, va_list ap)
{
	char msg[512];

	if (ps->quiet) {
		ps->quiet_errors++;
		return;
	}
	/*
	 * Like a compiler's error limit: past it, the input is not D and more
	 * messages (each with its source line) would only bury the first ones.
	 */
	if (ps->nerrors >= MAX_ERRORS) {
		ps->stop = true;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	usdt_error_at(ps->diag, loc.file, loc.line, loc.col, line_text, "%s", msg);
	if (++ps->nerrors == MAX_ERRORS) {
		usdt_note_at(ps->diag, loc.file, loc.line, 0, NULL,
			     "too many errors (%d): giving up on this file", MAX_ERRORS);
		ps->stop = true;
	}
}

void USDT_PRINTF(3, 4) error_tok(struct parser *ps, const struct token *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(ps, t->loc, t->line_text, fmt, ap);
	va_end(ap);
}

void USDT_PRINTF(4, 5)
    error_loc(struct parser *ps, struct usdt_loc loc, const char *line_text, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(ps, loc, line_text, fmt, ap);
	va_end(ap);
}

/* A note that follows an error (none once the error limit is reached). */
void USDT_PRINTF(3, 4) note_loc(struct parser *ps, struct usdt_loc loc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (ps->stop || ps->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	usdt_note_at(ps->diag, loc.file, loc.line, loc.col, NULL, "%s", msg);
}

/* An error just after the previous token: where a missing ';' belongs. */
void USDT_PRINTF(2, 3) error_after_prev(struct parser *ps, const char *fmt, ...)
{
	struct usdt_loc loc = ps->prev.loc;
	const char *nl = memchr(ps->prev.start, '\n', ps->prev.len);
	va_list ap;

	/* A multi-line token (none today) would put the column off the line. */
	if (!nl)
		loc.col += (unsigned)ps->prev.len;
	va_start(ap, fmt);
	verror(ps, loc, ps->prev.line_text, fmt, ap);
	va_end(ap);
}

void oom(struct parser *ps)
{
	if (!ps->oom)
		usdt_error(ps->diag, "out of memory while parsing %s", ps->lx.file);
	ps->oom = true;
}

/* How a token reads in a message: 'x', or "end of file". */
const char *tok_desc(const struct token *t, char *buf, size_t n)
{
	if (t->kind == T_EOF)
		return "end of file";
	if (t->kind == T_EOL)
		return "end of line";
	if (t->kind == T_PUNCT && t->len == 1 &&
	    ((unsigned char)t->start[0] < 0x20 || (unsigned char)t->start[0] >= 0x7f)) {
		/* A stray byte (NUL, control, non-ASCII) is shown, not printed raw. */
		snprintf(buf, n, "byte 0x%02x", (unsigned char)t->start[0]);
		return buf;
	}
	snprintf(buf, n, "'%.*s'", t->len > 40 ? 40 : (int)t->len, t->start);
	return buf;
}

char *tok_dup(const struct token *t)
{
	return fe_strndup(t->start, t->len);
}

bool parse_ulong(const struct token *t, unsigned long *v)
{
	char buf[32];
	char *end;

	if (t->kind != T_NUMBER || t->len >= sizeof(buf))
		return false;
	memcpy(buf, t->start, t->len);
	buf[t->len] = '\0';
	errno = 0;
	*v = strtoul(buf, &end, 0);
	/* Integer suffixes (u, l) are fine in array sizes. */
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	return errno == 0 && *end == '\0';
}

/*
 * Skips a bracketed group starting at the current opener, with everything in
 * it (directives still act: a line marker inside a clause body counts).
 */
void skip_balanced(struct parser *ps)
{
	struct token open = ps->cur;
	unsigned long depth = 0;
	char buf[64];

	for (;;) {
		if (ps->cur.kind == T_EOF) {
			error_tok(ps, &open, "unbalanced %s: no matching closing bracket",
				  tok_desc(&open, buf, sizeof(buf)));
			return;
		}
		if (at_punct(ps, '{') || at_punct(ps, '(') || at_punct(ps, '['))
			depth++;
		else if (at_punct(ps, '}') || at_punct(ps, ')') || at_punct(ps, ']'))
			depth--;
		advance(ps);
		if (depth == 0)
			return;
	}
}

/*
 * Recovery and skipping of statements: up to and including the next ';' at
 * bracket depth 0, stopping before a '}' that closes an enclosing block.
 * A `provider` keyword also ends the skip, so that a missing ';' cannot make
 * a provider vanish; `report` says whether that is an error of its own.
 */
void skip_statement_to(struct parser *ps, bool report)
{
	bool first = true;

	while (ps->cur.kind != T_EOF) {
		if (!first && at_ident(ps, "provider")) {
			if (report)
				error_after_prev(ps, "expected ';' before 'provider'");
			return;
		}
		first = false;
		if (at_punct(ps, ';')) {
			advance(ps);
			return;
		}
		if (at_punct(ps, '}'))
			return;
		if (at_punct(ps, '{') || at_punct(ps, '(') || at_punct(ps, '['))
			skip_balanced(ps);
		else
			advance(ps);
	}
}

void skip_statement(struct parser *ps)
{
	skip_statement_to(ps, false);
}

/* Whether t names a macro that a skipped #define defined (parse_directive.c
 * remembers them), to explain an unknown type. */
bool is_skipped_macro(const struct parser *ps, const struct token *t)
{
	size_t i;

	for (i = 0; i < ps->nmacros; i++)
		if (strlen(ps->macros[i]) == t->len && memcmp(ps->macros[i], t->start, t->len) == 0)
			return true;
	return false;
}
