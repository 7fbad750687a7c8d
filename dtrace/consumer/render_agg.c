/* SPDX-License-Identifier: MIT */
/*
 * Aggregations: the engine's entries (dtrace/engine/records.c: its maps
 * read and merged across CPUs) gathered, sorted as DTrace sorts them (by
 * value, then key) and printed by printa() and the exit dump (libdtrace
 * dt_aggregate.c, dt_consume.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "render.h"

/* An integer key as DTrace compares it: its bytes, unsigned (-1 sorts after 2). */
static uint64_t key_bits(const struct val *v)
{
	return v->size && v->size < 8 ? (uint64_t)v->i & ((UINT64_C(1) << (8 * v->size)) - 1)
				      : (uint64_t)v->i;
}

static int cmp_val(const struct val *a, const struct val *b)
{
	if (a->is_str && b->is_str)
		return strcmp(a->s, b->s);
	if (a->is_str != b->is_str)
		return a->is_str ? 1 : -1;
	return (key_bits(a) > key_bits(b)) - (key_bits(a) < key_bits(b));
}

static int cmp_keys(const struct dt_entry *x, const struct dt_entry *y)
{
	size_t i;

	for (i = 0; i < x->nkeys && i < y->nkeys; i++) {
		int c = cmp_val(&x->keys[i], &y->keys[i]);

		if (c)
			return c;
	}
	return 0;
}

int dtr_cmp_keys(const struct dt_entry *x, const struct dt_entry *y)
{
	return cmp_keys(x, y);
}

/* The keys from position `from` on, then those before it (DTrace's aggsortkeypos). */
static int cmp_keys_from(const struct dt_entry *x, const struct dt_entry *y, size_t from)
{
	size_t i, n = x->nkeys < y->nkeys ? x->nkeys : y->nkeys;

	for (i = 0; i < n; i++) {
		int c = cmp_val(&x->keys[(from + i) % n], &y->keys[(from + i) % n]);

		if (c)
			return c;
	}
	return 0;
}

/* printa's order: by value then key, or (aggsortkey) by key then value; aggsortrev reverses. */
static const struct dt_consumer_opts *sort_opts;

static int cmp_entry(const void *a, const void *b)
{
	const struct dt_entry *x = a, *y = b;
	const struct dt_consumer_opts *o = sort_opts;
	size_t from = o && o->aggsortkeypos > 0 ? (size_t)o->aggsortkeypos : 0;
	int c = (x->v > y->v) - (x->v < y->v);

	if (x->hist && y->hist) {
		c = (x->hsum > y->hsum) - (x->hsum < y->hsum);
		if (!c)
			c = (x->hzero > y->hzero) - (x->hzero < y->hzero);
	}

	if (o && o->aggsortkey) {
		int k = cmp_keys_from(x, y, from);

		c = k ? k : c;
	} else if (!c) {
		c = cmp_keys_from(x, y, from);
	}
	return o && o->aggsortrev ? -c : c;
}

void dtr_entry_free(struct dt_entry *e)
{
	size_t i;

	for (i = 0; i < e->nkeys; i++)
		dtr_val_free(&e->keys[i]);
	dt_free(e->keys);
	dt_free(e->buckets);
}

/*
 * Adds e to the entries (taking it): a new key is pushed, an existing one's
 * value merged as DTrace merges per-CPU data (count, sum add; min, max;
 * histograms bucket by bucket; avg keeps the first). `push` pushes without
 * looking for the key.
 */
void dtr_add_entry(struct dt_entry **ents, size_t *nents, const struct dt_agg *a,
		   struct dt_entry *e, bool push)
{
	size_t j, k;

	for (j = 0; !push && j < *nents; j++)
		if ((*ents)[j].nkeys == e->nkeys && !cmp_keys(&(*ents)[j], e))
			break;
	if (!push && j < *nents) {
		struct dt_entry *o = &(*ents)[j];

		if (a->fn == F_MIN)
			o->v = e->v < o->v ? e->v : o->v;
		else if (a->fn == F_MAX)
			o->v = e->v > o->v ? e->v : o->v;
		else if (a->fn != F_AVG)
			o->v += e->v;
		for (k = 0; k < 4; k++)
			o->st[k] += e->st[k];
		if ((uint64_t)o->st[2] < (uint64_t)e->st[2]) /* the sum of squares' carry */
			o->st[3]++;
		for (k = 0; k < o->nbuckets && k < e->nbuckets; k++)
			o->buckets[k] += e->buckets[k];
		dtr_entry_free(e);
		return;
	}
	DT_PUSH(*ents, *nents, *e);
}

/*
 * DTrace's stddev (libdtrace dt_stddev): the integer square root of the
 * average of the squares less the square of the average, both normalized,
 * in 128 bits.
 */
static uint64_t dstddev(const int64_t st[4], int64_t normal)
{
	__extension__ typedef unsigned __int128 u128;
	u128 sq, x, res = 0, bit = (u128)1 << 126;
	int64_t avg;

	if (st[0] == 0 || normal <= 0)
		return 0;
	sq = ((u128)(uint64_t)st[3] << 64 | (uint64_t)st[2]) / (uint64_t)normal / (uint64_t)normal /
	     (uint64_t)st[0];
	avg = st[1] / normal / st[0];
	if (avg < 0)
		avg = -avg;
	x = sq - (u128)(uint64_t)avg * (uint64_t)avg;
	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= res + bit) {
			x -= res + bit;
			res = (res >> 1) + bit;
		} else {
			res >>= 1;
		}
		bit >>= 2;
	}
	return (uint64_t)res;
}

/* The value entries are sorted by, for what is not a plain number. */
void dtr_entry_value(const struct dt_agg *a, struct dt_entry *e)
{
	if (a->fn == F_STDDEV) {
		e->v = (int64_t)dstddev(e->st, a->normal ? a->normal : 1);
	} else if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE) {
		dtr_bucket_sum(a, e);
	}
}

static void print_key(FILE *out, const struct val *k)
{
	if (k->is_stack) {
		dtr_print_ustack(out, k->s);
		return;
	}
	if (k->is_str) {
		fprintf(out, "  %-50s", k->s);
		return;
	}
	switch (k->size) {
	case 1: /* DTrace prints the narrow keys' bits unsigned */
		fprintf(out, " %3d", (int)(uint8_t)k->i);
		break;
	case 2:
		fprintf(out, " %5d", (int)(uint16_t)k->i);
		break;
	case 4:
		fprintf(out, " %8d", (int)k->i);
		break;
	default:
		fprintf(out, " %16lld", (long long)k->i);
		break;
	}
}

void dtr_print_agg(struct dt_render *r, const struct dt_action *act, const struct dt_agg *a)
{
	int64_t normal = a->normal ? a->normal : 1;
	size_t i, from = 0;

	for (i = 0; i < r->nents; i++)
		dtr_entry_value(a, &r->ents[i]);
	if (r->nents)
		qsort(r->ents, r->nents, sizeof(*r->ents), cmp_entry);
	if (a->has_trunc) { /* (trunc() keeps by value, whatever the order printed) */
		size_t keep = (size_t)(a->trunc < 0 ? -a->trunc : a->trunc);

		if (a->trunc >= 0 && r->nents > keep)
			from = r->nents - keep;
		else if (a->trunc < 0 && r->nents > keep)
			r->nents = keep;
	}
	sort_opts = r->o;
	if (r->nents > from)
		qsort(r->ents + from, r->nents - from, sizeof(*r->ents), cmp_entry);
	sort_opts = NULL;
	for (i = from; i < r->nents; i++) {
		struct dt_entry *e = &r->ents[i];
		size_t k;

		if (act->fmt) {
			dtr_dformat(r->out, act->fmt, e->keys, e->nkeys, a, e);
			continue;
		}
		for (k = 0; k < e->nkeys; k++)
			print_key(r->out, &e->keys[k]);
		if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE)
			dtr_print_quantize(r->out, a, e);
		else if (a->fn == F_STDDEV)
			fprintf(r->out, " %16llu", (unsigned long long)e->v);
		else
			fprintf(r->out, " %16lld", (long long)(e->v / normal));
		fputc('\n', r->out);
	}
}
