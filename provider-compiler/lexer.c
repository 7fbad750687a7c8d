/* SPDX-License-Identifier: MIT */
/*
 * The D lexer: turns provider source into tokens for parser.c.
 *
 * It knows C's lexical rules (identifiers, pp-numbers, string and character
 * literals, `/ * * /` and `//` comments, backslash-newline) and the line
 * structure the preprocessor leaves behind:
 *
 *  - A `#` first on a line opens a directive when the next word is a number
 *    (a cpp line marker, `# 12 "x.d" 2`) or a directive name (`pragma`,
 *    `line`, `define`, `include`, `if`...). The lexer then returns T_HASH,
 *    the directive's tokens, and T_EOL at the end of the line, so the parser
 *    sees directive lines as units.
 *  - Any other `#` line (`# file: x.c`, `#!/usr/sbin/dtrace -s`, a lone `#`)
 *    is a comment, as SystemTap's dtrace treats it; so is the rest of a line
 *    after a `#` that does not begin it (`probe p(int); # the request`).
 *
 * Positions are logical: after a line marker, tokens carry the file and line
 * the marker names, so diagnostics point into the original .d file; the
 * source line shown under a diagnostic is still the physical one. A marker's
 * flag 3 (system header) marks the tokens that follow as `sys`.
 *
 * usdt_needs_cpp(), at the end, walks the same tokens to tell the command
 * whether a file given without -C needs the preprocessor anyway.
 */
#include "front.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(int c)
{
	return is_ident_start(c) || is_digit(c);
}

void lex_init(struct lexer *lx, const char *file, const char *text, size_t len,
	      struct usdt_diag *diag)
{
	memset(lx, 0, sizeof(*lx));
	lx->p = text;
	lx->end = text + len;
	lx->line_start = text;
	lx->pline = 1;
	lx->file = file;
	lx->at_bol = true;
	lx->diag = diag;
	/* A UTF-8 byte order mark, as some editors save files, is not a token. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		lx->p += 3;
}

static struct usdt_loc loc_at(const struct lexer *lx, const char *p)
{
	struct usdt_loc loc;
	long line = (long)lx->pline + lx->line_delta;

	loc.file = lx->file;
	loc.line = line < 1 ? 1 : line > INT_MAX ? INT_MAX : (unsigned)line;
	loc.col = (unsigned)(p - lx->line_start) + 1;
	return loc;
}

/* Lexical errors are few in real files; a flood (binary input) is capped. */
#define MAX_LEX_ERRORS 100

static void lex_error_at(struct lexer *lx, struct usdt_loc loc, const char *line_start,
			 const char *msg)
{
	if (!lx->diag)
		return;
	if (lx->errors >= MAX_LEX_ERRORS) {
		lx->diag->errors++; /* still an error, just not shown */
		return;
	}
	lx->errors++;
	usdt_error_at(lx->diag, loc.file, loc.line, loc.col, line_start, "%s", msg);
}

static void error_at(struct lexer *lx, const char *p, const char *msg)
{
	lex_error_at(lx, loc_at(lx, p), lx->line_start, msg);
}

/* Consumes the newline at lx->p ("\n"; a "\r" before it is blank space). */
static void newline(struct lexer *lx)
{
	lx->p++;
	lx->pline++;
	lx->line_start = lx->p;
	lx->at_bol = true;
	if (lx->marker_pending) {
		lx->line_delta = lx->next_delta;
		lx->file = lx->next_file;
		lx->sys = lx->next_sys;
		lx->marker_pending = false;
	}
}

static bool skip_block_comment(struct lexer *lx);

void lex_set_next_line(struct lexer *lx, unsigned long line, const char *file, bool sys)
{
	if (line > INT_MAX)
		line = INT_MAX;
	lx->next_delta = (long)line - (long)(lx->pline + 1);
	lx->next_file = file ? file : lx->file;
	lx->next_sys = sys;
	lx->marker_pending = true;
}

void lex_skip_line(struct lexer *lx)
{
	/* Comments may hide a newline; a directive ends only at a real one. */
	while (lx->p < lx->end && *lx->p != '\n') {
		if (lx->p[0] == '/' && lx->p + 1 < lx->end && lx->p[1] == '*') {
			struct usdt_loc loc = loc_at(lx, lx->p);
			const char *ls = lx->line_start;

			if (!skip_block_comment(lx))
				lex_error_at(lx, loc, ls, "unterminated comment");
			continue;
		}
		if (lx->p[0] == '\\' && lx->p + 1 < lx->end && lx->p[1] == '\n') {
			lx->p++;
			newline(lx);
			continue;
		}
		lx->p++;
	}
}

/* Directive names that make a `#` line a directive rather than a comment. */
static bool is_directive_name(const char *s, size_t n)
{
	static const char *const names[] = {
	    "pragma", "line",  "define",  "undef", "include", "include_next", "import",
	    "if",     "ifdef", "ifndef",  "elif",  "elifdef", "elifndef",     "else",
	    "endif",  "error", "warning", "ident", "sccs",    "assert",	      "unassert",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return true;
	return false;
}

/* At a '#' first on its line: a directive (true) or a comment line (false). */
static bool opens_directive(const struct lexer *lx)
{
	const char *q = lx->p + 1, *w;

	while (q < lx->end && (*q == ' ' || *q == '\t'))
		q++;
	if (q < lx->end && is_digit(*q))
		return true;
	w = q;
	while (q < lx->end && is_ident_char(*q))
		q++;
	return q > w && is_directive_name(w, (size_t)(q - w));
}

/* Skips a comment starting at lx->p; false when it never ends. */
static bool skip_block_comment(struct lexer *lx)
{
	lx->p += 2;
	while (lx->p < lx->end) {
		if (lx->p[0] == '*' && lx->p + 1 < lx->end && lx->p[1] == '/') {
			lx->p += 2;
			return true;
		}
		if (*lx->p == '\n')
			newline(lx);
		else
			lx->p++;
	}
	return false;
}

static void lex_literal(struct lexer *lx, struct token *t, char quote)
{
	const char *q = lx->p + 1;

	while (q < lx->end && *q != quote && *q != '\n') {
		if (*q == '\\' && q + 1 < lx->end && q[1] != '\n')
			q++;
		q++;
	}
	if (q < lx->end && *q == quote) {
		q++;
	} else {
		error_at(lx, lx->p,
			 quote == '"' ? "missing terminating '\"' character"
				      : "missing terminating ' character");
	}
	t->kind = quote == '"' ? T_STRING : T_CHAR;
	t->len = (size_t)(q - lx->p);
	lx->p = q;
}

void lex_next(struct lexer *lx, struct token *t)
{
	for (;;) {
		const char *p = lx->p;

		if (p >= lx->end) {
			t->kind = lx->in_directive ? T_EOL : T_EOF;
			lx->in_directive = false;
			t->start = p;
			t->len = 0;
			t->loc = loc_at(lx, p);
			t->line_text = lx->line_start;
			t->sys = lx->sys;
			return;
		}
		if (*p == '\n') {
			if (lx->in_directive) {
				/* Left for the next call: a line marker applies after it. */
				lx->in_directive = false;
				t->kind = T_EOL;
				t->start = p;
				t->len = 0;
				t->loc = loc_at(lx, p);
				t->line_text = lx->line_start;
				t->sys = lx->sys;
				return;
			}
			newline(lx);
			continue;
		}
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
			lx->p++;
			continue;
		}
		if (*p == '\\' && p + 1 < lx->end &&
		    (p[1] == '\n' || (p[1] == '\r' && p + 2 < lx->end && p[2] == '\n'))) {
			lx->p += p[1] == '\r' ? 2 : 1;
			/* A continued line is still the same logical line for at_bol. */
			{
				bool bol = lx->at_bol;

				newline(lx);
				lx->at_bol = bol;
			}
			continue;
		}
		if (*p == '/' && p + 1 < lx->end && p[1] == '*') {
			struct usdt_loc loc = loc_at(lx, p);
			const char *ls = lx->line_start;

			/* Reported at the opening: that is what the user must close. */
			if (!skip_block_comment(lx))
				lex_error_at(lx, loc, ls, "unterminated comment");
			continue;
		}
		if (*p == '/' && p + 1 < lx->end && p[1] == '/') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
			continue;
		}
		if (*p == '#' && !lx->at_bol && !lx->in_directive) {
			/*
			 * Not a directive, and no D or C token: the rest of the line
			 * is a comment, as SystemTap's dtrace reads it.
			 */
			lex_skip_line(lx);
			continue;
		}
		if (*p == '#' && lx->at_bol && !lx->in_directive) {
			if (!opens_directive(lx)) {
				lex_skip_line(lx);
				continue;
			}
			lx->in_directive = true;
			lx->at_bol = false;
			t->kind = T_HASH;
			t->start = p;
			t->len = 1;
			t->loc = loc_at(lx, p);
			t->line_text = lx->line_start;
			t->sys = lx->sys;
			lx->p++;
			return;
		}

		lx->at_bol = false;
		t->start = p;
		t->loc = loc_at(lx, p);
		t->line_text = lx->line_start;
		t->sys = lx->sys;
		if (is_ident_start((unsigned char)*p)) {
			while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
				lx->p++;
			t->kind = T_IDENT;
			t->len = (size_t)(lx->p - p);
			return;
		}
		if (is_digit(*p) || (*p == '.' && p + 1 < lx->end && is_digit(p[1]))) {
			lx->p++;
			while (lx->p < lx->end) {
				char c = *lx->p;

				if ((c == '+' || c == '-') && strchr("eEpP", lx->p[-1]) != NULL)
					lx->p++;
				else if (is_ident_char((unsigned char)c) || c == '.')
					lx->p++;
				else
					break;
			}
			t->kind = T_NUMBER;
			t->len = (size_t)(lx->p - p);
			return;
		}
		if (*p == '"' || *p == '\'') {
			lex_literal(lx, t, *p);
			return;
		}
		t->kind = T_PUNCT;
		if (*p == '.' && p + 2 < lx->end && p[1] == '.' && p[2] == '.')
			t->len = 3;
		else
			t->len = 1;
		lx->p += t->len;
		return;
	}
}

bool tok_is(const struct token *t, const char *s)
{
	return t->kind == T_IDENT && strlen(s) == t->len && memcmp(t->start, s, t->len) == 0;
}

bool tok_punct(const struct token *t, char c)
{
	return t->kind == T_PUNCT && t->len == 1 && t->start[0] == c;
}

/* ---- whether a source needs the C preprocessor (usdt_needs_cpp) --------- */

/* Directives only cpp gives a meaning: name as a static string, or NULL. */
static const char *cpp_only_directive(const struct token *t)
{
	static const char *const names[] = {
	    "if",   "ifdef", "ifndef",	"elif",		"elifdef", "elifndef",
	    "else", "endif", "include", "include_next", "import",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (tok_is(t, names[i]))
			return names[i];
	return NULL;
}

#define MAX_SCAN_MACROS 256

/* A macro of a #define seen so far, and where it was defined. */
struct scan_macro {
	const char *name;
	size_t len;
	struct usdt_loc at;
};

static struct scan_macro *scan_find(struct scan_macro *m, size_t n, const struct token *t)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].len == t->len && memcmp(m[i].name, t->start, t->len) == 0)
			return &m[i];
	return NULL;
}

static void set_need(struct usdt_cpp_need *need, struct usdt_loc at, const char *directive)
{
	need->line = at.line;
	need->col = at.col;
	need->directive = directive;
}

/*
 * Walks the tokens as the parser would see them (comments, strings and `#`
 * comment lines are no directives) and stops at the first line that needs
 * cpp. A macro counts as used only outside directives: cpp does not expand
 * `#pragma D` lines, and a use in `#if` is a conditional anyway.
 */
bool usdt_needs_cpp(const char *text, size_t len, struct usdt_cpp_need *need)
{
	struct scan_macro *macros = NULL, *m;
	size_t nmacros = 0, cap = 0;
	struct lexer lx;
	struct token t, word, name;
	bool found = false;

	lex_init(&lx, "", text, len, NULL);
	for (lex_next(&lx, &t); t.kind != T_EOF && !found; lex_next(&lx, &t)) {
		if (t.kind == T_IDENT && (m = scan_find(macros, nmacros, &t)) != NULL) {
			set_need(need, m->at, "define");
			found = true;
		}
		if (t.kind != T_HASH)
			continue;
		lex_next(&lx, &word);
		if (word.kind == T_EOL)
			continue;
		if (cpp_only_directive(&word)) {
			set_need(need, word.loc, cpp_only_directive(&word));
			found = true;
		} else if (tok_is(&word, "define") || tok_is(&word, "undef")) {
			lex_next(&lx, &name);
			if (name.kind == T_EOL)
				continue;
			m = name.kind == T_IDENT ? scan_find(macros, nmacros, &name) : NULL;
			if (tok_is(&word, "undef") && m) {
				*m = macros[--nmacros];
			} else if (tok_is(&word, "define") && name.kind == T_IDENT && !m) {
				/*
				 * Past MAX_SCAN_MACROS (a C header, not a provider), or out
				 * of memory, it is not worth telling: assume it is used.
				 * The bound keeps the scan linear on any input.
				 */
				if (nmacros == MAX_SCAN_MACROS ||
				    fe_grow((void **)&macros, &cap, nmacros, sizeof(*macros))) {
					set_need(need, word.loc, "define");
					found = true;
				} else {
					macros[nmacros].name = name.start;
					macros[nmacros].len = name.len;
					macros[nmacros++].at = word.loc;
				}
			}
		}
		lex_skip_line(&lx);
		lex_next(&lx, &t); /* the directive's T_EOL */
	}
	free(macros);
	return found;
}
