/* SPDX-License-Identifier: MIT */
/*
 * An aggregating function's constant parameters: lquantize()'s base,
 * limit, step and llquantize()'s factor, magnitudes and steps, read as
 * constants and checked as DTrace checks them, and llquantize()'s bucket
 * of a value (the bounds from dt_llq_layout(), the renderer's too, so both
 * agree); each aggregation, made at its first use (cg_agg_get(): its keys'
 * layout, its value's size), and its map (shared past 40 aggregations).
 * Below codegen.c's aggregations; it calls only the value layer.
 */
#include <stdint.h>
#include <string.h>

#include "cg.h"

#define ROUND8(n) (((n) + 7u) & ~7u)

/* llquantize(x, factor, low, high, nsteps): constants DTrace accepts. */
bool cg_llq_params(struct cg *g, const struct dt_node *fn, int64_t llq[4])
{
	size_t i;

	if (fn->nargs != 5 && fn->nargs != 6) {
		cg_err(g, fn, "these arguments of llquantize()");
		return false;
	}
	for (i = 1; i < 5; i++) {
		if (!dt_check_const(fn->args[i], &llq[i - 1])) {
			cg_err(g, fn->args[i], "a parameter of llquantize() other than a constant");
			return false;
		}
	}
	if (!cg_llq_nbuckets(llq)) {
		cg_fail(
		    g, fn,
		    "llquantize(): the factor must be at least 2, the low magnitude below the high "
		    "one, the steps a multiple of the factor that divides each power of it");
		return false;
	}
	return true;
}

/* llquantize's buckets: 2P + 1 (dt_llq_layout()), 0 for parameters it cannot lay out */
size_t cg_llq_nbuckets(const int64_t llq[4])
{
	uint64_t lb[4097];
	bool ghost[4097];
	size_t np = dt_llq_layout(llq, lb, ghost, sizeof(lb) / sizeof(lb[0]));

	return np ? 2 * np + 1 : 0;
}

/* The positive bucket of magnitude u >= lb[lo]: the last k in [lo, hi] with u >= lb[k], as ?: */
static void search(struct dt_buf *o, const uint64_t *lb, size_t lo, size_t hi)
{
	size_t mid = (lo + hi + 1) / 2;

	if (lo >= hi) {
		dt_buf_printf(o, "%zu", lo);
		return;
	}
	dt_buf_printf(o, "(u < %lluULL ? ", (unsigned long long)lb[mid]);
	search(o, lb, lo, mid - 1);
	dt_buf_printf(o, " : ");
	search(o, lb, mid, hi);
	dt_buf_printf(o, ")");
}

/* `__u32 b`, x's bucket: P for a magnitude below lb[1], else P + k or, x negative, P - k. */
void cg_llq_bucket(struct dt_buf *o, const int64_t llq[4])
{
	uint64_t lb[4097];
	bool ghost[4097];
	size_t np = dt_llq_layout(llq, lb, ghost, sizeof(lb) / sizeof(lb[0]));

	dt_buf_printf(o, "\t\t\t\t__u64 u = x < 0 ? -(__u64)x : (__u64)x;\n");
	dt_buf_printf(o, "\t\t\t\t__u32 k = u < %lluULL ? 0 : ", (unsigned long long)lb[1]);
	search(o, lb, 1, np);
	dt_buf_printf(o, ";\n\t\t\t\t__u32 b = x < 0 ? %zu - k : %zu + k;\n", np, np);
}

/* lquantize(x, base, limit[, step[, increment]]): constants, as DTrace wants them. */
bool cg_lq_params(struct cg *g, const struct dt_node *fn, int64_t lq[3])
{
	size_t i;

	lq[2] = 1;
	if (fn->nargs < 3 || fn->nargs > 5) {
		cg_err(g, fn, "these arguments of lquantize()");
		return false;
	}
	for (i = 1; i < fn->nargs && i < 4; i++)
		if (!dt_check_const(fn->args[i], &lq[i - 1])) {
			cg_err(g, fn->args[i], "a parameter of lquantize() other than a constant");
			return false;
		}
	if (lq[2] <= 0 || lq[1] <= lq[0] || (lq[1] - lq[0]) / lq[2] > 4096) {
		cg_err(g, fn, "these lquantize() parameters");
		return false;
	}
	return true;
}

/* Each aggregation's map: a per-CPU hash of its keys (the engine reads and merges the CPUs). */
/* The aggregations' names the statements assign (if's branches too), each once. */
static void count_aggs(const struct dt_stmt *const *s, size_t n, const char ***names, size_t *nn)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct dt_node *e = s[i]->e;

		if (s[i]->is_if) {
			count_aggs((const struct dt_stmt *const *)s[i]->then, s[i]->nthen, names,
				   nn);
			count_aggs((const struct dt_stmt *const *)s[i]->els, s[i]->nels, names, nn);
			continue;
		}
		if (!e || e->kind != N_ASSIGN || !e->a || e->a->kind != N_AGG || !e->a->name)
			continue;
		for (k = 0; k < *nn && strcmp((*names)[k], e->a->name); k++)
			;
		if (k == *nn)
			DT_PUSH(*names, *nn, e->a->name);
	}
}

/*
 * A BPF program may use 64 maps at most (the verifier's MAX_USED_MAPS): a
 * program of more than 40 aggregations would pass it with a map each, so
 * then the aggregations of one shape (key and value sizes) share a map,
 * each key led by its aggregation's tag, which the reader filters on.
 */
bool cg_aggs_shared(struct cg *g)
{
	const char **names = NULL;
	size_t i, nn = 0;

	if (!g->aggs_shared) {
		for (i = 0; i < g->prog->nclauses; i++)
			count_aggs((const struct dt_stmt *const *)g->prog->clauses[i]->body,
				   g->prog->clauses[i]->nbody, &names, &nn);
		dt_free(names);
		g->aggs_shared = nn > 40 ? 2 : 1;
	}
	return g->aggs_shared == 2;
}

void cg_agg_maps(const struct cg *g, struct dt_buf *o)
{
	size_t i, j;

	for (i = 0; i < g->t->naggs; i++) {
		const struct eg_agg *e = &g->out->aggs[i];

		for (j = 0; j < i && strcmp(g->out->aggs[j].map, e->map); j++)
			;
		if (j < i)
			continue; /* a shared map, declared already */
		dt_buf_printf(o, "struct k_%s { __u8 b[%u]; };\n", e->map, e->key_size);
		if (e->val_size > 16)
			dt_buf_printf(o, "struct v_%s { __s64 v, n, b[%u]; };\n", e->map,
				      (e->val_size - 16) / 8);
		else
			dt_buf_printf(o, "struct v_%s { __s64 v, n; };\n", e->map);
		/* per-CPU hash, allocated as keys come but in NMI (cg_map_flags()) */
		dt_buf_printf(
		    o,
		    "struct { __uint(type, 5); __uint(max_entries, %u); "
		    "__uint(map_flags, %d); __type(key, struct k_%s); __type(value, "
		    "struct v_%s); } %s SEC(\".maps\");\n",
		    cg_map_entries(g, e->val_size > 16 ? 4096u : 16384u, e->key_size + e->val_size),
		    cg_map_flags(g), e->map, e->map, e->map);
	}
}

/* A record's or a key's field, as the renderer makes a value of it. */
struct dt_recipe *cg_field_recipe(size_t field)
{
	struct dt_recipe *r = dt_xmalloc(sizeof(*r));

	memset(r, 0, sizeof(*r));
	r->op = R_FIELD;
	r->field = field;
	return r;
}

/* A stack field: the renderer prints it as DTrace's frames (sym()...: its text). */
struct dt_recipe *cg_stack_recipe(size_t field, const struct cv *v)
{
	struct dt_recipe *r = cg_field_recipe(field);

	r->op = v->symfn >= EG_SYM_SYM ? R_SYM : R_USTACK;
	return r;
}

/* The aggregation `name`, created at its first use with this shape. */
long cg_agg_get(struct cg *g, const struct dt_node *lhs, enum dt_afn fn, struct cv *keys,
		const int64_t lq[4])
{
	size_t i, k;
	struct dt_agg a;
	struct eg_agg e;

	for (i = 0; i < g->t->naggs; i++) {
		struct dt_agg *x = &g->t->aggs[i];

		if (strcmp(x->name, lhs->name))
			continue;
		if (x->fn != fn) {
			char msg[300];

			snprintf(msg, sizeof(msg),
				 "@%s is used with two different aggregating functions", lhs->name);
			cg_fail(g, lhs, msg);
			return -1;
		}
		if (x->nkeys != lhs->nargs ||
		    (fn == F_LQUANTIZE && memcmp(x->lq, lq, sizeof(x->lq))) ||
		    (fn == F_LLQUANTIZE && memcmp(x->llq, lq, sizeof(x->llq)))) {
			cg_err(g, lhs, "an aggregation used with two functions or key shapes");
			return -1;
		}
		for (k = 0; k < x->nkeys; k++)
			if (x->keys[k].type != keys[k].type) {
				cg_err(g, lhs, "an aggregation with keys of two types");
				return -1;
			}
		return (long)i;
	}
	memset(&a, 0, sizeof(a));
	memset(&e, 0, sizeof(e));
	a.name = dt_xstrdup(lhs->name);
	a.fn = fn;
	a.fn_set = true;
	a.keyed = lhs->nargs > 0;
	a.nkeys = lhs->nargs;
	a.keys = dt_xmalloc((a.nkeys + 1) * sizeof(*a.keys));
	memset(a.keys, 0, (a.nkeys + 1) * sizeof(*a.keys));
	e.keys = dt_xmalloc((a.nkeys + 1) * sizeof(*e.keys));
	if (cg_aggs_shared(g)) { /* keys led by the aggregation's tag */
		e.prefix = 8;
		e.key_size = 8;
		e.tag = g->t->naggs + 1;
	}
	for (k = 0; k < a.nkeys; k++) {
		struct eg_field f = {keys[k].type, e.key_size, 8, false, false, 0, 0};

		if (keys[k].type == TY_STR)
			f.size = ROUND8((unsigned)g->strsize);
		if (keys[k].skind == SV_STACK) {
			f.size = cg_stack_bytes(&keys[k]);
			f.is_stack = keys[k].symfn < EG_SYM_SYM;
			f.sym = keys[k].symfn >= EG_SYM_SYM ? keys[k].symfn : 0;
		}
		a.keys[k].r =
		    keys[k].skind == SV_STACK ? cg_stack_recipe(k, &keys[k]) : cg_field_recipe(k);
		a.keys[k].type = keys[k].type;
		a.keys[k].size = keys[k].size;
		a.keys[k].is_unsigned = keys[k].is_unsigned;
		a.keys[k].is_float = keys[k].is_float;
		e.keys[k] = f;
		e.key_size += f.size;
	}
	e.nkeys = a.nkeys;
	if (!e.key_size)
		e.key_size = 8;
	e.val_size = 16;
	if (fn == F_QUANTIZE)
		e.val_size += 8 * EG_NQ;
	if (fn == F_LLQUANTIZE) {
		memcpy(a.llq, lq, sizeof(a.llq));
		e.val_size += 8 * (unsigned)cg_llq_nbuckets(lq);
	}
	if (fn == F_STDDEV)
		e.val_size += 16; /* the sum of squares, 128 bits: low, high */
	if (fn == F_LQUANTIZE) {
		memcpy(a.lq, lq, sizeof(a.lq));
		e.val_size += 8 * (unsigned)((lq[1] - lq[0]) / lq[2] + 2);
	}
	if (e.val_size > g->scratch)
		g->scratch = e.val_size; /* the zero value a new key starts from */
	if (e.prefix)
		snprintf(e.map, sizeof(e.map), "aggs_%u_%u", e.key_size, e.val_size);
	else
		snprintf(e.map, sizeof(e.map), "agg_%zu", g->t->naggs);
	DT_PUSH(g->t->aggs, g->t->naggs, a);
	g->out->aggs = dt_xrealloc(g->out->aggs, g->t->naggs * sizeof(e));
	g->out->aggs[g->t->naggs - 1] = e;
	if (e.key_size > g->scratch)
		g->scratch = e.key_size;
	return (long)g->t->naggs - 1;
}
