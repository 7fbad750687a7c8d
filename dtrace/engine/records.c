/* SPDX-License-Identifier: MIT */
/*
 * What the programs write, read back: the ring buffer's binary records
 * (eg_rec says where each action's fields are) and the aggregations' per-CPU
 * hash maps, merged across CPUs (counts and sums add, min and max compare,
 * avg divides the summed total by the summed count, histograms add bucket
 * by bucket). Both are handed to the renderer as text fields, so that
 * render.c prints every byte. A record's mask says which of its actions ran (those in an
 * if's branch not taken wrote nothing). A record the ring buffer had no
 * room for is counted per CPU by the program and reported here as DTrace
 * reports drops.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"

struct eg_reader {
	const struct eg_prog *p;
	struct eg_loaded *l;
	struct dt_render *r;
	struct ring_buffer *rb;
	int drops_fd;
	int ncpus;
	uint64_t *drops_seen;
	size_t records;
	struct eg_syms *syms;  /* the files of the stacks read (ustack.c) */
	struct eg_specbuf *sb; /* a program that speculates: its records kept */
	int specs_fd;
	struct eg_bufkeep *kb; /* -x bufpolicy=ring or fill: records_buf.c */
	bool flushing;	       /* the ring's records printed at the end */
};

/* A field as the renderer reads it: an integer in decimal, a string up to its NUL. */
static char *field_text(struct eg_reader *rd, const struct eg_field *f, const unsigned char *base,
			size_t avail)
{
	char buf[32], *s;
	size_t n;

	if (f->off + f->size > avail)
		return dt_xstrdup("");
	if (f->is_stack)
		return eg_ustack_text(rd->syms, base + f->off, f->size);
	if (f->sym)
		return eg_sym_text(rd->syms, base + f->off, f->size, f->sym);
	if (f->is_bytes) { /* tracemem()'s: two hex digits a byte */
		s = dt_xmalloc(2 * f->size + 1);
		for (n = 0; n < f->size; n++)
			snprintf(s + 2 * n, 3, "%02x", base[f->off + n]);
		return s;
	}
	if (f->type == TY_STR) {
		n = strnlen((const char *)base + f->off, f->size);
		s = dt_xmalloc(n + 1);
		memcpy(s, base + f->off, n);
		s[n] = '\0';
		return s;
	}
	if (f->size == 4) {
		uint32_t v;

		memcpy(&v, base + f->off, 4);
		snprintf(buf, sizeof(buf), "%" PRIu32, v);
	} else {
		int64_t v;

		memcpy(&v, base + f->off, 8);
		snprintf(buf, sizeof(buf), "%" PRId64, v);
	}
	return dt_xstrdup(buf);
}

static void read_agg(struct eg_reader *rd, size_t ai);
static void clear_agg(struct eg_reader *rd, size_t ai);
static void trunc_agg(struct eg_reader *rd, size_t ai, int64_t keep);

/*
 * One action of a record. printa() prints the aggregation as it is when its
 * record is read (DTrace's consumer prints its snapshot too); clear() and
 * trunc() change the map then. trunc() is the reader's alone: the renderer
 * would hide later entries.
 */
static void act_on(struct eg_reader *rd, size_t act, char **f, size_t nf)
{
	const struct dt_action *a = &rd->r->t->acts[act];

	if (a->kind == A_TRUNC) {
		trunc_agg(rd, a->agg, nf ? strtoll(f[0], NULL, 10) : 0);
		return;
	}
	dt_render_record(rd->r, act, f, nf);
	if (a->kind == A_PRINTA) {
		size_t k;

		read_agg(rd, a->agg);
		for (k = 0; k < a->nmore; k++) {
			dt_render_join_next(rd->r, a->more[k]);
			read_agg(rd, a->more[k]);
		}
	} else if (a->kind == A_CLEAR)
		clear_agg(rd, a->agg);
}

/*
 * A clause stopped by a run-time error (codegen_fault.c): DTrace's message,
 * then the ERROR probe with DTrace's arguments (arg1 the probe's ID, arg2
 * the clause's index, arg3 the fault site, arg4 the fault, arg5 the
 * value); a fault in ERROR's own clauses does not fire it again.
 */
static void on_fault(struct eg_reader *rd, const unsigned char *d, size_t size)
{
	const struct eg_fault_site *s;
	uint64_t site, kind, val;

	if (size < EG_FAULT_SIZE)
		return;
	memcpy(&site, d + 8, 8);
	memcpy(&kind, d + 16, 8);
	memcpy(&val, d + 24, 8);
	if (site < 1 || site > rd->p->nfaults)
		return;
	s = &rd->p->faults[site - 1];
	fflush(rd->r->out);
	fprintf(stderr, "dtrace: error in dt_clause_%zu for probe ID %u (%s): %s", s->clause,
		s->probe_id, s->desc, eg_fault_name(kind));
	if (kind == 1 || kind == 2 || kind == 10)
		fprintf(stderr, " (0x%" PRIx64 ")", val);
	else if (kind == 11) /* DTRACEFLT_BADINDEX: the index */
		fprintf(stderr, " (%" PRId64 ")", (int64_t)val);
	fprintf(stderr, " at BPF pc %" PRIu64 "\n", site);
	if (s->probe_id != EG_ERROR_ID) {
		uint64_t arg[6] = {0, s->probe_id, s->clause, site, kind, val};

		eg_fire_error(rd->l, arg);
	}
}

static int on_record(void *ctx, void *data, size_t size);

/* An exit() in a record kept for later (ring): the run ends now all the same. */
static void exit_now(struct eg_reader *rd, const struct eg_rec *rec, const unsigned char *d,
		     size_t size, uint64_t ran)
{
	size_t i;

	for (i = 0; i < rec->nitems; i++) {
		const struct eg_item *it = &rec->items[i];
		char *f;

		if (!(ran & (UINT64_C(1) << i)) || rd->r->t->acts[it->act].kind != A_EXIT)
			continue;
		f = it->n ? field_text(rd, &rec->f[it->first], d, size) : NULL;
		rd->r->have_exit = true;
		rd->r->exit_status = f ? atoi(f) : 0;
		dt_free(f);
	}
}

/* Under ring and fill (records_buf.c): true when the record is not printed now. */
static bool kept_or_dropped(struct eg_reader *rd, uint32_t id, const unsigned char *d, size_t size,
			    uint64_t ran)
{
	uint32_t cpu, probe;
	bool phantom = id & EG_PHANTOM_BIT, end;
	const struct eg_rec *rec;
	int k;

	id &= ~EG_PHANTOM_BIT;
	if (!rd->kb || rd->flushing || id >= rd->p->nrecs)
		return phantom;
	rec = &rd->p->recs[id];
	memcpy(&cpu, d + 4, 4);
	memcpy(&probe, d + 16, 4);
	end = probe < rd->p->nprobes && rd->p->probes[probe]->kind == P_END;
	k = eg_bufkeep_add(rd->kb, cpu, end, rec->bsize, d, size, phantom);
	if (k == EG_BUF_KEPT)
		exit_now(rd, rec, d, size, ran);
	return k != EG_BUF_PRINT;
}

/*
 * commit() or discard() read: the speculation's records printed (as if
 * read now) or dropped, and its ID freed for speculation() again.
 */
static void on_spec(struct eg_reader *rd, const unsigned char *d)
{
	uint64_t id, op;
	struct eg_spec_rec *v;
	size_t n, i;
	uint32_t key;

	memcpy(&id, d + 8, 8);
	memcpy(&op, d + 16, 8);
	key = (uint32_t)id;
	v = eg_specbuf_take(rd->sb, key, &n);
	for (i = 0; i < n && op == EG_SPEC_COMMIT; i++) {
		memset(v[i].data + 20, 0, 4); /* no longer speculative */
		on_record(rd, v[i].data, v[i].size);
	}
	eg_spec_recs_free(v, n);
	if (rd->specs_fd >= 0)
		bpf_map_delete_elem(rd->specs_fd, &key);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct eg_reader *rd = ctx;
	const unsigned char *d = data;
	const struct eg_rec *rec;
	uint64_t ran;
	uint32_t id, probe, spec;
	size_t i, k;

	if (size < 24)
		return 0;
	memcpy(&id, d, 4);
	memcpy(&ran, d + 8, 8);
	if (id == EG_FAULT_REC) {
		on_fault(rd, d, size);
		return 0;
	}
	if (id == EG_SPEC_REC) {
		if (rd->sb)
			on_spec(rd, d);
		return 0;
	}
	memcpy(&probe, d + 16, 4);
	memcpy(&spec, d + 20, 4);
	if ((id & EG_PHANTOM_BIT) || id >= rd->p->nrecs) {
		kept_or_dropped(rd, id, d, size, ran);
		return 0;
	}
	rec = &rd->p->recs[id];
	if (spec && rd->sb) {
		eg_specbuf_add(rd->sb, spec, d, size, rec->dsize);
		return 0;
	}
	if (kept_or_dropped(rd, id, d, size, ran))
		return 0;
	rd->records++;
	for (i = 0; i < rec->nitems; i++) {
		const struct eg_item *it = &rec->items[i];
		char **f;

		if (it->mask_off != 8 && (size_t)it->mask_off + 8 <= size)
			memcpy(&ran, d + it->mask_off, 8); /* past 64 actions: a word of its own */
		if (!(ran & (UINT64_C(1) << (i % 64))))
			continue; /* in a branch not taken */
		/* a program is its clause set's: the probe that fired is the record's */
		if ((rd->r->t->acts[it->act].kind == A_CLAUSE ||
		     rd->r->t->acts[it->act].kind == A_SETOPT) &&
		    probe < rd->p->nprobes)
			rd->r->t->acts[it->act].probe = rd->p->probes[probe];
		f = dt_xmalloc((it->n + 1) * sizeof(*f));
		for (k = 0; k < it->n; k++)
			f[k] = field_text(rd, &rec->f[it->first + k], d, size);
		act_on(rd, it->act, f, it->n);
		for (k = 0; k < it->n; k++)
			dt_free(f[k]);
		dt_free(f);
	}
	return 0;
}

struct eg_reader *eg_reader_new(const struct eg_prog *p, struct eg_loaded *l, struct dt_render *r,
				struct usdt_diag *diag)
{
	struct eg_reader *rd = dt_xmalloc(sizeof(*rd));
	int fd = eg_map_fd(l, "events");

	memset(rd, 0, sizeof(*rd));
	rd->p = p;
	rd->l = l;
	rd->r = r;
	rd->syms = eg_syms_new();
	rd->drops_fd = eg_map_fd(l, "drops");
	rd->ncpus = libbpf_num_possible_cpus();
	if (rd->ncpus < 1)
		rd->ncpus = 1;
	rd->drops_seen = dt_xmalloc(3 * (size_t)rd->ncpus * sizeof(uint64_t));
	memset(rd->drops_seen, 0, 3 * (size_t)rd->ncpus * sizeof(uint64_t));
	rd->specs_fd = p->specsize > 0 ? eg_map_fd(l, "specs") : -1;
	if (p->specsize > 0)
		rd->sb = eg_specbuf_new(p->nspec, p->specsize, eg_map_fd(l, "spec_stats"));
	rd->kb = eg_bufkeep_new(p->bufpolicy, p->bufsize, p->end_bytes, rd->ncpus);
	rd->rb = fd >= 0 ? ring_buffer__new(fd, on_record, rd, NULL) : NULL;
	if (!rd->rb) {
		usdt_error(diag, "cannot read the ring buffer: %s", strerror(errno));
		eg_reader_free(rd);
		return NULL;
	}
	return rd;
}

int eg_reader_fd(const struct eg_reader *rd)
{
	return ring_buffer__epoll_fd(rd->rb);
}

int eg_reader_poll(struct eg_reader *rd, int timeout_ms)
{
	int n = ring_buffer__poll(rd->rb, timeout_ms);

	if (n > 0)
		fflush(rd->r->out);
	return n < 0 && n != -EINTR ? -1 : n < 0 ? 0 : n;
}

/*
 * The programs' drops, per CPU (codegen_prelude.c's drops map), in
 * DTrace's words: records and aggregation keys by CPU, dynamic variables
 * (array elements, self-> variables) in all.
 */
void eg_reader_drops(struct eg_reader *rd)
{
	static const char *const what[3] = {"drop", "dynamic variable drop", "aggregation drop"};
	uint64_t *v = dt_xmalloc((size_t)rd->ncpus * sizeof(uint64_t));
	uint32_t k;
	int c;

	for (k = 0; k < 3 && rd->drops_fd >= 0; k++) {
		uint64_t *seen = rd->drops_seen + (size_t)k * (size_t)rd->ncpus, n = 0;

		if (bpf_map_lookup_elem(rd->drops_fd, &k, v))
			continue;
		for (c = 0; c < rd->ncpus; c++) {
			uint64_t d = v[c] - seen[c];

			seen[c] = v[c];
			n += d;
			if (d && k != 1) {
				fflush(stdout);
				fprintf(stderr, "dtrace: %" PRIu64 " %s%s on CPU %d\n", d, what[k],
					d == 1 ? "" : "s", c);
			}
		}
		if (n && k == 1) {
			fflush(stdout);
			fprintf(stderr, "dtrace: %" PRIu64 " %s%s\n", n, what[k],
				n == 1 ? "" : "s");
		}
	}
	dt_free(v);
	if (rd->sb)
		eg_specbuf_report(rd->sb);
}

/* An entry merged across CPUs: its key's bytes, value, count, buckets. */
typedef void (*entry_fn)(struct eg_reader *rd, size_t ai, const unsigned char *key, int64_t v,
			 int64_t n, const int64_t *b, size_t nb, void *arg);

/* Every entry of aggregation ai, merged across CPUs. */
static void each_entry(struct eg_reader *rd, size_t ai, entry_fn fn, void *arg)
{
	const struct eg_agg *e = &rd->p->aggs[ai];
	const struct dt_agg *a = &rd->r->t->aggs[ai];
	size_t vs = (e->val_size + 7) & ~7u, nb = (e->val_size - 16) / 8, i;
	unsigned char *key = dt_xmalloc(e->key_size), *next = dt_xmalloc(e->key_size);
	int64_t *vals = dt_xmalloc(vs * (size_t)rd->ncpus), *b = dt_xmalloc((nb + 1) * 8);
	int fd = eg_map_fd(rd->l, e->map);
	bool first = true;

	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		int64_t v = 0, n = 0;
		bool set = false;
		int c;

		first = false;
		memcpy(key, next, e->key_size);
		if (e->prefix && memcmp(key, &e->tag, 8))
			continue; /* another aggregation's, in a shared map */
		if (bpf_map_lookup_elem(fd, key, vals))
			continue;
		memset(b, 0, (nb + 1) * 8);
		for (c = 0; c < rd->ncpus; c++) {
			const int64_t *cv =
			    (const int64_t *)((unsigned char *)vals + vs * (size_t)c);

			if (!cv[1])
				continue;
			if (a->fn == F_MIN)
				v = !set || cv[0] < v ? cv[0] : v;
			else if (a->fn == F_MAX)
				v = !set || cv[0] > v ? cv[0] : v;
			else
				v += cv[0];
			n += cv[1];
			set = true;
			for (i = 0; i < nb; i++)
				b[i] += cv[2 + i];
			/* stddev's sum of squares: 128 bits, the low word's carry */
			if (a->fn == F_STDDEV && nb == 2 && (uint64_t)b[0] < (uint64_t)cv[2])
				b[1]++;
		}
		if (a->fn == F_AVG && n)
			v /= n;
		fn(rd, ai, key, v, n, b, nb, arg);
	}
	dt_free(key);
	dt_free(next);
	dt_free(vals);
	dt_free(b);
}

static void render_entry(struct eg_reader *rd, size_t ai, const unsigned char *key, int64_t v,
			 int64_t n, const int64_t *b, size_t nb, void *arg)
{
	const struct eg_agg *e = &rd->p->aggs[ai];
	char **f = dt_xmalloc((e->nkeys + 1) * sizeof(*f));
	size_t i;

	(void)arg;
	for (i = 0; i < e->nkeys; i++)
		f[i] = field_text(rd, &e->keys[i], key, e->key_size);
	if (rd->r->t->aggs[ai].fn == F_STDDEV) {
		int64_t st[3] = {n, nb ? b[0] : 0, nb > 1 ? b[1] : 0};

		dt_render_agg_entry(rd->r, f, e->nkeys, v, st, 3);
	} else {
		dt_render_agg_entry(rd->r, f, e->nkeys, v, nb ? b : NULL, nb);
	}
	for (i = 0; i < e->nkeys; i++)
		dt_free(f[i]);
	dt_free(f);
}

/* One aggregation's entries, to the renderer's printa. */
static void read_agg(struct eg_reader *rd, size_t ai)
{
	each_entry(rd, ai, render_entry, NULL);
}

/* trunc(): the keys, ordered by value (a histogram's as the renderer sorts it). */
struct ranked {
	unsigned char *key;
	long double v;
	int64_t zero;
};
struct ranking {
	struct ranked *v;
	size_t n;
};

static void rank_entry(struct eg_reader *rd, size_t ai, const unsigned char *key, int64_t v,
		       int64_t n, const int64_t *b, size_t nb, void *arg)
{
	struct ranking *rk = arg;
	struct ranked x = {dt_xmalloc(rd->p->aggs[ai].key_size), (long double)v, 0};
	const struct dt_agg *a = &rd->r->t->aggs[ai];

	if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE)
		x.v = dt_hist_rank(a, b, nb, &x.zero);
	(void)n;
	memcpy(x.key, key, rd->p->aggs[ai].key_size);
	DT_PUSH(rk->v, rk->n, x);
}

static int by_value(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->v < y->v	   ? 1
	       : x->v > y->v	   ? -1
	       : x->zero < y->zero ? 1
	       : x->zero > y->zero ? -1
				   : 0;
}

/*
 * trunc(@a, n): the n largest entries kept (n < 0: the -n smallest), the
 * others deleted from the map; trunc(@a): every entry.
 */
static void trunc_agg(struct eg_reader *rd, size_t ai, int64_t keep)
{
	struct ranking rk = {NULL, 0};
	int fd = eg_map_fd(rd->l, rd->p->aggs[ai].map);
	size_t i, k = (size_t)(keep < 0 ? -keep : keep);

	each_entry(rd, ai, rank_entry, &rk);
	if (rk.n)
		qsort(rk.v, rk.n, sizeof(*rk.v), by_value);
	for (i = 0; i < rk.n; i++) {
		bool kept = keep >= 0 ? i < k : i >= (rk.n > k ? rk.n - k : 0);

		if (!kept)
			bpf_map_delete_elem(fd, rk.v[i].key);
		dt_free(rk.v[i].key);
	}
	dt_free(rk.v);
}

/* clear(): every value zeroed, the keys kept (DTrace's). */
static void clear_agg(struct eg_reader *rd, size_t ai)
{
	const struct eg_agg *e = &rd->p->aggs[ai];
	size_t vs = ((e->val_size + 7) & ~7u) * (size_t)rd->ncpus;
	unsigned char *key = dt_xmalloc(e->key_size), *next = dt_xmalloc(e->key_size);
	void *zero = dt_xmalloc(vs);
	int fd = eg_map_fd(rd->l, e->map);
	bool first = true;

	memset(zero, 0, vs);
	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, e->key_size);
		if (!e->prefix || !memcmp(key, &e->tag, 8))
			bpf_map_update_elem(fd, key, zero, BPF_EXIST);
	}
	dt_free(key);
	dt_free(next);
	dt_free(zero);
}

static void flush_one(void *arg, void *d, size_t size)
{
	on_record(arg, d, size);
}

bool eg_reader_filled(const struct eg_reader *rd)
{
	return eg_bufkeep_filled(rd->kb);
}

void eg_reader_dump(struct eg_reader *rd)
{
	size_t i;

	/* ring: the records kept, CPU by CPU, before the aggregations (DTrace's order) */
	rd->flushing = true;
	eg_bufkeep_flush(rd->kb, flush_one, rd);
	rd->flushing = false;
	dt_render_record(rd->r, rd->p->dump_act, NULL, 0);
	for (i = 0; i < rd->r->t->naggs; i++) {
		/* aggsortrev reverses DTrace's one sort of every entry: the aggregations too */
		bool rev = rd->r->o && rd->r->o->aggsortrev;
		size_t act = rd->p->dump_printa[rev ? rd->r->t->naggs - 1 - i : i];

		dt_render_record(rd->r, act, NULL, 0);
		read_agg(rd, rev ? rd->r->t->naggs - 1 - i : i);
		dt_render_record(rd->r, act + 1, NULL, 0);
	}
	fflush(rd->r->out);
}

void eg_reader_free(struct eg_reader *rd)
{
	if (!rd)
		return;
	ring_buffer__free(rd->rb);
	eg_syms_free(rd->syms);
	eg_specbuf_free(rd->sb);
	eg_bufkeep_free(rd->kb);
	dt_free(rd->drops_seen);
	dt_free(rd);
}
