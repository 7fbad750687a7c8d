/* SPDX-License-Identifier: MIT */
/*
 * The D parser: clauses (`descriptions [/predicate/] { statements }`),
 * declarations, and C's expressions with D's additions (`@agg[keys] =
 * fn()`, `self->x`, `this->x`, `args[N]`, `^^`, string literals).
 *
 * Theory. The parser only builds the tree; what a name means (a builtin, a
 * global, a subroutine) is decided by the checks (check*.c) and the engine, where its
 * type is known. Declarations (`self int x;`, `typedef`, `struct`, `enum`)
 * are kept in prog->decls for the engine to type by (parse_decl.c reads
 * them); `inline` constants and enumerators are kept and substituted, an
 * inline as a cast to its type. A struct variable's member `s.m` becomes
 * the variable "s.m" of the member's type. The end of a predicate is the
 * one thing C's grammar does not say: a `/` outside parentheses followed by
 * `{`, `;` or the end of the text closes it (as DTrace's lexer decides).
 * Every error names the file, line and column and the construct.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlib.h"
#include "parse.h"

#define next dt_parse_next
#define expect dt_parse_expect
#define tok_desc dt_parse_tok_desc
#define node dt_parse_node
#define expr dt_parse_expr
#define fail dt_parse_fail

/* ---- statements and clauses ---- */

static struct dt_stmt *statement(struct parser *ps);

static void block(struct parser *ps, struct dt_stmt ***v, size_t *n)
{
	if (dt_lex_is(&ps->lx, "{")) {
		next(ps);
		while (!ps->failed && !dt_lex_is(&ps->lx, "}")) {
			struct dt_stmt *s;

			if (ps->lx.tok == T_EOF) {
				fail(ps, &ps->lx.pos, "expected '}' to close the clause, found %s",
				     tok_desc(ps));
				return;
			}
			s = statement(ps);
			if (s)
				DT_PUSH(*v, *n, s);
		}
		next(ps);
		return;
	}
	{
		struct dt_stmt *s = statement(ps);

		if (s)
			DT_PUSH(*v, *n, s);
	}
}

/* base.m: a member variable of its own ("v.m"), or '.' of memory (N_MEMBER). */
static struct dt_node *member_of(struct parser *ps, const struct dt_node *base, const char *m)
{
	struct dt_node *n = dt_xmalloc(sizeof(*n));
	char *flat = NULL;

	memset(n, 0, sizeof(*n));
	n->pos = base->pos;
	if ((base->kind == N_IDENT || base->kind == N_SELF || base->kind == N_THIS) &&
	    !dt_parse_member(ps,
			     base->kind == N_IDENT  ? 'g'
			     : base->kind == N_SELF ? 's'
						    : 't',
			     base->name, m, &flat)) {
		n->kind = base->kind;
		n->name = flat;
		return n;
	}
	n->kind = N_MEMBER;
	strcpy(n->op, ".");
	n->a = (struct dt_node *)base;
	n->name = dt_xstrdup(m);
	return n;
}

/* A struct is kept in memory (a global's without bit-fields, or reached through one). */
static bool in_memory(struct parser *ps, const struct dt_node *n)
{
	char *flat = NULL;

	while (n->kind == N_MEMBER && n->op[0] == '.')
		n = n->a;
	if (n->kind != N_IDENT)
		return n->kind == N_UNARY || n->kind == N_MEMBER || n->kind == N_INDEX;
	return dt_parse_place_struct(ps, n) && !strchr(n->name, '.') &&
	       dt_parse_member(ps, 'g', n->name, "", &flat) == -5;
}

/*
 * `l = r;` of two places of one struct type where either keeps its members
 * as variables of their own: an assignment a member (nested ones too).
 */
static void struct_assign(struct parser *ps, struct dt_node *l, struct dt_node *r,
			  struct dt_stmt ***v, size_t *nv)
{
	const struct dt_decl *s;
	size_t i;

	/* (the struct looked up again each time: a member variable declared moves decls) */
	for (i = 0; (s = dt_parse_place_struct(ps, l)) != NULL && i < s->nmembers && !ps->failed;
	     i++) {
		struct dt_node *lm, *rm;
		char *m;

		if (!s->members[i].name)
			continue;
		m = dt_xstrdup(s->members[i].name);
		lm = member_of(ps, l, m);
		rm = member_of(ps, r, m);
		dt_free(m);
		if (dt_parse_place_struct(ps, lm)) {
			struct_assign(ps, lm, rm, v, nv);
		} else {
			struct dt_stmt *st = dt_xmalloc(sizeof(*st));
			struct dt_node *a = dt_xmalloc(sizeof(*a));

			memset(st, 0, sizeof(*st));
			memset(a, 0, sizeof(*a));
			a->kind = N_ASSIGN;
			a->pos = l->pos;
			strcpy(a->op, "=");
			a->a = lm;
			a->b = rm;
			st->e = a;
			DT_PUSH(*v, *nv, st);
		}
	}
}

/* `l = xlate <T> (e);`: each member of l assigned its translation. */
static void xlate_assign(struct parser *ps, struct dt_stmt *s)
{
	struct dt_node *l = s->e->a, *x = s->e->b, *one;
	const struct dt_decl *o = dt_xlate_output(ps, x);
	char *ty = dt_xstrdup(o->name);
	size_t i;

	if (x->op[0] == '*') {
		ps->tag = "D_UNSUPPORTED";
		fail(ps, &x->pos, "a pointer to translated data cannot be stored%s", "");
		dt_free(ty);
		return;
	}
	dt_parse_declare_as(ps, l, ty);
	dt_free(ty);
	one = node(ps, N_INT);
	one->ival = 1; /* the members' assignments, as one statement */
	one->pos = s->e->pos;
	s->is_if = true;
	for (i = 0; !ps->failed && (o = dt_xlate_output(ps, x)) != NULL && i < o->nmembers; i++) {
		struct dt_stmt *st;
		struct dt_node *a;
		char *m;

		if (!o->members[i].name)
			continue;
		m = dt_xstrdup(o->members[i].name);
		st = dt_xmalloc(sizeof(*st));
		memset(st, 0, sizeof(*st));
		a = node(ps, N_ASSIGN);
		a->pos = s->e->pos;
		strcpy(a->op, "=");
		a->a = member_of(ps, l, m);
		a->b = dt_xlate_member(ps, x, m, &x->pos);
		dt_free(m);
		st->e = a;
		DT_PUSH(s->then, s->nthen, st);
	}
	s->e = one;
}

/*
 * `a = 1, b = 2;`: the comma operator as a statement, its operands one
 * after another (their value is dropped), as one statement (an if of 1).
 */
static struct dt_stmt *comma_statement(struct parser *ps, struct dt_stmt *s)
{
	struct dt_node *one = node(ps, N_INT);

	one->ival = 1;
	one->pos = s->e->pos;
	for (;;) {
		struct dt_stmt *st = dt_xmalloc(sizeof(*st));

		memset(st, 0, sizeof(*st));
		st->e = s->e;
		DT_PUSH(s->then, s->nthen, st);
		if (!dt_lex_is(&ps->lx, ","))
			break;
		next(ps);
		ps->depth++;
		s->e = expr(ps);
		ps->depth--;
		if (!s->e || ps->failed)
			return s;
	}
	s->is_if = true;
	s->e = one;
	if (!dt_lex_is(&ps->lx, "}"))
		expect(ps, ";", "after the statement");
	return s;
}

static struct dt_stmt *statement(struct parser *ps)
{
	struct dt_stmt *s;

	if (dt_lex_is(&ps->lx, ";")) {
		next(ps);
		return NULL;
	}
	s = dt_xmalloc(sizeof(*s));
	memset(s, 0, sizeof(*s));
	if (dt_lex_is_word(&ps->lx, "if")) {
		s->is_if = true;
		next(ps);
		expect(ps, "(", "after if");
		ps->depth++;
		s->e = expr(ps);
		ps->depth--;
		expect(ps, ")", "after the condition");
		block(ps, &s->then, &s->nthen);
		if (dt_lex_is_word(&ps->lx, "else")) {
			next(ps);
			block(ps, &s->els, &s->nels);
		}
		return s;
	}
	ps->depth++; /* (a ',' after it is the comma operator's, below) */
	s->e = expr(ps);
	ps->depth--;
	if (!s->e || ps->failed)
		return s;
	if (dt_lex_is(&ps->lx, ","))
		return comma_statement(ps, s);
	if (s->e->kind == N_ASSIGN && !strcmp(s->e->op, "=") && s->e->b->kind == N_XLATE)
		xlate_assign(ps, s);
	else if (s->e->kind == N_ASSIGN && !strcmp(s->e->op, "=")) {
		const struct dt_decl *sl, *sr = dt_parse_place_struct(ps, s->e->b);

		if (sr) { /* a variable first assigned a struct is of its type */
			char *ty = dt_xstrdup(sr->name);

			dt_parse_declare_as(ps, s->e->a, ty);
			dt_free(ty);
		}
		sl = dt_parse_place_struct(ps, s->e->a);
		sr = dt_parse_place_struct(ps, s->e->b);

		if (sl && sl == sr && !(in_memory(ps, s->e->a) && in_memory(ps, s->e->b))) {
			struct dt_node *one = node(ps, N_INT);

			one->ival = 1; /* the members' assignments, as one statement */
			s->is_if = true;
			struct_assign(ps, s->e->a, s->e->b, &s->then, &s->nthen);
			one->pos = s->e->pos;
			s->e = one;
		}
	}
	if (dt_lex_is(&ps->lx, "}"))
		return s; /* the last statement needs no ';' */
	expect(ps, ";", "after the statement");
	return s;
}

static void split_fields(struct dt_pdesc *d)
{
	char *buf = dt_xstrdup(d->text), *s = buf, *f[4];
	size_t nf = 1, i, k;

	for (i = 0; buf[i]; i++)
		nf += buf[i] == ':';
	if (nf > 4)
		nf = 4;
	for (i = 0; i < nf; i++) {
		char *c = i + 1 < nf ? strchr(s, ':') : NULL;

		if (c)
			*c = '\0';
		f[i] = s;
		s = c ? c + 1 : s + strlen(s);
	}
	for (k = 0; k < 4; k++)
		d->field[k] = dt_xstrdup(k + nf >= 4 ? f[k + nf - 4] : "");
	dt_free(buf);
}

/* The tag after `struct`/`union` at the current token, followed by '{'. */
static bool body_ahead(struct parser *ps, char *tag, size_t n)
{
	const char *p = ps->lx.p + strspn(ps->lx.p, " \t\n"), *w = p;

	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	if (p == w || (size_t)(p - w) >= n)
		return false;
	snprintf(tag, n, "%.*s", (int)(p - w), w);
	p += strspn(p, " \t\n");
	return *p == '{';
}

/*
 * `translator OUT < IN var > { member = expr; ... }` (parse_xlate.c keeps
 * and checks it; an `xlate` is lowered there).
 */
static void translator(struct parser *ps)
{
	struct dt_lex *lx = &ps->lx;
	struct dt_pos pos = lx->pos;
	struct dt_xlator x;
	const char *kw;
	char tag[64], full[80], *type;
	size_t i;

	memset(&x, 0, sizeof(x));
	next(ps);
	kw = dt_lex_is_word(lx, "struct") ? "struct" : dt_lex_is_word(lx, "union") ? "union" : NULL;
	if (kw && body_ahead(ps, tag, sizeof(tag))) {
		snprintf(full, sizeof(full), "%s %s", kw, tag);
		if (dt_parse_find(ps, kw[0] == 's' ? 'S' : 'U', full)) {
			ps->tag = "D_DECL_TYPERED";
			fail(ps, &pos, "type redeclared: %s", full);
			return;
		}
	}
	type = dt_parse_type(ps);
	if (!type)
		return;
	x.out = dt_xlate_canon(ps, type);
	dt_free(type);
	if (strchr(x.out, '*') || (strncmp(x.out, "struct ", 7) && strncmp(x.out, "union ", 6))) {
		ps->tag = "D_XLATE_SOU";
		fail(ps, &pos, "translator output type must be a struct or union");
		return;
	}
	if (!dt_parse_find(ps, x.out[0] == 's' ? 'S' : 'U', x.out)) {
		ps->tag = "D_XLATE_SOU";
		fail(ps, &pos, "incomplete struct/union/enum %s", x.out);
		return;
	}
	expect(ps, "<", "after the translator's output type");
	type = ps->failed ? NULL : dt_parse_type(ps);
	if (!type)
		return;
	x.in = dt_xlate_canon(ps, type);
	dt_free(type);
	if (lx->tok != T_IDENT) {
		fail(ps, &lx->pos, "expected the translator's input name, found %s", tok_desc(ps));
		return;
	}
	x.var = dt_xstrdup(lx->text);
	next(ps);
	expect(ps, ">", "after the translator's input");
	for (i = 0; i < ps->nxl && !ps->failed; i++)
		if (!strcmp(ps->xl[i].out, x.out) && !strcmp(ps->xl[i].in, x.in)) {
			ps->tag = "D_XLATE_REDECL";
			fail(ps, &pos, "translator from %s to %s has already been declared", x.in,
			     x.out);
		}
	expect(ps, "{", "to open the translator's members");
	while (!ps->failed && !dt_lex_is(lx, "}")) {
		struct dt_pos at = lx->pos;
		struct dt_node *e;
		char *m;

		if (lx->tok != T_IDENT) {
			fail(ps, &lx->pos, "expected a member's name, found %s", tok_desc(ps));
			return;
		}
		m = dt_xstrdup(lx->text);
		next(ps);
		expect(ps, "=", "after the member's name");
		ps->xvar = x.var;
		e = ps->failed ? NULL : expr(ps);
		ps->xvar = NULL;
		if (e && !ps->failed)
			dt_xlate_add_member(ps, &x, m, e, &at);
		dt_free(m);
		expect(ps, ";", "after the member's definition");
	}
	expect(ps, "}", "to close the translator");
	if (!ps->failed)
		DT_PUSH(ps->xl, ps->nxl, x);
}

/*
 * `inline TYPE NAME = expr;` (kept, substituted where NAME is read, as its
 * type), `typedef TYPE NAME;`, `[self|this] TYPE NAME, …;` and struct,
 * union and enum declarations (parse_decl.c keeps them in prog->decls).
 */
static void declaration(struct parser *ps)
{
	struct dt_lex *lx = &ps->lx;
	char kind = 'g', *type;

	if (dt_lex_is_word(lx, "inline")) {
		struct inline_def d = {0};
		struct dt_node *c;

		next(ps);
		type = dt_parse_type(ps);
		if (!type)
			return;
		if (lx->tok != T_IDENT) {
			fail(ps, &lx->pos, "expected the inline's name, found %s", tok_desc(ps));
			return;
		}
		d.name = dt_xstrdup(lx->text);
		next(ps);
		if (dt_lex_is(lx, "[")) /* an inline array: its keys' types and names */
			dt_parse_inline_keys(ps, &d);
		expect(ps, "=", "after the inline's name");
		c = node(ps, N_CAST);
		c->name = type;
		ps->iparams = &d;
		c->a = ps->failed ? NULL : expr(ps);
		ps->iparams = NULL;
		d.value = !strcmp(type, "string") || (c->a && c->a->kind == N_XLATE) ? c->a : c;
		d.library = lx->src->library;
		if (d.value && !d.library)
			dt_parse_inline_yields(ps, d.name);
		if (d.value)
			DT_PUSH(ps->inl, ps->ninl, d);
		expect(ps, ";", "after the declaration");
		return;
	}
	if (dt_lex_is_word(lx, "register") || dt_lex_is_word(lx, "auto") ||
	    dt_lex_is_word(lx, "static")) {
		ps->tag = "D_DECL_BADCLASS";
		fail(ps, &lx->pos, "specified storage class not appropriate in D");
		return;
	}
	if (dt_lex_is_word(lx, "extern")) {
		/* a kernel symbol's declaration: nothing a program here can read */
		int depth = 0;

		next(ps);
		if (lx->tok == T_IDENT && dt_parse_type_word(ps, lx->text)) {
			struct dt_pos at = lx->pos;
			char *ty = dt_parse_type(ps);

			if (ty && dt_lex_is(lx, ";")) { /* `extern int;`: nothing declared */
				ps->tag = "D_DECL_USELESS";
				fail(ps, &at, "useless declaration");
			}
			dt_free(ty);
		}
		while (!ps->failed && lx->tok != T_EOF && (depth || !dt_lex_is(lx, ";"))) {
			depth += dt_lex_is(lx, "(") - dt_lex_is(lx, ")");
			next(ps);
		}
		expect(ps, ";", "after the declaration");
		return;
	}
	if (dt_lex_is_word(lx, "translator")) {
		translator(ps);
		expect(ps, ";", "after the translator");
		return;
	}
	if (dt_lex_is_word(lx, "typedef")) {
		kind = 'T';
		next(ps);
	} else if (dt_lex_is_word(lx, "self") || dt_lex_is_word(lx, "this")) {
		kind = lx->text[0];
		next(ps);
		if (dt_lex_is_word(lx, "self") || dt_lex_is_word(lx, "this")) {
			ps->tag = "D_DECL_CLASS";
			fail(ps, &lx->pos, "only one storage class allowed in a declaration");
			return;
		}
		if (lx->tok == T_IDENT && !dt_parse_type_word(ps, lx->text)) {
			/* `self x;`: D's implicit int */
			dt_parse_declarators(ps, kind, "int");
			expect(ps, ";", "after the declaration");
			return;
		}
	}
	type = dt_parse_type(ps);
	if (type)
		dt_parse_declarators(ps, kind, type);
	dt_free(type);
	expect(ps, ";", "after the declaration");
}

static bool declaration_ahead(struct parser *ps)
{
	const char *p = ps->lx.p, *w = p;
	char word[32];
	size_t n;

	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	n = (size_t)(p - w);
	if (!n || n >= sizeof(word) || *p == ':' || *p == '-')
		return false;
	memcpy(word, w, n);
	word[n] = '\0';
	if (!strcmp(word, "register") || !strcmp(word, "auto") || !strcmp(word, "static"))
		return true; /* C's storage classes: refused by declaration() */
	if (!strcmp(word, "inline") || !strcmp(word, "typedef") || !strcmp(word, "extern") ||
	    !strcmp(word, "translator") || !strcmp(word, "struct") || !strcmp(word, "union") ||
	    !strcmp(word, "enum"))
		return true;
	if (strcmp(word, "self") && strcmp(word, "this") && !dt_parse_type_word(ps, word))
		return false;
	p += strspn(p, " \t\n");
	return isalpha((unsigned char)*p) || *p == '_' || *p == '*' || *p == '`';
}

static void clause(struct parser *ps, size_t source)
{
	struct dt_lex *lx = &ps->lx;
	struct dt_clause *c = dt_xmalloc(sizeof(*c));

	memset(c, 0, sizeof(*c));
	c->source = source;
	c->pos = dt_lex_here(lx);
	for (;;) {
		struct dt_pdesc d;

		memset(&d, 0, sizeof(d));
		d.text = dt_lex_pdesc(lx, &d.pos);
		if (!d.text) {
			struct dt_pos here = dt_lex_here(lx);

			if (!lx->err)
				dt_error_at(
				    ps->diag, &here, "D_SYNTAX",
				    "expected a probe description (provider:module:function:"
				    "name), found '%c'",
				    *lx->p ? *lx->p : ' ');
			ps->failed = true;
			break;
		}
		split_fields(&d);
		DT_PUSH(c->descs, c->ndescs, d);
		dt_lex_skip(lx);
		if (*lx->p != ',')
			break;
		lx->p++;
	}
	if (!ps->failed) {
		next(ps);
		if (dt_lex_is(lx, "/")) {
			ps->in_pred = true;
			next(ps);
			c->pred = expr(ps);
			ps->in_pred = false;
			expect(ps, "/", "to end the predicate");
		}
		if (!ps->failed && dt_lex_is(lx, "{"))
			block(ps, &c->body, &c->nbody);
		else if (!ps->failed && lx->tok != T_EOF && !dt_lex_is(lx, ";"))
			fail(ps, &lx->pos,
			     "expected '{' or '/' after the probe description, found %s",
			     tok_desc(ps));
	}
	DT_PUSH(ps->prog->clauses, ps->prog->nclauses, c);
}

/*
 * The token after a clause or a declaration was read as C; it starts the
 * next clause, which is read raw: give its text back.
 */
static void rewind_token(struct parser *ps)
{
	if (ps->failed || ps->lx.tok == T_EOF)
		return;
	ps->lx.p = ps->lx.pos.line_start + ps->lx.pos.col - 1;
	ps->lx.line = ps->lx.pos.line;
	ps->lx.line_start = ps->lx.pos.line_start;
}

/* Declarations and clauses to the end of the lexer's text. */
static void top_level(struct parser *ps, size_t source_index)
{
	while (!ps->failed && dt_lex_skip(&ps->lx)) {
		if (*ps->lx.p == ';') {
			ps->lx.p++;
			continue;
		}
		if (declaration_ahead(ps)) {
			next(ps);
			declaration(ps);
			rewind_token(ps);
			continue;
		}
		clause(ps, source_index);
		rewind_token(ps);
	}
	dt_free(ps->lx.text);
	ps->lx.text = NULL;
}

/*
 * DTrace's own D library (dlib.c), before a program's text: its types once
 * a program (their unnamed types numbered apart from the program's), its
 * builtin translators and inlines with each source.
 */
static void library(struct parser *ps)
{
	static const struct dt_src types = {dt_dlib_name, dt_dlib_types, dt_dlib_name, true};
	static const struct dt_src inlines = {dt_dlib_name, dt_dlib_inlines, dt_dlib_name, true};
	const struct dt_dlib_xlator *l;
	size_t i;

	for (i = 0; i < ps->prog->ndecls && ps->prog->decls[i].pos.src != &types; i++)
		;
	if (i == ps->prog->ndecls) {
		ps->nanon = 1000;
		dt_lex_init(&ps->lx, &types, ps->prog->o, ps->diag);
		top_level(ps, 0);
		ps->nanon = 0;
	}
	for (l = dt_dlib_xlators; !ps->failed && l->out; l++) {
		struct dt_xlator x = {0};

		x.out = dt_xstrdup(l->out);
		x.in = dt_xstrdup("struct task_struct *");
		x.var = dt_xstrdup("T");
		x.builtin = l->builtin;
		DT_PUSH(ps->xl, ps->nxl, x);
	}
	if (!ps->failed) {
		dt_lex_init(&ps->lx, &inlines, ps->prog->o, ps->diag);
		top_level(ps, 0);
	}
}

int dt_parse(struct dt_program *prog, const struct dt_src *src, size_t source_index, bool is_script,
	     struct usdt_diag *diag)
{
	struct parser ps;
	size_t i;

	(void)is_script;
	memset(&ps, 0, sizeof(ps));
	ps.prog = prog;
	ps.diag = diag;
	library(&ps);
	if (!ps.failed) {
		dt_lex_init(&ps.lx, src, prog->o, diag);
		top_level(&ps, source_index);
	}
	for (i = 0; i < ps.ninl; i++)
		dt_free(ps.inl[i].name);
	dt_free(ps.inl);
	return ps.failed || ps.lx.err ? -1 : 0;
}

bool dt_clause_only_aggs(const struct dt_clause *c)
{
	size_t i;

	if (!c->nbody)
		return false;
	for (i = 0; i < c->nbody; i++)
		if (c->body[i]->is_if || c->body[i]->e->kind != N_ASSIGN ||
		    c->body[i]->e->a->kind != N_AGG)
			return false;
	return true;
}
