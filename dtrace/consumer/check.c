/* SPDX-License-Identifier: MIT */
/*
 * D's compile-time checks, before either engine: what DTrace refuses is
 * refused here, with DTrace's tag and words, so that no invalid program
 * runs and the engines only see programs D allows.
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

static const char *const str_vars[] = {"execname", "probefunc", "probename", "probemod",
				       "probeprov", "cwd",	 "root",      "zonename",
				       NULL};

/*
 * D's functions. args: one letter per argument: i an integer, s a string,
 * p an address (an integer or a pointer), a an aggregation, v any value,
 * c a constant integer; the names are DTrace's, for the messages.
 */
struct proto {
	const char *name;
	char kind; /* 'a' action, 's' subroutine, 'g' aggregating function */
	int min, max; /* max -1: any number */
	const char *args;
	const char *names[6];
	enum dt_ctype ret;
};

static const struct proto protos[] = {
    {"exit", 'a', 1, 1, "i", {"int"}, CT_VOID},
    {"trace", 'a', 1, 1, "v", {"any value"}, CT_VOID},
    {"printf", 'a', 1, -1, "s", {"string"}, CT_VOID},
    {"printa", 'a', 1, -1, "", {""}, CT_VOID},
    {"print", 'a', 1, 1, "v", {"any value"}, CT_VOID},
    {"tracemem", 'a', 2, 3, "pii", {"void *", "size_t", "size_t"}, CT_VOID},
    {"stack", 'a', 0, 1, "c", {"int"}, CT_STACK},
    {"ustack", 'a', 0, 2, "cc", {"int", "int"}, CT_STACK},
    {"jstack", 'a', 0, 2, "cc", {"int", "int"}, CT_STACK},
    {"clear", 'a', 1, 1, "a", {"aggregation"}, CT_VOID},
    {"trunc", 'a', 1, 2, "ai", {"aggregation", "uint64_t"}, CT_VOID},
    {"normalize", 'a', 2, 2, "ai", {"aggregation", "uint64_t"}, CT_VOID},
    {"denormalize", 'a', 1, 1, "a", {"aggregation"}, CT_VOID},
    {"setopt", 'a', 1, 2, "ss", {"const char *", "const char *"}, CT_VOID},
    {"raise", 'a', 1, 1, "i", {"int"}, CT_VOID},
    {"stop", 'a', 0, 0, "", {""}, CT_VOID},
    {"breakpoint", 'a', 0, 0, "", {""}, CT_VOID},
    {"panic", 'a', 0, 0, "", {""}, CT_VOID},
    {"chill", 'a', 1, 1, "i", {"int"}, CT_VOID},
    {"system", 'a', 1, -1, "s", {"string"}, CT_VOID},
    {"freopen", 'a', 1, -1, "s", {"string"}, CT_VOID},
    {"ftruncate", 'a', 0, 0, "", {""}, CT_VOID},
    {"copyout", 'a', 3, 3, "ppi", {"void *", "uintptr_t", "size_t"}, CT_VOID},
    {"copyoutstr", 'a', 3, 3, "spi", {"char *", "uintptr_t", "size_t"}, CT_VOID},
    {"speculate", 'a', 1, 1, "i", {"int"}, CT_VOID},
    {"commit", 'a', 1, 1, "i", {"int"}, CT_VOID},
    {"discard", 'a', 1, 1, "i", {"int"}, CT_VOID},
    {"pcap", 'a', 2, 2, "pi", {"void *", "int"}, CT_VOID},
    {"speculation", 's', 0, 0, "", {""}, CT_INT},
    {"stringof", 's', 1, 1, "v", {"any value"}, CT_STR},
    {"strlen", 's', 1, 1, "s", {"const char *"}, CT_INT},
    {"strjoin", 's', 2, 2, "ss", {"const char *", "const char *"}, CT_STR},
    {"substr", 's', 2, 3, "sii", {"const char *", "int", "int"}, CT_STR},
    {"index", 's', 2, 3, "ssi", {"const char *", "const char *", "int"}, CT_INT},
    {"rindex", 's', 2, 3, "ssi", {"const char *", "const char *", "int"}, CT_INT},
    {"strchr", 's', 2, 2, "si", {"const char *", "char"}, CT_STR},
    {"strrchr", 's', 2, 2, "si", {"const char *", "char"}, CT_STR},
    {"strstr", 's', 2, 2, "ss", {"const char *", "const char *"}, CT_STR},
    {"strtok", 's', 2, 2, "ss", {"char *", "const char *"}, CT_STR},
    {"basename", 's', 1, 1, "s", {"const char *"}, CT_STR},
    {"dirname", 's', 1, 1, "s", {"const char *"}, CT_STR},
    {"cleanpath", 's', 1, 1, "s", {"const char *"}, CT_STR},
    {"toupper", 's', 1, 1, "s", {"const char *"}, CT_STR},
    {"tolower", 's', 1, 1, "s", {"const char *"}, CT_STR},
    {"lltostr", 's', 1, 2, "ii", {"int64_t", "int"}, CT_STR},
    {"strtoll", 's', 1, 2, "si", {"const char *", "int"}, CT_INT},
    {"htons", 's', 1, 1, "i", {"uint16_t"}, CT_INT},
    {"htonl", 's', 1, 1, "i", {"uint32_t"}, CT_INT},
    {"htonll", 's', 1, 1, "i", {"uint64_t"}, CT_INT},
    {"ntohs", 's', 1, 1, "i", {"uint16_t"}, CT_INT},
    {"ntohl", 's', 1, 1, "i", {"uint32_t"}, CT_INT},
    {"ntohll", 's', 1, 1, "i", {"uint64_t"}, CT_INT},
    {"copyin", 's', 2, 2, "pi", {"uintptr_t", "size_t"}, CT_PTR},
    {"copyinstr", 's', 1, 2, "pi", {"uintptr_t", "size_t"}, CT_STR},
    {"copyinto", 'a', 3, 3, "pip", {"uintptr_t", "size_t", "void *"}, CT_VOID},
    {"alloca", 's', 1, 1, "i", {"size_t"}, CT_PTR},
    {"bcopy", 'a', 3, 3, "ppi", {"void *", "void *", "size_t"}, CT_VOID},
    {"rand", 's', 0, 0, "", {""}, CT_INT},
    {"progenyof", 's', 1, 1, "i", {"pid_t"}, CT_INT},
    {"getmajor", 's', 1, 1, "i", {"dev_t"}, CT_INT},
    {"getminor", 's', 1, 1, "i", {"dev_t"}, CT_INT},
    {"mutex_owned", 's', 1, 1, "p", {"struct mutex *"}, CT_INT},
    {"mutex_owner", 's', 1, 1, "p", {"struct mutex *"}, CT_PTR},
    {"mutex_type_adaptive", 's', 1, 1, "p", {"struct mutex *"}, CT_INT},
    {"mutex_type_spin", 's', 1, 1, "p", {"struct mutex *"}, CT_INT},
    {"rw_read_held", 's', 1, 1, "p", {"rwlock_t *"}, CT_INT},
    {"rw_write_held", 's', 1, 1, "p", {"rwlock_t *"}, CT_INT},
    {"rw_iswriter", 's', 1, 1, "p", {"rwlock_t *"}, CT_INT},
    {"inet_ntoa", 's', 1, 1, "p", {"ipaddr_t *"}, CT_STR},
    {"inet_ntoa6", 's', 1, 2, "pi", {"struct in6_addr *", "int"}, CT_STR},
    {"inet_ntop", 's', 2, 2, "ip", {"int", "void *"}, CT_STR},
    {"d_path", 's', 1, 1, "p", {"struct path *"}, CT_STR},
    {"link_ntop", 's', 2, 2, "ip", {"int", "void *"}, CT_STR},
    {"getpid", 's', 0, 0, "", {""}, CT_INT},
    {"func", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"ufunc", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"mod", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"umod", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"sym", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"usym", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"uaddr", 's', 1, 1, "p", {"uintptr_t"}, CT_PTR},
    {"count", 'g', 0, 0, "", {""}, CT_VOID},
    {"sum", 'g', 1, 1, "i", {"int64_t"}, CT_VOID},
    {"avg", 'g', 1, 1, "i", {"int64_t"}, CT_VOID},
    {"min", 'g', 1, 1, "i", {"int64_t"}, CT_VOID},
    {"max", 'g', 1, 1, "i", {"int64_t"}, CT_VOID},
    {"stddev", 'g', 1, 1, "i", {"int64_t"}, CT_VOID},
    {"quantize", 'g', 1, 2, "ii", {"int64_t", "int64_t"}, CT_VOID},
    {"lquantize", 'g', 3, 5, "iccci", {"int64_t", "int", "int", "int", "int64_t"}, CT_VOID},
    {"llquantize", 'g', 5, 6, "icccci", {"int64_t", "int", "int", "int", "int", "int64_t"}, CT_VOID},
};

static const struct proto *dt_check_proto(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (!strcmp(protos[i].name, name))
			return &protos[i];
	return NULL;
}

bool dt_check_known(const char *name)
{
	return dt_check_proto(name) != NULL;
}

const char *dt_ctype_name(enum dt_ctype t)
{
	switch (t) {
	case CT_INT:
		return "int";
	case CT_STR:
		return "string";
	case CT_VOID:
		return "void";
	case CT_AGG:
		return "aggregation";
	case CT_PTR:
		return "void *";
	case CT_STACK:
		return "stack";
	default:
		return "unknown";
	}
}

/* ---- variables' types, from their first assignment ---- */

static struct vty *var_find(struct chk *k, char kind, const char *name)
{
	size_t i;

	for (i = 0; i < k->nvars; i++)
		if (k->vars[i].kind == kind && !strcmp(k->vars[i].name, name))
			return &k->vars[i];
	return NULL;
}

static char var_kind(const struct dt_node *n)
{
	if (n->kind == N_SELF)
		return 's';
	if (n->kind == N_THIS)
		return 't';
	if (n->kind == N_IDENT)
		return 'g';
	if (n->kind == N_INDEX)
		return n->a && n->a->kind == N_SELF ? 'S' : 'a';
	return 0;
}

static const char *const ptr_vars[] = {"curthread", "curcpu", "curlwpsinfo", "curpsinfo",
				       "uregs", NULL};
static const char *const int_vars[] = {"pid",	     "ppid",	      "tid",	      "uid",
				       "gid",	     "timestamp",     "vtimestamp",   "walltimestamp",
				       "epid",	     "id",	      "cpu",	      "errno",
				       "stackdepth", "ustackdepth",   "caller",	      "ucaller",
				       "ipl",	     "projid",	      "taskid",	      NULL};

static bool in_list(const char *const *l, const char *name)
{
	for (; *l; l++)
		if (!strcmp(*l, name))
			return true;
	return false;
}

static bool is_str_var(const char *name)
{
	size_t i;

	for (i = 0; str_vars[i]; i++)
		if (!strcmp(str_vars[i], name))
			return true;
	return false;
}

enum dt_ctype dt_check_type(struct chk *k, const struct dt_node *n)
{
	const struct proto *p;
	struct vty *v;
	enum dt_ctype a, b;

	if (!n)
		return CT_UNKNOWN;
	switch (n->kind) {
	case N_INT:
		return CT_INT;
	case N_STR:
		return CT_STR;
	case N_AGG:
		return CT_AGG;
	case N_IDENT:
		if (is_str_var(n->name))
			return CT_STR;
		if (in_list(ptr_vars, n->name))
			return CT_PTR;
		if (in_list(int_vars, n->name) || (!strncmp(n->name, "arg", 3) && n->name[3] >= '0' &&
						    n->name[3] <= '9' && !n->name[4]))
			return CT_INT;
		v = var_find(k, 'g', n->name);
		return v ? v->type : CT_UNKNOWN;
	case N_SELF:
	case N_THIS:
	case N_INDEX:
		v = var_find(k, var_kind(n), n->name);
		return v ? v->type : CT_UNKNOWN;
	case N_CALL:
		p = dt_check_proto(n->name);
		return p ? p->ret : CT_UNKNOWN;
	case N_UNARY:
	case N_INCDEC:
		return CT_INT;
	case N_BINARY:
		a = dt_check_type(k, n->a);
		b = dt_check_type(k, n->b);
		if (a == CT_STR || b == CT_STR) /* comparisons of strings */
			return strchr("<>=!", n->op[0]) ? CT_INT : CT_UNKNOWN;
		return CT_INT;
	case N_TERNARY:
		return dt_check_type(k, n->b);
	case N_ASSIGN:
		return dt_check_type(k, n->b);
	case N_CAST:
		if (n->name && !strcmp(n->name, "void"))
			return CT_VOID;
		return n->name && strstr(n->name, "string") ? CT_STR : CT_UNKNOWN;
	default:
		return CT_UNKNOWN;
	}
}

static void note_assign(struct chk *k, const struct dt_node *lhs, const struct dt_node *rhs)
{
	char kind = var_kind(lhs);
	struct vty v;

	enum dt_ctype t = dt_check_type(k, rhs);
	const struct vty *was;

	if (!kind || t == CT_UNKNOWN || t == CT_VOID)
		return;
	was = var_find(k, kind, lhs->name);
	if (was) {
		if (was->type != t &&
		    (was->type == CT_STR || t == CT_STR || (was->type == CT_PTR && t == CT_INT && rhs->kind != N_INT)))
			dt_check_fail(k, lhs, "D_OP_INCOMPAT",
				      "operands have incompatible types: %s = %s",
				      dt_ctype_name(was->type), dt_ctype_name(t));
		return;
	}
	if (lhs->kind == N_IDENT && is_str_var(lhs->name))
		return;
	v.kind = kind;
	v.name = lhs->name;
	v.type = t;
	DT_PUSH(k->vars, k->nvars, v);
}

/* ---- errors ---- */

void dt_check_fail(struct chk *k, const struct dt_node *n, const char *tag, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (k->failed)
		return; /* the first error: DTrace stops at it */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dt_error_at(k->diag, &n->pos, tag, "%s", msg);
	k->failed = true;
}

static void proto_arg(struct chk *k, const struct dt_node *call, size_t i, const char *tag,
		      const char *proto, enum dt_ctype got)
{
	dt_check_fail(k, call->args[i], tag,
		      "%s( ) argument #%zu is incompatible with prototype:\n\tprototype: %s\n\t "
		      "argument: %s",
		      call->name, i + 1, proto, dt_ctype_name(got));
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

/* A constant integer expression's value (literals, + - * and their unary forms). */
static bool const_int(const struct dt_node *n, int64_t *v)
{
	int64_t a, b;

	if (!n)
		return false;
	if (n->kind == N_INT) {
		*v = n->ival;
		return true;
	}
	if (n->kind == N_UNARY && (n->op[0] == '-' || n->op[0] == '+') && !n->op[1] &&
	    const_int(n->a, v)) {
		if (n->op[0] == '-')
			*v = (int64_t)(0 - (uint64_t)*v);
		return true;
	}
	if (n->kind == N_BINARY && !n->op[1] && strchr("+-*", n->op[0]) && const_int(n->a, &a) &&
	    const_int(n->b, &b)) {
		uint64_t x = (uint64_t)a, y = (uint64_t)b;

		*v = (int64_t)(n->op[0] == '+' ? x + y : n->op[0] == '-' ? x - y : x * y);
		return true;
	}
	return false;
}

/* stack(n), ustack(n, size), jstack(n, size): how many frames, how many bytes. */
static void stack_sizes(struct chk *k, const struct dt_node *n)
{
	int64_t v;
	bool u = n->name[0] != 's';

	if (strcmp(n->name, "stack") && strcmp(n->name, "ustack") && strcmp(n->name, "jstack"))
		return;
	if (n->nargs >= 1 && const_int(n->args[0], &v) && v <= 0)
		dt_check_fail(k, n->args[0], u ? "D_USTACK_FRAMES" : "D_STACK_SIZE",
			      "%s( ) size must be a non-zero positive integer constant", n->name);
	else if (n->nargs >= 2 && const_int(n->args[1], &v) && v <= 0)
		dt_check_fail(k, n->args[1], "D_USTACK_STRSIZE",
			      "%s( ) string size must be a non-zero positive integer constant",
			      n->name);
}

/* What some functions refuse beyond their prototype. */
static void special_args(struct chk *k, const struct dt_node *n)
{
	int64_t v;

	if (!strcmp(n->name, "freopen") && n->args[0]->kind == N_STR &&
	    (!strcmp(n->args[0]->str, ".") || !strcmp(n->args[0]->str, "..")))
		dt_check_fail(k, n->args[0], "D_FREOPEN_INVALID",
			      "freopen( ) argument #1 cannot be \"%s\"", n->args[0]->str);
	else if (!strcmp(n->name, "tracemem") && const_int(n->args[1], &v) && v <= 0)
		dt_check_fail(k, n->args[1], "D_TRACEMEM_SIZE",
			      "tracemem( ) argument #2 must be a positive size");
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
			dt_check_fail(k, n, tag,
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
				dt_check_fail(k, n->args[i], "D_TRACE_DYN",
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
				dt_check_fail(k, n->args[i], "D_STRINGOF_TYPE",
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
		else if (want == 's' && (t == CT_INT || t == CT_PTR) &&
			 strcmp(n->name, "printf"))
			proto_arg(k, n, i, "D_PROTO_ARG", pname, t);
		else if (want == 's' && t == CT_INT)
			proto_arg(k, n, i, "D_PROTO_ARG", "string", t);
		else if (want == 'p' && t == CT_STR)
			proto_arg(k, n, i, "D_PROTO_ARG", pname, t);
		else if (want == 'c' && p->kind == 'a' && !const_int(n->args[i], &cv))
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
	if (!strcmp(n->name, "printf"))
		dt_check_printf(k, n);
	else if (!strcmp(n->name, "printa"))
		dt_check_printa(k, n);
	else if (p->kind == 'g')
		dt_check_aggfn(k, n);
	if (!k->failed)
		args(k, n);
	if (value && p->kind == 'a' && p->ret == CT_VOID && k->in_key)
		dt_check_fail(k, n, "D_KEY_TYPE", "%s( ) returns void: it cannot be a key",
			      n->name);
}

/* ---- expressions and statements ---- */

static void expr(struct chk *k, const struct dt_node *n, bool value)
{
	size_t i;

	if (!n || k->failed)
		return;
	switch (n->kind) {
	case N_CALL:
		call(k, n, value);
		return;
	case N_AGG:
		if (value)
			dt_check_fail(k, n, k->in_key ? "D_KEY_TYPE" : "D_OP_INCOMPAT",
				      "@%s: an aggregation cannot be used as a value", n->name);
		return;
	case N_ASSIGN:
		if (n->a && n->a->kind == N_AGG) {
			dt_check_aggassign(k, n);
			return;
		}
		expr(k, n->b, true);
		expr(k, n->a, false);
		dt_check_ops(k, n);
		if (!k->failed)
			note_assign(k, n->a, n->b);
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

		k->in_key = true;
		for (i = 0; i < n->nargs; i++)
			expr(k, n->args[i], true);
		k->in_key = was;
		if (!k->failed && (n->a ? n->a->kind == N_SELF : true))
			dt_check_index(k, n);
		return;
	}
	default:
		break;
	}
	if ((n->kind == N_BINARY || n->kind == N_ASSIGN) && (n->op[0] == '/' || n->op[0] == '%') &&
	    (!n->op[1] || n->op[1] == '=') && n->b) {
		int64_t v;

		if (const_int(n->b, &v) && v == 0) {
			dt_check_fail(k, n, "D_DIV_ZERO", "expression contains division by zero");
			return;
		}
	}
	expr(k, n->a, true);
	expr(k, n->b, true);
	expr(k, n->c, true);
	for (i = 0; i < n->nargs; i++)
		expr(k, n->args[i], true);
	dt_check_ops(k, n);
}

void dt_check_expr(struct chk *k, const struct dt_node *n, bool value)
{
	expr(k, n, value);
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
	} units[] = {{"ns", 1},	      {"nsec", 1},	{"us", 1e3},   {"usec", 1e3},
		     {"ms", 1e6},     {"msec", 1e6},	{"s", 1e9},    {"sec", 1e9},
		     {"m", 60e9},     {"min", 60e9},	{"h", 3600e9}, {"hour", 3600e9},
		     {"d", 86400e9},  {"day", 86400e9}, {"hz", 0},     {"", 0}};
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

/*
 * A clause's order of actions around commit(): nothing is recorded or
 * aggregated after it, nothing recorded before it (D_DREC_COMM,
 * D_AGG_COMM, D_COMM_DREC).
 */
static void commit_order(struct chk *k, const struct dt_clause *c)
{
	static const char *const drec[] = {"trace", "printf", "printa",	 "tracemem", "stack",
					   "ustack", "jstack", "exit",	 "print",    NULL};
	bool committed = false, recorded = false;
	size_t i;

	for (i = 0; i < c->nbody && !k->failed; i++) {
		const struct dt_node *e = c->body[i]->e;

		if (c->body[i]->is_if || !e)
			continue;
		if (e->kind == N_ASSIGN && e->a && e->a->kind == N_AGG && committed)
			dt_check_fail(k, e, "D_AGG_COMM",
				      "aggregating actions may not follow commit( )");
		if (e->kind != N_CALL)
			continue;
		if (!strcmp(e->name, "commit")) {
			if (recorded)
				dt_check_fail(k, e, "D_COMM_DREC",
					      "commit( ) may not follow data-recording action(s)");
			committed = true;
		} else if (in_list(drec, e->name)) {
			if (committed)
				dt_check_fail(k, e, "D_DREC_COMM",
					      "data-recording actions may not follow commit( )");
			recorded = true;
		}
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

int dt_check(struct dt_program *prog, struct usdt_diag *diag)
{
	struct chk k;
	size_t i;

	memset(&k, 0, sizeof(k));
	k.diag = diag;
	for (i = 0; i < prog->nclauses && !k.failed; i++) {
		const struct dt_clause *c = prog->clauses[i];
		size_t j;

		for (j = 0; j < c->ndescs && !k.failed; j++)
			timer_desc(&k, &c->descs[j]);
		if (c->pred) {
			expr(&k, c->pred, true);
			if (!k.failed && dt_check_type(&k, c->pred) == CT_VOID)
				dt_check_fail(&k, c->pred, "D_PRED_SCALAR",
					      "predicate result must be of scalar type");
		}
		k.no_args = no_args_probe(c);
		stmts(&k, c->body, c->nbody);
		if (!k.failed)
			commit_order(&k, c);
	}
	dt_free(k.vars);
	dt_free(k.aggs);
	dt_free(k.arrs);
	return k.failed ? -1 : 0;
}
