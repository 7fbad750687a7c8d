/* SPDX-License-Identifier: MIT */
/*
 * The D provider language front end: usdt_parse().
 *
 * Theory. A .d file given to `dtrace -h`/`-G` declares providers:
 *
 *	provider NAME { probe NAME(params) [: (params)]; ... };
 *
 * around which real projects write everything else D and C allow: comments,
 * typedefs, struct/union/enum definitions, `#pragma D attributes`, cpp line
 * markers, and consumer-side D (translators, inlines, probe clauses) that a
 * provider compiler must step over. This file is a recursive-descent parser
 * over the tokens of lexer.c; types.c resolves declaration specifiers and
 * declarators into the model's argument types.
 *
 * Rules (DTrace's, plus what Linux needs):
 *  - provider names: not ending in a digit (DTrace appends the pid); at most
 *    59 characters, so that the tracefs group `sdt_<provider>` stays within
 *    its 63-character limit (DTrace allows 63; no real provider comes near).
 *  - probe names: at most 63 characters as written (`__` kept), which is both
 *    DTrace's limit after hyphenation and tracefs' limit for event names.
 *    Two probes whose macro names collide (`a__b`, `a_b`) are an error.
 *  - parameters: names optional but distinct; `void` only as the sole,
 *    unnamed parameter; no `...`; at most 255. A translated list `: (...)`
 *    maps each translated argument to the native argument of the same name
 *    (names may repeat there); an unnamed or unknown name is an error, as in
 *    DTrace (dt_decl_prototype() requires names in an output prototype, so
 *    its fallback to mapping by position is never reached).
 *  - a probe declared again in another `provider { }` block (the same
 *    provider in another -s file, a header included twice) with the same
 *    signature is accepted; with another signature it is an error. Twice in
 *    one block it is an error whatever the signature, as DTrace's "probe
 *    redeclared": that is a slip, never a split file. A provider declared
 *    again gains the new probes (DTrace would require the same probes; real
 *    projects split one provider across files, SPEC-compat.md item 13).
 *  - `#pragma D attributes A/B/C provider P which` may come before or after
 *    the provider, even in another parse call.
 *  - preprocessor conditionals and includes are not run here: the command
 *    runs cpp, for -C and for a file that needs it (usdt_needs_cpp() in
 *    lexer.c decides). Seeing one here is an error rather than a silent
 *    probe inside `#if 0`. `#define`/`#undef` are skipped (SystemTap does
 *    the same); a type that only a skipped macro defines is then reported
 *    as unknown, with a note to pass -C.
 *  - text cpp took from a system header (line marker flag 3: glibc's GNU C,
 *    with `__attribute__`, `__extension__`, inline functions) is read
 *    silently and only for its typedefs and struct/union/enum definitions
 *    (sys_declaration()); a typedef not fully read is left unchecked. A
 *    system header's typedef of a well-known name (`uint8_t`) keeps the
 *    table's entry and its standard C spelling.
 *
 * Errors are reported through diag as they are found, with recovery to the
 * next `;` or `}` so that one run reports all of them; usdt_parse() then
 * returns -1. Nothing here prints or exits.
 */
#include "front.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define MAX_NEST 64		/* struct/declarator nesting the fuzzer cannot exceed */
#define MAX_PROVIDER_NAME 59	/* 63 - strlen("sdt_") */
#define MAX_ERRORS 100		/* per usdt_parse() call */

struct parser {
	struct lexer lx;
	struct token cur;
	struct token prev; /* the last token consumed */
	struct usdt_program *prog;
	struct front *fe;
	struct usdt_diag *diag;
	unsigned nest;
	unsigned long block; /* the `provider { }` block being read: fe->nblocks */
	bool in_directive; /* directive_line() is reading a directive's tokens */
	unsigned nerrors;
	bool stop; /* too many errors */
	bool oom;
	unsigned quiet; /* reading a system header: errors are not reported */
	unsigned long quiet_errors; /* but counted */
	bool cpp_hint_given; /* the "pass -C" advice is given once per source */
	bool macro_note_given;
	/* Macro names of skipped #defines, to explain unknown types. */
	char **macros;
	size_t nmacros, capmacros;
};

/* A declaration's type while it is parsed: resolved type + spelling. */
struct decl {
	struct ctype t;
	struct sbuf spell;
	struct token name; /* kind T_EOF when abstract */
};

/* ---- helpers ----------------------------------------------------------- */

static void directive_line(struct parser *ps);

/*
 * The next token. Directive lines are handled here, wherever they appear (a
 * line marker may sit between two parameters), so the grammar never sees
 * them; the token before a directive stays "previous", so that a missing ';'
 * is reported after the last real token.
 */
static void advance(struct parser *ps)
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
		directive_line(ps);
		ps->in_directive = false;
		ps->prev = prev;
	}
}

static bool at_punct(const struct parser *ps, char c)
{
	return tok_punct(&ps->cur, c);
}

static bool at_ident(const struct parser *ps, const char *s)
{
	return tok_is(&ps->cur, s);
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

static void USDT_PRINTF(3, 4) error_tok(struct parser *ps, const struct token *t, const char *fmt,
					 ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(ps, t->loc, t->line_text, fmt, ap);
	va_end(ap);
}

static void USDT_PRINTF(4, 5) error_loc(struct parser *ps, struct usdt_loc loc,
					 const char *line_text, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(ps, loc, line_text, fmt, ap);
	va_end(ap);
}

/* A note that follows an error (none once the error limit is reached). */
static void USDT_PRINTF(3, 4) note_loc(struct parser *ps, struct usdt_loc loc, const char *fmt, ...)
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
static void USDT_PRINTF(2, 3) error_after_prev(struct parser *ps, const char *fmt, ...)
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

static void oom(struct parser *ps)
{
	if (!ps->oom)
		usdt_error(ps->diag, "out of memory while parsing %s", ps->lx.file);
	ps->oom = true;
}

/* How a token reads in a message: 'x', or "end of file". */
static const char *tok_desc(const struct token *t, char *buf, size_t n)
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

static char *tok_dup(const struct token *t)
{
	return fe_strndup(t->start, t->len);
}

static bool is_qualifier(const struct token *t)
{
	return tok_is(t, "const") || tok_is(t, "volatile") || tok_is(t, "restrict") ||
	       tok_is(t, "__restrict") || tok_is(t, "__restrict__") || tok_is(t, "__const") ||
	       tok_is(t, "__volatile__");
}

static void spell_word(struct sbuf *b, const char *s, size_t n)
{
	if (b->len && b->s[b->len - 1] != '(' && b->s[b->len - 1] != '[')
		sb_putc(b, ' ');
	sb_putn(b, s, n);
}

/*
 * Skips a bracketed group starting at the current opener, with everything in
 * it (directives still act: a line marker inside a clause body counts).
 */
static void skip_balanced(struct parser *ps)
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
static void skip_statement_to(struct parser *ps, bool report)
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

static void skip_statement(struct parser *ps)
{
	skip_statement_to(ps, false);
}

/* ---- directives --------------------------------------------------------- */

/* Consumes the rest of a directive line and its end. */
static void end_directive(struct parser *ps)
{
	if (ps->cur.kind != T_EOL && ps->cur.kind != T_EOF) {
		lex_skip_line(&ps->lx);
		advance(ps);
	}
	if (ps->cur.kind == T_EOL)
		advance(ps);
}

static bool parse_ulong(const struct token *t, unsigned long *v)
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

/* `# 12 "file" flags` or `#line 12 "file"`: cur is the line number. */
static void line_marker(struct parser *ps)
{
	struct token num = ps->cur;
	const char *file = NULL;
	unsigned long line;
	bool sys = false;

	if (!parse_ulong(&num, &line) || (num.start[0] == '0' && num.len > 1)) {
		error_tok(ps, &num, "invalid line number in line marker");
		end_directive(ps);
		return;
	}
	advance(ps);
	if (ps->cur.kind == T_STRING) {
		/* The name as cpp wrote it, quotes removed; escapes are kept as is. */
		file = fe_intern(ps->fe, ps->cur.start + 1,
				 ps->cur.len >= 2 && ps->cur.start[ps->cur.len - 1] == '"'
					 ? ps->cur.len - 2
					 : ps->cur.len - 1);
		if (!file) {
			oom(ps);
			return;
		}
		advance(ps);
	}
	/*
	 * Flags: 1 and 2 enter and leave an include, 4 is extern "C"; 3 says the
	 * text comes from a system header, which is read leniently
	 * (sys_declaration()).
	 */
	while (ps->cur.kind == T_NUMBER) {
		if (ps->cur.len == 1 && ps->cur.start[0] == '3')
			sys = true;
		advance(ps);
	}
	if (ps->cur.kind != T_EOL && ps->cur.kind != T_EOF)
		lex_skip_line(&ps->lx), advance(ps);
	if (ps->cur.kind == T_EOL) {
		lex_set_next_line(&ps->lx, line, file, sys);
		advance(ps);
	}
}

static const char *const stab_names[] = {
	"Internal", "Private", "Obsolete", "External", "Unstable", "Evolving", "Stable", "Standard",
};
static const char *const class_names[] = {
	"Unknown", "CPU", "Platform", "Group", "ISA", "Common",
};
static const char *const which_names[] = {
	"provider", "module", "function", "name", "args",
};

static int lookup_name(const struct token *t, const char *const *names, size_t n)
{
	size_t i;

	if (t->kind != T_IDENT)
		return -1;
	for (i = 0; i < n; i++)
		if (strlen(names[i]) == t->len && strncasecmp(names[i], t->start, t->len) == 0)
			return (int)i;
	return -1;
}

static struct usdt_provider *find_provider(struct usdt_program *prog, const char *name,
					   size_t len)
{
	size_t i;

	for (i = 0; i < prog->nproviders; i++)
		if (strlen(prog->providers[i].name) == len &&
		    memcmp(prog->providers[i].name, name, len) == 0)
			return &prog->providers[i];
	return NULL;
}

static void apply_attr(struct usdt_attr *dst, const struct usdt_attr *src, unsigned mask)
{
	if (mask & 1)
		dst->name_stab = src->name_stab;
	if (mask & 2)
		dst->data_stab = src->data_stab;
	if (mask & 4)
		dst->dep_class = src->dep_class;
}

/* `#pragma D attributes Name/Data/Class provider P which`; cur follows "attributes". */
static void pragma_attributes(struct parser *ps)
{
	struct usdt_attr attr = { 0 };
	struct token ptok;
	unsigned mask = 0, part = 0;
	int which, v;
	char buf[64];

	for (;;) {
		const struct token *t = &ps->cur;

		if (part >= 3 || t->kind != T_IDENT || at_ident(ps, "provider"))
			break;
		if (part < 2) {
			v = lookup_name(t, stab_names, 8);
			if (v < 0) {
				error_tok(ps, t,
					  "unknown stability %s: expected Internal, Private, Obsolete, "
					  "External, Unstable, Evolving, Stable or Standard",
					  tok_desc(t, buf, sizeof(buf)));
				end_directive(ps);
				return;
			}
			if (part == 0)
				attr.name_stab = (enum usdt_stability)v;
			else
				attr.data_stab = (enum usdt_stability)v;
		} else {
			v = lookup_name(t, class_names, 6);
			if (v < 0) {
				error_tok(ps, t,
					  "unknown dependency class %s: expected Unknown, CPU, "
					  "Platform, Group, ISA or Common",
					  tok_desc(t, buf, sizeof(buf)));
				end_directive(ps);
				return;
			}
			attr.dep_class = (enum usdt_depclass)v;
		}
		mask |= 1u << part;
		part++;
		advance(ps);
		if (!at_punct(ps, '/'))
			break;
		advance(ps);
	}
	if (!mask) {
		error_tok(ps, &ps->cur, "expected stability attributes after '#pragma D attributes'");
		end_directive(ps);
		return;
	}
	if (!at_ident(ps, "provider")) {
		/* The form that sets attributes of a D identifier: not ours. */
		end_directive(ps);
		return;
	}
	advance(ps);
	if (ps->cur.kind != T_IDENT) {
		error_tok(ps, &ps->cur, "expected a provider name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		end_directive(ps);
		return;
	}
	ptok = ps->cur;
	advance(ps);
	which = lookup_name(&ps->cur, which_names, USDT_ATTR_COUNT);
	if (which < 0 || !tok_is(&ps->cur, which_names[which])) {
		error_tok(ps, &ps->cur,
			  "expected provider, module, function, name or args after the provider "
			  "name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		end_directive(ps);
		return;
	}
	advance(ps);
	if (ps->cur.kind != T_EOL && ps->cur.kind != T_EOF)
		error_tok(ps, &ps->cur, "unexpected %s at the end of '#pragma D attributes'",
			  tok_desc(&ps->cur, buf, sizeof(buf)));

	{
		struct usdt_provider *pv = find_provider(ps->prog, ptok.start, ptok.len);
		struct pending_attr *pa;

		if (pv) {
			apply_attr(&pv->attr[which], &attr, mask);
		} else if (fe_grow((void **)&ps->fe->pending, &ps->fe->cappending,
				   ps->fe->npending, sizeof(*ps->fe->pending)) == 0 &&
			   (ps->fe->pending[ps->fe->npending].provider = tok_dup(&ptok))) {
			/* Kept for a provider declared later, maybe in another file. */
			pa = &ps->fe->pending[ps->fe->npending++];
			pa->which = (enum usdt_attr_which)which;
			pa->attr = attr;
			pa->mask = mask;
		} else {
			oom(ps);
		}
	}
	end_directive(ps);
}

static void pragma(struct parser *ps)
{
	advance(ps); /* "pragma" */
	if (at_ident(ps, "D")) {
		advance(ps);
		if (at_ident(ps, "attributes")) {
			advance(ps);
			pragma_attributes(ps);
			return;
		}
		/* depends_on, option, binding, ident, line, error: consumer matters. */
	}
	/* Other pragmas (#pragma once, #pragma ident) mean nothing to a provider. */
	end_directive(ps);
}

static void remember_macro(struct parser *ps)
{
	if (ps->cur.kind != T_IDENT)
		return;
	if (fe_grow((void **)&ps->macros, &ps->capmacros, ps->nmacros, sizeof(*ps->macros)) ||
	    !(ps->macros[ps->nmacros] = tok_dup(&ps->cur))) {
		oom(ps);
		return;
	}
	ps->nmacros++;
}

static bool is_skipped_macro(const struct parser *ps, const struct token *t)
{
	size_t i;

	for (i = 0; i < ps->nmacros; i++)
		if (strlen(ps->macros[i]) == t->len && memcmp(ps->macros[i], t->start, t->len) == 0)
			return true;
	return false;
}

/* A directive line: cur is its '#'; returns with cur after its end. */
static void directive_line(struct parser *ps)
{
	struct token word;

	advance(ps); /* '#' */
	word = ps->cur;
	if (word.kind == T_NUMBER) {
		line_marker(ps);
		return;
	}
	if (tok_is(&word, "line")) {
		advance(ps);
		line_marker(ps);
		return;
	}
	if (tok_is(&word, "pragma")) {
		pragma(ps);
		return;
	}
	if (tok_is(&word, "define") || tok_is(&word, "undef")) {
		advance(ps);
		if (tok_is(&word, "define"))
			remember_macro(ps);
		end_directive(ps);
		return;
	}
	if (tok_is(&word, "error") || tok_is(&word, "warning")) {
		const char *s = word.start + word.len, *e = s;

		while (e < ps->lx.end && *e != '\n' && *e != '\r')
			e++;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (tok_is(&word, "error"))
			error_tok(ps, &word, "#error %.*s", (int)(e - s), s);
		else
			usdt_warning_at(ps->diag, word.loc.file, word.loc.line, word.loc.col,
					word.line_text, "#warning %.*s", (int)(e - s), s);
		end_directive(ps);
		return;
	}
	if (tok_is(&word, "ident") || tok_is(&word, "sccs") || tok_is(&word, "assert") ||
	    tok_is(&word, "unassert")) {
		end_directive(ps);
		return;
	}
	/* include, include_next, import, if, ifdef, ifndef, elif*, else, endif. */
	error_tok(ps, &word, "'#%.*s' needs the C preprocessor%s", (int)word.len, word.start,
		  ps->cpp_hint_given ? "" : ": run dtrace with -C (and -I/-D as needed)");
	ps->cpp_hint_given = true;
	end_directive(ps);
}

/* ---- declarations --------------------------------------------------------- */

static void parse_declarator(struct parser *ps, struct decl *d, bool param);

static const char *kind_word(enum base_kind k)
{
	return k == B_UNION ? "union" : k == B_ENUM ? "enum" : "struct";
}

static void parse_enum_body(struct parser *ps, struct tag *tag)
{
	char buf[64];

	advance(ps); /* '{' */
	while (ps->cur.kind != T_EOF && !at_punct(ps, '}')) {
		if (ps->cur.kind != T_IDENT) {
			error_tok(ps, &ps->cur, "expected an enumerator name, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			break;
		}
		advance(ps);
		if (at_punct(ps, '=')) {
			/* The value matters to D programs only: skip the expression. */
			advance(ps);
			while (ps->cur.kind != T_EOF && !at_punct(ps, ',') && !at_punct(ps, '}') &&
			       !at_punct(ps, ';')) {
				if (at_punct(ps, '(') || at_punct(ps, '['))
					skip_balanced(ps);
				else
					advance(ps);
			}
		}
		if (at_punct(ps, ','))
			advance(ps);
		else if (!at_punct(ps, '}')) {
			error_tok(ps, &ps->cur, "expected ',' or '}' in enum, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			break;
		}
	}
	/* Recover to the closing brace of the enum. */
	while (ps->cur.kind != T_EOF && !at_punct(ps, '}')) {
		if (at_punct(ps, '{'))
			skip_balanced(ps);
		else
			advance(ps);
	}
	if (at_punct(ps, '}'))
		advance(ps);
	tag->defined = true;
	tag->size = tag->align = 4;
}

static bool parse_specs(struct parser *ps, struct decl *d);

static void parse_struct_body(struct parser *ps, struct tag *tag)
{
	unsigned long off = 0, size = 0, align = 1;
	bool known = true;
	char buf[64];

	advance(ps); /* '{' */
	while (ps->cur.kind != T_EOF && !at_punct(ps, '}') && !ps->oom) {
		struct decl m = { 0 };

		if (at_punct(ps, ';')) {
			advance(ps);
			continue;
		}
		if (!parse_specs(ps, &m)) {
			sb_free(&m.spell);
			error_tok(ps, &ps->cur, "expected a member declaration, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			skip_statement(ps);
			known = false;
			continue;
		}
		for (;;) {
			struct decl one = m;
			unsigned msize, malign;

			one.spell.s = NULL; /* the spelling of members is not kept */
			one.spell.len = one.spell.cap = 0;
			if (at_punct(ps, ';') || at_punct(ps, ',')) {
				/* No declarator: an anonymous struct/union member. */
			} else {
				parse_declarator(ps, &one, false);
			}
			sb_free(&one.spell);
			if (at_punct(ps, ':')) {
				/* Bit-fields: their layout is the compiler's business. */
				known = false;
				advance(ps);
				while (ps->cur.kind != T_EOF && !at_punct(ps, ',') &&
				       !at_punct(ps, ';') && !at_punct(ps, '}'))
					advance(ps);
			}
			ctype_layout(&one.t, &msize, &malign);
			if (!msize || !malign) {
				known = false;
			} else if (known) {
				if (malign > align)
					align = malign;
				if (tag->kind == B_UNION) {
					if (msize > size)
						size = msize;
				} else {
					off = (off + malign - 1) / malign * malign + msize;
					if (off > 0xffffffu)
						known = false;
				}
			}
			if (!at_punct(ps, ','))
				break;
			advance(ps);
		}
		sb_free(&m.spell);
		if (at_punct(ps, ';')) {
			advance(ps);
		} else {
			error_after_prev(ps, "expected ';' after member declaration");
			skip_statement(ps);
		}
	}
	if (at_punct(ps, '}'))
		advance(ps);
	else
		error_tok(ps, &ps->cur, "expected '}' to end the %s definition", kind_word(tag->kind));
	tag->defined = true;
	if (known) {
		if (tag->kind != B_UNION)
			size = off;
		tag->size = (unsigned)((size + align - 1) / align * align);
		tag->align = (unsigned)align;
	}
}

/* `struct|union|enum [tag] [{ ... }]`; cur is the keyword. */
static void parse_tag_spec(struct parser *ps, struct decl *d)
{
	enum base_kind kind = at_ident(ps, "union") ? B_UNION : at_ident(ps, "enum") ? B_ENUM
										   : B_STRUCT;
	struct token kw = ps->cur, name = { .kind = T_EOF };
	struct tag *tag;

	advance(ps);
	if (ps->cur.kind == T_IDENT) {
		name = ps->cur;
		advance(ps);
	}
	spell_word(&d->spell, kw.start, kw.len);
	if (name.kind == T_IDENT) {
		spell_word(&d->spell, name.start, name.len);
		tag = types_tag(&ps->fe->types, kind, name.start, name.len);
	} else if (at_punct(ps, '{')) {
		sb_puts(&d->spell, " {...}");
		tag = types_tag(&ps->fe->types, kind, NULL, 0);
	} else {
		error_tok(ps, &ps->cur, "expected a name or '{' after '%s'", kind_word(kind));
		d->t.kind = B_UNKNOWN;
		return;
	}
	if (!tag) {
		oom(ps);
		d->t.kind = B_UNKNOWN;
		return;
	}
	if (tag->kind != kind) {
		error_tok(ps, &name, "'%.*s' is a %s, used here as a %s", (int)name.len, name.start,
			  kind_word(tag->kind), kind_word(kind));
		kind = tag->kind;
	}
	if (at_punct(ps, '{')) {
		if (tag->defined && name.kind == T_IDENT) {
			/* Same definition twice is common with split files: harmless. */
			skip_balanced(ps);
		} else if (ps->nest >= MAX_NEST) {
			error_tok(ps, &ps->cur, "declarations nested too deeply");
			skip_balanced(ps);
		} else {
			if (!tag->defined)
				tag->loc = kw.loc;
			ps->nest++;
			if (kind == B_ENUM)
				parse_enum_body(ps, tag);
			else
				parse_struct_body(ps, tag);
			ps->nest--;
		}
	}
	d->t.kind = kind;
	d->t.tag = tag;
	if (kind == B_ENUM) {
		d->t.c_base = "int";
		d->t.size = d->t.align = 4;
		d->t.is_signed = true;
	}
}

static bool count_keyword(const struct token *t, struct int_spec *s)
{
	static const struct {
		const char *kw;
		size_t off;
	} kws[] = {
		{ "char", offsetof(struct int_spec, n_char) },
		{ "short", offsetof(struct int_spec, n_short) },
		{ "int", offsetof(struct int_spec, n_int) },
		{ "long", offsetof(struct int_spec, n_long) },
		{ "signed", offsetof(struct int_spec, n_signed) },
		{ "__signed__", offsetof(struct int_spec, n_signed) },
		{ "unsigned", offsetof(struct int_spec, n_unsigned) },
		{ "float", offsetof(struct int_spec, n_float) },
		{ "double", offsetof(struct int_spec, n_double) },
		{ "void", offsetof(struct int_spec, n_void) },
		{ "_Bool", offsetof(struct int_spec, n_bool) },
	};
	size_t i;

	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (tok_is(t, kws[i].kw)) {
			unsigned *n = (unsigned *)((char *)s + kws[i].off);

			if (*n < 3)
				(*n)++;
			return true;
		}
	}
	return false;
}

/*
 * Declaration specifiers: qualifiers, C keywords, struct/union/enum, or one
 * typedef name. False when there is no type at all (nothing consumed then,
 * unless it was an unknown type name, which is reported).
 */
static bool parse_specs(struct parser *ps, struct decl *d)
{
	struct int_spec is = { 0 };
	struct token first_kw = { .kind = T_EOF };
	bool have_base = false, is_const = false, is_volatile = false, any = false;

	memset(&d->t, 0, sizeof(d->t));
	d->name.kind = T_EOF;
	for (;;) {
		const struct token *t = &ps->cur;
		const struct ctype *td;

		if (t->kind != T_IDENT)
			break;
		if (is_qualifier(t)) {
			if (tok_is(t, "const") || tok_is(t, "__const"))
				is_const = true;
			else if (tok_is(t, "volatile") || tok_is(t, "__volatile__"))
				is_volatile = true;
			spell_word(&d->spell, t->start, t->len);
			advance(ps);
			any = true;
			continue;
		}
		if (!have_base && count_keyword(t, &is)) {
			if (first_kw.kind == T_EOF)
				first_kw = *t;
			spell_word(&d->spell, t->start, t->len);
			advance(ps);
			continue;
		}
		if (have_base || spec_any(&is))
			break;
		if (tok_is(t, "struct") || tok_is(t, "union") || tok_is(t, "enum")) {
			parse_tag_spec(ps, d);
			have_base = true;
			continue;
		}
		td = types_lookup(&ps->fe->types, t->start, t->len);
		if (td) {
			d->t = *td;
			spell_word(&d->spell, t->start, t->len);
			advance(ps);
			have_base = true;
			continue;
		}
		break;
	}
	if (spec_any(&is)) {
		if (!spec_resolve(&is, &d->t)) {
			error_tok(ps, &first_kw, "invalid combination of type specifiers in '%s'",
				  d->spell.s ? d->spell.s : "");
			d->t.kind = B_UNKNOWN;
		}
		have_base = true;
	}
	if (!have_base && any) {
		/* `const x`: C89's implicit int is not D. */
		if (ps->cur.kind == T_IDENT)
			goto unknown;
		error_tok(ps, &ps->cur, "expected a type after '%s'", d->spell.s ? d->spell.s : "");
		d->t.kind = B_UNKNOWN;
		return true;
	}
	if (!have_base) {
		if (ps->cur.kind == T_IDENT && !tok_is(&ps->cur, "probe") &&
		    !tok_is(&ps->cur, "provider"))
			goto unknown;
		return false;
	}
	if (is_volatile && d->t.ptr == 0)
		d->t.base_volatile = true;
	if (is_const) {
		if (d->t.ptr == 0)
			d->t.base_const = true;
		else if (d->t.ptr <= 32)
			d->t.ptr_const |= 1u << (d->t.ptr - 1);
	}
	return true;

unknown:
	error_tok(ps, &ps->cur, "unknown type '%.*s'", (int)ps->cur.len, ps->cur.start);
	if (!ps->macro_note_given && is_skipped_macro(ps, &ps->cur)) {
		ps->macro_note_given = true;
		note_loc(ps, ps->cur.loc,
			 "'%.*s' is a macro: run dtrace with -C so that the preprocessor expands it",
			 (int)ps->cur.len, ps->cur.start);
	}
	spell_word(&d->spell, ps->cur.start, ps->cur.len);
	advance(ps);
	d->t.kind = B_UNKNOWN;
	return true;
}

/* Appends the source text of [from, to) with whitespace runs folded. */
static void spell_source(struct sbuf *b, const char *from, const char *to)
{
	bool space = false;

	for (; from < to; from++) {
		if (*from == ' ' || *from == '\t' || *from == '\n' || *from == '\r') {
			space = true;
			continue;
		}
		if (space && b->len && b->s[b->len - 1] != '(')
			sb_putc(b, ' ');
		space = false;
		sb_putc(b, *from);
	}
}

/*
 * A declarator: pointers with qualifiers, an optional name, array and
 * function suffixes, and the `(*name)(params)` form of function pointers.
 * Parameters (param) decay arrays and functions to pointers, as in C.
 */
static void parse_declarator(struct parser *ps, struct decl *d, bool param)
{
	unsigned fn_ptr = 0;
	bool is_func = false;
	const char *params_from = NULL, *params_to = NULL;
	unsigned long elems = 1;
	unsigned dims = 0;
	char buf[64];

	d->name.kind = T_EOF;
	for (;;) {
		if (at_punct(ps, '*')) {
			if (d->t.ptr >= 32) {
				if (d->t.kind != B_UNKNOWN)
					error_tok(ps, &ps->cur, "too many levels of pointers");
				d->t.kind = B_UNKNOWN;
			} else {
				d->t.ptr++;
			}
			sb_puts(&d->spell, d->spell.len && d->spell.s[d->spell.len - 1] == '*' ? "*"
												 : " *");
			advance(ps);
			continue;
		}
		if (is_qualifier(&ps->cur) && d->t.ptr) {
			if ((tok_is(&ps->cur, "const") || tok_is(&ps->cur, "__const")) &&
			    d->t.ptr <= 32)
				d->t.ptr_const |= 1u << (d->t.ptr - 1);
			spell_word(&d->spell, ps->cur.start, ps->cur.len);
			advance(ps);
			continue;
		}
		break;
	}
	if (ps->cur.kind == T_IDENT && !is_qualifier(&ps->cur)) {
		d->name = ps->cur;
		advance(ps);
	} else if (at_punct(ps, '(')) {
		/* `(*name)(...)` or `(*)(...)`; a bare `(params)` is a function type. */
		struct token open = ps->cur;

		advance(ps);
		while (at_punct(ps, '*')) {
			fn_ptr++;
			advance(ps);
			while (is_qualifier(&ps->cur))
				advance(ps);
		}
		if (fn_ptr) {
			if (ps->cur.kind == T_IDENT) {
				d->name = ps->cur;
				advance(ps);
			}
			if (!at_punct(ps, ')')) {
				error_tok(ps, &ps->cur, "expected ')' in declarator, found %s",
					  tok_desc(&ps->cur, buf, sizeof(buf)));
				d->t.kind = B_UNKNOWN;
				return;
			}
			advance(ps);
			if (!at_punct(ps, '(')) {
				error_tok(ps, &ps->cur,
					  "only pointers to functions may be parenthesised here");
				d->t.kind = B_UNKNOWN;
				return;
			}
		} else {
			/* Rewind is not possible: treat `(` as the function's parameters. */
			params_from = open.start;
			while (ps->cur.kind != T_EOF && !at_punct(ps, ')')) {
				if (at_punct(ps, '(') || at_punct(ps, '[') || at_punct(ps, '{'))
					skip_balanced(ps);
				else if (at_punct(ps, ';') || at_punct(ps, '}'))
					break;
				else
					advance(ps);
			}
			if (!at_punct(ps, ')')) {
				error_tok(ps, &open, "unbalanced '('");
				d->t.kind = B_UNKNOWN;
				return;
			}
			params_to = ps->cur.start + 1;
			advance(ps);
			is_func = true;
		}
	}
	if ((fn_ptr || (d->name.kind == T_IDENT && !is_func)) && at_punct(ps, '(')) {
		params_from = ps->cur.start;
		skip_balanced(ps);
		params_to = ps->prev.start + ps->prev.len;
		is_func = true;
	}
	while (!is_func && at_punct(ps, '[')) {
		struct token open = ps->cur;
		unsigned long n = 0;

		advance(ps);
		if (!parse_ulong(&ps->cur, &n) || n == 0)
			elems = 0;
		else if (elems > 0xffffffffUL / n)
			elems = 0;
		else
			elems *= n;
		/* Array sizes that are expressions: the length is then unknown. */
		while (ps->cur.kind != T_EOF && !at_punct(ps, ']') && !at_punct(ps, ';') &&
		       !at_punct(ps, ')') && !at_punct(ps, '}'))
			advance(ps);
		if (!at_punct(ps, ']')) {
			error_tok(ps, &open, "expected ']' to close the array size");
			d->t.kind = B_UNKNOWN;
			return;
		}
		spell_source(&d->spell, open.start, ps->cur.start + 1);
		advance(ps);
		dims++;
	}
	if (is_func) {
		struct sbuf s = { 0 };

		/* Only pointers to functions travel in registers: spell "(*)(...)". */
		if (d->spell.s)
			sb_puts(&s, d->spell.s);
		if (fn_ptr) {
			unsigned i;

			sb_puts(&s, " (");
			for (i = 0; i < fn_ptr; i++)
				sb_putc(&s, '*');
			sb_putc(&s, ')');
		}
		spell_source(&s, params_from, params_to);
		sb_free(&d->spell);
		d->spell = s;
		/*
		 * A function type (typedef'd, or a parameter, which decays) or a
		 * pointer to one; a pointer to a function pointer is a pointer too.
		 */
		d->t.kind = B_FUNC;
		d->t.c_base = NULL;
		d->t.tag = NULL;
		d->t.array = 0;
		d->t.ptr = fn_ptr > 32 ? 32 : fn_ptr;
		d->t.ptr_const = 0;
		if (param && d->t.ptr == 0)
			d->t.ptr = 1;
		return;
	}
	if (param && d->t.array && d->t.ptr == 0) {
		/* A parameter of array typedef type is a pointer to its element. */
		d->t.array = 0;
		d->t.ptr = 1;
	}
	if (param && d->t.kind == B_FUNC && d->t.ptr == 0)
		d->t.ptr = 1; /* and one of function typedef type a function pointer */
	if (dims) {
		if (param) {
			/* int a[4] is int *a; more dimensions have no simple C spelling. */
			if (dims == 1 && d->t.ptr < 32) {
				d->t.ptr++;
			} else {
				/* A pointer to an array: no C spelling, not a string. */
				d->t.no_c = true;
				d->t.plain_char = false;
				if (d->t.ptr < 32)
					d->t.ptr++;
			}
		} else {
			d->t.array = elems ? (unsigned)(elems > 0xffffffffUL ? 0 : elems) : 0;
			if (!elems) {
				/* Unknown length: the layout is unknown, no C spelling. */
				d->t.kind = B_UNKNOWN;
			}
		}
	}
}

/* `typedef specs declarator, ... ;`; cur is "typedef". */
static void parse_typedef(struct parser *ps)
{
	struct decl base = { 0 };
	size_t first = ps->fe->types.ndefs, i;
	unsigned long quiet_errors = ps->quiet_errors;
	char buf[64];

	advance(ps);
	if (!parse_specs(ps, &base)) {
		error_tok(ps, &ps->cur, "expected a type after 'typedef', found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		sb_free(&base.spell);
		skip_statement(ps);
		return;
	}
	for (;;) {
		struct decl d = base;
		const struct typedef_ent *old;

		d.spell.s = base.spell.s ? strdup(base.spell.s) : NULL;
		d.spell.cap = d.spell.len = d.spell.s ? strlen(d.spell.s) : 0;
		if (d.spell.cap)
			d.spell.cap++;
		parse_declarator(ps, &d, false);
		if (d.name.kind != T_IDENT) {
			error_tok(ps, &ps->cur, "expected a name for the typedef, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			sb_free(&d.spell);
			break;
		}
		old = types_user_typedef(&ps->fe->types, d.name.start, d.name.len);
		if (!old && ps->quiet && types_lookup(&ps->fe->types, d.name.start, d.name.len)) {
			/*
			 * A system header's own definition of a well-known name
			 * (`typedef __uint8_t uint8_t;`): the table's entry is the same
			 * type and keeps the standard spelling in the header's checks.
			 */
		} else if (old) {
			/* C11 allows the same typedef twice; another type is a conflict. */
			if (old->type.kind != d.t.kind || old->type.c_base != d.t.c_base ||
			    old->type.ptr != d.t.ptr || old->type.tag != d.t.tag ||
			    old->type.array != d.t.array || old->type.base_const != d.t.base_const) {
				error_tok(ps, &d.name, "typedef '%.*s' redefined as another type",
					  (int)d.name.len, d.name.start);
				note_loc(ps, old->loc, "previous definition of '%s' was here", old->name);
			}
		} else if (types_add_typedef(&ps->fe->types, d.name.start, d.name.len, &d.t,
					     d.spell.s ? d.spell.s : "", d.name.loc)) {
			oom(ps);
		}
		sb_free(&d.spell);
		if (!at_punct(ps, ','))
			break;
		advance(ps);
	}
	sb_free(&base.spell);
	if (at_punct(ps, ';')) {
		advance(ps);
	} else {
		error_after_prev(ps, "expected ';' after typedef");
		skip_statement(ps);
	}
	/*
	 * A system header's typedef not fully read (`typedef int register_t
	 * __attribute__((__mode__(__word__)));` is not an int) is left
	 * unchecked: a probe may use it, and the header does not check it.
	 */
	if (ps->quiet_errors != quiet_errors)
		for (i = first; i < ps->fe->types.ndefs; i++)
			ps->fe->types.defs[i].type.kind = B_UNKNOWN;
}

/* ---- providers and probes ------------------------------------------------- */

struct arglist {
	struct usdt_arg *v;
	const char **line_text; /* of each argument, for diagnostics */
	size_t n, cap, capl;
	bool too_many; /* reported */
};

static void free_arg(struct usdt_arg *a)
{
	free(a->name);
	free(a->type.spelling);
	free(a->type.c_spelling);
}

static void free_arglist(struct arglist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free_arg(&l->v[i]);
	free(l->v);
	free(l->line_text);
	memset(l, 0, sizeof(*l));
}

/* `(params)`; cur is '('. Returns false after a syntax error. */
static bool parse_params(struct parser *ps, struct arglist *l, const char *probe)
{
	struct token open = ps->cur;
	char buf[64];
	bool ok = true;

	advance(ps);
	if (at_punct(ps, ')')) {
		advance(ps);
		return true;
	}
	for (;;) {
		struct decl d = { 0 };
		struct usdt_arg *a;
		struct token start = ps->cur;

		if (ps->cur.kind == T_PUNCT && ps->cur.len == 3) {
			error_tok(ps, &ps->cur,
				  "probe '%s' has a variable argument list ('...'): probes take "
				  "a fixed list",
				  probe);
			advance(ps);
			ok = false;
		} else if (!parse_specs(ps, &d)) {
			error_tok(ps, &ps->cur, "expected a parameter type, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			sb_free(&d.spell);
			ok = false;
		} else {
			parse_declarator(ps, &d, true);
			if (l->n >= USDT_MAX_ARGS) {
				if (!l->too_many)
					error_tok(ps, &start,
						  "probe '%s' has more than %d arguments", probe,
						  USDT_MAX_ARGS);
				l->too_many = true;
				ok = false;
			} else if (fe_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) ||
				   fe_grow((void **)&l->line_text, &l->capl, l->n,
					   sizeof(*l->line_text))) {
				oom(ps);
			} else {
				a = &l->v[l->n];
				memset(a, 0, sizeof(*a));
				a->loc = start.loc;
				l->line_text[l->n] = start.line_text;
				if (types_to_model(&d.t, d.spell.s ? d.spell.s : "", &a->type) ||
				    (d.name.kind == T_IDENT && !(a->name = tok_dup(&d.name)))) {
					free_arg(a);
					oom(ps);
				} else {
					/* Remember void (not void *) for the check below. */
					if (d.t.kind == B_VOID && d.t.ptr == 0)
						a->type.size = (unsigned)-1;
					l->n++;
				}
			}
			sb_free(&d.spell);
		}
		if (at_punct(ps, ',')) {
			advance(ps);
			continue;
		}
		if (at_punct(ps, ')')) {
			advance(ps);
			break;
		}
		if (ok)
			error_tok(ps, &ps->cur, "expected ',' or ')' in the parameters of '%s', found %s",
				  probe, tok_desc(&ps->cur, buf, sizeof(buf)));
		ok = false;
		/* Recover: the rest of this list, not beyond the statement. */
		while (ps->cur.kind != T_EOF && !at_punct(ps, ')') && !at_punct(ps, ';') &&
		       !at_punct(ps, '}')) {
			if (at_punct(ps, '(') || at_punct(ps, '['))
				skip_balanced(ps);
			else
				advance(ps);
		}
		if (at_punct(ps, ')'))
			advance(ps);
		else if (ps->cur.kind == T_EOF)
			error_tok(ps, &open, "unbalanced '(': no matching ')'");
		break;
	}

	/* void: alone and unnamed it means "no arguments"; anywhere else an error. */
	{
		size_t i;

		for (i = 0; i < l->n; i++) {
			if (l->v[i].type.size != (unsigned)-1)
				continue;
			if (l->n == 1 && !l->v[i].name) {
				free_arglist(l);
				break;
			}
			error_loc(ps, l->v[i].loc, l->line_text[i],
				  "'void' must be the only parameter of probe '%s' and unnamed", probe);
			l->v[i].type.size = 0;
			ok = false;
		}
	}
	return ok;
}

/*
 * Two argument types are the same when spelled alike, or when C sees the
 * same type (`char const *` and `const char *`, a typedef and its base) -
 * except the catch-all for pointers to .d-only types, which says nothing.
 */
static bool same_type(const struct usdt_type *a, const struct usdt_type *b)
{
	if (strcmp(a->spelling, b->spelling) == 0)
		return true;
	return a->c_spelling && b->c_spelling && strcmp(a->c_spelling, b->c_spelling) == 0 &&
	       strcmp(a->c_spelling, "const volatile void *") != 0;
}

static bool same_signature(const struct usdt_probe *a, const struct usdt_probe *b)
{
	size_t i;

	if (a->nargs != b->nargs || a->nxargs != b->nxargs)
		return false;
	for (i = 0; i < a->nargs; i++)
		if (!same_type(&a->args[i].type, &b->args[i].type))
			return false;
	for (i = 0; i < a->nxargs; i++)
		if (!same_type(&a->xargs[i].type, &b->xargs[i].type) ||
		    a->argmap[i] != b->argmap[i])
			return false;
	return true;
}

/* Do two probe names give the same header macro (`a__b` and `A_B` do)? */
static bool same_macro(const char *a, const char *b)
{
	for (;;) {
		int ca = fe_macro_char(&a), cb = fe_macro_char(&b);

		if (ca != cb)
			return false;
		if (!ca)
			return true;
	}
}

static void free_probe(struct usdt_probe *p)
{
	size_t i;

	free(p->name);
	for (i = 0; i < p->nargs; i++)
		free_arg(&p->args[i]);
	free(p->args);
	for (i = 0; i < p->nxargs; i++)
		free_arg(&p->xargs[i]);
	free(p->xargs);
	free(p->argmap);
}

static int copy_arg(struct usdt_arg *dst, const struct usdt_arg *src)
{
	*dst = *src;
	dst->name = src->name ? strdup(src->name) : NULL;
	dst->type.spelling = strdup(src->type.spelling);
	dst->type.c_spelling = src->type.c_spelling ? strdup(src->type.c_spelling) : NULL;
	if ((src->name && !dst->name) || !dst->type.spelling ||
	    (src->type.c_spelling && !dst->type.c_spelling)) {
		free_arg(dst);
		return -1;
	}
	return 0;
}

/*
 * Builds the translated side of a probe: by name from `xl`, or a copy of the
 * native list when there is none. Returns false after reporting errors.
 */
static bool map_args(struct parser *ps, struct usdt_probe *p, struct arglist *xl, bool has_x)
{
	bool ok = true;
	size_t i, j, n = has_x ? xl->n : p->nargs;

	p->argmap = calloc(n ? n : 1, 1);
	if (!p->argmap) {
		oom(ps);
		return false;
	}
	if (!has_x) {
		p->xargs = calloc(n ? n : 1, sizeof(*p->xargs));
		if (!p->xargs) {
			oom(ps);
			return false;
		}
		for (i = 0; i < n; i++) {
			if (copy_arg(&p->xargs[i], &p->args[i])) {
				oom(ps);
				return false;
			}
			p->nxargs++;
			p->argmap[i] = (unsigned char)i;
		}
		return true;
	}
	for (i = 0; i < n; i++) {
		const struct usdt_arg *x = &xl->v[i];

		if (!x->name) {
			error_loc(ps, x->loc, xl->line_text[i],
				  "translated argument #%zu of probe '%s' has no name: translated "
				  "arguments are matched to native ones by name",
				  i + 1, p->name);
			ok = false;
			continue;
		}
		for (j = 0; j < p->nargs; j++)
			if (p->args[j].name && strcmp(p->args[j].name, x->name) == 0)
				break;
		if (j == p->nargs) {
			error_loc(ps, x->loc, xl->line_text[i],
				  "translated argument '%s' of probe '%s' is not declared in its "
				  "native argument list",
				  x->name, p->name);
			ok = false;
			continue;
		}
		p->argmap[i] = (unsigned char)j;
	}
	/* The list moves into the probe as it is. */
	p->xargs = xl->v;
	p->nxargs = xl->n;
	xl->v = NULL;
	xl->n = 0;
	return ok;
}

static struct usdt_provider *add_provider(struct parser *ps, const struct token *name)
{
	struct usdt_program *prog = ps->prog;
	struct usdt_provider *pv;
	size_t i, k;

	if (fe_grow_pow2((void **)&prog->providers, prog->nproviders, sizeof(*prog->providers))) {
		oom(ps);
		return NULL;
	}
	pv = &prog->providers[prog->nproviders];
	memset(pv, 0, sizeof(*pv));
	pv->name = tok_dup(name);
	if (!pv->name) {
		oom(ps);
		return NULL;
	}
	pv->loc = name->loc;
	for (i = 0; i < USDT_ATTR_COUNT; i++) {
		pv->attr[i].name_stab = USDT_STAB_PRIVATE;
		pv->attr[i].data_stab = USDT_STAB_PRIVATE;
		pv->attr[i].dep_class = USDT_CLASS_UNKNOWN;
	}
	prog->nproviders++;
	/* Pragmas that named it before it existed, in their order. */
	for (i = k = 0; i < ps->fe->npending; i++) {
		struct pending_attr *pa = &ps->fe->pending[i];

		if (strcmp(pa->provider, pv->name) == 0) {
			apply_attr(&pv->attr[pa->which], &pa->attr, pa->mask);
			free(pa->provider);
		} else {
			ps->fe->pending[k++] = *pa;
		}
	}
	ps->fe->npending = k;
	return pv;
}

static void check_provider_name(struct parser *ps, const struct token *name)
{
	if (name->len > MAX_PROVIDER_NAME)
		error_tok(ps, name,
			  "provider name '%.*s' is too long: %zu characters, at most %d (the "
			  "tracefs group sdt_<provider> holds 63)",
			  (int)name->len, name->start, name->len, MAX_PROVIDER_NAME);
	if (name->start[name->len - 1] >= '0' && name->start[name->len - 1] <= '9')
		error_tok(ps, name,
			  "provider name '%.*s' may not end with a digit (DTrace appends the "
			  "process ID to it)",
			  (int)name->len, name->start);
}

/* Hash of a probe's macro name within provider #pi ("a__b" and "A_B" hash alike). */
static unsigned long macro_hash(size_t pi, const char *name)
{
	unsigned long h = 2166136261u ^ (unsigned long)pi;
	int c;

	while ((c = fe_macro_char(&name)) != 0)
		h = (h ^ (unsigned long)c) * 16777619u;
	return h;
}

static int index_grow(struct front *fe)
{
	size_t n = fe->nslots ? fe->nslots * 2 : 64, i;
	struct probe_slot *slots = malloc(n * sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < n; i++)
		slots[i].probe = SIZE_MAX;
	for (i = 0; i < fe->nslots; i++) {
		size_t j = fe->slots[i].hash & (n - 1);

		if (fe->slots[i].probe == SIZE_MAX)
			continue;
		while (slots[j].probe != SIZE_MAX)
			j = (j + 1) & (n - 1);
		slots[j] = fe->slots[i];
	}
	free(fe->slots);
	fe->slots = slots;
	fe->nslots = n;
	return 0;
}

/* Adds a parsed probe to provider #pi, or checks it against its namesake. */
static void add_probe(struct parser *ps, size_t pi, struct usdt_probe *p,
		      const struct token *name)
{
	struct usdt_provider *pv = &ps->prog->providers[pi];
	struct front *fe = ps->fe;
	unsigned long h = macro_hash(pi, p->name);
	size_t j;

	if ((fe->nused + 1) * 2 > fe->nslots && index_grow(fe)) {
		free_probe(p);
		oom(ps);
		return;
	}
	for (j = h & (fe->nslots - 1); fe->slots[j].probe != SIZE_MAX; j = (j + 1) & (fe->nslots - 1)) {
		struct usdt_probe *o;

		if (fe->slots[j].hash != h || fe->slots[j].provider != pi)
			continue;
		o = &pv->probes[fe->slots[j].probe];
		if (strcmp(o->name, p->name) == 0) {
			if (fe->slots[j].block == ps->block) {
				/* DTrace: "probe redeclared"; a slip, never a split file. */
				error_tok(ps, name,
					  "probe '%s' of provider '%s' redeclared in the same "
					  "provider block",
					  p->name, pv->name);
				note_loc(ps, fe->slots[j].block_loc,
					 "previous declaration of '%s' was here", o->name);
			} else if (!same_signature(o, p)) {
				error_tok(ps, name,
					  "probe '%s' of provider '%s' redeclared with another "
					  "signature",
					  p->name, pv->name);
				note_loc(ps, o->loc, "previous declaration of '%s' was here", o->name);
			}
			fe->slots[j].block = ps->block;
			fe->slots[j].block_loc = p->loc;
			free_probe(p);
			return;
		}
		if (same_macro(o->name, p->name)) {
			error_tok(ps, name,
				  "probes '%s' and '%s' of provider '%s' would have the same macro "
				  "name in the header",
				  o->name, p->name, pv->name);
			note_loc(ps, o->loc, "'%s' was declared here", o->name);
			break;
		}
	}
	if (fe_grow_pow2((void **)&pv->probes, pv->nprobes, sizeof(*pv->probes))) {
		free_probe(p);
		oom(ps);
		return;
	}
	/* A colliding probe is kept in the model (never dropped) but not indexed twice. */
	if (fe->slots[j].probe == SIZE_MAX) {
		fe->slots[j].provider = pi;
		fe->slots[j].probe = pv->nprobes;
		fe->slots[j].hash = h;
		fe->slots[j].block = ps->block;
		fe->slots[j].block_loc = p->loc;
		fe->nused++;
	}
	pv->probes[pv->nprobes++] = *p;
}

/*
 * Native parameter names must be distinct (DTrace: "parameter is already
 * declared"): translated arguments are found by them.
 */
static void check_unique_names(struct parser *ps, const struct arglist *l, const char *probe)
{
	size_t i, j;

	for (i = 1; i < l->n; i++) {
		if (!l->v[i].name)
			continue;
		for (j = 0; j < i; j++) {
			if (l->v[j].name && strcmp(l->v[i].name, l->v[j].name) == 0) {
				error_loc(ps, l->v[i].loc, l->line_text[i],
					  "parameter '%s' of probe '%s' is already declared as "
					  "argument #%zu",
					  l->v[i].name, probe, j + 1);
				break;
			}
		}
	}
}

/* `probe name(params) [: (params)];`; cur is "probe". */
static void parse_probe(struct parser *ps, size_t pi)
{
	struct arglist nl = { 0 }, xl = { 0 };
	struct usdt_probe p = { 0 };
	struct token name;
	bool has_x = false;
	char buf[64];

	advance(ps);
	if (ps->cur.kind != T_IDENT) {
		error_tok(ps, &ps->cur, "expected a probe name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		skip_statement(ps);
		return;
	}
	name = ps->cur;
	advance(ps);
	p.name = tok_dup(&name);
	if (!p.name) {
		oom(ps);
		return;
	}
	p.loc = name.loc;
	if (name.len > USDT_MAX_NAME)
		error_tok(ps, &name, "probe name '%s' is too long: %zu characters, at most %d",
			  p.name, name.len, USDT_MAX_NAME);
	if (!at_punct(ps, '(')) {
		error_tok(ps, &ps->cur, "expected '(' after probe name '%s', found %s", p.name,
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		free(p.name);
		skip_statement(ps);
		return;
	}
	parse_params(ps, &nl, p.name);
	check_unique_names(ps, &nl, p.name);
	if (at_punct(ps, ':')) {
		advance(ps);
		if (at_punct(ps, '(')) {
			has_x = true;
			parse_params(ps, &xl, p.name);
		} else {
			error_tok(ps, &ps->cur,
				  "expected '(' to open the translated arguments of '%s', found %s",
				  p.name, tok_desc(&ps->cur, buf, sizeof(buf)));
		}
	}
	p.args = nl.v;
	p.nargs = nl.n;
	free(nl.line_text);
	map_args(ps, &p, &xl, has_x);
	free_arglist(&xl);
	if (ps->oom) {
		free_probe(&p);
		return;
	}
	add_probe(ps, pi, &p, &name);
	if (at_punct(ps, ';')) {
		advance(ps);
	} else {
		error_after_prev(ps, "expected ';' after the declaration of probe '%.*s'",
				 (int)name.len, name.start);
		/* A missing ';' before the next probe or '}' needs no skipping. */
		if (!at_ident(ps, "probe") && !at_punct(ps, '}'))
			skip_statement(ps);
	}
}

/* `provider NAME { probes };`; cur is "provider". */
static void parse_provider(struct parser *ps)
{
	struct token name, open;
	struct usdt_provider *pv;
	size_t pi;
	char buf[64];

	advance(ps);
	if (ps->cur.kind != T_IDENT) {
		error_tok(ps, &ps->cur, "expected a provider name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		skip_statement(ps);
		return;
	}
	name = ps->cur;
	advance(ps);
	pv = find_provider(ps->prog, name.start, name.len);
	if (!pv) {
		check_provider_name(ps, &name);
		pv = add_provider(ps, &name);
		if (!pv)
			return;
	}
	pi = (size_t)(pv - ps->prog->providers);
	if (!at_punct(ps, '{')) {
		error_tok(ps, &ps->cur, "expected '{' after provider name '%.*s', found %s",
			  (int)name.len, name.start, tok_desc(&ps->cur, buf, sizeof(buf)));
		skip_statement(ps);
		return;
	}
	open = ps->cur;
	advance(ps);
	ps->block = ++ps->fe->nblocks;
	for (;;) {
		if (ps->oom)
			return;
		if (ps->cur.kind == T_EOF) {
			error_tok(ps, &open, "provider '%.*s' is not closed: expected '}'",
				  (int)name.len, name.start);
			return;
		}
		if (at_punct(ps, '}')) {
			advance(ps);
			break;
		}
		if (at_punct(ps, ';')) {
			advance(ps);
			continue;
		}
		if (at_ident(ps, "probe")) {
			parse_probe(ps, pi);
			continue;
		}
		error_tok(ps, &ps->cur, "expected 'probe' or '}' in provider '%.*s', found %s",
			  (int)name.len, name.start, tok_desc(&ps->cur, buf, sizeof(buf)));
		/* Resynchronise at the next probe, ';' or '}': no probe is lost. */
		do {
			if (at_punct(ps, '(') || at_punct(ps, '[') || at_punct(ps, '{'))
				skip_balanced(ps);
			else
				advance(ps);
		} while (ps->cur.kind != T_EOF && !at_ident(ps, "probe") && !at_punct(ps, ';') &&
			 !at_punct(ps, '}'));
		if (at_punct(ps, ';'))
			advance(ps);
	}
	if (at_punct(ps, ';'))
		advance(ps);
	else
		error_after_prev(ps, "expected ';' after the definition of provider '%.*s'",
				 (int)name.len, name.start);
}

/* ---- consumer-side D, skipped ---------------------------------------------- */

/*
 * A probe clause: descriptions (`syscall::read:entry`, `BEGIN`, `profile-97`,
 * separated by commas), an optional /predicate/ and a { body }. Two words in
 * a row cannot start one, which catches a misspelt `provider`.
 */
static void skip_clause(struct parser *ps)
{
	struct token start = ps->cur;
	bool word = false, in_pred = false;

	while (ps->cur.kind != T_EOF) {
		if (at_punct(ps, '{')) {
			skip_balanced(ps);
			if (at_punct(ps, ';'))
				advance(ps);
			return;
		}
		if (at_punct(ps, ';')) {
			advance(ps);
			return;
		}
		if (at_punct(ps, '}') && !in_pred) {
			error_tok(ps, &ps->cur, "unexpected '}'");
			advance(ps);
			return;
		}
		if (at_punct(ps, '/'))
			in_pred = true;
		if (!in_pred && word && (ps->cur.kind == T_IDENT)) {
			error_tok(ps, &start,
				  "expected 'provider', a declaration or a probe clause, found '%.*s'",
				  (int)start.len, start.start);
			skip_statement(ps);
			return;
		}
		word = ps->cur.kind == T_IDENT || ps->cur.kind == T_NUMBER;
		if (in_pred && (at_punct(ps, '(') || at_punct(ps, '[')))
			skip_balanced(ps);
		else
			advance(ps);
	}
}

/* `translator out < in x > { ... };` */
static void skip_translator(struct parser *ps)
{
	while (ps->cur.kind != T_EOF && !at_punct(ps, '{') && !at_punct(ps, ';')) {
		advance(ps);
	}
	if (at_punct(ps, '{'))
		skip_balanced(ps);
	if (at_punct(ps, ';'))
		advance(ps);
}

static bool starts_d_declaration(const struct parser *ps)
{
	static const char *const words[] = {
		"extern", "static", "register", "self", "this", "const", "volatile", "signed",
		"unsigned", "short", "long", "int", "char", "float", "double", "void", "_Bool",
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (at_ident(ps, words[i]))
			return true;
	return types_lookup(&ps->fe->types, ps->cur.start, ps->cur.len) != NULL;
}

/* `struct x { ... } [declarators];` and friends at file scope. */
static void parse_tag_declaration(struct parser *ps)
{
	struct decl d = { 0 };

	parse_specs(ps, &d);
	sb_free(&d.spell);
	/* Declarators here would be D variables: the consumer's business. */
	if (at_punct(ps, ';'))
		advance(ps);
	else if (ps->cur.kind == T_IDENT || at_punct(ps, '*'))
		skip_statement(ps);
	else
		error_after_prev(ps, "expected ';' after the %s definition", "type");
}

/*
 * Skips one C declaration or function definition: up to a ';' at bracket
 * depth 0, or the body of a function (a '{' group right after a ')', as in
 * `int f(int x) __attribute__((pure)) { ... }`), whichever comes first.
 * Stops where system-header text ends, so the .d itself is never skipped.
 */
static void skip_c_declaration(struct parser *ps)
{
	bool after_paren = false;

	while (ps->cur.kind != T_EOF && ps->cur.sys) {
		if (at_punct(ps, ';')) {
			advance(ps);
			return;
		}
		if (at_punct(ps, '{')) {
			skip_balanced(ps);
			if (after_paren)
				return;
			continue;
		}
		after_paren = at_punct(ps, '(');
		if (after_paren || at_punct(ps, '['))
			skip_balanced(ps);
		else
			advance(ps); /* a stray closer included */
	}
}

/*
 * A declaration from a system header (`#include <sys/types.h>`, run through
 * cpp): glibc's C, with GNU extensions (`__extension__`, `__attribute__`,
 * inline functions, array sizes computed with sizeof) that a .d never needs
 * and this parser does not read. Typedefs and struct/union/enum definitions
 * are read for the types a probe may name (`socklen_t`, `struct timeval *`),
 * without reporting anything (parse_typedef() leaves a typedef it could not
 * fully read unchecked). Functions and variables are skipped. (SystemTap's
 * tool skips every non-provider text alike.)
 */
static void sys_declaration(struct parser *ps)
{
	ps->quiet++;
	while (at_ident(ps, "__extension__"))
		advance(ps);
	if (at_ident(ps, "typedef"))
		parse_typedef(ps);
	else if (at_ident(ps, "struct") || at_ident(ps, "union") || at_ident(ps, "enum"))
		parse_tag_declaration(ps);
	else
		skip_c_declaration(ps);
	ps->quiet--;
}

static void parse_top(struct parser *ps)
{
	char buf[64];

	while (ps->cur.kind != T_EOF && !ps->oom) {
		if (ps->cur.kind == T_EOL || at_punct(ps, ';')) {
			advance(ps);
		} else if (ps->cur.sys && !at_ident(ps, "provider")) {
			sys_declaration(ps);
		} else if (at_ident(ps, "provider")) {
			parse_provider(ps);
		} else if (at_ident(ps, "typedef")) {
			parse_typedef(ps);
		} else if (at_ident(ps, "struct") || at_ident(ps, "union") || at_ident(ps, "enum")) {
			parse_tag_declaration(ps);
		} else if (at_ident(ps, "translator")) {
			skip_translator(ps);
		} else if (at_ident(ps, "inline")) {
			skip_statement_to(ps, true);
		} else if (at_ident(ps, "probe")) {
			error_tok(ps, &ps->cur, "probe declared outside a provider");
			skip_statement(ps);
		} else if (ps->cur.kind == T_IDENT && starts_d_declaration(ps)) {
			skip_statement_to(ps, true);
		} else if (ps->cur.kind == T_IDENT || at_punct(ps, ':') || at_punct(ps, '*') ||
			   at_punct(ps, '$') || at_punct(ps, '?') || at_punct(ps, '[') ||
			   at_punct(ps, '-')) {
			skip_clause(ps);
		} else {
			error_tok(ps, &ps->cur, "unexpected %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			if (at_punct(ps, '{') || at_punct(ps, '(') || at_punct(ps, '['))
				skip_balanced(ps);
			else
				advance(ps);
		}
	}
}

/* ---- entry point and state ----------------------------------------------- */

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

void fe_free(struct front *fe)
{
	size_t i;

	if (!fe)
		return;
	types_free(&fe->types);
	free(fe->slots);
	for (i = 0; i < fe->nstrings; i++)
		free(fe->strings[i]);
	free(fe->strings);
	for (i = 0; i < fe->npending; i++)
		free(fe->pending[i].provider);
	free(fe->pending);
	free(fe);
}

int usdt_parse(struct usdt_program *prog, const char *file, const char *text, size_t len,
	       struct usdt_diag *diag)
{
	struct parser ps;
	unsigned errors = diag->errors;
	char *copy;
	size_t i;

	if (!prog->priv) {
		prog->priv = calloc(1, sizeof(struct front));
		if (!prog->priv) {
			usdt_error(diag, "out of memory");
			return -1;
		}
	}
	memset(&ps, 0, sizeof(ps));
	ps.prog = prog;
	ps.fe = prog->priv;
	ps.diag = diag;
	file = fe_intern(ps.fe, file ? file : "<input>", strlen(file ? file : "<input>"));
	/* A NUL-terminated copy: diagnostics print source lines with str*(). */
	copy = malloc(len + 1);
	if (!file || !copy) {
		free(copy);
		usdt_error(diag, "out of memory");
		return -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	lex_init(&ps.lx, file, copy, len, diag);
	advance(&ps);
	parse_top(&ps);
	for (i = 0; i < ps.nmacros; i++)
		free(ps.macros[i]);
	free(ps.macros);
	free(copy);
	return diag->errors != errors || ps.oom ? -1 : 0;
}
