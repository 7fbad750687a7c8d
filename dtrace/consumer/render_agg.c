/* SPDX-License-Identifier: MIT */
/*
 * Aggregations: bpftrace's map dumps (or the engine's entries) gathered
 * into entries, the retained instances' shares merged in, sorted as
 * DTrace sorts them (by value, then key) and printed by printa() and the
 * exit dump (libdtrace dt_aggregate.c, dt_consume.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "json.h"
#include "render.h"

/*
 * bpftrace's joined key ("a,3") into the aggregation's key fields. A string
 * key holding commas makes more parts than fields: the first string field
 * takes the extra ones back.
 */
static char **split_key(const struct dt_agg *a, const char *key)
{
	char **parts = NULL, **f = dt_xmalloc((a->nfields + 1) * sizeof(*f));
	size_t np = 0, i, idx = 0, extra, strf = a->nfields;
	const char *p = key;

	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char *s = dt_xmalloc(n + 1);

		memcpy(s, p, n);
		s[n] = '\0';
		DT_PUSH(parts, np, s);
		if (!c)
			break;
		p = c + 1;
	}
	extra = np > a->nfields ? np - a->nfields : 0;
	for (i = 0; i < a->nfields; i++)
		if (a->field_type[i] == TY_STR) {
			strf = i;
			break;
		}
	for (i = 0; i < a->nfields; i++) {
		size_t take = i == strf ? extra + 1 : 1, k;
		struct dt_buf b = {0};

		dt_buf_add(&b, "", 0);
		for (k = 0; k < take && idx < np; k++, idx++) {
			if (k)
				dt_buf_add(&b, ",", 1);
			dt_buf_add(&b, parts[idx], strlen(parts[idx]));
		}
		f[i] = b.s;
	}
	for (i = 0; i < np; i++)
		dt_free(parts[i]);
	dt_free(parts);
	return f;
}

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
 * histograms bucket by bucket; avg keeps the first: bpftrace's carries no
 * count to weigh it by). `push` pushes without looking for the key.
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
 * Retained instances' exit dumps, by aggregation name: added to the first
 * instance's entries at each of its printa()s and its exit dump.
 */
struct dt_merged_agg {
	const struct dt_agg *a; /* the instance's own (its recipes printed the keys) */
	struct dt_entry *ents;
	size_t nents;
	bool printed; /* by the first instance */
};

struct dt_merged {
	struct dt_merged_agg *v;
	size_t n;
};

struct dt_merged *dt_merged_new(void)
{
	struct dt_merged *m = dt_xmalloc(sizeof(*m));

	memset(m, 0, sizeof(*m));
	return m;
}

static struct dt_merged_agg *merged_find(struct dt_merged *m, const char *name)
{
	size_t i;

	for (i = 0; m && i < m->n; i++)
		if (!strcmp(m->v[i].a->name, name))
			return &m->v[i];
	return NULL;
}

/* A retained instance's dump of a: its entries move into the merge. */
void dtr_merged_take(struct dt_render *r, const struct dt_agg *a)
{
	struct dt_merged_agg *x = merged_find(r->merged, a->name), nx = {a, NULL, 0, false};
	size_t i;

	if (!r->merged)
		return;
	if (!x) {
		DT_PUSH(r->merged->v, r->merged->n, nx);
		x = &r->merged->v[r->merged->n - 1];
	}
	for (i = 0; i < r->nents; i++)
		dtr_add_entry(&x->ents, &x->nents, a, &r->ents[i], false);
	r->nents = 0;
}

/* The first instance prints a: the retained instances' entries join its own. */
void dtr_merged_add(struct dt_render *r, const struct dt_agg *a)
{
	struct dt_merged_agg *x = merged_find(r->merged, a->name);
	size_t i, k;

	if (!x)
		return;
	x->printed = true;
	for (i = 0; i < x->nents; i++) {
		const struct dt_entry *f = &x->ents[i];
		struct dt_entry e = *f;

		e.keys = dt_xmalloc((f->nkeys + 1) * sizeof(*e.keys));
		for (k = 0; k < f->nkeys; k++) {
			e.keys[k] = f->keys[k];
			if (f->keys[k].is_str)
				e.keys[k].s = dt_xstrdup(f->keys[k].s);
		}
		e.buckets = f->nbuckets ? dt_xmalloc(f->nbuckets * sizeof(int64_t)) : NULL;
		if (f->nbuckets)
			memcpy(e.buckets, f->buckets, f->nbuckets * sizeof(int64_t));
		dtr_add_entry(&r->ents, &r->nents, a, &e, false);
	}
}

/* clear() zeroes the retained instances' share too (keys kept); trunc() drops it. */
void dtr_merged_clear(struct dt_render *r, const struct dt_agg *a, bool drop)
{
	struct dt_merged_agg *x = merged_find(r->merged, a->name);
	size_t i;

	for (i = 0; x && i < x->nents; i++) {
		if (drop) {
			dtr_entry_free(&x->ents[i]);
			continue;
		}
		x->ents[i].v = 0;
		if (x->ents[i].nbuckets)
			memset(x->ents[i].buckets, 0, x->ents[i].nbuckets * sizeof(int64_t));
	}
	if (x && drop)
		x->nents = 0;
}

/* One map/hist/stats event's entries (the printa's aggregation). */
void dtr_gather(struct dt_render *r, const struct dt_json *data)
{
	struct dt_agg *a = &r->t->aggs[r->printa_agg];
	const struct dt_json *m;
	size_t i;

	struct dt_agg fa = *a; /* the map's key fields: llquantize's bucket is the last */
	const char *part;
	size_t comp = 0, ln = strlen(a->name);
	bool mapped = a->keyed || a->fn == F_LLQUANTIZE;

	if (!data || data->kind != J_OBJECT || data->n != 1)
		return;
	m = data->v[0];
	if (strncmp(m->key, "@a_", 3) || strncmp(m->key + 3, a->name, ln))
		return;
	/* stddev(): three maps, count, sum (__s) and sum of squares (__q) */
	part = m->key + 3 + ln;
	if (*part && (a->fn != F_STDDEV || (strcmp(part, "__s") && strcmp(part, "__q"))))
		return;
	if (*part)
		comp = part[2] == 's' ? 1 : 2;
	if (a->fn == F_LLQUANTIZE)
		fa.nfields++;
	for (i = 0; i < (mapped ? m->n : 1); i++) {
		const struct dt_json *ev = mapped ? m->v[i] : m;
		int64_t n = ev->kind == J_NUMBER ? ev->i : 0;
		struct dt_entry e;
		char **fields = NULL;
		size_t k;

		if (mapped && m->kind != J_OBJECT)
			return;
		memset(&e, 0, sizeof(e));
		if (mapped)
			fields = split_key(&fa, ev->key);
		if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE) {
			dtr_read_buckets(a, ev, &e);
		} else if (a->fn == F_LLQUANTIZE) {
			int64_t lb[1024];
			size_t b = (size_t)strtoull(fields[a->nfields], NULL, 10);

			e.nbuckets = dt_llq_bounds(a->llq, lb, sizeof(lb) / sizeof(lb[0]));
			e.buckets = dt_xmalloc((e.nbuckets + 1) * sizeof(int64_t));
			memset(e.buckets, 0, (e.nbuckets + 1) * sizeof(int64_t));
			if (b < e.nbuckets)
				e.buckets[b] = n;
		} else if (a->fn == F_STDDEV) {
			e.st[comp] = n;
		} else {
			e.v = n;
		}
		if (a->keyed) {
			e.nkeys = a->nkeys;
			e.keys = dt_xmalloc((a->nkeys + 1) * sizeof(*e.keys));
			for (k = 0; k < a->nkeys; k++)
				dtr_eval(a->keys[k].r, &a->keys[k], fields, a->nfields, &e.keys[k]);
		}
		for (k = 0; fields && k < fa.nfields; k++)
			dt_free(fields[k]);
		dt_free(fields);
		/*
		 * keys rebuilt by the renderer (basename()) may meet, and so do
		 * an llquantize's buckets and a stddev's three parts: merge them
		 */
		dtr_add_entry(&r->ents, &r->nents, a, &e,
			      !(a->keyed || a->fn == F_LLQUANTIZE || a->fn == F_STDDEV));
	}
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

/* The aggregations only retained instances had (no probe of the first's used them). */
void dtr_merged_print_rest(struct dt_render *r)
{
	size_t i;

	for (i = 0; r->merged && i < r->merged->n; i++) {
		struct dt_merged_agg *x = &r->merged->v[i];
		struct dt_action dump = {.kind = A_PRINTA, .clause = (size_t)-1};

		if (x->printed || !x->nents)
			continue;
		r->ents = x->ents;
		r->nents = x->nents;
		dtr_print_agg(r, &dump, x->a);
		x->printed = true;
	}
}
