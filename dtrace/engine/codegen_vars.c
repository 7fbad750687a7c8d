/* SPDX-License-Identifier: MIT */
/*
 * D's variables in BPF: a global is a field of the one element of an array
 * map (`gvars`: shared by every CPU, racy as DTrace's are), a thread-local
 * `self->x` a field of a hash map's value keyed by the thread ID (`svars`;
 * read as 0 while the thread has none), a clause-local `this->x` a C local
 * of the probe's body, shared by the clauses of one firing as D shares it.
 * A variable's type is its first assignment's in script order (found by
 * cg_vars_scan() before any code is written). A string variable is a
 * STRSIZE array in the same places, except this->'s, which live in a
 * per-CPU map (`tvars`) rather than on the 512-byte stack; it is read as a
 * pointer (SV_MEM) and copied up to its NUL where it goes.
 */
#include <stdio.h>
#include <string.h>

#include "cg.h"

const struct cg_var *cg_var_find(struct cg *g, char kind, const char *name);

static struct cg_var *find(struct cg *g, char kind, const char *name)
{
	size_t i;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].kind == kind && !strcmp(g->vars[i].name, name))
			return &g->vars[i];
	return NULL;
}

const struct cg_var *cg_var_find(struct cg *g, char kind, const char *name)
{
	return find(g, kind, name);
}

unsigned cg_dmem_size(const struct cg *g)
{
	long s = g->prog->o->scratchsize;

	return s > 0 ? (unsigned)((s + 7) & ~7L) : CG_DMEM_SCRATCH;
}

bool cg_dmem_refuse_size(struct cg *g, const struct dt_node *n, const struct dt_node *size)
{
	int64_t k;
	char msg[200];

	if (!cg_const(g, size, &k) || (uint64_t)k <= cg_dmem_size(g))
		return false;
	snprintf(msg, sizeof(msg), "%s(%lld) size larger than scratchsize %u", n->name,
		 (long long)k, cg_dmem_size(g));
	cg_refuse(g, n, "D_ALLOCA_SIZE", msg);
	return true;
}

static char var_kind(const struct dt_node *n)
{
	return n->kind == N_SELF ? 's' : n->kind == N_THIS ? 't' : n->kind == N_IDENT ? 'g' : 0;
}

static bool is_builtin(const char *s)
{
	static const char *const b[] = {
	    "timestamp", "pid",	      "tid",	    "uid",	   "gid",	    "cpu",
	    "epid",	 "id",	      "NULL",	    "execname",	   "probename",	    "probefunc",
	    "probemod",	 "probeprov", "ppid",	    "vtimestamp",  "walltimestamp", "zonename",
	    "caller",	 "ucaller",   "stackdepth", "ustackdepth", "curthread",	    "curcpu",
	    "errno",	 "ipl",	      "chip",	    "lgrp",	   "pset",	    NULL};
	size_t i;

	for (i = 0; b[i]; i++)
		if (!strcmp(b[i], s))
			return true;
	return !strncmp(s, "arg", 3) && s[3] >= '0' && s[3] <= '9';
}

static struct cg_var *add(struct cg *g, char kind, const char *name)
{
	struct cg_var v = {.kind = kind, .name = dt_xstrdup(name), .size = 8};
	struct cg_var *x = find(g, kind, name);
	struct dt_buf c = {0};
	const char *p;

	if (x) {
		dt_free(v.name);
		return x;
	}
	for (p = name; *p; p++) /* a struct's member "s.m" is the C field s__m */
		if (*p == '.')
			dt_buf_add(&c, "__", 2);
		else
			dt_buf_add(&c, p, 1);
	dt_buf_add(&c, "", 1);
	v.cname = c.s;
	DT_PUSH(g->vars, g->nvars, v);
	return &g->vars[g->nvars - 1];
}

/* A variable's declared type (`int x;`, `self string s;`), if it has one. */
static bool declared(struct cg *g, struct cg_var *v)
{
	const char *ty = cg_decl_type(g, v->kind, v->name);
	struct cg_type t;

	if (!ty || cg_type(g, ty, &t) || t.is_aggr || t.is_void || t.is_float)
		return false;
	v->is_str = t.is_str;
	v->size = t.is_str ? 0 : t.size;
	v->is_unsigned = t.is_unsigned;
	v->ptr = t.is_ptr ? cg_type_pointee(g, ty) : NULL;
	v->bits = cg_decl_bits(g, v->kind, v->name);
	return true;
}

/*
 * A `char *` variable whose first assignment is a string (`s = probeprov`)
 * holds that string, as D's char pointer points at one: s[0] its first char.
 */
static void char_ptr_str(struct cg *g, struct cg_var *v, const struct dt_node *n)
{
	struct cv t = {0};

	if (!v->ptr || (strcmp(v->ptr, "char") && strcmp(v->ptr, "const char")) ||
	    n->kind != N_ASSIGN || strcmp(n->op, "=") || !n->b)
		return;
	cg_value(g, n->b, &t);
	if (!g->failed && t.type == TY_STR) {
		v->is_str = true;
		v->size = 0;
		dt_free(v->ptr);
		v->ptr = NULL;
	}
	cv_free(&t);
	g->failed = false; /* reported when the code is written */
}

static void scan_node(struct cg *g, const struct dt_node *n)
{
	size_t i;
	char k;

	if (!n)
		return;
	/* a = b = …, a = f(b = …): b first, so that a is typed by b's value */
	if (n->kind == N_ASSIGN && n->b)
		scan_node(g, n->b);
	if ((n->kind == N_ASSIGN || n->kind == N_INCDEC) && n->a && n->a->kind == N_INDEX &&
	    n->a->name[0]) {
		/* not an element of memory: a scalar array's, a pointer's */
		const struct dt_node *ix = n->a;
		const struct cg_var *x = find(g,
					      !ix->a		      ? 'g'
					      : ix->a->kind == N_SELF ? 's'
								      : 't',
					      ix->name);

		if (!x || (!x->ptr && !x->bytes))
			cg_array_scan(g, n);
	}
	k = (n->kind == N_ASSIGN || n->kind == N_INCDEC) && n->a ? var_kind(n->a) : 0;
	if (k && !(k == 'g' && is_builtin(n->a->name))) {
		struct cg_var *v = add(g, k, n->a->name);

		if (!v->typed && declared(g, v))
			char_ptr_str(g, v, n);
		else if (!v->typed && n->kind == N_ASSIGN && !strcmp(n->op, "=") && n->b) {
			struct cv t;

			cg_value(g, n->b, &t);
			if (!g->failed && t.type == TY_INT) {
				v->size = t.size < 4 ? 4 : t.size;
				v->is_unsigned = t.is_unsigned;
				v->ptr = t.ptr;
			}
			v->is_str = !g->failed && t.type == TY_STR;
			cv_free(&t);
			g->failed = false; /* reported when the code is written */
		}
		v->typed = true;
	}
	scan_node(g, n->a);
	if (n->kind != N_ASSIGN)
		scan_node(g, n->b);
	scan_node(g, n->c);
	for (i = 0; i < n->nargs; i++)
		scan_node(g, n->args[i]);
}

/* fn on each statement's expression, through if's branches, in script order. */
static void each_stmt(struct cg *g, struct dt_stmt **v, size_t n,
		      void (*fn)(struct cg *g, const struct dt_node *e))
{
	size_t i;

	for (i = 0; i < n; i++) {
		fn(g, v[i]->e);
		each_stmt(g, v[i]->then, v[i]->nthen, fn);
		each_stmt(g, v[i]->els, v[i]->nels, fn);
	}
}

/* argN past arg11 anywhere under n: an error (a clause no probe runs is checked so too). */
static void check_args(struct cg *g, const struct dt_node *n)
{
	size_t i;

	if (!n || g->failed)
		return;
	if (n->kind == N_IDENT && !strncmp(n->name, "arg", 3) && n->name[3] >= '0' &&
	    n->name[3] <= '9' && atoi(n->name + 3) >= USDT_SDT_MAX_ARGS &&
	    strspn(n->name + 3, "0123456789") == strlen(n->name + 3)) {
		char msg[80];

		snprintf(msg, sizeof(msg), "arg%d: a USDT probe has at most %d arguments",
			 atoi(n->name + 3), USDT_SDT_MAX_ARGS);
		cg_fail(g, n, msg);
		return;
	}
	check_args(g, n->a);
	check_args(g, n->b);
	check_args(g, n->c);
	for (i = 0; i < n->nargs; i++)
		check_args(g, n->args[i]);
}

int cg_check_unmatched(struct cg *g, struct dt_probes *ps)
{
	size_t c, i, k;

	for (c = 0; c < g->prog->nclauses && !g->failed; c++) {
		const struct dt_clause *cl = g->prog->clauses[c];
		bool matched = false;

		for (i = 0; i < ps->n && !matched; i++)
			for (k = 0; k < ps->v[i].npc; k++)
				matched = matched || ps->v[i].pc[k].clause == c;
		if (matched)
			continue;
		check_args(g, cl->pred);
		each_stmt(g, cl->body, cl->nbody, check_args);
	}
	return g->failed ? -1 : 0;
}

/* Globals that are memory (`int a[5]`, a union): bytes of gvars, addressable. */
static void mem_objects(struct cg *g)
{
	size_t i;

	for (i = 0; i < g->prog->ndecls; i++) {
		const struct dt_decl *d = &g->prog->decls[i];
		struct cg_type t;
		const char *r = d->type;
		struct cg_var *v;

		while (r && cg_decl_type(g, 'T', r) && strcmp(cg_decl_type(g, 'T', r), r))
			r = cg_decl_type(g, 'T', r);
		if (d->kind != 'g' || !r || cg_type(g, d->type, &t) || !t.size || t.is_ptr ||
		    (!strstr(r, " [") && strncmp(r, "union ", 6) &&
		     (strncmp(r, "struct ", 7) || cg_type_has_bits(g, r))))
			continue;
		v = add(g, 'g', d->name);
		v->bytes = (t.size + 7) & ~7u;
		v->typed = true;
	}
}

void cg_vars_scan(struct cg *g, struct dt_probes *ps)
{
	size_t c, i, k;
	g->scanning = true;
	mem_objects(g);
	for (c = 0; c < g->prog->nclauses; c++) {
		const struct dt_clause *cl = g->prog->clauses[c];

		/* the clause's first probe types its args[] */
		g->probe = NULL;
		for (i = 0; i < ps->n && !g->probe; i++)
			for (k = 0; k < ps->v[i].npc; k++)
				if (ps->v[i].pc[k].clause == c)
					g->probe = &ps->v[i];
		/* one no probe matched yet: its program for files to come (codegen_args.c) */
		if (!g->probe && !g->prog->o->compile_only && !g->prog->o->show_program)
			g->probe = cg_spare_probe(g, c);
		if (!g->probe)
			continue;
		scan_node(g, cl->pred);
		each_stmt(g, cl->body, cl->nbody, scan_node);
	}
	g->scanning = false;
	g->failed = false;
	memset(g->arg_used, 0, sizeof(g->arg_used));
}

static int kinds(const struct cg *g)
{
	size_t i;
	int k = 0;

	for (i = 0; i < g->nvars; i++)
		k |= g->vars[i].kind == 'g'   ? 1
		     : g->vars[i].kind == 's' ? 2
		     : g->vars[i].is_str      ? 4
					      : 0;
	return k;
}

/* The bytes a thread's variables take (their zero value is the zeroes map's). */
unsigned cg_vars_size(const struct cg *g)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < g->nvars; i++)
		n += g->vars[i].is_str ? ((unsigned)g->strsize + 7u) & ~7u : 8u;
	return n;
}

void cg_vars_maps(const struct cg *g, struct dt_buf *o)
{
	size_t i;
	int ks = kinds(g);

	for (int k = 0; k < 3; k++) {
		char kind = "gst"[k];

		if (!(ks & (1 << k)))
			continue;
		dt_buf_printf(o, "struct %cvars {\n", kind);
		for (i = 0; i < g->nvars; i++)
			if (g->vars[i].kind == kind && g->vars[i].bytes)
				dt_buf_printf(o, "\t__u8 %c_%s[%u] __attribute__((aligned(8)));\n",
					      kind, g->vars[i].cname, g->vars[i].bytes);
			else if (g->vars[i].kind == kind && g->vars[i].is_str)
				dt_buf_printf(o, "\t__u8 %c_%s[%ld];\n", kind, g->vars[i].cname,
					      (g->strsize + 7) & ~7L);
			else if (g->vars[i].kind == kind && kind != 't')
				dt_buf_printf(o, "\t__s64 %c_%s;\n", kind, g->vars[i].cname);
		for (i = 0; kind == 'g' && i < g->nvars; i++)
			if (g->vars[i]
				.bytes) { /* a bounded length fits after any object's offset */
				dt_buf_printf(o, "\t__u8 g__slack[%u];\n", cg_dmem_size(g));
				break;
			}
		dt_buf_printf(o, "};\n");
	}
	if (ks & 4)
		dt_buf_printf(o, "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, "
				 "__u32); __type(value, struct tvars); } tvars SEC(\".maps\");\n");
	if (ks & 1)
		dt_buf_printf(o, "struct { __uint(type, 2); __uint(max_entries, 1); __type(key, "
				 "__u32); __type(value, struct gvars); } gvars SEC(\".maps\");\n");
	if (ks & 2)
		dt_buf_printf(o,
			      "struct { __uint(type, 1); __uint(max_entries, %u); "
			      "__uint(map_flags, %d); __type(key, __u32); __type(value, struct "
			      "svars); } svars SEC(\".maps\");\n",
			      cg_map_entries(g, 65536u, cg_vars_size(g)), cg_map_flags(g));
}

void cg_vars_body_top(const struct cg *g, struct dt_buf *o)
{
	bool gl = false, sl = false;
	size_t i;

	for (i = 0; i < g->nvars; i++) {
		gl |= g->vars[i].kind == 'g';
		sl |= g->vars[i].kind == 's';
		if (g->vars[i].kind == 't' && !g->vars[i].is_str)
			dt_buf_printf(o, "\t__s64 t_%s = 0;\n", g->vars[i].cname);
	}
	if (kinds(g) & 4)
		dt_buf_printf(o,
			      "\t__u32 tz = 0;\n\tstruct tvars *tv = bpf_map_lookup_elem(&tvars, "
			      "&tz);\n\tif (!tv)\n\t\treturn 0;\n");
	if (gl)
		dt_buf_printf(o,
			      "\t__u32 gz = 0;\n\tstruct gvars *gv = bpf_map_lookup_elem(&gvars, "
			      "&gz);\n\tif (!gv)\n\t\treturn 0;\n");
	if (sl)
		dt_buf_printf(o, "\t__u32 stid = (__u32)bpf_get_current_pid_tgid();\n"
				 "\tstruct svars *sv = bpf_map_lookup_elem(&svars, &stid);\n");
}

static void ref(const struct cg_var *v, char *buf, size_t n)
{
	if (v->kind == 'g')
		snprintf(buf, n, "gv->g_%s", v->cname);
	else if (v->kind == 's')
		snprintf(buf, n, "sv->s_%s", v->cname);
	else if (v->is_str)
		snprintf(buf, n, "tv->t_%s", v->cname);
	else
		snprintf(buf, n, "t_%s", v->cname);
}

bool cg_var_read(struct cg *g, const struct dt_node *n, struct cv *v)
{
	char k = var_kind(n), buf[300];
	const struct cg_var *x = k ? find(g, k, n->name) : NULL;

	if (!k)
		return false;
	if (x && x->is_str) {
		char e[340];

		ref(x, buf, sizeof(buf));
		snprintf(e, sizeof(e), k == 's' ? "(sv ? (void *)%s : zero_value())" : "(void *)%s",
			 buf);
		v->type = TY_STR;
		v->skind = SV_MEM;
		v->marked = true;
		v->text = dt_xstrdup(e);
		return true;
	}
	v->type = TY_INT;
	v->size = x ? x->size : 8;
	v->is_unsigned = x && x->is_unsigned;
	v->ptr = x ? x->ptr : NULL;
	if (!x && cg_decl_type(g, k, n->name)) { /* declared, never assigned: 0 or "" */
		struct cg_type t;

		if (!cg_type(g, cg_decl_type(g, k, n->name), &t) && t.is_str && k == 's') {
			cg_null_str(v); /* a thread's, never assigned: DTrace's NULL */
			v->marked = true;
			return true;
		}
		if (!cg_type(g, cg_decl_type(g, k, n->name), &t) && t.is_str) {
			v->type = TY_STR;
			v->skind = SV_CONST;
			v->text = dt_xstrdup("");
			return true;
		}
		if (!cg_type(g, cg_decl_type(g, k, n->name), &t) && !t.is_aggr &&
		    (!t.is_float || t.size <= 8)) {
			v->size = t.size;
			v->is_unsigned = t.is_unsigned;
			if (t.is_ptr)
				v->ptr = cg_type_pointee(g, cg_decl_type(g, k, n->name));
			v->is_float = t.is_float; /* 0.0: never assigned (D has no float values) */
		} else {
			cg_err(g, n, "a variable of this type");
		}
		v->text = dt_xstrdup("0LL");
		return true;
	}
	if (!x && k == 'g') /* no clause assigns it: D knows no such name */
		cg_refuse_undef(g, n);
	if (!x) { /* this-> or self-> never assigned: D reads it as 0 */
		v->text = dt_xstrdup("0LL");
		return true;
	}
	ref(x, buf, sizeof(buf));
	if (k == 's') {
		char e[340];

		snprintf(e, sizeof(e), "(sv ? %s : 0LL)", buf);
		v->text = dt_xstrdup(e);
	} else {
		v->text = dt_xstrdup(buf);
	}
	return true;
}

/*
 * `this->s[i] = '\0'` on a string this->s: copyin()'s idiom (HotSpot's
 * scripts: a buffer, then its NUL), the byte written if i is inside the
 * string's STRSIZE. Any other byte is refused: D's strings here are values.
 */
bool cg_var_byte_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	const struct dt_node *ix = n->a;
	const struct cg_var *x;
	char buf[300];
	struct cv i;

	if (n->kind != N_ASSIGN || !ix || ix->kind != N_INDEX || !ix->a || ix->a->kind != N_THIS)
		return false;
	x = find(g, 't', ix->name);
	if (!x || !x->is_str)
		return false;
	if (ix->nargs != 1 || strcmp(n->op, "=") || !n->b || n->b->kind != N_INT || n->b->ival) {
		cg_fail(g, n,
			"only '\\0' can be stored into a byte of a string (copyin()'s idiom)");
		return true;
	}
	cg_int(g, ix->args[0], &i);
	if (g->failed)
		return true;
	ref(x, buf, sizeof(buf));
	dt_buf_printf(o,
		      "%s{\n%s\t__u64 bi = (__u64)(%s);\n%s\tif (bi < STRSIZE) {\n"
		      "%s\t\tBOUNDED(bi);\n%s\t\tif (bi < STRSIZE)\n%s\t\t\t((__u8 *)%s)[bi] = 0;\n"
		      "%s\t}\n%s}\n",
		      ind, ind, i.text, ind, ind, ind, ind, buf, ind, ind);
	cv_free(&i);
	return true;
}

/*
 * The value an integer variable gets: `=`'s, `op=`'s or ++/--'s, computed
 * as cg_arith() computes, converted to the variable's type as a cast
 * converts (DTrace stores its width).
 */
static void int_value(struct cg *g, const struct dt_node *n, const struct cg_var *x,
		      const char *cur, struct cv *val, struct cv *nv)
{
	struct cv old = {.type = TY_INT, .size = x->size, .is_unsigned = x->is_unsigned};
	struct cv one = {.type = TY_INT, .size = 4};
	char op[4] = "+";
	int64_t z;

	if (n->kind == N_ASSIGN && !strcmp(n->op, "=")) {
		nv->text = dt_xstrdup(val->text);
		nv->size = val->size;
		nv->is_unsigned = val->is_unsigned;
	} else {
		old.text = dt_xstrdup(cur);
		struct cg_type pt;
		unsigned step = x->ptr && !cg_type(g, x->ptr, &pt) && pt.size ? pt.size : 1;
		char st[24];

		snprintf(st, sizeof(st), "%uLL", step);
		if (n->kind == N_INCDEC) {
			one.text = dt_xstrdup(st);
			op[0] = n->op[0];
			val = &one;
		} else {
			snprintf(op, sizeof(op), "%.*s", (int)strlen(n->op) - 1, n->op);
			if ((op[0] == '/' || op[0] == '%') && cg_const(g, n->b, &z) && !z)
				cg_refuse(g, n, "D_DIV_ZERO",
					  "expression contains division by zero");
			if (step > 1 && (op[0] == '+' || op[0] == '-') && !op[1]) {
				one.text = dt_xmalloc(strlen(val->text) + 48);
				sprintf(one.text, "(__s64)((__u64)(%s) * %s)", val->text, st);
				one.size = 8;
				val = &one;
			}
		}
		cg_arith(op, &old, val, nv);
		cv_free(&old);
		cv_free(&one);
	}
	nv->type = TY_INT;
	if (!nv->size)
		nv->size = 8;
	cg_conv(nv, x->size ? x->size : 8, x->is_unsigned); /* as a cast to its type */
	if (x->bits && x->bits < 64) { /* a bit-field keeps its bits, extended by its sign */
		char *in = nv->text;
		struct dt_buf b = {0};

		if (x->is_unsigned)
			dt_buf_printf(&b, "(__s64)((__u64)(%s) & 0x%llxULL)", in,
				      (1ULL << x->bits) - 1);
		else
			dt_buf_printf(&b, "((__s64)((__u64)(%s) << %u) >> %u)", in, 64 - x->bits,
				      64 - x->bits);
		nv->text = b.s;
		dt_free(in);
	}
}

bool cg_var_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	const struct dt_node *lhs = n->a;
	char k = lhs ? var_kind(lhs) : 0, buf[300];
	const struct cg_var *x;
	struct cv val = {0};

	if ((n->kind != N_ASSIGN && n->kind != N_INCDEC) || !k)
		return false;
	if (k == 'g' && is_builtin(lhs->name)) {
		cg_fail(g, lhs, "a built-in variable cannot be assigned to");
		return true;
	}
	x = find(g, k, lhs->name);
	if (!x) {
		cg_err(g, lhs, "this variable");
		return true;
	}
	if (n->kind == N_ASSIGN) {
		cg_value(g, n->b, &val);
		if (!g->failed && x->is_str && cg_is_null(n->b))
			cg_null_str(&val); /* DTrace's NULL, kept: x == NULL */
		if (!g->failed && (val.type == TY_STR) != x->is_str) {
			char msg[300];

			snprintf(msg, sizeof(msg), "'%s' holds a string and an integer", lhs->name);
			if (cg_decl_type(g, k, lhs->name)) /* against its declaration: D's error */
				cg_refuse(g, n, "D_OP_INCOMPAT", msg);
			else
				cg_fail(g, n, msg);
		}
		if (!g->failed && x->is_str && strcmp(n->op, "="))
			cg_fail(g, n, "this operator does not apply to a string");
	} else if (x->is_str) {
		cg_fail(g, n, "++ and -- do not apply to a string");
	}
	if (g->failed)
		return true;
	ref(x, buf, sizeof(buf));
	if (k == 's')
		dt_buf_printf(o,
			      "%sif (!sv) {\n%s\tvoid *zv = zero_value();\n"
			      "%s\tif (zv)\n%s\t\tbpf_map_update_elem(&svars, &stid, zv, 1);\n"
			      "%s\tsv = bpf_map_lookup_elem(&svars, &stid);\n"
			      "%s\tif (!sv) DYN_DROP();\n%s}\n%sif (sv)\n",
			      ind, ind, ind, ind, ind, ind, ind, ind);
	if (x->is_str) {
		char dst[340];

		snprintf(dst, sizeof(dst), "(__u8 *)%s", buf);
		if (k == 's')
			dt_buf_printf(o, "%sif (sv) {\n", ind);
		cg_store_strvar(g, &val, dst, o, k == 's' ? "\t\t\t" : ind);
		if (k == 's')
			dt_buf_printf(o, "%s}\n", ind);
	} else {
		struct cv nv = {0};

		int_value(g, n, x, buf, &val, &nv);
		if (!g->failed)
			dt_buf_printf(o, "%s%s%s = %s;\n", ind, k == 's' ? "\t" : "", buf, nv.text);
		cv_free(&nv);
	}
	cv_free(&val);
	return true;
}
