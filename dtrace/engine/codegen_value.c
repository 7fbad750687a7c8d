/* SPDX-License-Identifier: MIT */
/*
 * Values, under every layer that makes or uses one: the errors a
 * construct gets (cg_err: not done yet; cg_fail: wrong), a value's end
 * (cv_free), a string value written where it goes (cg_store_str: a
 * record's field, a key's part, a variable), and the way down into
 * expressions: cg_value() lowers a sub-expression through g->expr, which
 * the top layer (codegen.c) sets to codegen_expr.c's cg_expr_value(). So
 * the layers under codegen_expr.c (variables, arrays, string functions)
 * lower their operands without calling up; codegen_expr.c calls them.
 */
#include <inttypes.h>
#include <string.h>

#include "cg.h"

void cg_err(struct cg *g, const struct dt_node *n, const char *what)
{
	if (g->failed)
		return;
	g->failed = true;
	if (g->scanning) /* cg_vars_scan(): the code's writing reports it */
		return;
	dt_error_at(g->diag, &n->pos, "D_UNSUPPORTED", "%s is not supported yet", what);
}

/*
 * A call the engine has no code for: not supported at all (ustack() where
 * D allows no stack too).
 */
void cg_unknown_call(struct cg *g, const struct dt_node *n, const char *what)
{
	char msg[200];

	(void)what;
	if (!strcmp(n->name, "ustack")) {
		cg_fail(g, n,
			"ustack() is supported as an action, an aggregation key or printf's %k "
			"argument");
		return;
	}
	snprintf(msg, sizeof(msg),
		 "%s() is not supported by this D consumer (README: what is supported)", n->name);
	cg_fail(g, n, msg);
}

/* An error of the program itself (a type clash): reported as it is. */
void cg_fail(struct cg *g, const struct dt_node *n, const char *what)
{
	if (g->failed)
		return;
	g->failed = true;
	if (!g->scanning)
		dt_error_at(g->diag, &n->pos, g->tag ? g->tag : "D_OP_INCOMPAT", "%s", what);
}

/* An invalid program (D refuses it): an error with D's tag. */
void cg_refuse(struct cg *g, const struct dt_node *n, const char *tag, const char *what)
{
	g->tag = tag;
	cg_fail(g, n, what);
	g->tag = NULL;
}

void cg_refuse_undef(struct cg *g, const struct dt_node *n)
{
	char msg[300];

	snprintf(msg, sizeof(msg), "'%s' is not a variable or a builtin this D consumer knows",
		 n->name);
	cg_refuse(g, n, "D_IDENT_UNDEF", msg);
}

void cg_strval(struct cg *g, const struct dt_node *n, struct cv *v)
{
	cg_value(g, n, v);
	if (!g->failed && v->type == TY_INT && v->ptr &&
	    (!strcmp(v->ptr, "char") || !strcmp(v->ptr, "const char"))) {
		v->type = TY_STR; /* a char pointer's string: read where it points */
		v->skind = SV_USER;
		v->ptr = NULL;
	}
}

void cv_free(struct cv *v)
{
	dt_free(v->text);
	v->text = NULL;
	if (v->sub) {
		cv_free(&v->sub[0]);
		cv_free(&v->sub[1]);
		dt_free(v->sub);
		v->sub = NULL;
	}
}

/* A sub-expression's value: the expression layer's, through the hook the top layer set. */
void cg_value(struct cg *g, const struct dt_node *n, struct cv *v)
{
	g->expr(g, n, v);
}

void cg_int(struct cg *g, const struct dt_node *n, struct cv *v)
{
	memset(v, 0, sizeof(*v));
	if (g->failed)
		return;
	cg_value(g, n, v);
	if (!g->failed && v->type != TY_INT)
		cg_err(g, n, "a string where an integer is wanted (string comparisons)");
}

/* a stack's value (codegen_stack.c) written: {pid, bytes, return addresses}. */
static void store_stack(const struct cv *v, const char *dst, struct dt_buf *o, const char *ind)
{
	bool k = v->symfn == EG_SYM_KSTACK || (v->symfn >= EG_SYM_SYM && v->symfn < EG_SYM_USYM);

	if (v->symfn >= EG_SYM_SYM) {
		dt_buf_printf(o,
			      "%s{\n%s\t__u64 sa = (__u64)(%s);\n"
			      "%s\t*(__u32 *)(%s) = %s;\n%s\t*(__u32 *)(%s + 4) = 8;\n"
			      "%s\t*(__u64 *)(%s + 8) = sa;\n%s}\n",
			      ind, ind, v->text, ind, dst, k ? "0xffffffffu" : "(__u32)pid", ind,
			      dst, ind, dst, ind);
		return;
	}
	dt_buf_printf(o,
		      "%s{\n%s\tlong sn = bpf_get_stack(ctx, (void *)(%s + 8), %u, %d);\n"
		      "%s\t*(__u32 *)(%s) = %s;\n"
		      "%s\t*(__u32 *)(%s + 4) = sn < 0 ? 0 : (__u32)sn;\n%s}\n",
		      ind, ind, dst, 8 * v->size, k ? 0 : 256, ind, dst,
		      k ? "0xffffffffu" : "(__u32)pid", ind, dst, ind);
}

/*
 * A string written into the STRSIZE area at `dst` (a byte pointer
 * expression). `zeroed`: the area is clear already (a key's), so a
 * constant needs only its own words.
 */
void cg_store_str(struct cg *g, const struct cv *v, const char *dst, bool zeroed, struct dt_buf *o,
		  const char *ind)
{
	size_t len, i;

	switch (v->skind) {
	case SV_STACK:
		store_stack(v, dst, o, ind);
		return;
	case SV_USER: /* an address that cannot be read: the clause's fault */
		cg_fault_read_str(g, dst, v->text, v->kernel, o, ind);
		return;
	case SV_COMM:
		dt_buf_printf(o, "%sbpf_get_current_comm(%s, 16);\n", ind, dst);
		return;
	case SV_BYTES: /* D's memory, else the process's (a key's bytes: zeroes if neither) */
		dt_buf_printf(
		    o,
		    "%s{\n%s\t__u64 ba_ = (__u64)(%s);\n%s\t__u8 *bp_ = dmem_at(ba_, %u);\n"
		    "%s\tif (bp_)\n%s\t\tbpf_probe_read_kernel(%s, %u, bp_);\n%s\telse\n"
		    "%s\t\tbpf_probe_read_user(%s, %u, (void *)ba_);\n%s}\n",
		    ind, ind, v->text, ind, v->size, ind, ind, dst, v->size, ind, ind, dst, v->size,
		    ind);
		return;
	case SV_MEM:
		dt_buf_printf(o, "%sbpf_probe_read_kernel_str(%s, STRSIZE, %s);\n", ind, dst,
			      v->text);
		return;
	case SV_COND: {
		char in[64];

		snprintf(in, sizeof(in), "%s\t", ind);
		dt_buf_printf(o, "%sif (%s) {\n", ind, v->text);
		cg_store_str(g, &v->sub[0], dst, zeroed, o, in);
		dt_buf_printf(o, "%s} else {\n", ind);
		cg_store_str(g, &v->sub[1], dst, zeroed, o, in);
		dt_buf_printf(o, "%s}\n", ind);
		return;
	}
	case SV_CONST:
		len = strlen(v->text);
		if (len > (size_t)g->strsize - 1)
			len = (size_t)g->strsize - 1;
		for (i = 0; i < len + 1; i += 8) {
			uint64_t w = 0;
			size_t k;

			for (k = 0; k < 8 && i + k < len; k++)
				w |= (uint64_t)(unsigned char)v->text[i + k] << (8 * k);
			if (w || !zeroed)
				dt_buf_printf(o, "%s*(__u64 *)(%s + %zu) = 0x%" PRIx64 "ULL;\n",
					      ind, dst, i, w);
		}
		return;
	}
}

void cg_null_str(struct cv *v)
{
	cv_free(v);
	v->type = TY_STR;
	v->skind = SV_MEM;
	v->marked = false;
	v->text = dt_xstrdup("((void *)0)");
}

/*
 * A string stored into a variable's area keeps DTrace's NULL: a null
 * string (a null pointer, or a variable's null) is the first byte 0 and
 * the last (STRSIZE - 1, where a string of strsize characters has its
 * NUL) 1; any other string leaves that byte 0.
 */
void cg_store_strvar(struct cg *g, const struct cv *v, const char *dst, struct dt_buf *o,
		     const char *ind)
{
	char in[64];

	snprintf(in, sizeof(in), "%s\t", ind);
	if (v->skind == SV_COND) {
		dt_buf_printf(o, "%sif (%s) {\n", ind, v->text);
		cg_store_strvar(g, &v->sub[0], dst, o, in);
		dt_buf_printf(o, "%s} else {\n", ind);
		cg_store_strvar(g, &v->sub[1], dst, o, in);
		dt_buf_printf(o, "%s}\n", ind);
		return;
	}
	if (v->skind != SV_MEM) {
		cg_store_str(g, v, dst, false, o, ind);
		dt_buf_printf(o, "%s((__u8 *)(%s))[STRSIZE - 1] = 0;\n", ind, dst);
		return;
	}
	dt_buf_printf(o,
		      "%s{\n%s\tconst __u8 *sp_ = (const __u8 *)(%s);\n"
		      "%s\tif (sp_) {\n%s\t\tbpf_probe_read_kernel_str(%s, STRSIZE, sp_);\n"
		      "%s\t\t((__u8 *)(%s))[STRSIZE - 1] = %s;\n"
		      "%s\t} else {\n%s\t\t((__u8 *)(%s))[0] = 0;\n"
		      "%s\t\t((__u8 *)(%s))[STRSIZE - 1] = 1;\n%s\t}\n%s}\n",
		      ind, ind, v->text, ind, ind, dst, ind, dst,
		      v->marked ? "sp_[STRSIZE - 1]" : "0", ind, ind, dst, ind, dst, ind, ind);
}

bool cg_is_null(const struct dt_node *n)
{
	return (n->kind == N_IDENT && !strcmp(n->name, "NULL")) || (n->kind == N_INT && !n->ival);
}

void cg_store_rec_str(struct cg *g, const struct cv *v, const char *dst, struct dt_buf *o,
		      const char *ind)
{
	cg_store_str_fault(g, v, dst, "0", o, ind);
}

void cg_store_str_fault(struct cg *g, const struct cv *v, const char *dst, const char *addr,
			struct dt_buf *o, const char *ind)
{
	struct cv p = *v;
	char in[64];
	size_t site;

	if (v->skind != SV_MEM || !v->marked) {
		cg_store_str(g, v, dst, false, o, ind);
		return;
	}
	/* the variable read once (an assignment used as a value is in it) */
	site = g->scanning ? 0 : cg_fault_site(g);
	snprintf(in, sizeof(in), "%s\t", ind);
	dt_buf_printf(o, "%s{\n%s\tconst __u8 *rp_ = (const __u8 *)(%s);\n", ind, ind, v->text);
	dt_buf_printf(o, "%s\tif (strnull(rp_))\n%s\t\tFAULT(%zu, 1, %s);\n", ind, ind, site, addr);
	p.text = "rp_";
	p.sub = NULL;
	cg_store_str(g, &p, dst, false, o, in);
	dt_buf_printf(o, "%s}\n", ind);
}
