/* SPDX-License-Identifier: MIT */
/*
 * printa() of several aggregations, `printa("%d %@d %@d\n", @a, @b)`: the
 * aggregations joined by key, as DTrace joins them (libdtrace's
 * dtrace_aggregate_walk_joined). Every key of any of them is a row; an
 * aggregation without the key gives its zero (0, or an empty histogram);
 * the rows are sorted by the first aggregation's value (aggsortpos: that
 * one's), then the next's, then by key; the k-th %@ of the format prints the k-th aggregation.
 * The reader (the engine's records.c) hands each aggregation's entries in
 * turn, dt_render_join_next() between them; render.c's A_PRINTA_END
 * prints the rows here. Above render_agg.c (entries, values, keys) and
 * render_printf.c (the format).
 */
#include <stdlib.h>
#include <string.h>

#include "d.h"
#include "render.h"

void dt_render_join_next(struct dt_render *r, size_t agg)
{
	struct dt_joined j = {(size_t)r->printa_agg, r->ents, r->nents};

	if (r->printa_agg < 0 || agg >= r->t->naggs)
		return; /* no printa() under way (the renderer is done) */
	DT_PUSH(r->joined, r->njoined, j);
	r->ents = NULL;
	r->nents = 0;
	r->printa_agg = (long)agg;
}

struct row {
	const struct dt_entry *key; /* the first entry with the key */
	const struct dt_entry *e[16];
};

static const struct dt_agg *const *sort_aggs;
static size_t sort_n, sort_pos; /* aggsortpos: the aggregation compared first */

static int value_cmp(const struct dt_agg *a, const struct dt_entry *x, const struct dt_entry *y)
{
	if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE) {
		int c = (x->hsum > y->hsum) - (x->hsum < y->hsum);

		return c ? c : (x->hzero > y->hzero) - (x->hzero < y->hzero);
	}
	return (x->v > y->v) - (x->v < y->v);
}

static int row_cmp(const void *p, const void *q)
{
	const struct row *x = p, *y = q;
	size_t k;

	for (k = 0; k < sort_n; k++) {
		size_t a = (sort_pos + k) % sort_n;
		int c = value_cmp(sort_aggs[a], x->e[a], y->e[a]);

		if (c)
			return c;
	}
	return dtr_cmp_keys(x->key, y->key);
}

void dtr_print_joined(struct dt_render *r, const struct dt_action *act)
{
	const struct dt_agg *aggs[16];
	struct dt_entry *lists[16], zero[16];
	size_t counts[16], n = 0, k, i, j, nrows = 0;
	struct row *rows = NULL;

	for (k = 0; k < r->njoined && n < 15; k++, n++) {
		aggs[n] = &r->t->aggs[r->joined[k].agg];
		lists[n] = r->joined[k].ents;
		counts[n] = r->joined[k].nents;
	}
	aggs[n] = &r->t->aggs[r->printa_agg];
	lists[n] = r->ents;
	counts[n++] = r->nents;
	for (k = 0; k < n; k++) {
		memset(&zero[k], 0, sizeof(zero[k]));
		zero[k].nbuckets = dtr_nbuckets(aggs[k]);
		zero[k].buckets = calloc(zero[k].nbuckets + 1, sizeof(int64_t));
		if (zero[k].nbuckets)
			dtr_bucket_sum(aggs[k], &zero[k]);
		for (i = 0; i < counts[k]; i++)
			dtr_entry_value(aggs[k], &lists[k][i]);
	}
	/* the rows: every key of any aggregation, each aggregation's entry or its zero */
	for (k = 0; k < n; k++) {
		for (i = 0; i < counts[k]; i++) {
			struct dt_entry *e = &lists[k][i];
			struct row row = {e, {0}};

			for (j = 0; j < nrows && dtr_cmp_keys(rows[j].key, e); j++)
				;
			if (j < nrows)
				continue;
			for (j = 0; j < n; j++) {
				size_t m;

				for (m = 0; m < counts[j] && dtr_cmp_keys(&lists[j][m], e); m++)
					;
				row.e[j] = m < counts[j] ? &lists[j][m] : &zero[j];
			}
			DT_PUSH(rows, nrows, row);
		}
	}
	sort_aggs = aggs;
	sort_n = n;
	sort_pos = r->o && r->o->aggsortpos > 0 ? (size_t)r->o->aggsortpos % n : 0;
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), row_cmp);
	for (i = 0; i < nrows; i++)
		dtr_dformat_join(r->out, act->fmt, rows[i].key->keys, rows[i].key->nkeys, aggs,
				 (const struct dt_entry *const *)rows[i].e, n);
	for (k = 0; k < n; k++) {
		((struct dt_agg *)aggs[k])->printed = true;
		free(zero[k].buckets);
	}
	for (k = 0; k < r->njoined; k++) {
		for (i = 0; i < r->joined[k].nents; i++)
			dtr_entry_free(&r->joined[k].ents[i]);
		dt_free(r->joined[k].ents);
	}
	dt_free(r->joined);
	r->joined = NULL;
	r->njoined = 0;
	dt_free(rows);
}
