/* SPDX-License-Identifier: MIT */
/*
 * A variable of a struct type as D's tree keeps it (above parse_decl.c,
 * under parse_expr.c and parse.c): a struct variable's member `s.m`, and
 * an associative array of structs' `a[k].m`, are variables of their own
 * (flattened names), placed by the declarations parse_decl.c keeps
 * (dt_parse_find(), dt_parse_resolve()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int dt_parse_member(struct parser *ps, char kind, const char *var, const char *member, char **flat)
{
	const struct dt_decl *v = dt_parse_find(ps, kind, var), *s;
	const char *ty = v ? dt_parse_resolve(ps, v->type) : NULL;
	struct dt_buf b = {0};
	size_t i;

	if (!ty || (strncmp(ty, "struct ", 7) && strncmp(ty, "union ", 6)))
		return -1;
	if (ty[0] == 'u')
		return -2;
	s = dt_parse_find(ps, 'S', ty);
	if (!s)
		return -3;
	for (i = 0; kind == 'g' && i < s->nmembers && !s->members[i].bits; i++)
		;
	if (kind == 'g' && i == s->nmembers)
		return -5; /* a global struct without bit-fields: memory, its members there */
	for (i = 0; i < s->nmembers; i++)
		if (s->members[i].name && !strcmp(s->members[i].name, member))
			break;
	if (i == s->nmembers)
		return -4;
	dt_buf_printf(&b, "%s.%s", var, member);
	if (!dt_parse_find(ps, kind, b.s)) {
		struct dt_decl d = {.kind = kind, .pos = ps->lx.pos};

		d.name = dt_xstrdup(b.s);
		d.type = dt_xstrdup(s->members[i].type);
		d.bits = s->members[i].bits;
		DT_PUSH(ps->prog->decls, ps->prog->ndecls, d);
	}
	*flat = b.s;
	return 0;
}

int dt_parse_assoc_member(struct parser *ps, const char *array, const char *member, char **flat)
{
	const struct dt_decl *a = dt_parse_find(ps, 'A', array), *s;
	const char *ty = a ? dt_parse_resolve(ps, a->type) : NULL;
	struct dt_buf b = {0};
	size_t i;

	if (!ty || strncmp(ty, "struct ", 7) || strchr(ty, '*') ||
	    !(s = dt_parse_find(ps, 'S', ty)))
		return -1;
	for (i = 0; i < s->nmembers; i++)
		if (s->members[i].name && !strcmp(s->members[i].name, member))
			break;
	if (i == s->nmembers)
		return -4;
	dt_buf_printf(&b, "%s.%s", array, member);
	*flat = b.s;
	return 0;
}

const struct dt_decl *dt_parse_place_struct(struct parser *ps, const struct dt_node *n)
{
	const char *ty = NULL;
	size_t i;

	if (n->kind == N_IDENT || n->kind == N_SELF || n->kind == N_THIS) {
		const struct dt_decl *v = dt_parse_find(ps,
							n->kind == N_IDENT  ? 'g'
							: n->kind == N_SELF ? 's'
									    : 't',
							n->name);

		ty = v ? v->type : NULL;
	} else if (n->kind == N_MEMBER && n->op[0] == '.') {
		const struct dt_decl *s = dt_parse_place_struct(ps, n->a);

		for (i = 0; s && i < s->nmembers; i++)
			if (s->members[i].name && !strcmp(s->members[i].name, n->name))
				ty = s->members[i].type;
	}
	ty = dt_parse_resolve(ps, ty);
	if (!ty || strncmp(ty, "struct ", 7))
		return NULL;
	return dt_parse_find(ps, 'S', ty);
}

void dt_parse_declare_as(struct parser *ps, const struct dt_node *n, const char *type)
{
	char kind = n->kind == N_IDENT	? 'g'
		    : n->kind == N_SELF ? 's'
		    : n->kind == N_THIS ? 't'
					: 0;
	struct dt_decl d = {.kind = kind, .pos = n->pos};

	if (!kind || strchr(n->name, '.') || dt_parse_find(ps, kind, n->name))
		return;
	d.name = dt_xstrdup(n->name);
	d.type = dt_xstrdup(type);
	if (kind == 'g')
		DT_PUSH(ps->prog->declared, ps->prog->ndeclared, dt_xstrdup(n->name));
	DT_PUSH(ps->prog->decls, ps->prog->ndecls, d);
}
