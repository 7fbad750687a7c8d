/* SPDX-License-Identifier: MIT */
/*
 * D's compile-time checks, before the engine: what DTrace refuses is
 * refused here, with DTrace's tag and words, so that no invalid program
 * runs and the engine only sees programs D allows.
 *
 * Theory. One table holds D's functions as DTrace declares them (actions,
 * subroutines and aggregating functions: how many arguments, of which
 * kinds, what they return); every call is checked against it
 * (D_PROTO_LEN, D_PROTO_ARG). An expression's type is inferred as far as
 * the syntax tree says it (constants, built-in variables, what a function
 * returns, variables from their first assignment in the program); an
 * unknown type is never refused. printf() and printa() formats are read
 * as DTrace reads them (printf_check.c), and aggregations must be used as
 * aggregations: assigned an aggregating function, one function and one
 * set of quantize() parameters each.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void proto_arg(struct chk *k, const struct dt_node *call, size_t i, const char *tag,
		      const char *proto, enum dt_ctype got)
{
	dt_check_proto_fail(k, call->args[i], tag, call->name, i + 1, proto, dt_ctype_name(got));
}

/* An aggregation argument of clear() & co: DTrace's tag names the function. */
static const char *aggarg_tag(const char *fn)
{
	if (!strcmp(fn, "clear"))
		return "D_CLEAR_AGGARG";
	if (!strcmp(fn, "trunc"))
		return "D_TRUNC_AGGARG";
	if (!strcmp(fn, "normalize") || !strcmp(fn, "denormalize"))
		return "D_NORMALIZE_AGGARG";
	return "D_PROTO_ARG";
}

/* ---- calls ---- */

static void expr(struct chk *k, const struct dt_node *n, bool value);

/* The arguments' own checks (an aggregating function's as an aggregation's). */
static void args(struct chk *k, const struct dt_node *n)
{
	bool in_agg = k->in_agg;
	size_t i;

	k->in_agg = false;
	for (i = 0; i < n->nargs && !k->failed; i++)
		if (n->args[i]->kind != N_AGG)
			expr(k, n->args[i], true);
	k->in_agg = in_agg;
}

/* stack(n), ustack(n, size), jstack(n, size): how many frames, how many bytes. */
static void stack_sizes(struct chk *k, const struct dt_node *n)
{
	int64_t v;
	bool u = n->name[0] != 's';

	if (strcmp(n->name, "stack") && strcmp(n->name, "ustack") && strcmp(n->name, "jstack"))
		return;
	if (n->nargs >= 1 && dt_check_const(n->args[0], &v) && v <= 0)
		dt_check_fail(k, n->args[0], u ? "D_USTACK_FRAMES" : "D_STACK_SIZE",
			      "%s( ) size must be a non-zero positive integer constant", n->name);
	else if (n->nargs >= 2 && dt_check_const(n->args[1], &v) && v <= 0)
		dt_check_fail(k, n->args[1], "D_USTACK_STRSIZE",
			      "%s( ) string size must be a non-zero positive integer constant",
			      n->name);
}

/* What some functions refuse beyond their prototype. */
/* A pointer type's pointee with the typedefs undone ("in6_addr_t *" -> "struct in6_addr"). */
static bool pointee(const struct dt_program *p, const char *ty, char *out, size_t len)
{
	size_t n = strlen(ty), i;
	int guard;

	if (n < 2 || ty[n - 1] != '*')
		return false;
	while (n > 0 && (ty[n - 1] == '*' || ty[n - 1] == ' '))
		n--;
	snprintf(out, len, "%.*s", (int)n, ty);
	for (guard = 0; guard < 16; guard++) {
		for (i = 0; i < p->ndecls; i++)
			if (p->decls[i].kind == 'T' && !strcmp(p->decls[i].name, out))
				break;
		if (i == p->ndecls || !strcmp(p->decls[i].type, out))
			break;
		snprintf(out, len, "%s", p->decls[i].type);
	}
	return true;
}

/*
 * inet_ntoa6()'s address: a pointer declared or cast to another type
 * than struct in6_addr is refused, as DTrace refuses it (its prototype).
 */
static void in6_arg(struct chk *k, const struct dt_node *n, const struct dt_node *a)
{
	const char *ty = NULL;
	char to[128];
	size_t i;

	if (a->kind == N_CAST)
		ty = a->name;
	for (i = 0; a->kind == N_IDENT && i < k->prog->ndecls; i++)
		if (k->prog->decls[i].kind == 'g' && !strcmp(k->prog->decls[i].name, a->name))
			ty = k->prog->decls[i].type;
	if (ty && pointee(k->prog, ty, to, sizeof(to)) && strcmp(to, "struct in6_addr"))
		dt_check_fail(k, a, "D_PROTO_ARG",
			      "%s( ) argument #1 is incompatible with prototype:\n\tprototype: "
			      "struct in6_addr *\n\t argument: %s",
			      n->name, ty);
}

static void special_args(struct chk *k, const struct dt_node *n)
{
	int64_t v;

	if (!strcmp(n->name, "freopen") && n->args[0]->kind == N_STR &&
	    (!strcmp(n->args[0]->str, ".") || !strcmp(n->args[0]->str, "..")))
		dt_check_fail(k, n->args[0], "D_FREOPEN_INVALID",
			      "freopen( ) argument #1 cannot be \"%s\"", n->args[0]->str);
	else if (!strcmp(n->name, "tracemem") && dt_check_const(n->args[1], &v) && v <= 0)
		dt_check_fail(k, n->args[1], "D_TRACEMEM_SIZE",
			      "tracemem( ) argument #2 must be a positive size");
	else if (!strcmp(n->name, "inet_ntoa6"))
		in6_arg(k, n, n->args[0]);
}

static void call(struct chk *k, const struct dt_node *n, bool value)
{
	const struct proto *p = dt_check_proto(n->name);
	size_t i;

	if (!p) {
		dt_check_fail(k, n, "D_FUNC_UNDEF", "failed to resolve %s: Unknown function name",
			      n->name);
		return;
	}
	if (p->kind == 'g' && !k->in_agg) {
		dt_check_fail(k, n, "D_CG_EXPR",
			      "%s( ) may only be used as the value of an aggregation", n->name);
		return;
	}
	if ((int)n->nargs < p->min || (p->max >= 0 && (int)n->nargs > p->max)) {
		const char *tag = "D_PROTO_LEN";

		if (p->min == p->max)
			dt_check_fail(k, n, tag,
				      "%s( ) prototype mismatch: %zu arg%s passed, %d expected",
				      n->name, n->nargs, n->nargs == 1 ? "" : "s", p->min);
		else
			dt_check_fail(
			    k, n, tag,
			    "%s( ) prototype mismatch: %zu arg%s passed, at %s %d expected",
			    n->name, n->nargs, n->nargs == 1 ? "" : "s",
			    (int)n->nargs < p->min ? "least" : "most",
			    (int)n->nargs < p->min ? p->min : p->max);
		return;
	}
	for (i = 0; i < n->nargs && i < strlen(p->args); i++) {
		enum dt_ctype t = dt_check_type(k, n->args[i]);
		char want = p->args[i];
		int64_t cv;
		const char *pname = i < 6 && p->names[i] ? p->names[i] : "int";

		if (want == 'a') {
			if (t != CT_AGG && t != CT_UNKNOWN)
				proto_arg(k, n, i, aggarg_tag(n->name), "aggregation", t);
			else if (t == CT_UNKNOWN && n->args[i]->kind != N_AGG)
				proto_arg(k, n, i, aggarg_tag(n->name), "aggregation", t);
			continue;
		}
		if (n->args[i]->kind == N_AGG) {
			if (!strcmp(n->name, "trace"))
				dt_check_fail(
				    k, n->args[i], "D_TRACE_DYN",
				    "trace( ) may not be applied to a dynamic expression");
			else if (p->kind == 'g')
				dt_check_fail(k, n->args[i], "D_AGG_SCALAR",
					      "%s( ) argument #%zu is an aggregation", n->name,
					      i + 1);
			else
				proto_arg(k, n, i, "D_PROTO_ARG", pname, CT_AGG);
			continue;
		}
		if (t == CT_VOID) {
			if (!strcmp(n->name, "trace"))
				dt_check_fail(k, n->args[i], "D_TRACE_VOID",
					      "trace( ) may not be applied to a void expression");
			else if (!strcmp(n->name, "stringof"))
				dt_check_fail(
				    k, n->args[i], "D_STRINGOF_TYPE",
				    "stringof( ) operand must be a string, a scalar or an "
				    "array");
			else
				proto_arg(k, n, i, p->kind == 'g' ? "D_AGG_SCALAR" : "D_PROTO_ARG",
					  pname, t);
			continue;
		}
		if (t == CT_STACK && want != 'v') {
			proto_arg(k, n, i, "D_PROTO_ARG", pname, t);
			continue;
		}
		if ((want == 'i' || want == 'c') && t == CT_STR && p->kind == 'g' && i == 0)
			dt_check_fail(k, n->args[i], "D_AGG_SCALAR",
				      "%s( ) argument #%zu must be of scalar type, not a string",
				      n->name, i + 1);
		else if ((want == 'i' || want == 'c') && t == CT_STR)
			proto_arg(k, n, i, "D_PROTO_ARG", pname, t);
		else if (want == 's' && t == CT_INT && dt_check_const(n->args[i], &cv) && !cv)
			; /* 0, D's NULL: a pointer (read at run time: DTrace's fault) */
		else if (want == 's' && (t == CT_INT || t == CT_PTR) && strcmp(n->name, "printf"))
			proto_arg(k, n, i, "D_PROTO_ARG", pname, t);
		else if (want == 's' && t == CT_INT)
			proto_arg(k, n, i, "D_PROTO_ARG", "string", t);
		else if (want == 'p' && t == CT_STR && (i || strcmp(n->name, "bcopy")))
			proto_arg(k, n, i, "D_PROTO_ARG", pname, t);
		else if (want == 'c' && p->kind != 'g' && !dt_check_const(n->args[i], &cv))
			proto_arg(k, n, i, "D_PROTO_ARG", "integer constant", t);
	}
	if (!k->failed)
		stack_sizes(k, n);
	if (k->failed)
		return;
	if (!k->failed)
		special_args(k, n);
	if (k->failed)
		return;
	if (!strcmp(n->name, "printf")) {
		bool was = k->in_fmt_args;

		/* DTrace cooks the arguments before it reads the format (and reads
		 * the format of an action only, not of a printf() used as a value) */
		k->in_fmt_args = true;
		args(k, n);
		k->in_fmt_args = was;
		if (!k->failed && !was)
			dt_check_printf(k, n);
	} else if (!strcmp(n->name, "printa"))
		dt_check_printa(k, n);
	else if (p->kind == 'g')
		dt_check_aggfn(k, n);
	if (!k->failed && strcmp(n->name, "printf"))
		args(k, n);
	if (value && p->kind == 'a' && p->ret == CT_VOID && k->in_key)
		dt_check_fail(k, n, "D_KEY_TYPE", "%s( ) returns void: it cannot be a key",
			      n->name);
}

/* ---- expressions and statements ---- */

/* A this-> variable assigned a value (a string, a pointer): `this->s[1]` indexes it. */
static bool is_this_var(const struct chk *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->nvars; i++)
		if (k->vars[i].kind == 't' && !strcmp(k->vars[i].name, name))
			return true;
	for (i = 0; i < k->ndefined; i++)
		if (!strncmp(k->defined[i], "this->", 6) && !strcmp(k->defined[i] + 6, name))
			return true;
	return false;
}

/* A global declared an array of a size (`int x[5]`): no associative array. */
static bool is_sized_array(const struct chk *k, const char *name)
{
	size_t i;

	for (i = 0; k->prog && i < k->prog->ndecls; i++)
		if (k->prog->decls[i].kind == 'g' && !strcmp(k->prog->decls[i].name, name))
			return k->prog->decls[i].type && strchr(k->prog->decls[i].type, '[');
	return false;
}

/* A struct variable's bit-field member (`var.a`: the parser's variable of its own). */
static bool is_bitfield(const struct chk *k, const struct dt_node *n)
{
	size_t i;

	if (!n || n->kind != N_IDENT || !n->name || !strchr(n->name, '.') || !k->prog)
		return false;
	for (i = 0; i < k->prog->ndecls; i++)
		if (k->prog->decls[i].kind == 'g' && !strcmp(k->prog->decls[i].name, n->name))
			return k->prog->decls[i].bits > 0;
	return false;
}

static void expr(struct chk *k, const struct dt_node *n, bool value)
{
	size_t i;

	if (!n || k->failed)
		return;
	switch (n->kind) {
	case N_CALL:
		call(k, n, value);
		return;
	case N_UNARY:
		if (n->op[0] == '&' && !n->op[1] && is_bitfield(k, n->a)) {
			dt_check_fail(k, n, "D_ADDROF_BITFIELD",
				      "cannot take address of bit-field");
			return;
		}
		if (n->op[0] == '&' && n->a && n->a->kind == N_AGG) {
			dt_check_fail(k, n, "D_ADDROF_VAR",
				      "cannot take address of dynamic variable");
			return;
		}
		break;
	case N_AGG:
		if (value)
			dt_check_fail(k, n, k->in_key ? "D_KEY_TYPE" : "D_OP_INCOMPAT",
				      "@%s: an aggregation cannot be used as a value", n->name);
		return;
	case N_ASSIGN:
		if (n->a && n->a->kind == N_AGG) {
			bool key = k->in_key;

			k->in_key = true;
			for (i = 0; i < n->a->nargs; i++)
				expr(k, n->a->args[i], true);
			k->in_key = key;
			if (k->failed || !dt_check_aggfn_of(k, n))
				return;
			k->in_agg = true;
			expr(k, n->b, true);
			k->in_agg = false;
			if (!k->failed)
				dt_check_aggassign(k, n);
			return;
		}
		/* the variable exists from its first assignment on, in the program's order
		 * (DTrace's: `x = x + 1` defines x, a read before is D_IDENT_UNDEF);
		 * `x -= 1` needs x to exist */
		if (n->a && n->a->kind == N_IDENT && strcmp(n->op, "=") &&
		    !dt_check_ident_defined(k, n->a->name)) {
			dt_check_fail(k, n->a, "D_VAR_UNDEF",
				      "%s has not yet been declared or assigned", n->a->name);
			return;
		}
		if (n->a && n->a->kind == N_IDENT)
			dt_check_ident_written(k, n->a);
		if (n->a && n->a->kind == N_THIS && n->a->name && !is_this_var(k, n->a->name)) {
			struct dt_buf b = {0}; /* "this->x" among the defined: it is no array */

			dt_buf_printf(&b, "this->%s", n->a->name);
			DT_PUSH(k->defined, k->ndefined, b.s);
		}
		expr(k, n->b, true);
		expr(k, n->a, false);
		dt_check_alloca_arith(k, n);
		dt_check_ops(k, n);
		if (!k->failed)
			dt_check_note_assign(k, n->a, n->b);
		dt_check_alloca_assign(k, n);
		return;
	case N_IDENT:
		if (value)
			dt_check_ident_read(k, n, "D_IDENT_UNDEF");
		dt_check_ops(k, n);
		return;
	case N_INCDEC:
		if (n->a && n->a->kind == N_IDENT)
			dt_check_ident_written(k, n->a);
		expr(k, n->a, false);
		dt_check_ops(k, n);
		return;
	case N_ARGS:
		if (k->no_args)
			dt_check_fail(k, n, "D_ARGS_IDX",
				      "index %lld is out of range for this probe's args[ ]: it has "
				      "none",
				      (long long)n->ival);
		return;
	case N_INDEX: {
		bool was = k->in_key;

		if (n->a && n->a->kind == N_THIS && !is_this_var(k, n->name)) {
			dt_check_fail(k, n, "D_ARR_LOCAL",
				      "local variables may not be used as associative arrays: %s",
				      n->name);
			return;
		}
		if (!n->a && n->nargs != 1 && is_sized_array(k, n->name)) {
			dt_check_fail(k, n, "D_ARR_BADREF",
				      "cannot access scalar %s as an associative array", n->name);
			return;
		}

		k->in_key = true;
		for (i = 0; i < n->nargs; i++)
			expr(k, n->args[i], true);
		k->in_key = was;
		if (!k->failed && (n->a ? n->a->kind == N_SELF : true))
			dt_check_index(k, n);
		return;
	}
	case N_SIZEOF:
		if (is_bitfield(k, n->a)) {
			dt_check_fail(k, n, "D_SIZEOF_BITFIELD",
				      "cannot apply sizeof to a bit-field");
			return;
		}
		break;
	default:
		break;
	}
	if ((n->kind == N_BINARY || n->kind == N_ASSIGN) && (n->op[0] == '/' || n->op[0] == '%') &&
	    (!n->op[1] || n->op[1] == '=') && n->b) {
		int64_t v;

		if (dt_check_const(n->b, &v) && v == 0) {
			dt_check_fail(k, n, "D_DIV_ZERO", "expression contains division by zero");
			return;
		}
	}
	expr(k, n->a, true);
	expr(k, n->b, true);
	expr(k, n->c, true);
	for (i = 0; i < n->nargs; i++)
		expr(k, n->args[i], true);
	dt_check_alloca_arith(k, n);
	dt_check_ops(k, n);
}

static void stmts(struct chk *k, struct dt_stmt **v, size_t n)
{
	size_t i;

	for (i = 0; i < n && !k->failed; i++) {
		const struct dt_stmt *s = v[i];

		if (s->is_if) {
			expr(k, s->e, true);
			stmts(k, s->then, s->nthen);
			stmts(k, s->els, s->nels);
			continue;
		}
		if (s->e && s->e->kind == N_AGG) {
			if (s->e->nargs || dt_check_agg_known(k, s->e->name))
				/* DTrace: @a[k] has null effect; @a unknown is unknown */
				dt_check_fail(k, s->e, "D_AGG_NULL",
					      "expression has null effect: @%s is not assigned",
					      s->e->name);
			else
				dt_check_fail(k, s->e, "D_IDENT_UNDEF",
					      "failed to resolve @%s: Unknown variable name",
					      s->e->name);
			continue;
		}
		expr(k, s->e, false);
	}
}

/*
 * A tick-N/profile-N description DTrace has no probe for: a rate it does
 * not take (a unit it does not know, or more often than every 200 us).
 */
static void timer_desc(struct chk *k, const struct dt_pdesc *d)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1},	     {"nsec", 1},      {"us", 1e3},   {"usec", 1e3},
		     {"ms", 1e6},    {"msec", 1e6},    {"s", 1e9},    {"sec", 1e9},
		     {"m", 60e9},    {"min", 60e9},    {"h", 3600e9}, {"hour", 3600e9},
		     {"d", 86400e9}, {"day", 86400e9}, {"hz", 0},     {"", 0}};
	const char *name = d->field[3], *p;
	char *end;
	double n, ns = -1;
	size_t i;

	if ((*d->field[0] && strcmp(d->field[0], "profile")) || *d->field[1] || *d->field[2])
		return;
	if (!strncmp(name, "tick-", 5))
		p = name + 5;
	else if (!strncmp(name, "profile-", 8))
		p = name + 8;
	else
		return;
	if (strpbrk(name, "*?[\\"))
		return;
	n = strtod(p, &end);
	if (end != p && n > 0 && strspn(p, "0123456789") == (size_t)(end - p))
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].unit))
				ns = units[i].ns ? n * units[i].ns : 1e9 / n;
	if (ns < 0 || ns < 200e3) {
		struct dt_node at;

		memset(&at, 0, sizeof(at));
		at.pos = d->pos;
		dt_check_fail(k, &at, "D_PDESC_ZERO",
			      "probe description %s does not match any probes%s", d->text,
			      ns < 0 ? "" : " (a tick or profile interval is at least 200us)");
	}
}

/* args[N] in a clause of BEGIN/END/ERROR only: those probes have no arguments. */
static bool no_args_probe(const struct dt_clause *c)
{
	size_t i;

	for (i = 0; i < c->ndescs; i++) {
		const struct dt_pdesc *d = &c->descs[i];

		if ((*d->field[0] && strcmp(d->field[0], "dtrace")) || *d->field[1] ||
		    *d->field[2] ||
		    (strcmp(d->field[3], "BEGIN") && strcmp(d->field[3], "END") &&
		     strcmp(d->field[3], "ERROR")))
			return false;
	}
	return c->ndescs > 0;
}

/* The globals a predicate assigns (=, op=, ++, --): its clause's actions see them. */
static void writes(struct chk *k, const struct dt_node *n)
{
	size_t i;

	if (!n)
		return;
	if ((n->kind == N_ASSIGN || n->kind == N_INCDEC) && n->a && n->a->kind == N_IDENT)
		dt_check_ident_written(k, n->a);
	writes(k, n->a);
	writes(k, n->b);
	writes(k, n->c);
	for (i = 0; i < n->nargs; i++)
		writes(k, n->args[i]);
}

int dt_check(struct dt_program *prog, struct usdt_diag *diag)
{
	struct chk k;
	size_t i;

	memset(&k, 0, sizeof(k));
	k.diag = diag;
	k.prog = prog;
	for (i = 0; i < prog->nclauses && !k.failed; i++) {
		const struct dt_clause *c = prog->clauses[i];
		size_t j;

		for (j = 0; j < c->ndescs && !k.failed; j++)
			timer_desc(&k, &c->descs[j]);
		/*
		 * As DTrace compiles a clause: its actions, then its predicate (which
		 * so sees what they assign); actions that read what only the predicate
		 * assigns are compiled again after it (so they see that too)
		 */
		k.no_args = no_args_probe(c);
		writes(&k, c->pred);
		stmts(&k, c->body, c->nbody);
		if (c->pred) {
			expr(&k, c->pred, true);
			if (!k.failed &&
			    (dt_check_type(&k, c->pred) == CT_VOID ||
			     (c->pred->kind == N_IDENT && is_sized_array(&k, c->pred->name))))
				dt_check_fail(&k, c->pred, "D_PRED_SCALAR",
					      "predicate result must be of scalar type");
		}
		if (!k.failed)
			dt_check_spec_order(&k, c);
	}
	dt_free(k.vars);
	dt_free(k.aggs);
	dt_free(k.arrs);
	dt_free(k.defined);
	dt_free(k.allocas);
	return k.failed ? -1 : 0;
}
