/* SPDX-License-Identifier: MIT */
/*
 * D's memory in the generated program (codegen_ptr.c's theory): the
 * scratch map and the functions that reach it (dmem_at(), dload(),
 * dstore(), dcopy(), dalloca(), dread_str()), written when a clause uses
 * it (a string read from the process, else the kernel); and tracemem(), whose bytes are read from
 * it or from the process's or the kernel's memory into the record.
 */
#include <string.h>

#include "cg.h"

static const char dmem_functions[] =
    "#define DMEM_VA_S 0x4000000000000000ULL\n"
    "#define DMEM_VA_G 0x4100000000000000ULL\n"
    "struct dmem { __u64 top; __u8 b[2 * DMEM_SCRATCH]; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct dmem); } dmem SEC(\".maps\");\n"
    /* n bytes of D's memory at virtual address a, or NULL */
    "INLINE __u8 *dmem_at(__u64 a, __u64 n) {\n"
    "\t__u32 z = 0; __u64 off = a - DMEM_VA_S;\n"
    "\tif (n > DMEM_SCRATCH) return 0;\n"
    "\tBOUNDED(n);\n"
    "\tif (off < DMEM_SCRATCH) {\n"
    "\t\tstruct dmem *m = bpf_map_lookup_elem(&dmem, &z);\n"
    "\t\tif (!m || off + n > m->top) return 0;\n"
    "\t\tBOUNDED(off);\n"
    "\t\tif (off >= DMEM_SCRATCH) return 0;\n"
    "\t\treturn m->b + off;\n"
    "\t}\n"
    "#ifdef DMEM_GLOBALS\n"
    "\toff = a - DMEM_VA_G;\n"
    "\tif (off < DMEM_GLOBALS) {\n"
    "\t\tstruct gvars *m = bpf_map_lookup_elem(&gvars, &z);\n"
    "\t\tif (!m || off + n > DMEM_GLOBALS) return 0;\n"
    "\t\tBOUNDED(off);\n"
    "\t\tif (off >= DMEM_GLOBALS) return 0;\n"
    "\t\treturn (__u8 *)m + off;\n"
    "\t}\n"
    "#endif\n"
    "\treturn 0;\n"
    "}\n"
    /* n bytes at a into d: D's memory, the process's, the kernel's; -1 none */
    "INLINE int dload(void *d, __u32 n, __u64 a) {\n"
    "\t__u8 *p = dmem_at(a, n);\n"
    "\tif (p) return bpf_probe_read_kernel(d, n & 15, p) ? -1 : 0;\n"
    /* past a global object (`((int *)a)[10]` of `int a[5]`): the bytes there, as DTrace's */
    "#ifdef DMEM_GLOBALS\n"
    "\tif (a - DMEM_VA_G < sizeof(struct gvars) - 16) {\n"
    "\t\t__u32 z = 0; __u64 off = a - DMEM_VA_G;\n"
    "\t\t__u8 *m = bpf_map_lookup_elem(&gvars, &z);\n"
    "\t\tBOUNDED(off);\n"
    "\t\tif (m && off < sizeof(struct gvars) - 16)\n"
    "\t\t\treturn bpf_probe_read_kernel(d, n & 15, m + off) ? -1 : 0;\n"
    "\t}\n"
    "#endif\n"
    "\tif (a >= DMEM_VA_S && a < DMEM_VA_G + (1ULL << 56)) return -1;\n"
    "\tif (!bpf_probe_read_user(d, n & 15, (void *)a)) return 0;\n"
    "\treturn bpf_probe_read_kernel(d, n & 15, (void *)a) ? -1 : 0;\n"
    "}\n"
    "INLINE int dstore(__u64 a, __u64 v, __u32 n) {\n"
    "\t__u8 *p = dmem_at(a, n);\n"
    "\tif (!p) return -1;\n"
    "\treturn bpf_probe_read_kernel(p, n & 15, &v) ? -1 : 0;\n"
    "}\n"
    /* n bytes from s (D's memory, a BPF pointer's, the process's, the kernel's) to D's d */
    "INLINE int dcopy(__u64 d, __u64 s, __u64 n, int bpf) {\n"
    "\t__u8 *p = dmem_at(d, n), *q;\n"
    "\tif (!p || n > DMEM_SCRATCH) return -1;\n"
    "\tBOUNDED(n);\n"
    "\tif (n > DMEM_SCRATCH) return -1;\n"
    "\tif (bpf) return bpf_probe_read_kernel(p, n, (void *)s) ? -1 : 0;\n"
    "\tq = dmem_at(s, n);\n"
    "\tif (q) return bpf_probe_read_kernel(p, n, q) ? -1 : 0;\n"
    "\tif (!bpf_probe_read_user(p, n, (void *)s)) return 0;\n"
    "\treturn bpf_probe_read_kernel(p, n, (void *)s) ? -1 : 0;\n"
    "}\n"
    "INLINE __u64 dalloca(__u64 n) {\n"
    "\t__u32 z = 0; struct dmem *m = bpf_map_lookup_elem(&dmem, &z);\n"
    "\t__u64 r;\n"
    "\tif (!m) return 0;\n"
    "\tm->top = (m->top + 7) & ~7ULL;\n"
    "\tif (n > DMEM_SCRATCH || m->top + n > DMEM_SCRATCH) return 0;\n"
    "\tr = DMEM_VA_S + m->top;\n"
    "\tm->top += n;\n"
    "\treturn r;\n"
    "}\n"
    "INLINE void dmem_reset(void) {\n"
    "\t__u32 z = 0; struct dmem *m = bpf_map_lookup_elem(&dmem, &z);\n"
    "\tif (m) m->top = 0;\n"
    "}\n"
    "#define DMEM_RESET() dmem_reset()\n"
    /* STRSIZE bytes above every allocation (the map holds twice the scratch): a string
     * made there before its strsize bytes are copied into D's memory */
    "INLINE __u8 *dmem_tmp(void) {\n"
    "\t__u32 z = 0; struct dmem *m = bpf_map_lookup_elem(&dmem, &z);\n"
    "\t__u64 t;\n"
    "\tif (!m) return 0;\n"
    "\tt = m->top;\n"
    "\tif (t > DMEM_SCRATCH) return 0;\n"
    "\tBOUNDED(t);\n"
    "\tif (t > DMEM_SCRATCH) return 0;\n"
    "\treturn m->b + t;\n"
    "}\n"
    /* a string at a (D's memory, the process's, the kernel's) */
    "INLINE long dread_str(void *d, __u64 a) {\n"
    "\t__u8 *p = dmem_at(a, 1);\n"
    "\tif (p) return bpf_probe_read_kernel_str(d, STRSIZE, p);\n"
    "\tif (a >= DMEM_VA_S && a < DMEM_VA_G + (1ULL << 56)) return -1;\n"
    "\treturn kread_str(d, a);\n"
    "}\n"
    "#define DREAD_STR(d, a) dread_str(d, a)\n";

/*
 * A string at a, the process's, else the kernel's: an address the code
 * generator cannot place (a string it knows is the kernel's, cv.kernel, is
 * read from the kernel alone: cg_fault_read_str()). A kernel read cannot
 * reach the process's memory (the kernel refuses a user address), so a bad
 * address faults still.
 */
static const char kread_str[] =
    "INLINE long kread_str(void *d, __u64 a) {\n"
    "\tlong r = bpf_probe_read_user_str(d, STRSIZE, (void *)a);\n"
    "\treturn r >= 0 ? r : bpf_probe_read_kernel_str(d, STRSIZE, (void *)a);\n"
    "}\n";

void cg_dmem_maps(const struct cg *g, struct dt_buf *o)
{
	size_t i;
	bool objs = false;

	for (i = 0; i < g->nvars; i++)
		objs |= g->vars[i].bytes > 0;
	if (!g->dmem) {
		dt_buf_printf(o,
			      "#define DMEM_RESET()\n%s#define DREAD_STR(d, a) kread_str(d, a)\n",
			      kread_str);
		return;
	}
	dt_buf_printf(o, "#define DMEM_SCRATCH %uULL\n", cg_dmem_size(g));
	if (objs)
		dt_buf_printf(o, "#define DMEM_GLOBALS (sizeof(struct gvars) - DMEM_SCRATCH)\n");
	dt_buf_add(o, kread_str, sizeof(kread_str) - 1);
	dt_buf_add(o, dmem_functions, sizeof(dmem_functions) - 1);
}

/*
 * tracemem(addr, size[, n]): `size` bytes (a constant) at addr into the
 * record as a field of bytes, then how many to print (n, when it is
 * between 0 and size; else size): the fields of the action the caller began.
 */
bool cg_trace_object(struct cg *g, const struct dt_node *n)
{
	struct cv a = {0};
	struct cg_type t;
	char *ty = NULL;
	bool is = false;

	if (n->kind != N_CALL || strcmp(n->name, "trace") || n->nargs != 1 ||
	    !(n->args[0]->kind == N_IDENT || n->args[0]->kind == N_UNARY ||
	      n->args[0]->kind == N_MEMBER || n->args[0]->kind == N_INDEX))
		return false;
	if (n->args[0]->kind == N_IDENT && !cg_var_find(g, 'g', n->args[0]->name))
		return false;
	if (n->args[0]->kind == N_INDEX && !n->args[0]->name[0] && n->args[0]->a &&
	    (n->args[0]->a->kind == N_INDEX || n->args[0]->a->kind == N_CALL)) {
		/* a string's character (`a[k][1]`) is no object in memory */
		cg_value(g, n->args[0]->a, &a);
		is = g->failed || a.type == TY_STR;
		cv_free(&a);
		if (is)
			return false;
	}
	/* (a char array too: DTrace's trace() of one, a kernel's `comm`, prints its bytes) */
	if (cg_ptr_lvalue(g, n->args[0], &a, &ty) && !cg_type(g, ty, &t) && t.is_aggr &&
	    (!strstr(ty, " [") || !strncmp(ty, "char [", 6)))
		is = true;
	cv_free(&a);
	return is;
}

void cg_tracemem(struct cg *g, const struct dt_node *n, struct eg_rec *r, struct dt_buf *o)
{
	struct eg_field fb = {TY_STR, r->size, 0, false, true, 0, 0},
			fn = {TY_INT, 0, 8, false, false, 8, 0};
	struct cv a = {0}, lim = {0};
	int64_t size = 0;
	struct cg_type t;
	char *ty;

	if (!strcmp(n->name, "trace")) { /* a struct or a union: its bytes, as tracemem() */
		if (!cg_ptr_lvalue(g, n->args[0], &a, &ty) || cg_type(g, ty, &t))
			goto out;
		size = t.size;
	} else if (n->nargs < 2 || !cg_const(g, n->args[1], &size) || size <= 0 || size > 4096) {
		cg_err(g, n, "tracemem() of other than a constant size from 1 to 4096");
		return;
	}
	if (!a.text)
		cg_int(g, n->args[0], &a);
	if (!g->failed && n->nargs > 2)
		cg_int(g, n->args[2], &lim);
	if (g->failed)
		goto out;
	fb.size = ((unsigned)size + 7) & ~7u;
	fn.off = r->size + fb.size;
	dt_buf_printf(o,
		      "\t\tif (rec) {\n\t\t\t__u64 ta_ = (__u64)(%s);\n"
		      "\t\t\t__u8 *tp_ = dmem_at(ta_, %u);\n"
		      "\t\t\tif (tp_ ? bpf_probe_read_kernel(rec + %u, %u, tp_) :\n"
		      "\t\t\t    bpf_probe_read_user(rec + %u, %u, (void *)ta_) &&\n"
		      "\t\t\t    bpf_probe_read_kernel(rec + %u, %u, (void *)ta_))\n"
		      "\t\t\t\tFAULT(%zu, 1, ta_);\n",
		      a.text, (unsigned)size, fb.off, (unsigned)size, fb.off, (unsigned)size,
		      fb.off, (unsigned)size, g->scanning ? 0 : cg_fault_site(g));
	if (lim.text)
		dt_buf_printf(o,
			      "\t\t\t__s64 tn_ = (__s64)(%s);\n"
			      "\t\t\t*(__s64 *)(rec + %u) = tn_ >= 0 && tn_ < %u ? tn_ : %u;\n",
			      lim.text, fn.off, (unsigned)size, (unsigned)size);
	else
		dt_buf_printf(o, "\t\t\t*(__s64 *)(rec + %u) = %u;\n", fn.off, (unsigned)size);
	dt_buf_printf(o, "\t\t}\n");
	DT_PUSH(r->f, r->nf, fb);
	DT_PUSH(r->f, r->nf, fn);
	r->items[r->nitems - 1].n += 2;
	r->size += fb.size + 8;
	g->dmem = true;
out:
	cv_free(&a);
	cv_free(&lim);
}
