/* SPDX-License-Identifier: MIT */
/*
 * DTrace's principal buffers as it sizes them (README.md, "Buffer
 * policies"): a record's size as DTrace counts it against bufsize (its
 * 4-byte EPID, then each value at its alignment: an int 4 bytes, a long
 * 8, a string strsize), which -x bufsize must hold, and under the ring and
 * fill policies the space a clause whose predicate is false reserves all
 * the same: a record of no action (`phantom_rec()`), which the reader
 * counts against its ring or fill buffer and prints nothing of.
 */
#include <stdio.h>
#include <string.h>

#include "cg.h"

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

/* A value's size in DTrace's record, and its alignment. */
static unsigned value_size(const struct cg *g, const struct eg_field *f, unsigned *align)
{
	*align = 1;
	if (f->is_stack || f->is_bytes) {
		*align = f->is_stack ? 8 : 1;
		return f->size;
	}
	if (f->type == TY_STR)
		return (unsigned)g->strsize - 1; /* (g->strsize holds the NUL too) */
	*align = f->nat == 1 || f->nat == 2 || f->nat == 4 ? f->nat : 8;
	return *align;
}

void cg_buf_size(struct cg *g, struct eg_rec *rec)
{
	unsigned sz = 4, a, n, s = (unsigned)g->strsize - 1;
	size_t i;

	for (i = 0; i < rec->nf; i++) {
		if (rec->f[i].off < 24)
			continue; /* the header's: the default output's CPU */
		n = value_size(g, &rec->f[i], &a);
		sz = ALIGN_UP(sz, a) + n;
	}
	/* constant strings, recorded as DTrace records them (the reader has them) */
	if (rec->const_bytes)
		sz += rec->const_bytes / ((unsigned)g->strsize + 1) * s;
	rec->bsize = sz;
	if (g->probe && g->probe->kind == P_END)
		g->out->end_bytes += sz;
}

/*
 * Under ring and fill, the clause's else: the predicate was false, the
 * pid test and the activity test true (cond0), and DTrace reserved the
 * record's space all the same.
 */
void cg_buf_phantom(struct cg *g, struct dt_buf *o, const char *cond0, size_t recno)
{
	if (g->prog->o->bufpolicy == DT_BUF_SWITCH)
		return;
	dt_buf_printf(o, "\telse if (%s)\n\t\tphantom_rec(%zuu, probe_ix);\n", cond0, recno);
}

void cg_buf_functions(struct cg *g, struct dt_buf *o)
{
	if (g->prog->o->bufpolicy == DT_BUF_SWITCH)
		return;
	dt_buf_printf(o,
		      "INLINE void phantom_rec(__u32 no, __u32 probe_ix) {\n"
		      "\t__u8 *r = bpf_ringbuf_reserve(&events, 24, 0);\n"
		      "\tif (!r) {\n\t\tdrop();\n\t\treturn;\n\t}\n"
		      "\t*(__u32 *)r = no | %uu;\n"
		      "\t*(__u32 *)(r + 4) = bpf_get_smp_processor_id();\n"
		      "\t*(__u64 *)(r + 8) = 0;\n"
		      "\t*(__u64 *)(r + 16) = probe_ix;\n"
		      "\tbpf_ringbuf_submit(r, 0);\n}\n",
		      EG_PHANTOM_BIT);
}
