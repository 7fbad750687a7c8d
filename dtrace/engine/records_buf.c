/* SPDX-License-Identifier: MIT */
/*
 * DTrace's ring and fill buffer policies, kept by the reader (README.md,
 * "Buffer policies"). The programs write every record into the one BPF
 * ring buffer, as under switch; the reader counts each, at the size DTrace
 * gives it (eg_rec's bsize), against a per-CPU buffer of bufsize bytes:
 *
 *  - ring: the newest records that fit are kept, in order; a record, or
 *    the reservation of a clause whose predicate was false, evicts the
 *    oldest until it fits. They are printed at the end, CPU by CPU.
 *  - fill: records are printed as they come until one does not fit in
 *    bufsize less what END's records need; that CPU's buffer is then
 *    full, its later records are dropped, and the run ends (END's records
 *    go into the space kept for them).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct kept {
	unsigned char *d;
	size_t size;
	unsigned bsize;
};

struct cpubuf {
	struct kept *v; /* v[head..n): the records kept, oldest first */
	size_t head, n;
	size_t used; /* bytes, as DTrace counts them */
	bool full;
};

struct eg_bufkeep {
	int policy;
	size_t cap, end_bytes;
	int ncpus;
	struct cpubuf *cpu;
	bool filled;
};

struct eg_bufkeep *eg_bufkeep_new(int policy, long bufsize, unsigned end_bytes, int ncpus)
{
	struct eg_bufkeep *kb;

	if (policy == DT_BUF_SWITCH)
		return NULL;
	kb = dt_xmalloc(sizeof(*kb));
	memset(kb, 0, sizeof(*kb));
	kb->policy = policy;
	kb->cap = (size_t)bufsize;
	kb->end_bytes = end_bytes;
	kb->ncpus = ncpus > 0 ? ncpus : 1;
	kb->cpu = dt_xmalloc((size_t)kb->ncpus * sizeof(*kb->cpu));
	memset(kb->cpu, 0, (size_t)kb->ncpus * sizeof(*kb->cpu));
	return kb;
}

static void evict_oldest(struct cpubuf *c)
{
	struct kept *k = &c->v[c->head++];

	c->used -= k->bsize;
	dt_free(k->d);
	if (c->head == c->n) {
		c->head = 0;
		c->n = 0;
	}
}

int eg_bufkeep_add(struct eg_bufkeep *kb, unsigned cpu, bool is_end, unsigned bsize, const void *d,
		   size_t size, bool phantom)
{
	struct cpubuf *c = &kb->cpu[cpu < (unsigned)kb->ncpus ? cpu : 0];

	if (kb->policy == DT_BUF_FILL) {
		if (is_end)
			return phantom ? EG_BUF_DROP : EG_BUF_PRINT;
		if (c->full)
			return EG_BUF_DROP;
		if (c->used + bsize + kb->end_bytes > kb->cap) {
			c->full = true;
			kb->filled = true;
			return EG_BUF_DROP;
		}
		if (phantom)
			return EG_BUF_DROP;
		c->used += bsize;
		return EG_BUF_PRINT;
	}
	/* ring: what the reservation needs is made free, oldest first */
	if (bsize > kb->cap)
		return EG_BUF_DROP;
	while (c->head < c->n && c->used + bsize > kb->cap)
		evict_oldest(c);
	if (phantom)
		return EG_BUF_DROP;
	if (c->head > 64 && c->head > c->n / 2) { /* the evicted slots reused */
		memmove(c->v, c->v + c->head, (c->n - c->head) * sizeof(*c->v));
		c->n -= c->head;
		c->head = 0;
	}
	{
		struct kept k = {dt_xmalloc(size), size, bsize};

		memcpy(k.d, d, size);
		DT_PUSH(c->v, c->n, k);
	}
	c->used += bsize;
	return EG_BUF_KEPT;
}

bool eg_bufkeep_filled(const struct eg_bufkeep *kb)
{
	return kb && kb->filled;
}

void eg_bufkeep_flush(struct eg_bufkeep *kb, void (*fn)(void *, void *, size_t), void *arg)
{
	int i;

	if (!kb)
		return;
	for (i = 0; i < kb->ncpus; i++) {
		struct cpubuf *c = &kb->cpu[i];

		while (c->head < c->n) {
			struct kept k = c->v[c->head];

			c->v[c->head].d = NULL;
			evict_oldest(c);
			fn(arg, k.d, k.size);
			dt_free(k.d);
		}
	}
}

void eg_bufkeep_free(struct eg_bufkeep *kb)
{
	int i;

	if (!kb)
		return;
	for (i = 0; i < kb->ncpus; i++) {
		while (kb->cpu[i].head < kb->cpu[i].n)
			evict_oldest(&kb->cpu[i]);
		dt_free(kb->cpu[i].v);
	}
	dt_free(kb->cpu);
	dt_free(kb);
}
