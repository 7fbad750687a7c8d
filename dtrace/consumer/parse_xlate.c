/* SPDX-License-Identifier: MIT */
/*
 * D's translators, for the program's own types (under parse_expr.c, over
 * parse_decl.c): `translator OUT < IN var > { member = expr; ... };` and
 * `xlate <OUT> (e)`, `xlate <OUT *> (e)`.
 *
 * Theory. A translator is a set of expressions, one per output member, of
 * one input. It is lowered here, in the parser: `xlate <T> (e).m` (or
 * `->m` of the pointer form) becomes the translator's expression for m
 * with e put where the input is named, cast to m's type; a member the
 * translator leaves out is 0; `s = xlate <T> (e)` is the assignment of
 * each member (parse.c). The engine sees only the expressions it already
 * compiles (members of D's memory, pointers, casts), so a translated value
 * is never stored anywhere: there is no translated data to point at, and
 * `(uintptr_t)xlate <T *> (e)` is refused as DTrace refuses it. DTrace's
 * own translators (psinfo_t, lwpsinfo_t from struct task_struct *: dlib.c)
 * are entries without members, marked builtin: their members are the
 * task's address, a constant, or N_KTASK, the engine's to compute from
 * the task (dtrace/engine/codegen_procfs.c); curthread is their input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlib.h"
#include "parse.h"

#define fail dt_parse_fail
#define fail_tag(ps, t, ...) ((ps)->tag = (t), dt_parse_fail(ps, __VA_ARGS__))

char *dt_xlate_canon(const struct parser *ps, const char *ty)
{
	struct dt_buf b = {0};
	char *base = dt_xstrdup(ty ? ty : "");
	const char *r;
	size_t n = strlen(base), stars = 0;

	while (n >= 2 && !strcmp(base + n - 2, " *")) {
		base[n -= 2] = '\0';
		stars++;
	}
	r = dt_parse_resolve(ps, base);
	dt_buf_printf(&b, "%s", r ? r : base);
	while (stars--)
		dt_buf_printf(&b, " *");
	dt_free(base);
	return b.s;
}

static bool is_sou(const char *ty)
{
	return !strncmp(ty, "struct ", 7) || !strncmp(ty, "union ", 6);
}

static const struct dt_decl *sou_decl(const struct parser *ps, const char *ty)
{
	return dt_parse_find(ps, ty[0] == 's' ? 'S' : 'U', ty);
}

static const char *member_type(const struct dt_decl *s, const char *m)
{
	size_t i;

	for (i = 0; s && i < s->nmembers; i++)
		if (s->members[i].name && !strcmp(s->members[i].name, m))
			return s->members[i].type;
	return NULL;
}

/*
 * The type of a translator member's expression where the tree says it
 * (casts, the input, a declared variable, members of those), canonical and
 * allocated, or NULL; a member of an undefined or wrong struct is an error.
 */
static char *type_of(struct parser *ps, const struct dt_xlator *x, const struct dt_node *n)
{
	char *t = NULL, *base;
	const struct dt_decl *s;
	const char *mt;

	switch (n->kind) {
	case N_CAST:
		type_of(ps, x, n->a);
		return ps->failed ? NULL : dt_xlate_canon(ps, n->name);
	case N_IDENT:
		if (!strcmp(n->op, DT_XVAR_OP))
			return dt_xstrdup(x->in);
		s = dt_parse_find(ps, 'g', n->name);
		return s ? dt_xlate_canon(ps, s->type) : NULL;
	case N_INT:
		return dt_xstrdup("int");
	case N_MEMBER:
		t = type_of(ps, x, n->a);
		if (!t)
			return NULL;
		base = t;
		if (n->op[0] == '-') {
			size_t l = strlen(t);

			if (l < 2 || strcmp(t + l - 2, " *")) {
				dt_free(t);
				return NULL;
			}
			t[l - 2] = '\0';
		}
		if (!is_sou(base) || strchr(base, '*')) {
			dt_free(t);
			return NULL;
		}
		s = sou_decl(ps, base);
		if (!s) {
			fail_tag(ps, "D_OP_INCOMPLETE", &n->pos,
				 "operator %s cannot be applied to a forward declaration: no %s "
				 "definition is available",
				 n->op, base);
		} else if (!(mt = member_type(s, n->name))) {
			fail_tag(ps, "D_TYPE_MEMBER", &n->pos, "%s is not a member of %s", n->name,
				 base);
		} else {
			dt_free(t);
			return dt_xlate_canon(ps, mt);
		}
		dt_free(t);
		return NULL;
	default:
		if (n->a)
			dt_free(type_of(ps, x, n->a));
		if (n->b && !ps->failed)
			dt_free(type_of(ps, x, n->b));
		return NULL;
	}
}

void dt_xlate_add_member(struct parser *ps, struct dt_xlator *x, const char *name,
			 struct dt_node *e, const struct dt_pos *pos)
{
	const char *mt = member_type(sou_decl(ps, x->out), name);
	char *want, *got;

	if (!mt) {
		fail_tag(ps, "D_XLATE_MEMB", pos, "translator member %s is not a member of %s",
			 name, x->out);
		return;
	}
	got = type_of(ps, x, e);
	want = dt_xlate_canon(ps, mt);
	if (!ps->failed && got &&
	    ((strchr(want, '*') != NULL) != (strchr(got, '*') != NULL) ||
	     is_sou(want) != is_sou(got) || (is_sou(want) && strcmp(want, got))))
		fail_tag(ps, "D_XLATE_INCOMPAT", pos,
			 "translator member %s definition uses incompatible types: \"%s\" = \"%s\"",
			 name, mt, got);
	dt_free(want);
	dt_free(got);
	if (ps->failed)
		return;
	DT_PUSH(x->mname, x->nm, dt_xstrdup(name));
	x->nm--;
	DT_PUSH(x->mexpr, x->nm, e);
}

static bool is_int(const char *ty)
{
	return !strchr(ty, '*') && !strchr(ty, '[') && !is_sou(ty) && strcmp(ty, "string");
}

const struct dt_decl *dt_xlate_output(struct parser *ps, const struct dt_node *n)
{
	return sou_decl(ps, ps->xl[n->ival].out);
}

void dt_xlate_resolve(struct parser *ps, struct dt_node *n)
{
	char *out = dt_xlate_canon(ps, n->name), *in = NULL;
	size_t l = strlen(out), i, found = ps->nxl, cands = 0;
	const struct dt_decl *v;

	if (l >= 2 && !strcmp(out + l - 2, " *")) {
		out[l - 2] = '\0';
		strcpy(n->op, "*");
	}
	if (!is_sou(out) || strchr(out, '*')) {
		fail_tag(ps, "D_UNSUPPORTED", &n->pos,
			 "xlate to %s: DTrace's own translators need the kernel's types, which "
			 "this consumer does not have",
			 n->name);
		dt_free(out);
		return;
	}
	if (n->a->kind == N_CAST)
		in = dt_xlate_canon(ps, n->a->name);
	else if ((n->a->kind == N_IDENT || n->a->kind == N_SELF || n->a->kind == N_THIS) &&
		 (v = dt_parse_find(ps,
				    n->a->kind == N_IDENT  ? 'g'
				    : n->a->kind == N_SELF ? 's'
							   : 't',
				    n->a->name)) != NULL)
		in = dt_xlate_canon(ps, v->type);
	else if (n->a->kind == N_IDENT && !strcmp(n->a->name, "curthread"))
		in = dt_xstrdup("struct task_struct *");
	else if (n->a->kind == N_INT || (n->a->kind == N_UNARY && !strchr("*&", n->a->op[0])))
		in = dt_xstrdup("int"); /* an integer: any integer input takes it */
	for (i = 0; i < ps->nxl; i++) {
		if (strcmp(ps->xl[i].out, out))
			continue;
		cands++;
		if (!in || !strcmp(ps->xl[i].in, in))
			found =
			    found < ps->nxl && (!in || !strcmp(ps->xl[found].in, in)) ? found : i;
		else if (found == ps->nxl && is_int(ps->xl[i].in) && is_int(in))
			found = i; /* an integer of another width */
	}
	if (found == ps->nxl || (!in && cands > 1))
		fail_tag(ps, "D_XLATE_NONE", &n->pos, "cannot translate from \"%s\" to \"%s\"",
			 in ? in : "this expression", out);
	n->ival = (int64_t)found;
	dt_free(out);
	dt_free(in);
}

static struct dt_node *copy(struct parser *ps, const struct dt_node *n, const struct dt_node *in)
{
	struct dt_node *c;
	size_t i;

	if (!n)
		return NULL;
	if (n->kind == N_IDENT && !strcmp(n->op, DT_XVAR_OP))
		return copy(ps, in, NULL);
	if (n->kind == N_CAST && is_sou(n->name) && !strchr(n->name, '*'))
		return copy(ps, n->a, in); /* (struct s)v of a struct: v itself */
	c = dt_xmalloc(sizeof(*c));
	*c = *n;
	c->name = n->name ? dt_xstrdup(n->name) : NULL;
	if (n->str) {
		c->str = dt_xmalloc(n->slen + 1);
		memcpy(c->str, n->str, n->slen + 1);
	}
	c->a = copy(ps, n->a, in);
	c->b = copy(ps, n->b, in);
	c->c = copy(ps, n->c, in);
	if (n->nargs) {
		c->args = dt_xmalloc(n->nargs * sizeof(*c->args));
		for (i = 0; i < n->nargs; i++)
			c->args[i] = copy(ps, n->args[i], in);
	}
	if (c->kind == N_MEMBER && c->op[0] == '.' &&
	    (c->a->kind == N_IDENT || c->a->kind == N_SELF || c->a->kind == N_THIS)) {
		char *flat = NULL;

		if (!dt_parse_member(ps,
				     c->a->kind == N_IDENT  ? 'g'
				     : c->a->kind == N_SELF ? 's'
							    : 't',
				     c->a->name, c->name, &flat)) {
			struct dt_node *v = c->a;

			dt_free(v->name);
			v->name = flat; /* a struct variable's member: a variable of its own */
			dt_free(c->name);
			dt_free(c);
			return v;
		}
	}
	return c;
}

/*
 * A member of DTrace's own translators (dlib.c): the task's address, a
 * constant, or N_KTASK (the engine's, from the task's fields), as the
 * member's type; a char array's is the address of the task's (a char *).
 */
static struct dt_node *builtin_member(struct parser *ps, const struct dt_node *n, int builtin,
				      const char *m, const char *mt, const struct dt_pos *pos)
{
	const struct dt_dlib_member *d = dt_dlib_member(builtin, m);
	struct dt_node *c, *e;

	if (!d) {
		fail_tag(ps, "D_XLATE_NOCONV", pos,
			 "translator does not define conversion for member: %s", m);
		return NULL;
	}
	if (d->kind == 'z') {
		e = dt_parse_node(ps, N_INT);
		e->ival = d->value;
	} else if (d->kind == 'a') {
		e = copy(ps, n->a, NULL);
	} else {
		e = dt_parse_node(ps, N_KTASK);
		e->name = dt_xstrdup(m);
		e->ival = builtin;
		e->a = copy(ps, n->a, NULL);
	}
	e->pos = *pos;
	if (strchr(mt, '[')) {
		e->size = (unsigned)strtoul(strchr(mt, '[') + 1, NULL, 10); /* its elements */
		return e;
	}
	c = dt_parse_node(ps, N_CAST);
	c->pos = *pos;
	c->name = dt_xstrdup(mt);
	c->a = e;
	return c;
}

struct dt_node *dt_xlate_member(struct parser *ps, const struct dt_node *n, const char *m,
				const struct dt_pos *pos)
{
	const struct dt_xlator *x = &ps->xl[n->ival];
	const char *mt = member_type(dt_xlate_output(ps, n), m);
	struct dt_node *e = NULL, *c;
	size_t i;

	if (!mt) {
		fail_tag(ps, "D_TYPE_MEMBER", pos, "%s is not a member of %s", m, x->out);
		return NULL;
	}
	if (x->builtin)
		return builtin_member(ps, n, x->builtin, m, mt, pos);
	for (i = 0; i < x->nm; i++)
		if (!strcmp(x->mname[i], m))
			e = x->mexpr[i]; /* the last definition */
	if (!e || is_sou(mt) || strchr(mt, '[')) {
		c = dt_parse_node(ps, N_INT); /* a member not translated reads 0 */
		c->pos = *pos;
		if (e)
			fail_tag(ps, "D_UNSUPPORTED", pos,
				 "a translated member of type %s is not supported", mt);
		return c;
	}
	c = dt_parse_node(ps, N_CAST);
	c->pos = *pos;
	c->name = dt_xstrdup(mt);
	c->a = copy(ps, e, n->a);
	return c;
}

void dt_xlate_index_check(struct parser *ps, const struct dt_node *ix)
{
	const struct dt_node *a = ix->a, *k = ix->nargs == 1 ? ix->args[0] : NULL;

	if (a && a->kind == N_KTASK && a->size && k && k->kind == N_INT &&
	    (k->ival < 0 || k->ival >= (int64_t)a->size))
		fail_tag(ps, "D_ARR_BOUNDS", &k->pos, "index outside array bounds: %lld, max is %u",
			 (long long)k->ival, a->size);
}
