/* SPDX-License-Identifier: MIT */
/*
 * D's checks of operators and arrays (check.c's theory): an operator is
 * given operands of the kinds it takes (D_OP_ARITH for arithmetic, D_OP_INT
 * for the bitwise ones, D_OP_SCALAR for the logical ones and ++/--,
 * D_OP_ACT for an action's void in ?:), and an associative array keeps
 * the number and the kinds of keys of its first use (D_PROTO_LEN,
 * D_PROTO_ARG).
 */
#include <string.h>

#include "check.h"

static bool is_void_or_str(enum dt_ctype t)
{
	return t == CT_VOID || t == CT_STR;
}

static void operand(struct chk *k, const struct dt_node *n, const struct dt_node *a,
		    const char *tag, const char *what)
{
	enum dt_ctype t = dt_check_type(k, a);

	if (is_void_or_str(t) || t == CT_STACK)
		dt_check_fail(k, n, tag, "operator %s requires an operand of %s type", n->op, what);
}

void dt_check_ops(struct chk *k, const struct dt_node *n)
{
	static const char *const arith[] = {"+", "-", "*", "/", NULL};
	static const char *const bits[] = {"%", "&", "|", "^", "<<", ">>", NULL};
	static const char *const logic[] = {"&&", "||", "^^", NULL};
	size_t i;

	if (k->failed)
		return;
	switch (n->kind) {
	case N_UNARY:
		if (!strcmp(n->op, "-") || !strcmp(n->op, "+"))
			operand(k, n, n->a, "D_OP_ARITH", "arithmetic");
		else if (!strcmp(n->op, "~"))
			operand(k, n, n->a, "D_OP_INT", "integral");
		else if (!strcmp(n->op, "!") && dt_check_type(k, n->a) == CT_VOID)
			operand(k, n, n->a, "D_OP_SCALAR", "scalar");
		return;
	case N_INCDEC:
		operand(k, n, n->a, "D_OP_SCALAR", "scalar");
		return;
	case N_TERNARY:
		if (is_void_or_str(dt_check_type(k, n->a)))
			dt_check_fail(k, n, "D_OP_SCALAR",
				      "operator ?: expression must be of scalar type");
		else if (dt_check_type(k, n->b) == CT_VOID || dt_check_type(k, n->c) == CT_VOID)
			dt_check_fail(
			    k, n, "D_OP_ACT",
			    "operator ?: operands cannot be actions, which have no value");
		return;
	case N_BINARY:
	case N_ASSIGN:
		for (i = 0; arith[i]; i++)
			if (!strncmp(n->op, arith[i], 1) &&
			    (n->kind == N_ASSIGN ? n->op[1] == '=' && !n->op[2] : !n->op[1])) {
				if (n->kind == N_BINARY && n->op[0] == '+' &&
				    (dt_check_type(k, n->a) == CT_STR) !=
					(dt_check_type(k, n->b) == CT_STR)) {
					/* a string (a char array) plus an integer: a string */
					operand(k, n,
						dt_check_type(k, n->a) == CT_STR ? n->b : n->a,
						"D_OP_ARITH", "arithmetic");
					return;
				}
				if (n->kind == N_BINARY)
					operand(k, n, n->a, "D_OP_ARITH", "arithmetic");
				operand(k, n, n->b,
					n->kind == N_ASSIGN && dt_check_type(k, n->b) == CT_STR
					    ? "D_OP_INCOMPAT"
					    : "D_OP_ARITH",
					"arithmetic");
				return;
			}
		for (i = 0; bits[i]; i++) {
			size_t l = strlen(bits[i]);

			if (!strncmp(n->op, bits[i], l) &&
			    (n->kind == N_ASSIGN ? n->op[l] == '=' && !n->op[l + 1] : !n->op[l])) {
				if (n->kind == N_BINARY)
					operand(k, n, n->a, "D_OP_INT", "integral");
				operand(k, n, n->b, "D_OP_INT", "integral");
				return;
			}
		}
		for (i = 0; logic[i] && n->kind == N_BINARY; i++)
			if (!strcmp(n->op, logic[i])) {
				operand(k, n, n->a, "D_OP_SCALAR", "scalar");
				operand(k, n, n->b, "D_OP_SCALAR", "scalar");
				return;
			}
		if (n->kind == N_ASSIGN && dt_check_type(k, n->b) == CT_VOID)
			dt_check_fail(k, n, "D_OP_VOID",
				      "operator %s: a void value cannot be assigned", n->op);
		return;
	case N_IDENT:
		if (!strcmp(n->name, "args"))
			dt_check_fail(k, n, "D_IDENT_BADREF",
				      "args[ ] may not be referenced as a scalar: index it");
		return;
	default:
		return;
	}
}

void dt_check_index(struct chk *k, const struct dt_node *n)
{
	char kind = n->a && n->a->kind == N_SELF ? 'S' : 'a';
	struct arrty *a = NULL, na;
	size_t i;

	for (i = 0; i < k->narrs; i++)
		if (k->arrs[i].kind == kind && !strcmp(k->arrs[i].name, n->name))
			a = &k->arrs[i];
	if (!a) {
		memset(&na, 0, sizeof(na));
		na.kind = kind;
		na.name = n->name;
		na.nkeys = n->nargs;
		for (i = 0; i < n->nargs && i < 8; i++)
			na.keys[i] = dt_check_type(k, n->args[i]);
		DT_PUSH(k->arrs, k->narrs, na);
		return;
	}
	if (n->nargs != a->nkeys) {
		dt_check_fail(k, n, "D_PROTO_LEN",
			      "%s[ ] prototype mismatch: %zu arg%s passed, %zu expected", n->name,
			      n->nargs, n->nargs == 1 ? "" : "s", a->nkeys);
		return;
	}
	for (i = 0; i < n->nargs && i < 8; i++) {
		enum dt_ctype t = dt_check_type(k, n->args[i]);

		if (t != CT_UNKNOWN && a->keys[i] != CT_UNKNOWN && t != a->keys[i] &&
		    !(t == CT_PTR && a->keys[i] == CT_INT) &&
		    !(t == CT_INT && a->keys[i] == CT_PTR)) {
			dt_check_fail(
			    k, n->args[i], "D_PROTO_ARG",
			    "%s[ ] key #%zu is incompatible with prototype:\n\tprototype: "
			    "%s\n\t argument: %s",
			    n->name, i + 1, dt_ctype_name(a->keys[i]), dt_ctype_name(t));
			return;
		}
	}
}
