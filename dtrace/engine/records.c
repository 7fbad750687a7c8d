/* SPDX-License-Identifier: MIT */
/*
 * What the programs write, read back: the ring buffer's binary records
 * (eg_rec says where each action's fields are) and the aggregations' per-CPU
 * hash maps, merged across CPUs (counts and sums add, min and max compare,
 * avg divides the summed total by the summed count, histograms add bucket
 * by bucket). Both are handed to the renderer as the bpftrace backend's
 * values are, as text fields, so that render.c prints every byte as it
 * does there. A record's mask says which of its actions ran (those in an
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
};

/* A field as the renderer reads it: an integer in decimal, a string up to its NUL. */
static char *field_text(const struct eg_field *f, const unsigned char *base, size_t avail)
{
	char buf[32], *s;
	size_t n;

	if (f->off + f->size > avail)
		return dt_xstrdup("");
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

static int on_record(void *ctx, void *data, size_t size)
{
	struct eg_reader *rd = ctx;
	const unsigned char *d = data;
	const struct eg_rec *rec;
	uint64_t ran;
	uint32_t id;
	size_t i, k;

	if (size < 16)
		return 0;
	memcpy(&id, d, 4);
	memcpy(&ran, d + 8, 8);
	if (id >= rd->p->nrecs)
		return 0;
	rec = &rd->p->recs[id];
	rd->records++;
	for (i = 0; i < rec->nitems; i++) {
		const struct eg_item *it = &rec->items[i];
		char **f;

		if (!(ran & (UINT64_C(1) << i)))
			continue; /* in a branch not taken */
		f = dt_xmalloc((it->n + 1) * sizeof(*f));
		for (k = 0; k < it->n; k++)
			f[k] = field_text(&rec->f[it->first + k], d, size);
		const struct dt_action *a = &rd->r->t->acts[it->act];

		dt_render_record(rd->r, it->act, f, it->n);
		/* printa() prints the aggregation as it is when its record is read, as DTrace's
		 * does */
		if (a->kind == A_PRINTA)
			read_agg(rd, a->agg);
		else if (a->kind == A_CLEAR)
			clear_agg(rd, a->agg);
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
	rd->drops_fd = eg_map_fd(l, "drops");
	rd->ncpus = libbpf_num_possible_cpus();
	if (rd->ncpus < 1)
		rd->ncpus = 1;
	rd->drops_seen = dt_xmalloc((size_t)rd->ncpus * sizeof(uint64_t));
	memset(rd->drops_seen, 0, (size_t)rd->ncpus * sizeof(uint64_t));
	rd->rb = fd >= 0 ? ring_buffer__new(fd, on_record, rd, NULL) : NULL;
	if (!rd->rb) {
		usdt_error(diag, "cannot read the ring buffer: %s", strerror(errno));
		eg_reader_free(rd);
		return NULL;
	}
	return rd;
}

int eg_reader_poll(struct eg_reader *rd, int timeout_ms)
{
	int n = ring_buffer__poll(rd->rb, timeout_ms);

	if (n > 0)
		fflush(rd->r->out);
	return n < 0 && n != -EINTR ? -1 : n < 0 ? 0 : n;
}

void eg_reader_drops(struct eg_reader *rd)
{
	uint64_t *v = dt_xmalloc((size_t)rd->ncpus * sizeof(uint64_t));
	uint32_t zero = 0;
	int c;

	if (rd->drops_fd >= 0 && !bpf_map_lookup_elem(rd->drops_fd, &zero, v))
		for (c = 0; c < rd->ncpus; c++)
			if (v[c] > rd->drops_seen[c]) {
				fflush(stdout);
				fprintf(stderr, "dtrace: %" PRIu64 " drop%s on CPU %d\n",
					v[c] - rd->drops_seen[c],
					v[c] - rd->drops_seen[c] == 1 ? "" : "s", c);
				rd->drops_seen[c] = v[c];
			}
	dt_free(v);
}

/* One aggregation's entries, merged across CPUs, to the renderer's printa. */
static void read_agg(struct eg_reader *rd, size_t ai)
{
	const struct eg_agg *e = &rd->p->aggs[ai];
	const struct dt_agg *a = &rd->r->t->aggs[ai];
	size_t vs = (e->val_size + 7) & ~7u, nb = (e->val_size - 16) / 8, i;
	unsigned char *key = dt_xmalloc(e->key_size), *next = dt_xmalloc(e->key_size);
	int64_t *vals = dt_xmalloc(vs * (size_t)rd->ncpus), *b = dt_xmalloc((nb + 1) * 8);
	int fd = eg_map_fd(rd->l, e->map);
	bool first = true;

	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		char **f = dt_xmalloc((e->nkeys + 1) * sizeof(*f));
		int64_t v = 0, n = 0;
		bool set = false;
		int c;

		first = false;
		memcpy(key, next, e->key_size);
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
		}
		if (a->fn == F_AVG && n)
			v /= n;
		for (i = 0; i < e->nkeys; i++)
			f[i] = field_text(&e->keys[i], key, e->key_size);
		dt_render_agg_entry(rd->r, f, e->nkeys, v, nb ? b : NULL, nb);
		for (i = 0; i < e->nkeys; i++)
			dt_free(f[i]);
		dt_free(f);
	}
	dt_free(key);
	dt_free(next);
	dt_free(vals);
	dt_free(b);
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
		bpf_map_update_elem(fd, key, zero, BPF_EXIST);
	}
	dt_free(key);
	dt_free(next);
	dt_free(zero);
}

void eg_reader_dump(struct eg_reader *rd)
{
	size_t i;

	dt_render_record(rd->r, rd->p->dump_act, NULL, 0);
	for (i = 0; i < rd->r->t->naggs; i++) {
		size_t act = rd->p->dump_printa[i];

		dt_render_record(rd->r, act, NULL, 0);
		read_agg(rd, i);
		dt_render_record(rd->r, act + 1, NULL, 0);
	}
	fflush(rd->r->out);
}

void eg_reader_free(struct eg_reader *rd)
{
	if (!rd)
		return;
	ring_buffer__free(rd->rb);
	dt_free(rd->drops_seen);
	dt_free(rd);
}
