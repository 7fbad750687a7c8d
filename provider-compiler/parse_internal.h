/* SPDX-License-Identifier: MIT */
/*
 * What the parser's files (parser.c, parse_*.c) share: the parser's state,
 * a declaration being parsed, a parameter list being parsed, and the
 * functions one file defines for another. Private to the parser: front.h
 * is the front end's interface, usdt_provider.h the model's.
 */
#ifndef USDT_PARSE_INTERNAL_H
#define USDT_PARSE_INTERNAL_H

#include "front.h"

/* The state of one usdt_parse() call. */
struct parser {
	struct lexer lx;
	struct token cur;
	struct token prev; /* the last token consumed */
	struct usdt_program *prog;
	struct front *fe;
	struct usdt_diag *diag;
	unsigned nest;
	unsigned long block; /* the `provider { }` block being read: fe->nblocks */
	bool in_directive;   /* directive_line() is reading a directive's tokens */
	/*
	 * Reads a directive line (cur is its '#'): parse_directive.c's
	 * directive_line(), set by usdt_parse(). The stream below the grammar
	 * calls it through this pointer, never by name.
	 */
	void (*directive)(struct parser *ps);
	unsigned nerrors;
	bool stop; /* too many errors */
	bool oom;
	unsigned quiet;		    /* reading a system header: errors are not reported */
	unsigned long quiet_errors; /* but counted */
	bool cpp_hint_given;	    /* the "pass -C" advice is given once per source */
	bool macro_note_given;
	/* Macro names of skipped #defines, to explain unknown types. */
	char **macros;
	size_t nmacros, capmacros;
};

/* A declaration's type while it is parsed: resolved type + spelling. */
struct decl {
	struct ctype t;
	struct usdt_sbuf spell;
	struct token name; /* kind T_EOF when abstract */
};

/* A parameter list while it is parsed, before it moves into a probe. */
struct arglist {
	struct usdt_arg *v;
	const char **line_text; /* of each argument, for diagnostics */
	size_t n, cap, capl;
	bool too_many; /* reported */
};

/* ---- token stream, diagnostics, recovery (parse_stream.c) ---------------- */

/* Consumes the current token, reading any directive lines that follow. */
void advance(struct parser *ps);

/* Is the current token the punctuator c? */
static inline bool at_punct(const struct parser *ps, char c)
{
	return tok_punct(&ps->cur, c);
}

/* Is the current token the identifier s? */
static inline bool at_ident(const struct parser *ps, const char *s)
{
	return tok_is(&ps->cur, s);
}

/* An error at token t. */
void USDT_PRINTF(3, 4) error_tok(struct parser *ps, const struct token *t, const char *fmt, ...);
/* An error at loc, showing line_text. */
void USDT_PRINTF(4, 5)
    error_loc(struct parser *ps, struct usdt_loc loc, const char *line_text, const char *fmt, ...);
/* A note that follows an error (none once the error limit is reached). */
void USDT_PRINTF(3, 4) note_loc(struct parser *ps, struct usdt_loc loc, const char *fmt, ...);
/* An error just after the previous token: where a missing ';' belongs. */
void USDT_PRINTF(2, 3) error_after_prev(struct parser *ps, const char *fmt, ...);
/* Reports running out of memory (once) and stops the parse. */
void oom(struct parser *ps);
/* How a token reads in a message: 'x', or "end of file"; buf holds it if needed. */
const char *tok_desc(const struct token *t, char *buf, size_t n);
/* The token's text, allocated; NULL when out of memory. */
char *tok_dup(const struct token *t);
/* A number token's value (integer suffixes allowed); false when it is none. */
bool parse_ulong(const struct token *t, unsigned long *v);
/* Skips the bracketed group opened by the current token. */
void skip_balanced(struct parser *ps);
/* Skips past the next ';' at depth 0, stopping before '}' or 'provider' (reported if report). */
void skip_statement_to(struct parser *ps, bool report);
/* skip_statement_to() without reporting a 'provider' met. */
void skip_statement(struct parser *ps);

/* ---- directives (parse_directive.c) -------------------------------------- */

/* Reads a directive line: cur is its '#'; returns with cur after its end. */
void directive_line(struct parser *ps);
/* Is t the name of a macro a skipped #define defined? */
bool is_skipped_macro(const struct parser *ps, const struct token *t);

/* ---- declarations (parse_decl.c) ----------------------------------------- */

/* Declaration specifiers into d; false when there is no type at all. */
bool parse_specs(struct parser *ps, struct decl *d);
/* A declarator applied to d's type; param: decay arrays and functions to pointers. */
void parse_declarator(struct parser *ps, struct decl *d, bool param);
/* `typedef specs declarator, ... ;`; cur is "typedef". */
void parse_typedef(struct parser *ps);
/* `struct x { ... } [declarators];` and friends at file scope. */
void parse_tag_declaration(struct parser *ps);

/* ---- providers and probes (parse_provider.c, parse_merge.c) -------------- */

/* `provider NAME { probes };`; cur is "provider". */
void parse_provider(struct parser *ps);
/* The provider of that name in the model, or NULL. */
struct usdt_provider *find_provider(struct usdt_program *prog, const char *name, size_t len);
/* Copies the parts of src that mask selects (bits 0-2: name, data, class) into dst. */
void apply_attr(struct usdt_attr *dst, const struct usdt_attr *src, unsigned mask);
/* Adds a provider with default and pending attributes; NULL when out of memory. */
struct usdt_provider *add_provider(struct parser *ps, const struct token *name);
/* Frees what an argument owns. */
void free_arg(struct usdt_arg *a);
/* Frees what a probe owns. */
void free_probe(struct usdt_probe *p);
/* p's translated side: xl moved into p, or a copy of its native list; false after errors. */
bool map_args(struct parser *ps, struct usdt_probe *p, struct arglist *xl, bool has_x);
/* Adds a parsed probe to provider #pi (taking p), or checks it against its namesake. */
void add_probe(struct parser *ps, size_t pi, struct usdt_probe *p, const struct token *name);

#endif /* USDT_PARSE_INTERNAL_H */
