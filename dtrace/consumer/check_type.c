/* SPDX-License-Identifier: MIT */
/*
 * The bottom of D's checks (check.c's theory): the table of D's functions,
 * what an expression's type is as far as the tree says, the types of
 * variables from their first assignment, constant integer expressions, and
 * the one way an error is reported (the first only: DTrace stops at it).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char *const str_vars[] = {
    "execname", "probefunc", "probename", "probemod", "probeprov", "cwd", "root", "zonename", NULL};

/* D's functions, as DTrace declares them (struct proto: check.h). */
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
    {"inet_ntoa6", 's', 1, 2, "pc", {"struct in6_addr *", "int"}, CT_STR},
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
    {"llquantize",
     'g',
     5,
     6,
     "icccci",
     {"int64_t", "int", "int", "int", "int", "int64_t"},
     CT_VOID},
};

const struct proto *dt_check_proto(const char *name)
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

static const char *const ptr_vars[] = {"curthread", "curcpu", "curlwpsinfo",
				       "curpsinfo", "uregs",  NULL};
static const char *const int_vars[] = {
    "pid",	     "ppid",	"tid", "uid",	 "gid",	   "timestamp",	 "vtimestamp",
    "walltimestamp", "epid",	"id",  "cpu",	 "errno",  "stackdepth", "ustackdepth",
    "caller",	     "ucaller", "ipl", "projid", "taskid", NULL};

bool dt_check_in_list(const char *const *l, const char *name)
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
		if (dt_check_in_list(ptr_vars, n->name))
			return CT_PTR;
		if (dt_check_in_list(int_vars, n->name) ||
		    (!strncmp(n->name, "arg", 3) && n->name[3] >= '0' && n->name[3] <= '9' &&
		     !n->name[4]))
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
		if (!n->op[1] && n->op[0] == '*')
			return CT_UNKNOWN; /* the pointee's type: the engine's */
		if (!n->op[1] && n->op[0] == '&')
			return CT_PTR;
		return CT_INT;
	case N_INCDEC:
		return CT_INT;
	case N_BINARY:
		a = dt_check_type(k, n->a);
		b = dt_check_type(k, n->b);
		if ((a == CT_STR) != (b == CT_STR) && !strcmp(n->op, "+"))
			return CT_STR;		/* s + i: the string from s[i] on */
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

void dt_check_note_assign(struct chk *k, const struct dt_node *lhs, const struct dt_node *rhs)
{
	char kind = var_kind(lhs);
	struct vty v;

	enum dt_ctype t = dt_check_type(k, rhs);
	const struct vty *was;

	if (!kind || t == CT_UNKNOWN || t == CT_VOID)
		return;
	was = var_find(k, kind, lhs->name);
	if (was && rhs->kind == N_INT && rhs->ival == 0)
		return; /* 0 frees a variable of any type */
	if (was) {
		if (was->type != t && (was->type == CT_STR || t == CT_STR ||
				       (was->type == CT_PTR && t == CT_INT && rhs->kind != N_INT)))
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

/* DTrace's words for an argument its function's prototype does not take. */
void dt_check_proto_fail(struct chk *k, const struct dt_node *at, const char *tag, const char *fn,
			 size_t argno, const char *proto, const char *arg)
{
	dt_check_fail(k, at, tag,
		      "%s( ) argument #%zu is incompatible with prototype:\n\tprototype: %s\n\t "
		      "argument: %s",
		      fn, argno, proto, arg);
}

/* DTrace's words for an argument a format's conversion does not take. */
void dt_check_conv_fail(struct chk *k, const struct dt_node *at, const char *tag, const char *fn,
			size_t argno, int conv, const char *conv_text, const char *proto)
{
	dt_check_fail(k, at, tag,
		      "%s( ) argument #%zu is incompatible with conversion #%d prototype:\n"
		      "\tconversion: %s\n\t prototype: %s",
		      fn, argno, conv, conv_text, proto);
}

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

/* A constant integer expression's value (literals, + - * and their unary forms). */
bool dt_check_const(const struct dt_node *n, int64_t *v)
{
	int64_t a, b;

	if (!n)
		return false;
	if (n->kind == N_INT) {
		*v = n->ival;
		return true;
	}
	if (n->kind == N_UNARY && (n->op[0] == '-' || n->op[0] == '+') && !n->op[1] &&
	    dt_check_const(n->a, v)) {
		if (n->op[0] == '-')
			*v = (int64_t)(0 - (uint64_t)*v);
		return true;
	}
	if (n->kind == N_BINARY && !n->op[1] && strchr("+-*", n->op[0]) &&
	    dt_check_const(n->a, &a) && dt_check_const(n->b, &b)) {
		uint64_t x = (uint64_t)a, y = (uint64_t)b;

		*v = (int64_t)(n->op[0] == '+' ? x + y : n->op[0] == '-' ? x - y : x * y);
		return true;
	}
	return false;
}

/*
 * D's built-in variables (every one DTrace has, whether or not this
 * consumer does them: what it lacks, the engines refuse as unsupported).
 */
static const char *const builtins[] = {
    "args",	     "caller",	  "chip",      "cpu",	     "curcpu",	    "curlwpsinfo",
    "curpsinfo",     "curthread", "cwd",       "epid",	     "errno",	    "execargs",
    "execname",	     "fds",	  "gid",       "id",	     "ipl",	    "lgrp",
    "pid",	     "ppid",	  "probefunc", "probemod",   "probename",   "probeprov",
    "projid",	     "pset",	  "root",      "stackdepth", "taskid",	    "tid",
    "timestamp",     "ucaller",	  "uid",       "uregs",	     "ustackdepth", "vtimestamp",
    "walltimestamp", "zonename",  "NULL",      NULL};

/* name is assigned or declared: a struct variable's member (`v.a`, the parser's) by its variable */
static bool defined(const struct chk *k, const char *name)
{
	size_t i, len = strcspn(name, ".");

	for (i = 0; i < k->ndefined; i++)
		if (!strcmp(k->defined[i], name))
			return true;
	for (i = 0; k->prog && i < k->prog->ndeclared; i++)
		if (!strncmp(k->prog->declared[i], name, len) && !k->prog->declared[i][len])
			return true;
	return false;
}

bool dt_check_ident_defined(const struct chk *k, const char *name)
{
	return dt_check_in_list(builtins, name) || defined(k, name);
}

void dt_check_ident_written(struct chk *k, const struct dt_node *n)
{
	if (n->kind == N_IDENT && !defined(k, n->name))
		DT_PUSH(k->defined, k->ndefined, n->name);
}

void dt_check_ident_read(struct chk *k, const struct dt_node *n, const char *tag)
{
	const char *s = n->name, *p;
	size_t i;

	if (n->kind != N_IDENT || dt_check_in_list(builtins, s) || defined(k, s))
		return;
	if (!strncmp(s, "arg", 3) && s[3] >= '0' && s[3] <= '9')
		return;
	/* D's libraries' constants (SIGINT, R_SP, ...) and kernel symbols: not judged */
	for (p = s; *p && !(*p >= 'a' && *p <= 'z'); p++)
		;
	if (!*p || s[0] == '`' || strchr(s, '`'))
		return;
	for (i = 0; i < k->narrs; i++)
		if (k->arrs[i].kind == 'a' && !strcmp(k->arrs[i].name, s)) {
			dt_check_fail(k, n, "D_IDENT_BADREF",
				      "associative array '%s' may not be referenced as scalar", s);
			return;
		}
	dt_check_fail(k, n, tag, "failed to resolve %s: Unknown variable name", s);
}
