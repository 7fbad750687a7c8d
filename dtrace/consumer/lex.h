/* SPDX-License-Identifier: MIT */
/* The D lexer (lex.c), for the parser. */
#ifndef DT_LEX_H
#define DT_LEX_H

#include "d.h"

enum dt_tok { T_EOF, T_ERROR, T_INT, T_STR, T_IDENT, T_AGG, T_OP };

struct dt_lex {
	const struct dt_src *src;
	const char *p;
	unsigned line;
	const char *line_start;
	struct dt_consumer_opts *o;
	struct usdt_diag *diag;
	bool err;
	/* the current token */
	int tok;
	char op[4];
	char *text; /* identifier, aggregation name, string (owned) */
	size_t len;
	int64_t ival;
	unsigned isize; /* an integer constant's type (C's rules): 4 or 8 bytes */
	bool iuns;
	struct dt_pos pos;
	/* `#pragma D attributes A/B/C name`: the name, for the parser to find declared */
	char attr_name[64];
	struct dt_pos attr_pos;
};

void dt_lex_init(struct dt_lex *lx, const struct dt_src *src, struct dt_consumer_opts *o,
		 struct usdt_diag *diag);
int dt_lex_next(struct dt_lex *lx);
/* Skips blanks, comments and '#' lines; false at the end of the text. */
bool dt_lex_skip(struct dt_lex *lx);
/* A probe description read raw, macros expanded; NULL when none is there. */
char *dt_lex_pdesc(struct dt_lex *lx, struct dt_pos *pos);
struct dt_pos dt_lex_here(const struct dt_lex *lx);
bool dt_lex_is(const struct dt_lex *lx, const char *op);
bool dt_lex_is_word(const struct dt_lex *lx, const char *w);

#endif /* DT_LEX_H */
