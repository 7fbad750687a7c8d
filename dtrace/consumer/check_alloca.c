/* SPDX-License-Identifier: MIT */
/*
 * alloca()'s taint, as DTrace checks it (under check.c).
 *
 * Theory. A pointer into alloca()'s scratch and a pointer anywhere else are
 * different things to DTrace (it checks each access to scratch against the
 * scratch's bounds), so a variable is one or the other for the whole
 * program: the first assignment of a pointer decides, and a later
 * assignment of the other kind is D_ALLOCA_INCOMPAT ("cannot reuse the
 * same identifier"). A ternary whose one branch is alloca()'s and the other
 * not has no kind: assigning it is D_ALLOCA_INCOMPAT too (using it
 * otherwise, `trace(c ? a : p)`, is fine). What is alloca()'s: a call of
 * it, a variable that holds it, casts of it and arithmetic on it. What is
 * not: an address taken (`&x`), a constant other than 0 cast to a pointer,
 * a variable that holds those. Anything else (NULL, 0, integers, strings,
 * what this consumer cannot type) is neither and never refused.
 */
#include <string.h>

#include "check.h"

enum { NEITHER, ALLOCA, OTHER, MIXED };

static const struct allocavar *find(const struct chk *k, const struct dt_node *v)
{
	size_t i;

	for (i = 0; i < k->nallocas; i++)
		if (k->allocas[i].kind == v->kind && !strcmp(k->allocas[i].name, v->name))
			return &k->allocas[i];
	return NULL;
}

static bool is_var(const struct dt_node *n)
{
	return n && n->name && (n->kind == N_IDENT || n->kind == N_SELF || n->kind == N_THIS);
}

static int taint(const struct chk *k, const struct dt_node *n)
{
	int a, b;

	if (!n)
		return NEITHER;
	if (is_var(n)) {
		const struct allocavar *v = find(k, n);

		return v ? v->taint : NEITHER;
	}
	switch (n->kind) {
	case N_CALL:
		return n->name && !strcmp(n->name, "alloca") ? ALLOCA : NEITHER;
	case N_CAST:
		if (n->a && n->a->kind == N_INT)
			return n->a->ival && n->name && strchr(n->name, '*') ? OTHER : NEITHER;
		return taint(k, n->a);
	case N_UNARY:
		return n->op[0] == '&' && !n->op[1] ? OTHER : NEITHER;
	case N_BINARY:
		if (n->op[1] || (n->op[0] != '+' && n->op[0] != '-'))
			return NEITHER;
		a = taint(k, n->a);
		b = taint(k, n->b);
		return a == NEITHER ? b : b == NEITHER ? a : a == b ? a : NEITHER;
	case N_TERNARY:
		a = taint(k, n->b);
		b = taint(k, n->c);
		if ((a == ALLOCA && b == OTHER) || (a == OTHER && b == ALLOCA) || a == MIXED ||
		    b == MIXED)
			return MIXED;
		return a == NEITHER ? b : a;
	case N_ASSIGN:
		return n->op[0] == '=' && !n->op[1] ? taint(k, n->b) : NEITHER;
	default:
		return NEITHER;
	}
}

void dt_check_alloca_assign(struct chk *k, const struct dt_node *n)
{
	const struct allocavar *v;
	int t;

	if (k->failed || n->kind != N_ASSIGN || strcmp(n->op, "=") || !is_var(n->a))
		return;
	t = taint(k, n->b);
	if (t == MIXED) {
		dt_check_fail(k, n, "D_ALLOCA_INCOMPAT",
			      "ternary conditional with alloca and non-alloca branches cannot be "
			      "assigned to a variable");
		return;
	}
	if (t == NEITHER)
		return;
	v = find(k, n->a);
	if (v && v->taint != t) {
		dt_check_fail(k, n, "D_ALLOCA_INCOMPAT",
			      "%s: cannot reuse the same identifier for both alloca and non-alloca "
			      "allocations",
			      n->a->name);
		return;
	}
	if (!v) {
		struct allocavar nv = {.kind = n->a->kind, .name = n->a->name, .taint = t};

		DT_PUSH(k->allocas, k->nallocas, nv);
	}
}

/* `p -= alloca(10)`: arithmetic on alloca()'s void * (a size unknown), D_OP_VFPTR. */
void dt_check_alloca_arith(struct chk *k, const struct dt_node *n)
{
	const struct dt_node *v = NULL;

	if (k->failed || (n->kind != N_BINARY && n->kind != N_ASSIGN) ||
	    (n->op[0] != '+' && n->op[0] != '-') || (n->op[1] && n->op[1] != '='))
		return;
	if (n->b && n->b->kind == N_CALL && !strcmp(n->b->name, "alloca"))
		v = n->b;
	else if (n->kind == N_BINARY && n->a && n->a->kind == N_CALL &&
		 !strcmp(n->a->name, "alloca"))
		v = n->a;
	if (v)
		dt_check_fail(k, n, "D_OP_VFPTR",
			      "operator %s cannot be applied to alloca( )'s void *: cast it to a "
			      "pointer to a type of known size",
			      n->op);
}
