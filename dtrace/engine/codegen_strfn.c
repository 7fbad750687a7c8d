/* SPDX-License-Identifier: MIT */
/*
 * D's string functions as BPF: strjoin(), basename(), dirname(), strlen()
 * (the others in codegen_strfn2.c).
 * Each call has a slot of its own in a per-CPU map (`strfns`, two STRSIZE
 * areas a slot: the argument, then the result), never the stack; its value
 * is a pointer to the result (SV_MEM), computed by a statement expression
 * where the value is used. A length is the string copy helper's return
 * (a loop's exact exits would multiply the verifier's paths); the scans of
 * basename/dirname are bounded loops; every computed index is tested where
 * it is used (the verifier must see the bound), and basename/dirname follow DTrace's.
 */
#include <string.h>

#include "cg.h"

/* The helpers the calls use: written once, after the prelude. */
static const char functions[] =
    "INLINE __u8 at(const __u8 *s, __u32 i) {\n"
    "\tBOUNDED(i);\n\treturn i < STRSIZE ? s[i] : 0;\n}\n"
    "INLINE void put(__u8 *s, __u32 i, __u8 c) {\n"
    "\tBOUNDED(i);\n\tif (i < STRSIZE) s[i] = c;\n}\n"
    /*
     * A length from the copy helper's return: a range to the verifier, not
     * one of STRSIZE exact values (a loop's exit would be, and each would
     * be verified on its own through the rest of the program: too many).
     */
    "INLINE __u32 dstrlen(const __u8 *s, __u8 *scratch) {\n"
    "\tlong n = bpf_probe_read_kernel_str(scratch, STRSIZE, s);\n"
    "\treturn n > 0 && n <= STRSIZE ? (__u32)n - 1 : 0;\n}\n"
    /*
     * basename/dirname: one forward scan by bpf_loop (its callback is
     * verified once, for any index: bounded loops' paths multiply). It
     * finds the string's length, its last character that is not '/', the
     * last '/' before that one, and the last character that is not '/'
     * before that '/'; DTrace's answers (dtrace_dif_subr) come from the same four.
     */
    "static long (*bpf_loop)(__u32 n, void *fn, void *ctx, __u64 f) = (void *)181;\n"
    "struct pscan { const __u8 *t; long len, lastns, slash, nsbefore, cur, nscur; };\n"
    "static __attribute__((noinline)) long pscan_cb(__u32 i, void *arg) {\n"
    "\tstruct pscan *p = arg;\n"
    "\tif (i >= STRSIZE) return 1;\n"
    "\t__u8 c = p->t[i];\n"
    "\tif (!c) { p->len = i; return 1; }\n"
    "\tif (c == '/') { p->cur = i; p->nscur = p->lastns; return 0; }\n"
    "\tp->lastns = i; p->slash = p->cur; p->nsbefore = p->nscur;\n"
    "\treturn 0;\n"
    "}\n"
    "INLINE void dbasename(const __u8 *t, __u8 *r, int dir) {\n"
    "\tstruct pscan p = {t, STRSIZE - 1, -1, -1, -1, -1, -1};\n"
    "\tbpf_loop(STRSIZE, pscan_cb, &p, 0);\n"
    "\tr[0] = '.'; r[1] = 0;\n"
    "\tif (p.len <= 0) return;\n"
    "\tr[0] = '/';\n"
    "\tif (p.lastns < 0) return;\n"
    "\tif (!dir) {\n"
    "\t\t__u32 b = (__u32)(p.slash + 1), e = (__u32)(p.lastns + 1);\n"
    "\t\tBOUNDED(b);\n"
    "\t\tif (b >= STRSIZE || e < b) return;\n"
    "\t\tbpf_probe_read_kernel_str(r, STRSIZE, t + b);\n"
    "\t\tput(r, e - b, 0);\n"
    "\t\treturn;\n"
    "\t}\n"
    "\tr[0] = p.slash < 0 ? '.' : '/';\n"
    "\tif (p.slash < 0 || p.nsbefore < 0) return;\n"
    "\tbpf_probe_read_kernel_str(r, STRSIZE, t);\n"
    "\tput(r, (__u32)(p.nsbefore + 1), 0);\n"
    "}\n";

void cg_strfn_maps(const struct cg *g, struct dt_buf *o)
{
	dt_buf_printf(o,
		      "struct strfn { __u8 s[%u][2][(STRSIZE + 7) & ~7]; };\n"
		      "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
		      "__type(value, struct strfn); } strfns SEC(\".maps\");\n"
		      "INLINE __u8 *strfn_slot(int j, int half) {\n"
		      "\t__u32 z = 0; struct strfn *f = bpf_map_lookup_elem(&strfns, &z);\n"
		      "\treturn f && j < %u ? f->s[j][half & 1] : 0;\n}\n",
		      g->nstrfn ? g->nstrfn : 1, g->nstrfn ? g->nstrfn : 1);
	dt_buf_add(o, functions, sizeof(functions) - 1);
	cg_strfn2_functions(o);
	cg_netfn_functions(o);
	cg_cleanpath_functions(o);
}

/* The slot's two areas as C expressions. */
static unsigned slot(struct cg *g, const struct dt_node *n)
{
	if (g->nstrfn >= 32) {
		cg_err(g, n, "more than 32 string function calls in a program");
		return 0;
	}
	return g->nstrfn++;
}

/*
 * probeprov of a USDT probe: its provider (the site's entry, codegen_args.c),
 * then the firing process's pid.
 */
void cg_usdt_probeprov(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct dt_buf o = {0};
	unsigned j;

	if (g->strsize < EG_SITE_STR + 32) {
		cg_fail(g, n, "probeprov: the provider's name does not fit in strsize");
		return;
	}
	j = slot(g, n);
	if (g->failed)
		return;
	dt_buf_printf(&o,
		      "({ __u8 *t = strfn_slot(%u, 0), *r = strfn_slot(%u, 1), *res = 0;\n"
		      "\t\tif (t && r) {\n"
		      "\t\t\tlong l = bpf_probe_read_kernel_str(t, %d, site->prov);\n"
		      "\t\t\t__u32 at = l > 0 ? (__u32)(l - 1) & %d : 0;\n"
		      "\t\t\tbpf_probe_read_kernel_str(t + at, STRSIZE - %d, "
		      "dlltostr(r, (__s64)(bpf_get_current_pid_tgid() >> 32)));\n"
		      "\t\t\tres = t;\n\t\t}\n\t\tres; })",
		      j, j, EG_SITE_STR, EG_SITE_STR - 1, EG_SITE_STR);
	v->type = TY_STR;
	v->skind = SV_MEM;
	v->text = o.s;
}

/* 0 (D's NULL) where a string is wanted: the string at address 0, which faults when read */
static void null_str(struct cg *g, const struct dt_node *arg, struct cv *v)
{
	int64_t c;

	if (g->failed || v->type != TY_INT || !cg_const(g, arg, &c) || c)
		return;
	v->type = TY_STR;
	v->skind = SV_USER;
	dt_free(v->text);
	v->text = dt_xstrdup("0ULL");
}

bool cg_strfn(struct cg *g, const struct dt_node *n, struct cv *v)
{
	const char *f = n->name;
	bool join = !strcmp(f, "strjoin"), len = !strcmp(f, "strlen");
	bool base = !strcmp(f, "basename"), dir = !strcmp(f, "dirname");
	bool clean = !strcmp(f, "cleanpath");
	struct cv a = {0}, b = {0};
	struct dt_buf o = {0};
	unsigned j;

	if (cg_is_netfn(f)) {
		j = cg_netfn_has_slot(f) ? slot(g, n) : 0;
		if (!g->failed)
			cg_netfn(g, n, v, j);
		return true;
	}
	if (!join && !len && !base && !dir && !clean) {
		if (!cg_is_strfn2(f))
			return false;
		j = slot(g, n);
		if (!g->failed)
			cg_strfn2(g, n, v, j);
		return true;
	}
	if (n->nargs != (join ? 2u : 1u)) {
		cg_fail(g, n,
			join ? "strjoin() takes two strings" : "this function takes one string");
		return true;
	}
	cg_strval(g, n->args[0], &a);
	null_str(g, n->args[0], &a);
	if (join) {
		cg_strval(g, n->args[1], &b);
		null_str(g, n->args[1], &b);
	}
	if (!g->failed && (a.type != TY_STR || (join && b.type != TY_STR)))
		cg_fail(g, n, "a string function's argument is not a string");
	j = g->failed ? 0 : slot(g, n);
	if (g->failed) {
		cv_free(&a);
		cv_free(&b);
		return true;
	}
	dt_buf_printf(&o, "({ __u8 *t = strfn_slot(%u, 0), *r = strfn_slot(%u, 1);\n", j, j);
	if (join) {
		/* a, then b from a's end: the slot's two areas hold both, cut at STRSIZE - 1 */
		dt_buf_printf(&o, "\t\tif (t) {\n");
		cg_store_str(g, &a, "t", false, &o, "\t\t\t");
		dt_buf_printf(&o, "\t\t\t__u32 n = r ? dstrlen(t, r) : 0;\n\t\t\tBOUNDED(n);\n"
				  "\t\t\tif (n < STRSIZE) {\n");
		cg_store_str(g, &b, "(t + n)", false, &o, "\t\t\t\t");
		dt_buf_printf(&o, "\t\t\t}\n\t\t\tput(t, STRSIZE - 1, 0);\n\t\t}\n\t\tt; })");
	} else {
		dt_buf_printf(&o, "\t\tif (t && r) {\n");
		cg_store_str(g, &a, "t", false, &o, "\t\t\t");
		if (clean)
			dt_buf_printf(&o, "\t\t\tdcleanpath(t, r);\n");
		else if (!len)
			dt_buf_printf(&o, "\t\t\tdbasename(t, r, %d);\n", dir);
		dt_buf_printf(&o, "\t\t}\n\t\t%s; })",
			      len ? "t && r ? (__s64)dstrlen(t, r) : 0LL" : "r");
	}
	cv_free(&a);
	cv_free(&b);
	v->text = o.s;
	if (len) {
		v->type = TY_INT;
		v->size = 8;
		v->is_unsigned = true;
	} else {
		v->type = TY_STR;
		v->skind = SV_MEM;
	}
	return true;
}

/* A string variable or builtin indexed (`s[1]`, `self->s[i]`, `execname[0]`): is n one? */
static bool str_base(const struct cg *g, const struct dt_node *n, struct dt_node *base)
{
	static const char *const bstr[] = {"execname",	"probename", "probefunc", "probemod",
					   "probeprov", "zonename",  NULL};
	char kind = n->a ? (n->a->kind == N_SELF ? 's' : n->a->kind == N_THIS ? 't' : 0) : 'g';
	size_t i;

	if (n->nargs != 1 || !kind || !n->name)
		return false;
	memset(base, 0, sizeof(*base));
	if (n->a)
		*base = *n->a;
	else {
		base->kind = N_IDENT;
		base->pos = n->pos;
		base->name = n->name;
	}
	for (i = 0; i < g->narrays; i++)
		if (g->arrays[i].kind == (kind == 's' ? 'S' : 'a') &&
		    !strcmp(g->arrays[i].name, n->name))
			return false;
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].kind == kind && g->vars[i].is_str &&
		    !strcmp(g->vars[i].name, n->name))
			return true;
	for (i = 0; kind == 'g' && bstr[i]; i++)
		if (!strcmp(bstr[i], n->name))
			return true;
	return false;
}

/* A string's character (D's char, signed): the string copied into a slot, the byte read. */
bool cg_str_index(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct dt_node base;
	struct cv sv = {0}, ix = {0};
	struct dt_buf o = {0};
	unsigned j;

	if (n->kind == N_INDEX && n->name && !n->name[0] && n->nargs == 1 && n->a &&
	    (n->a->kind == N_INDEX || n->a->kind == N_CALL)) {
		/* a string-valued expression indexed (`a[k][1]`, `substr(s, 1)[0]`) */
		cg_value(g, n->a, &sv);
		if (g->failed)
			return true; /* reported */
		if (sv.type != TY_STR) {
			cv_free(&sv);
			return false;
		}
	} else if (n->kind != N_INDEX || !str_base(g, n, &base)) {
		return false;
	} else {
		cg_value(g, &base, &sv);
	}
	cg_int(g, n->args[0], &ix);
	j = g->failed ? 0 : slot(g, n);
	if (!g->failed) {
		/* past the string's end (its copy leaves older bytes there): 0 */
		dt_buf_printf(
		    &o,
		    "({ __u8 *t = strfn_slot(%u, 0), *r = strfn_slot(%u, 1); __s64 c = 0;\n"
		    "\t\tif (t && r) {\n",
		    j, j);
		cg_store_str_fault(g, &sv, "t", ix.text, &o, "\t\t\t"); /* NULL's: a fault */
		dt_buf_printf(&o,
			      "\t\t\t__u64 ci = (__u64)(%s);\n"
			      "\t\t\tif (ci <= dstrlen(t, r))\n"
			      "\t\t\t\tc = (signed char)at(t, (__u32)ci);\n\t\t}\n\t\tc; })",
			      ix.text);
		v->text = o.s;
		v->type = TY_INT;
		v->size = 1;
		v->is_unsigned = false;
	}
	cv_free(&sv);
	cv_free(&ix);
	return true;
}
