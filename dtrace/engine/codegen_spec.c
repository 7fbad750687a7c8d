/* SPDX-License-Identifier: MIT */
/*
 * Speculations (README.md, "Speculations"). A speculation is an entry of
 * the hash map `specs`, keyed by its ID (1..nspec), whose value is its
 * state: speculation() takes the first free ID (an insert that fails when
 * the key exists: atomic across CPUs), else 0, counting a failure as
 * "busy" when some ID is being committed or discarded, else "unavailable".
 * speculate(id) tags the clause's record with the ID (the upper half of
 * the header's probe word) when the ID is active, and otherwise ends the
 * clause there, its record discarded, without an error (DTrace's); a
 * clause bigger than specsize is a speculative drop. commit(id) and
 * discard(id) move an active ID to committing or discarding and write a
 * record saying so; the reader keeps tagged records per ID until that
 * record comes, prints or drops them then, and deletes the key: the ID is
 * free again. An ID past nspec is an illegal operation (a fault).
 */
#include <string.h>

#include "cg.h"

static const char spec_functions[] =
    "struct spec_state { __u32 state, pad; };\n"
    "struct { __uint(type, 1); __uint(max_entries, NSPEC + 1); __type(key, __u32); "
    "__type(value, struct spec_state); } specs SEC(\".maps\");\n"
    /* failed speculations (unavailable, busy), speculative drops */
    "struct { __uint(type, 2); __uint(max_entries, 3); __type(key, __u32); "
    "__type(value, __u64); } spec_stats SEC(\".maps\");\n"
    "INLINE void spec_count(__u32 k) {\n"
    "\t__u64 *c = bpf_map_lookup_elem(&spec_stats, &k);\n"
    "\tif (c) __sync_fetch_and_add(c, 1);\n"
    "}\n"
    "INLINE __s64 spec_new(void) {\n"
    "\t__u32 busy = 0;\n"
    "\tfor (__u32 i = 1; i <= NSPEC; i++) {\n"
    /* (the key a copy: the verifier forgets a counter whose address a helper took) */
    "\t\tstruct spec_state st = {1, 0}, *s;\n"
    "\t\t__u32 k = i;\n"
    "\t\tif (!bpf_map_update_elem(&specs, &k, &st, 1))\n"
    "\t\t\treturn i;\n"
    "\t\ts = bpf_map_lookup_elem(&specs, &k);\n"
    "\t\tif (s && s->state != 1)\n"
    "\t\t\tbusy = 1;\n"
    "\t}\n"
    "\tspec_count(busy);\n"
    "\treturn 0;\n"
    "}\n"
    "INLINE int spec_begin(__s64 id, __u64 size) {\n"
    "\t__u32 k = (__u32)id;\n"
    "\tstruct spec_state *s;\n"
    "\tif (id <= 0 || id > NSPEC)\n"
    "\t\treturn 0;\n"
    "\ts = bpf_map_lookup_elem(&specs, &k);\n"
    "\tif (!s || s->state != 1)\n"
    "\t\treturn 0;\n"
    "\tif (size > SPECSIZE) {\n"
    "\t\tspec_count(2);\n"
    "\t\treturn 0;\n"
    "\t}\n"
    "\treturn 1;\n"
    "}\n"
    /* commit (2) or discard (3): -1 for an ID past nspec */
    "INLINE int spec_end(__s64 id, __u32 op) {\n"
    "\t__u32 k = (__u32)id;\n"
    "\tstruct spec_state *s;\n"
    "\t__u64 *r;\n"
    "\tif ((__u64)id > NSPEC)\n"
    "\t\treturn -1;\n"
    "\ts = id ? bpf_map_lookup_elem(&specs, &k) : 0;\n"
    "\tif (!s || s->state != 1)\n"
    "\t\treturn 0;\n"
    "\ts->state = op;\n"
    "\tr = bpf_ringbuf_reserve(&events, 24, 0);\n"
    "\tif (!r) {\n\t\tdrop();\n\t\treturn 0;\n\t}\n"
    "\t*(__u32 *)r = 0xfffffffeu;\n"
    "\t*((__u32 *)r + 1) = bpf_get_smp_processor_id();\n"
    "\tr[1] = k;\n\tr[2] = op;\n"
    "\tbpf_ringbuf_submit(r, 0);\n"
    "\treturn 0;\n"
    "}\n";

static bool is_call(const struct dt_node *n, const char *name)
{
	return n && n->kind == N_CALL && !strcmp(n->name, name);
}

/* speculation(): the ID, or 0 */
bool cg_spec_call(struct cg *g, const struct dt_node *n, struct cv *v)
{
	if (!is_call(n, "speculation"))
		return false;
	if (n->nargs) {
		cg_err(g, n, "speculation() with arguments");
		return true;
	}
	g->spec_used = true;
	v->type = TY_INT;
	v->size = 4;
	v->is_unsigned = false;
	v->text = dt_xstrdup("spec_new()");
	return true;
}

/*
 * speculate(id), commit(id), discard(id) as statements of clause `clause`,
 * whose record is number `rec` (or none): false when n is none of them.
 */
bool cg_spec_stmt(struct cg *g, const struct dt_node *n, bool has_rec, size_t rec, struct dt_buf *o,
		  const char *ind)
{
	bool spec = is_call(n, "speculate");
	struct cv id;

	if (!spec && !is_call(n, "commit") && !is_call(n, "discard"))
		return false;
	if (n->nargs != 1) {
		cg_err(g, n, "this speculation action");
		return true;
	}
	cg_int(g, n->args[0], &id);
	if (g->failed) {
		cv_free(&id);
		return true;
	}
	g->spec_used = true;
	if (spec) {
		g->clause_spec = true;
		dt_buf_printf(o,
			      "%s{\n%s\t__s64 sid = %s;\n"
			      "%s\tif (!spec_begin(sid, SPEC_RSIZE_%zu))\n%s\t\tgoto spec_%zu;\n",
			      ind, ind, id.text, ind, rec, ind, g->clause);
		if (has_rec)
			dt_buf_printf(o, "%s\tif (rec)\n%s\t\t*(__u32 *)(rec + 20) = (__u32)sid;\n",
				      ind, ind);
		dt_buf_printf(o, "%s}\n", ind);
	} else {
		size_t site = g->scanning ? 0 : cg_fault_site(g);

		/* DTRACEFLT_ILLOP for an ID past nspec */
		dt_buf_printf(o,
			      "%s{\n%s\t__s64 sid = %s;\n"
			      "%s\tif (spec_end(sid, %d) < 0)\n%s\t\tFAULT(%zu, 3, sid);\n%s}\n",
			      ind, ind, id.text, ind, n->name[0] == 'c' ? 2 : 3, ind, site, ind);
	}
	cv_free(&id);
	return true;
}

/*
 * Before a clause: its record's size as DTrace counts it against specsize
 * (a 16-byte header, an integer's 8 bytes, a string's strsize + 1, the
 * constant strings this does not record), and where it speculates, that
 * size as SPEC_RSIZE_n for speculate().
 */
void cg_spec_clause_head(struct cg *g, struct dt_buf *o, size_t recno, struct eg_rec *rec)
{
	size_t i;

	rec->dsize = 16 + rec->const_bytes;
	for (i = 0; i < rec->nf; i++)
		if (rec->f[i].type == TY_STR && !rec->f[i].is_stack)
			rec->dsize += (unsigned)g->strsize + 1;
		else if (rec->f[i].size != 4) /* (4: the default output's CPU) */
			rec->dsize += rec->f[i].size;
	if (g->clause_spec)
		dt_buf_printf(o, "#define SPEC_RSIZE_%zu %u\n", recno, rec->dsize);
}

/* After it: where speculate() of an ID not active goes, the record discarded. */
void cg_spec_clause_end(struct cg *g, struct dt_buf *o, bool recs)
{
	if (!g->clause_spec)
		return;
	dt_buf_printf(o, "\tgoto spec_ok_%zu;\nspec_%zu:\n%s\tspec_ok_%zu:;\n", g->clause,
		      g->clause, recs ? "\tif (rec)\n\t\tbpf_ringbuf_discard(rec, 0);\n" : "",
		      g->clause);
	g->clause_spec = false;
}

/* The maps and functions, in a program that speculates: 0, or -1 (reported). */
int cg_spec_functions(struct cg *g, struct dt_buf *o)
{
	const struct dt_consumer_opts *op = g->prog->o;
	long nspec = op->nspec_set ? op->nspec : 1;
	long size = op->specsize > 0 ? op->specsize : 4L << 20;

	if (!g->spec_used)
		return 0;
	if (nspec > EG_NSPEC_MAX) {
		usdt_error(g->diag, "nspec %ld: -x engine=bpf keeps %d speculations at most", nspec,
			   EG_NSPEC_MAX);
		return -1;
	}
	g->out->nspec = nspec;
	g->out->specsize = size;
	dt_buf_printf(o, "#define NSPEC %ldu\n#define SPECSIZE %ldu\n", nspec, size);
	dt_buf_add(o, spec_functions, sizeof(spec_functions) - 1);
	return 0;
}
