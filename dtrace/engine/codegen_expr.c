/* SPDX-License-Identifier: MIT */
/*
 * D expressions as BPF C (the layer under codegen.c's clauses): an integer
 * is a C expression of type __s64; a string is where it comes from (a
 * constant the code generator knows, a user address copyinstr() reads,
 * the task's comm) and is written by cg_store_str() into a STRSIZE area
 * (a record's field, a key's part), never onto the stack. An argument is
 * ARG(k): each site's program defines it from the site's argument spec.
 * What this engine does not do yet is one error at the construct.
 */
#include <inttypes.h>
#include <string.h>

#include "cg.h"

static void set_int(struct cv *v, unsigned size, bool is_unsigned)
{
	v->type = TY_INT;
	v->size = size;
	v->is_unsigned = is_unsigned;
}

static void cv_printf(struct cv *v, const char *fmt, ...) USDT_PRINTF(2, 3);
static void cv_printf(struct cv *v, const char *fmt, ...)
{
	va_list ap;
	char *buf;
	int n;

	va_start(ap, fmt); /* any length: an operand may be a long statement expression */
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf = dt_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	va_start(ap, fmt);
	vsnprintf(buf, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
	dt_free(v->text);
	v->text = buf;
}

/*
 * A value as declared C type `ty` has it (a cast, a typed args[N]; a
 * provider's type D does not know is sized by its name: ctype.c).
 */
static void typed(struct cg *g, const struct dt_node *n, struct cv *v, const char *ty)
{
	struct cg_type t;

	if (cg_type(g, ty, &t) && n->kind == N_CAST) {
		char msg[200];

		snprintf(msg, sizeof(msg), "cast to unknown type '%s'", ty);
		cg_refuse(g, n, "D_SYNTAX", msg);
		return;
	}
	if (cg_type(g, ty, &t) || t.is_float)
		dt_ctype_size(ty, &t.size, &t.is_unsigned);
	else if (t.is_void || t.is_aggr || t.is_str) {
		cg_refuse(g, n, "D_CAST_INVAL", "invalid cast: an integer cannot become this type");
		return;
	}
	if (!v->size)
		set_int(v, 8, false);
	/*
	 * DTrace folds a constant cast to char or short to the type's bits, not
	 * sign-extended: printf("%d", (char)0x1ef) prints 239 (printf/tst.ints.d)
	 */
	cg_conv(v, t.size,
		t.is_unsigned || (n->kind == N_CAST && n->a && n->a->kind == N_INT && t.size < 4));
	v->ptr = t.is_ptr ? cg_type_pointee(g, ty) : NULL; /* (int *)x points at an int */
}

/* sizeof(type), sizeof expr, offsetof(type, member): size_t constants. */
static void size_of(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct cg_type t;
	const char *ty = n->name;
	unsigned off = 0;
	char msg[200];

	if (n->ival) {
		int r = cg_type_member(g, ty, n->str, &t, &off);

		if (r) {
			snprintf(msg, sizeof(msg),
				 r == -1   ? "offsetof: unknown type '%s'"
				 : r == -2 ? "offsetof: '%s' is not a struct or union"
					   : "offsetof: %s has no member '%s'",
				 ty, n->str);
			cg_refuse(g, n, r == -3 ? "D_UNKNOWN" : "D_OFFSETOF_TYPE", msg);
			return;
		}
		if (t.bits) {
			cg_refuse(g, n, "D_OFFSETOF_BITFIELD",
				  "offsetof: cannot take the offset of a bit-field");
			return;
		}
		cv_printf(v, "%uULL", off);
		set_int(v, 8, true);
		return;
	}
	if (!ty && n->a && (ty = cg_ptr_type(g, n->a)) == NULL && g->failed)
		return;
	if (!ty && n->a &&
	    (n->a->kind == N_IDENT || n->a->kind == N_SELF || n->a->kind == N_THIS)) {
		char k = n->a->kind == N_IDENT ? 'g' : n->a->kind == N_SELF ? 's' : 't';

		ty = cg_decl_type(g, k, n->a->name);
		if (ty && cg_decl_bits(g, k, n->a->name)) {
			cg_refuse(g, n, "D_SIZEOF_BITFIELD",
				  "sizeof cannot be applied to a bit-field");
			return;
		}
	}
	if (ty) {
		if (cg_type(g, ty, &t) || t.is_void) {
			snprintf(msg, sizeof(msg), "sizeof: unknown or incomplete type '%s'", ty);
			cg_refuse(g, n, "D_SIZEOF_TYPE", msg);
			return;
		}
	} else {
		struct cv e = {0};

		cg_value(g, n->a, &e);
		if (g->failed)
			return;
		/* a string constant is its bytes and NUL; any other string strsize (g->strsize - 1)
		 */
		t.size = e.type != TY_STR      ? e.size
			 : e.skind == SV_CONST ? (unsigned)strlen(e.text) + 1
					       : (unsigned)g->strsize - 1;
		cv_free(&e);
	}
	cv_printf(v, "%uULL", t.size);
	set_int(v, 8, true);
}

static bool builtin(struct cg *g, const struct dt_node *n, struct cv *v)
{
	const struct dt_probe *p = g->probe;
	const char *s = n->name;
	long long fc;

	if (p && p->kind == P_USDT && cg_site_builtin(g, n, v))
		return true;
	if (cg_bvar(g, n, v))
		return true;
	if (!strcmp(s, "timestamp")) { /* one a firing, as DTrace's */
		cv_printf(v, "(__s64)(ts_now ? ts_now : (ts_now = bpf_ktime_get_ns()))");
		set_int(v, 8, true);
	} else if (!strcmp(s, "walltimestamp")) {
		/* the monotonic clock plus the wall clock's offset, taken at the start */
		cv_printf(v, "((__s64)bpf_ktime_get_ns() + %" PRId64 "LL)", g->t->wall_offset);
		set_int(v, 8, true);
	} else if (!strcmp(s, "ppid") || !strcmp(s, "vtimestamp")) {
		/* the task's, by the kernel's BTF: real_parent->tgid; se.sum_exec_runtime */
		bool pp = s[0] == 'p';
		unsigned a, b = 0;

		if (cg_btf_offset(g, "task_struct", pp ? "real_parent" : "se.sum_exec_runtime",
				  &a) ||
		    (pp && cg_btf_offset(g, "task_struct", "tgid", &b))) {
			cg_fail(g, n,
				"the kernel's BTF (/sys/kernel/btf/vmlinux) does not say where "
				"a task's parent and run time are");
			return true;
		}
		if (pp)
			cv_printf(
			    v,
			    "({ __u64 pt = 0; int tg = 0; bpf_probe_read_kernel(&pt, 8, (void "
			    "*)(bpf_get_current_task() + %u)); bpf_probe_read_kernel(&tg, 4, "
			    "(void *)(pt + %u)); (__s64)tg; })",
			    a, b);
		else
			cv_printf(v,
				  "({ __u64 rt = 0; bpf_probe_read_kernel(&rt, 8, (void "
				  "*)(bpf_get_current_task() + %u)); (__s64)rt; })",
				  a);
		set_int(v, pp ? 4 : 8, !pp);
	} else if (!strcmp(s, "zonename")) {
		v->type = TY_STR;
		v->skind = SV_CONST;
		cv_printf(v, "global");
	} else if (!strcmp(s, "pid")) {
		cv_printf(v, "(__s64)(bpf_get_current_pid_tgid() >> 32)");
		set_int(v, 4, false);
	} else if (!strcmp(s, "tid")) {
		cv_printf(v, "(__s64)(__u32)bpf_get_current_pid_tgid()");
		set_int(v, 4, false);
	} else if (!strcmp(s, "uid") || !strcmp(s, "gid")) {
		cv_printf(v, "(__s64)(__u32)(bpf_get_current_uid_gid() >> %d)",
			  s[0] == 'g' ? 32 : 0);
		set_int(v, 4, false);
	} else if (!strcmp(s, "cpu")) {
		cv_printf(v, "(__s64)bpf_get_smp_processor_id()");
		set_int(v, 4, false);
	} else if (!strcmp(s, "epid") || !strcmp(s, "id")) {
		cv_printf(v, "%uLL", p->id);
		set_int(v, 4, true);
	} else if (!strncmp(s, "DTRACEFLT_", 10) && cg_fault_const(s, &fc)) {
		cv_printf(v, "%lldLL", fc);
		set_int(v, 4, false);
	} else if (!strcmp(s, "NULL")) {
		cv_printf(v, "0LL");
		set_int(v, 4, false); /* DTrace's NULL is an int 0: sizeof(NULL) is 4 */
	} else if (!strcmp(s, "execname")) {
		v->type = TY_STR;
		v->skind = SV_COMM;
	} else if (!strcmp(s, "probename") || !strcmp(s, "probefunc") || !strcmp(s, "probemod") ||
		   !strcmp(s, "probeprov")) {
		const char *c = !strcmp(s, "probename")	  ? p->name
				: !strcmp(s, "probefunc") ? p->func
				: !strcmp(s, "probemod")  ? p->mod
							  : p->prov;

		v->type = TY_STR;
		v->skind = SV_CONST;
		cv_printf(v, "%s", c ? c : "");
	} else if (!strncmp(s, "arg", 3) && s[3] >= '0' && s[3] <= '9' &&
		   (!s[4] || (s[4] >= '0' && s[4] <= '9' && !s[5]))) {
		unsigned k = (unsigned)atoi(s + 3);

		if (k >= USDT_SDT_MAX_ARGS) {
			char msg[80];

			snprintf(msg, sizeof(msg), "arg%u: a USDT probe has at most %d arguments",
				 k, USDT_SDT_MAX_ARGS);
			cg_fail(g, n, msg);
			return true;
		}
		cg_use_arg(g, n, k);
		cv_printf(v, "ARG(%u)", k);
		set_int(v, 8, false);
	} else {
		return false;
	}
	return true;
}

static const char *const binops[] = {"+",  "-",	 "*", "/", "%",	 "<<", ">>", "&",  "|",	 "^",
				     "==", "!=", "<", ">", "<=", ">=", "&&", "||", "^^", NULL};

static bool is_cmp(const char *op)
{
	return !strcmp(op, "==") || !strcmp(op, "!=") || op[0] == '<' || op[0] == '>' ||
	       !strcmp(op, "&&") || !strcmp(op, "||") || !strcmp(op, "^^");
}

/* A string value's nullness, its pointer (SV_MEM) in p1 (k 0) or p2 (k 1). */
static const char *str_null_test(const struct cv *v, int k)
{
	static const char *const t[2][2] = {{"!p1", "strnull(p1)"}, {"!p2", "strnull(p2)"}};

	return v->skind == SV_MEM ? t[k & 1][v->marked] : "0";
}

/*
 * Two strings compared: each copied into a per-CPU slot (a statement
 * expression: the copies are statements), then compared by a bounded loop.
 */
static void str_compare(struct cg *g, const struct dt_node *n, const struct cv *a,
			const struct cv *b, struct cv *v)
{
	struct dt_buf o = {0};

	struct cv pa = *a, pb = *b;

	/* a pointer (a variable's, a search's) taken once: DTrace's NULL sorts first */
	dt_buf_printf(&o, "({ __s64 r = 0; __u8 *s1 = strtmp(0), *s2 = strtmp(1);\n");
	dt_buf_printf(&o, "\t\tconst __u8 *p1 = (const __u8 *)(%s), *p2 = (const __u8 *)(%s);\n",
		      a->skind == SV_MEM ? a->text : "1", b->skind == SV_MEM ? b->text : "1");
	dt_buf_printf(&o, "\t\tint n1 = %s, n2 = %s;\n", str_null_test(a, 0), str_null_test(b, 1));
	dt_buf_printf(
	    &o, "\t\tasm volatile(\"\" : \"+r\"(n1), \"+r\"(n2));\n"); /* no pointer arithmetic */
	dt_buf_printf(&o, "\t\tif (s1 && s2) {\n");
	pa.marked = pb.marked = false;
	if (a->skind == SV_MEM)
		pa.text = "p1";
	if (b->skind == SV_MEM)
		pb.text = "p2";
	cg_store_str(g, &pa, "s1", false, &o, "\t\t\t");
	cg_store_str(g, &pb, "s2", false, &o, "\t\t\t");
	dt_buf_printf(&o,
		      "\t\t\tr = (n1 || n2 ? n2 - n1 : dstrcmp(s1, s2)) %s 0;\n\t\t}\n"
		      "\t\tr; })",
		      n->op);
	v->text = o.s;
	v->type = TY_INT;
	v->size = 4;
	v->is_unsigned = false;
}

/*
 * A string compared with NULL (or 0): a string from the process is null
 * where its address is (copyinstr(NULL)), strstr()'s where nothing was
 * found, a variable's where its marker is (strnull()); a constant and
 * execname are never null.
 */
static void null_compare(struct cg *g, const struct dt_node *n, const struct cv *s,
			 const struct dt_node *other, struct cv *v)
{
	bool eq = n->op[0] == '=';

	if (!((other->kind == N_IDENT && !strcmp(other->name, "NULL")) ||
	      (other->kind == N_INT && other->ival == 0))) {
		cg_fail(g, n,
			"a string compared with an integer (only NULL compares with a string)");
		return;
	}
	if (s->skind == SV_MEM && s->marked) /* a variable's: DTrace's NULL kept */
		cv_printf(v, "(__s64)(%sstrnull((const __u8 *)(%s)))", eq ? "" : "!", s->text);
	else if (s->skind == SV_USER || s->skind == SV_MEM)
		cv_printf(v, "(__s64)((__u64)(%s) %s 0)", s->text, eq ? "==" : "!=");
	else if (s->skind == SV_COND)
		cg_err(g, n, "a string ?: compared with NULL");
	else
		cv_printf(v, "%dLL", eq ? 0 : 1);
	set_int(v, 4, false);
}

static void binary(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct cv a = {0}, b = {0};
	int64_t zero;
	size_t i;

	for (i = 0; binops[i] && strcmp(binops[i], n->op); i++)
		;
	if (!binops[i]) {
		cg_err(g, n, "this operator");
		return;
	}
	cg_value(g, n->a, &a);
	if (!g->failed)
		cg_value(g, n->b, &b);
	if (!g->failed && a.type == TY_STR && b.type == TY_STR && is_cmp(n->op) &&
	    n->op[0] != '&' && n->op[0] != '|' && n->op[0] != '^') {
		str_compare(g, n, &a, &b, v);
		goto out;
	}
	if (!g->failed && (a.type == TY_STR) != (b.type == TY_STR) &&
	    (!strcmp(n->op, "==") || !strcmp(n->op, "!="))) {
		null_compare(g, n, a.type == TY_STR ? &a : &b, a.type == TY_STR ? n->b : n->a, v);
		goto out;
	}
	if (!g->failed && !strcmp(n->op, "+") && (a.type == TY_STR) != (b.type == TY_STR)) {
		/* D's string is a char array: s + i (or i + s) is the string from s[i] on */
		const struct dt_node *args[2] = {a.type == TY_STR ? n->a : n->b,
						 a.type == TY_STR ? n->b : n->a};
		struct dt_node sub = *n;

		sub.kind = N_CALL;
		sub.name = "substr";
		sub.args = (struct dt_node **)args;
		sub.nargs = 2;
		cg_strfn(g, &sub, v);
		goto out;
	}
	if (!g->failed && (a.type != TY_INT || b.type != TY_INT))
		cg_err(g, n, "an operator on a string and an integer, or this one on strings");
	if (g->failed)
		goto out;
	if ((n->op[0] == '/' || n->op[0] == '%') && cg_const(g, n->b, &zero) && !zero) {
		cg_refuse(g, n, "D_DIV_ZERO", "expression contains division by zero");
		goto out;
	}
	if (cg_ptr_arith(g, n, &a, &b, v)) /* p + i moves by p's pointee's size */
		goto out;
	cg_arith(n->op, &a, &b, v); /* the operands converted to the result's type */
	if ((!strcmp(n->op, "/") || !strcmp(n->op, "%")) && !g->failed)
		cg_divide(g, v, n->op, v->is_unsigned, a.text,
			  b.text); /* a zero: the clause's fault */
out:
	cv_free(&a);
	cv_free(&b);
}

/*
 * An assignment, ++ or -- where a value is wanted (`a = b = 0`,
 * `/(this->p = copyinstr(arg1)) != NULL/`, `x = n++`): the statement, then
 * the variable read again (a postfix ++/-- answers the value before), in
 * one statement expression (a string variable's marker read: DTrace's NULL).
 */
static void assign_value(struct cg *g, const struct dt_node *n, struct cv *v)
{
	bool post = n->kind == N_INCDEC && n->ival == 1;
	struct dt_buf o = {0};
	struct cv old = {0};

	bool arr = n->a && n->a->kind == N_INDEX;

	if (!n->a) {
		cg_err(g, n, "this assignment used as a value");
		return;
	}
	if (cg_ptr_is_place(g, n->a)) { /* memory: stored, then read again */
		dt_buf_printf(&o, "({\n");
		if (post && cg_ptr_value(g, n->a, &old) && !g->failed)
			dt_buf_printf(&o, "\t\t__s64 old_ = (__s64)(%s);\n", old.text);
		if (!g->failed)
			cg_ptr_stmt(g, n, &o, "\t\t");
		if (!g->failed)
			cg_ptr_value(g, n->a, v);
		if (!g->failed)
			dt_buf_printf(&o, "\t\t%s; })", post ? "old_" : v->text);
		cv_free(&old);
		dt_free(v->text);
		v->text = g->failed ? NULL : o.s;
		if (g->failed)
			dt_free(o.s);
		return;
	}
	dt_buf_printf(&o, "({\n");
	if (post && (arr ? cg_array_read(g, n->a, &old) : cg_var_read(g, n->a, &old)) && !g->failed)
		dt_buf_printf(&o, "\t\t__s64 old_ = (__s64)(%s);\n", old.text);
	if (!g->failed && !(arr ? cg_array_stmt(g, n, &o, "\t\t") : cg_var_stmt(g, n, &o, "\t\t")))
		cg_err(g, n, "this assignment used as a value");
	if (!g->failed && !(arr ? cg_array_read(g, n->a, v) : cg_var_read(g, n->a, v)))
		cg_err(g, n, "this assignment used as a value");
	if (!g->failed && post)
		dt_buf_printf(&o, "\t\told_; })");
	else if (!g->failed)
		dt_buf_printf(&o, "\t\t%s; })", v->text);
	cv_free(&old);
	dt_free(v->text);
	v->text = g->failed ? NULL : o.s;
	if (g->failed)
		dt_free(o.s);
}

void cg_expr_value(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct cv a = {0}, b = {0}, c = {0};

	memset(v, 0, sizeof(*v));
	if (!g->failed && n->kind == N_INDEX && n->name && !n->name[0] && cg_str_index(g, n, v))
		return; /* a string-valued expression indexed: its character */
	if (g->failed || cg_ptr_value(g, n, v))
		return;
	switch (n->kind) {
	case N_INT:
		if (n->ival == INT64_MIN)
			cv_printf(v, "(-9223372036854775807LL - 1)");
		else
			cv_printf(v, "%" PRId64 "LL", n->ival);
		if (n->size)
			set_int(v, n->size, n->is_unsigned);
		else
			set_int(v, n->ival > INT32_MAX || n->ival < INT32_MIN ? 8 : 4, false);
		return;
	case N_STR:
		v->type = TY_STR;
		v->skind = SV_CONST;
		v->text = dt_xmalloc(n->slen + 1);
		memcpy(v->text, n->str, n->slen);
		v->text[n->slen] = '\0';
		return;
	case N_IDENT:
		if (!builtin(g, n, v))
			cg_var_read(g, n, v);
		return;
	case N_SELF:
	case N_THIS:
		cg_var_read(g, n, v);
		return;
	case N_INDEX:
		if (!cg_uregs(g, n, v) && !cg_str_index(g, n, v))
			cg_array_read(g, n, v);
		return;
	case N_ARGS: {
		unsigned k = (unsigned)n->ival;
		const char *ty = k < g->probe->ntypes ? g->probe->types[k] : NULL;

		if (n->a && n->a->kind == N_INT)
			k = (unsigned)n->a->ival;
		if (k >= USDT_SDT_MAX_ARGS || g->probe->kind != P_USDT) {
			cg_err(g, n, "this args[] element");
			return;
		}
		ty = k < g->probe->ntypes ? g->probe->types[k] : NULL;
		cg_use_arg(g, n, k);
		cv_printf(v, "ARG(%u)", k);
		if (dt_ctype_is_string(ty)) {
			v->type = TY_STR;
			v->skind = SV_USER;
			return;
		}
		set_int(v, 8, false);
		if (ty)
			typed(g, n, v, ty);
		return;
	}
	case N_CALL:
		if (!strcmp(n->name, "copyinstr") && n->nargs == 1) {
			cg_int(g, n->args[0], &a);
			v->type = TY_STR;
			v->skind = SV_USER;
			v->text = a.text;
			return;
		}
		if (!strcmp(n->name, "rand") && !n->nargs) {
			/* an int, never negative (C's rand()) */
			cv_printf(v, "(__s64)(bpf_get_prandom_u32() >> 1)");
			set_int(v, 4, false);
			return;
		}
		if (!strcmp(n->name, "stringof") && n->nargs == 1) {
			/* a string already (copyin()'s bytes are one here) */
			cg_value(g, n->args[0], v);
			if (!g->failed && v->type != TY_STR && v->ptr) {
				/* a pointer: the string there (D's memory, the process's) */
				v->type = TY_STR;
				v->skind = SV_USER;
				v->ptr = NULL;
			} else if (!g->failed && v->type != TY_STR) {
				/* an integer: its decimal digits, as lltostr() */
				struct dt_node ll = *n;

				cv_free(v);
				memset(v, 0, sizeof(*v));
				ll.name = "lltostr";
				if (!cg_strfn(g, &ll, v))
					cg_err(g, n, "stringof() of an integer");
			}
			return;
		}
		if (!cg_spec_call(g, n, v) && !cg_strfn(g, n, v))
			cg_unknown_call(g, n, "this function");
		return;
	case N_UNARY:
		cg_int(g, n->a, &a);
		if (!g->failed)
			cg_unary(n->op, &a, v);
		cv_free(&a);
		return;
	case N_BINARY:
		binary(g, n, v);
		return;
	case N_ASSIGN:
	case N_INCDEC:
		assign_value(g, n, v);
		return;
	case N_TERNARY:
		cg_int(g, n->a, &a);
		cg_value(g, n->b, &b);
		cg_value(g, n->c, &c);
		if (!g->failed && b.type != c.type)
			cg_fail(g, n, "the two values of ?: are a string and an integer");
		if (!g->failed && b.type == TY_STR) {
			/* a string chosen: stored by cg_store_str() under the condition */
			v->type = TY_STR;
			v->skind = SV_COND;
			v->text = a.text;
			v->sub = dt_xmalloc(2 * sizeof(*v->sub));
			v->sub[0] = b;
			v->sub[1] = c;
			return;
		}
		if (!g->failed) {
			struct cv t = {0};

			cg_arith("+", &b, &c, &t); /* b and c converted to their common type */
			cv_printf(v, "((%s) ? (%s) : (%s))", a.text, b.text, c.text);
			set_int(v, t.size, t.is_unsigned);
			v->ptr = b.ptr ? b.ptr : c.ptr;
			cv_free(&t);
		}
		cv_free(&a);
		cv_free(&b);
		cv_free(&c);
		return;
	case N_CAST:
		if (dt_ctype_is_string(n->name) || !strcmp(n->name, "string")) {
			/* (char *)copyin(...): the bytes are a string here already */
			cg_value(g, n->a, v);
			if (!g->failed && v->type != TY_STR && !strcmp(n->name, "string")) {
				v->type = TY_STR; /* (string)p: the string at p */
				v->skind = SV_USER;
				v->ptr = NULL;
			} else if (!g->failed && v->type != TY_STR) { /* a pointer to chars */
				cg_conv(v, 8, true);
				v->ptr = dt_xstrdup("char");
			}
			return;
		}
		if (n->a->kind == N_CALL && !strcmp(n->a->name, "copyin") && strchr(n->name, '*')) {
			/* (T *)copyin(...): the copied bytes' address (a slot, read as the
			 * kernel's) */
			cg_value(g, n->a, v);
			if (!g->failed && v->type == TY_STR && v->skind == SV_MEM) {
				char *t = v->text;

				v->type = TY_INT;
				v->text = NULL;
				/* laundered by a helper: a number, to the verifier */
				cv_printf(v,
					  "({ __u64 la_ = 0; const void *lp_ = (%s); "
					  "bpf_probe_read_kernel(&la_, 8, &lp_); (__s64)la_; })",
					  t);
				dt_free(t);
				set_int(v, 8, true);
				typed(g, n, v, n->name);
				return;
			}
			cv_free(v);
			memset(v, 0, sizeof(*v));
		}
		cg_int(g, n->a, v);
		if (!g->failed)
			typed(g, n, v, n->name);
		return;
	case N_SIZEOF:
		size_of(g, n, v);
		return;
	case N_KTASK:
		cg_ktask(g, n, v);
		return;
	default:
		cg_err(g, n, "this expression");
		return;
	}
}
