/* SPDX-License-Identifier: MIT */
/*
 * D's expressions (under parse.c's clauses and declarations, over
 * parse_decl.c's types): C's operators by precedence, casts, sizeof and
 * offsetof, and D's additions (`@agg[keys]`, `self->x`, `this->x`,
 * `args[N]`, `^^`, string literals), pointers (`&`, `*`, `->`, `[]`).
 *
 * Theory. The parser only builds the tree; what a name means (a builtin, a
 * global, a pointer, a subroutine) is decided by the checks and the engine,
 * where its type is known. `inline` constants and enumerators are
 * substituted where they are named. A struct variable's member `s.m`
 * becomes the variable "s.m" of the member's type (parse_decl.c); any other
 * member (`p->m`, `(*p).m`, `p[0].m`, a union variable's) is N_MEMBER.
 * The end of a predicate is the one thing C's grammar does not say: a `/`
 * outside parentheses followed by `{`, `;` or the end of the text closes it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define next dt_parse_next
#define expect dt_parse_expect
#define tok_desc dt_parse_tok_desc
#define node dt_parse_node
#define fail dt_parse_fail

/* What D has and this consumer does not: usdtkit's own tag. */
#define fail_unsupported(ps, ...) ((ps)->tag = "D_UNSUPPORTED", fail(ps, __VA_ARGS__))

static struct dt_node *expr(struct parser *ps);
static struct dt_node *assignment(struct parser *ps);

/* ---- expressions ---- */

static struct dt_node **arglist(struct parser *ps, size_t *n, const char *close)
{
	struct dt_node **v = NULL;

	*n = 0;
	ps->depth++;
	if (!dt_lex_is(&ps->lx, close)) {
		for (;;) {
			struct dt_node *a = assignment(ps);

			if (!a)
				break;
			DT_PUSH(v, *n, a);
			if (!dt_lex_is(&ps->lx, ","))
				break;
			next(ps);
		}
	}
	ps->depth--;
	expect(ps, close, close[0] == ')' ? "to close the argument list" : "to close the keys");
	return v;
}

static const struct inline_def *find_inline(struct parser *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->ninl; i++)
		if (!strcmp(ps->inl[i].name, name))
			return &ps->inl[i];
	return NULL;
}

/* `[int x, int y]` of `inline int a[int x, int y] = …`: the keys' names into d */
void dt_parse_inline_keys(struct parser *ps, struct inline_def *d)
{
	next(ps);
	while (!ps->failed && !dt_lex_is(&ps->lx, "]")) {
		char *ty = dt_parse_type(ps);

		if (!ty)
			return;
		dt_free(ty);
		if (ps->lx.tok != T_IDENT || d->nparams >= 8) {
			fail(ps, &ps->lx.pos,
			     "expected the name of an inline array's key, found %s", tok_desc(ps));
			return;
		}
		DT_PUSH(d->params, d->nparams, dt_xstrdup(ps->lx.text));
		next(ps);
		if (!dt_lex_is(&ps->lx, ","))
			break;
		next(ps);
	}
	expect(ps, "]", "to close the inline array's keys");
}

/* An inline array's expression with its keys' values in place of their names. */
static struct dt_node *inline_subst(const struct dt_node *n, struct dt_node **keys, size_t nkeys)
{
	struct dt_node *c;
	size_t i;

	if (!n)
		return NULL;
	if (n->kind == N_IDENT && n->op[0] == '$' && n->op[1] == 'a' &&
	    (size_t)(n->op[2] - '0') < nkeys)
		return keys[n->op[2] - '0'];
	c = dt_xmalloc(sizeof(*c));
	*c = *n;
	c->a = inline_subst(n->a, keys, nkeys);
	c->b = inline_subst(n->b, keys, nkeys);
	c->c = inline_subst(n->c, keys, nkeys);
	if (n->nargs) {
		c->args = dt_xmalloc(n->nargs * sizeof(*c->args));
		for (i = 0; i < n->nargs; i++)
			c->args[i] = inline_subst(n->args[i], keys, nkeys);
	}
	return c;
}

/* NAME or NAME[keys] of an inline: its expression (keys substituted) */
static struct dt_node *inline_use(struct parser *ps, const struct inline_def *d)
{
	struct dt_node **keys, *v;
	size_t nkeys;

	next(ps);
	if (!d->nparams || !dt_lex_is(&ps->lx, "["))
		return d->value;
	next(ps);
	keys = arglist(ps, &nkeys, "]");
	if (ps->failed)
		return NULL;
	if (nkeys != d->nparams) {
		ps->tag = "D_ARR_BADREF";
		fail(ps, &ps->lx.pos, "inline %s takes %zu keys, given %zu", d->name, d->nparams,
		     nkeys);
		return NULL;
	}
	v = inline_subst(d->value, keys, nkeys);
	dt_free(keys);
	return v;
}

static struct dt_node *unary(struct parser *ps);
static bool cast_ahead(struct parser *ps);

/*
 * `sizeof(type)`, `sizeof expr` (N_SIZEOF: name the type, or a the
 * expression) and `offsetof(type, member)` (ival 1, str the member).
 */
static struct dt_node *size_of(struct parser *ps)
{
	struct dt_node *n = node(ps, N_SIZEOF);
	bool off = ps->lx.text[0] == 'o';

	next(ps);
	if (off || (dt_lex_is(&ps->lx, "(") && cast_ahead(ps))) {
		expect(ps, "(", off ? "after offsetof" : "after sizeof");
		n->name = ps->failed ? NULL : dt_parse_type(ps);
		if (off && n->name && expect(ps, ",", "after offsetof's type")) {
			n->ival = 1;
			if (ps->lx.tok != T_IDENT) {
				fail(ps, &ps->lx.pos, "expected a member's name, found %s",
				     tok_desc(ps));
				return NULL;
			}
			n->str = dt_xstrdup(ps->lx.text);
			next(ps);
		}
		expect(ps, ")", off ? "to close offsetof" : "to close sizeof");
		return ps->failed ? NULL : n;
	}
	n->a = unary(ps);
	return n->a ? n : NULL;
}

/* `xlate < type > ( expr )`: N_XLATE, its translator found (parse_xlate.c). */
static struct dt_node *xlate(struct parser *ps)
{
	struct dt_node *n = node(ps, N_XLATE);

	next(ps);
	expect(ps, "<", "after xlate");
	if (!ps->failed && ps->lx.tok == T_IDENT && !dt_parse_type_word(ps, ps->lx.text)) {
		fail_unsupported(ps, &ps->lx.pos,
				 "xlate to %s: DTrace's own translators need the kernel's types, "
				 "which this consumer does not have",
				 ps->lx.text);
		return NULL;
	}
	n->name = ps->failed ? NULL : dt_parse_type(ps);
	if (!ps->failed)
		expect(ps, ">", "after xlate's type");
	if (!ps->failed)
		expect(ps, "(", "after xlate's type");
	ps->depth++;
	n->a = ps->failed ? NULL : expr(ps);
	ps->depth--;
	if (!ps->failed)
		expect(ps, ")", "after xlate's input");
	if (!ps->failed)
		dt_xlate_resolve(ps, n);
	return ps->failed ? NULL : n;
}

static struct dt_node *primary(struct parser *ps)
{
	struct dt_lex *lx = &ps->lx;
	struct dt_node *n;

	switch (lx->tok) {
	case T_INT:
		n = node(ps, N_INT);
		n->ival = lx->ival;
		n->size = lx->isize;
		n->is_unsigned = lx->iuns;
		next(ps);
		if (dt_lex_is(lx, "(")) { /* `tick-1()`: a constant called */
			ps->tag = "D_FUNC_IDENT";
			fail(ps, &n->pos, "function designator is not of function type");
		}
		return n;
	case T_STR:
		n = node(ps, N_STR);
		n->str = lx->text;
		n->slen = lx->len;
		lx->text = NULL;
		next(ps);
		return n;
	case T_AGG:
		n = node(ps, N_AGG);
		n->name = dt_xstrdup(lx->text);
		next(ps);
		if (dt_lex_is(lx, "[")) {
			next(ps);
			n->args = arglist(ps, &n->nargs, "]");
		}
		if (!ps->failed && dt_lex_is(lx, "[")) { /* `@a[0][1]`: keys are one tuple */
			ps->tag = "D_AGG_MDIM";
			fail(ps, &lx->pos,
			     "multi-dimensional indexing of @%s is not supported: use @%s[a, b]",
			     n->name, n->name);
		}
		return n;
	case T_IDENT: {
		const struct inline_def *inl;
		size_t i;

		if (!strcmp(lx->text, "self") || !strcmp(lx->text, "this")) {
			n = node(ps, lx->text[0] == 's' ? N_SELF : N_THIS);
			next(ps);
			if (!dt_lex_is(lx, "->")) {
				fail(ps, &n->pos, "%s must be followed by '->' and a variable name",
				     n->kind == N_SELF ? "self" : "this");
				return NULL;
			}
			next(ps);
			if (lx->tok != T_IDENT) {
				fail(ps, &lx->pos, "expected a variable name after '->', found %s",
				     tok_desc(ps));
				return NULL;
			}
			n->name = dt_xstrdup(lx->text);
			next(ps);
			if (dt_lex_is(lx, "[")) { /* self->a[k]; this->s[n] (copyin's NUL) */
				struct dt_node *ix = node(ps, N_INDEX);

				ix->pos = n->pos;
				ix->a = n;
				ix->name = dt_xstrdup(n->name);
				next(ps);
				ix->args = arglist(ps, &ix->nargs, "]");
				return ix;
			}
			return n;
		}
		if (!strcmp(lx->text, "sizeof") || !strcmp(lx->text, "offsetof"))
			return size_of(ps);
		if (!strcmp(lx->text, "xlate"))
			return xlate(ps);
		if (ps->xvar && !strcmp(lx->text, ps->xvar)) { /* a translator's input */
			n = node(ps, N_IDENT);
			n->name = dt_xstrdup(lx->text);
			strcpy(n->op, DT_XVAR_OP);
			next(ps);
			return n;
		}
		for (i = 0; ps->iparams && i < ps->iparams->nparams; i++)
			if (!strcmp(lx->text, ps->iparams->params[i])) { /* an inline array's key */
				n = node(ps, N_IDENT);
				n->name = dt_xstrdup(lx->text);
				snprintf(n->op, sizeof(n->op), "$a%zu", i);
				next(ps);
				return n;
			}
		inl = find_inline(ps, lx->text);
		if (inl)
			return inline_use(ps, inl);
		n = node(ps, N_IDENT);
		n->name = dt_xstrdup(lx->text);
		next(ps);
		if (dt_lex_is(lx, "(")) {
			n->kind = N_CALL;
			next(ps);
			n->args = arglist(ps, &n->nargs, ")");
		} else if (dt_lex_is(lx, "[")) {
			next(ps);
			if (!strcmp(n->name, "args")) {
				n->kind = N_ARGS;
				ps->depth++;
				n->a = expr(ps);
				ps->depth--;
				expect(ps, "]", "after args[N]");
				if (n->a && n->a->kind == N_STR) {
					ps->tag = "D_PROTO_ARG"; /* DTrace's: an index of the wrong
								    type */
					fail(ps, &n->a->pos,
					     "args[ ] argument #1 is incompatible with prototype: "
					     "string, not an integer");
				} else if (n->a && n->a->kind != N_INT)
					fail(ps, &n->a->pos, "args[] needs a constant index%s", "");
				else if (n->a)
					n->ival = n->a->ival;
			} else {
				n->kind = N_INDEX;
				n->args = arglist(ps, &n->nargs, "]");
			}
		}
		return n;
	}
	case T_OP:
		if (dt_lex_is(lx, "(")) {
			next(ps);
			ps->depth++;
			n = expr(ps);
			ps->depth--;
			expect(ps, ")", "to close the parenthesis");
			return n;
		}
		/* fallthrough */
	default:
		fail(ps, &lx->pos, "expected an expression, found %s", tok_desc(ps));
		return NULL;
	}
}

static struct dt_node *postfix(struct parser *ps)
{
	struct dt_node *n = primary(ps);

	while (n && !ps->failed) {
		if (dt_lex_is(&ps->lx, "++") || dt_lex_is(&ps->lx, "--")) {
			struct dt_node *p = node(ps, N_INCDEC);

			strcpy(p->op, ps->lx.op);
			p->ival = 1;
			p->a = n;
			n = p;
			next(ps);
		} else if (dt_lex_is(&ps->lx, "->") || dt_lex_is(&ps->lx, ".")) {
			struct dt_node *m = node(ps, N_MEMBER);
			bool dot = dt_lex_is(&ps->lx, ".");
			char *flat = NULL;
			int r = -1;

			strcpy(m->op, ps->lx.op);
			if (dot && n->kind == N_CAST && n->name && !strchr(n->name, '*') &&
			    (!strncmp(n->name, "struct ", 7) || !strncmp(n->name, "union ", 6)) &&
			    n->a &&
			    (n->a->kind == N_IDENT || n->a->kind == N_SELF ||
			     n->a->kind == N_THIS)) {
				/* an inline struct of a variable (`inline struct r r2 = r1`): r1 */
				struct dt_node *v = dt_xmalloc(sizeof(*v));

				*v = *n->a;
				v->name = dt_xstrdup(n->a->name);
				n = v;
			}
			if (dot && n->kind == N_CAST && n->name && !strchr(n->name, '*') && n->a &&
			    n->a->kind == N_XLATE)
				n = n->a; /* an inline struct of a translation: the translation */
			m->a = n;
			next(ps);
			if (ps->lx.tok != T_IDENT) {
				fail(ps, &ps->lx.pos,
				     "expected a member's name after '%s', found %s", m->op,
				     tok_desc(ps));
				return NULL;
			}
			m->name = dt_xstrdup(ps->lx.text);
			if (n->kind == N_XLATE) { /* a translated member: its expression */
				if (dot == (n->op[0] == '*')) {
					ps->tag = dot ? "D_OP_SOU" : "D_OP_PTR";
					fail(ps, &m->pos, "%s",
					     dot ? "operator . must be applied to a struct or union"
						 : "operator -> must be applied to a pointer");
					return NULL;
				}
				n = dt_xlate_member(ps, n, m->name, &m->pos);
				next(ps);
				continue;
			}
			if (dot && strcmp(n->op, DT_XVAR_OP) &&
			    (n->kind == N_IDENT || n->kind == N_SELF || n->kind == N_THIS))
				r = dt_parse_member(ps,
						    n->kind == N_IDENT	? 'g'
						    : n->kind == N_SELF ? 's'
									: 't',
						    n->name, m->name, &flat);
			else if (dot && n->kind == N_INDEX && !n->a)
				r = dt_parse_assoc_member(ps, n->name, m->name, &flat);
			if (!r) { /* a struct variable's member: a variable of its own */
				dt_free(n->name);
				n->name = flat;
				next(ps);
				continue;
			}
			if (r == -4) {
				ps->tag = "D_TYPE_MEMBER";
				fail(ps, &m->pos, "'%s' is not a member of this struct", m->name);
				return NULL;
			}
			/* through a pointer, of a union, of a member: the engine's (its types) */
			next(ps);
			n = m;
		} else if (dt_lex_is(&ps->lx, "[")) {
			/* an element through a pointer or of an array member: `p->a[2]` (name "")
			 */
			struct dt_node *ix = node(ps, N_INDEX);

			ix->a = n;
			ix->name = dt_xstrdup("");
			next(ps);
			ix->args = arglist(ps, &ix->nargs, "]");
			dt_xlate_index_check(ps, ix);
			n = ix;
		} else {
			break;
		}
	}
	return n;
}

static bool cast_ahead(struct parser *ps)
{
	const char *p = ps->lx.p;
	char w[32];
	size_t n = 0;

	p += strspn(p, " \t\n");
	if (p[0] == 'D' && p[1] == '`')
		p += 2; /* D`type: the D module's scope (lex.c) */
	while ((isalnum((unsigned char)*p) || *p == '_') && n < sizeof(w) - 1)
		w[n++] = *p++;
	w[n] = '\0';
	return n && dt_parse_type_word(ps, w);
}

static struct dt_node *unary(struct parser *ps)
{
	struct dt_lex *lx = &ps->lx;
	struct dt_node *n;

	if (lx->tok == T_OP &&
	    (!strcmp(lx->op, "!") || !strcmp(lx->op, "~") || !strcmp(lx->op, "-") ||
	     !strcmp(lx->op, "+") || !strcmp(lx->op, "*") || !strcmp(lx->op, "&"))) {
		n = node(ps, N_UNARY);
		strcpy(n->op, lx->op);
		next(ps);
		n->a = unary(ps);
		if (!n->a)
			return NULL;
		return n;
	}
	if (dt_lex_is(lx, "++") || dt_lex_is(lx, "--")) {
		n = node(ps, N_INCDEC);
		strcpy(n->op, lx->op);
		next(ps);
		n->a = unary(ps);
		return n->a ? n : NULL;
	}
	if (dt_lex_is(lx, "(") && cast_ahead(ps)) {
		struct dt_buf t = {0};

		n = node(ps, N_CAST);
		next(ps);
		while (!ps->failed && !dt_lex_is(lx, ")") && lx->tok != T_EOF) {
			if (t.n)
				dt_buf_add(&t, " ", 1);
			if (lx->tok == T_IDENT)
				dt_buf_add(&t, lx->text, strlen(lx->text));
			else if (lx->tok == T_OP)
				dt_buf_add(&t, lx->op, strlen(lx->op));
			next(ps);
		}
		expect(ps, ")", "to close the cast");
		n->name = t.s;
		n->a = unary(ps);
		if (n->a && n->a->kind == N_XLATE) {
			ps->tag = "D_CAST_INVAL";
			fail(ps, &n->pos, "invalid cast expression: \"%s\" to \"%s\"",
			     n->a->op[0] == '*' ? "pointer to translated data" : "translated data",
			     n->name);
			return NULL;
		}
		return n->a ? n : NULL;
	}
	return postfix(ps);
}

static int prec(struct parser *ps)
{
	static const struct {
		const char *op;
		int p;
	} t[] = {
	    {"||", 1}, {"^^", 2}, {"&&", 3}, {"|", 4},	{"^", 5},  {"&", 6},  {"==", 7},
	    {"!=", 7}, {"<", 8},  {"<=", 8}, {">", 8},	{">=", 8}, {"<<", 9}, {">>", 9},
	    {"+", 10}, {"-", 10}, {"*", 11}, {"/", 11}, {"%", 11},
	};
	size_t i;

	if (ps->lx.tok != T_OP)
		return 0;
	if (ps->in_pred && ps->depth == 0 && !strcmp(ps->lx.op, "/")) {
		/* The predicate's closing '/'? */
		const char *p = ps->lx.p;

		p += strspn(p, " \t\r\n");
		if (*p == '{' || *p == ';' || *p == '\0')
			return 0;
	}
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(ps->lx.op, t[i].op))
			return t[i].p;
	return 0;
}

static struct dt_node *binary(struct parser *ps, int min)
{
	struct dt_node *l = unary(ps);
	int p;

	while (l && !ps->failed && (p = prec(ps)) >= min) {
		struct dt_node *n = node(ps, N_BINARY);

		strcpy(n->op, ps->lx.op);
		next(ps);
		n->a = l;
		n->b = binary(ps, p + 1);
		if (!n->b)
			return NULL;
		l = n;
	}
	return l;
}

static struct dt_node *ternary(struct parser *ps)
{
	struct dt_node *c = binary(ps, 1), *n;

	if (!c || !dt_lex_is(&ps->lx, "?"))
		return c;
	n = node(ps, N_TERNARY);
	next(ps);
	n->a = c;
	ps->depth++;
	n->b = assignment(ps);
	ps->depth--;
	if (!expect(ps, ":", "in the conditional expression"))
		return NULL;
	n->c = ternary(ps);
	return n->b && n->c ? n : NULL;
}

static struct dt_node *assignment(struct parser *ps)
{
	static const char *const aops[] = {
	    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", NULL};
	struct dt_node *l = ternary(ps);
	size_t i;

	if (!l || ps->lx.tok != T_OP)
		return l;
	for (i = 0; aops[i]; i++)
		if (!strcmp(ps->lx.op, aops[i]))
			break;
	if (!aops[i])
		return l;
	{
		struct dt_node *n = node(ps, N_ASSIGN);

		strcpy(n->op, aops[i]);
		next(ps);
		n->a = l;
		n->b = assignment(ps);
		return n->b ? n : NULL;
	}
}

static struct dt_node *expr(struct parser *ps)
{
	struct dt_node *n = assignment(ps);

	if (n && dt_lex_is(&ps->lx, ",") && ps->depth == 0) {
		fail_unsupported(ps, &ps->lx.pos, "the comma operator is not supported%s", "");
		return NULL;
	}
	return n;
}

struct dt_node *dt_parse_expr(struct parser *ps)
{
	return expr(ps);
}
