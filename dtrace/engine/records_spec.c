/* SPDX-License-Identifier: MIT */
/*
 * The reader's speculative buffers (README.md, "Speculations"): a record
 * speculate() tagged is kept here under its speculation's ID, in the order
 * read, until commit() or discard() of that ID is read; then records.c
 * takes them to print or to drop. A speculation keeps at most specsize
 * bytes, counted as DTrace counts a record (a 16-byte header and its
 * values): a record past that is a speculative drop. The drops, and the
 * programs' counts of failed speculations and of clauses too big for
 * specsize (the map spec_stats), are reported as DTrace reports them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>

#include "engine.h"

struct slot {
	struct eg_spec_rec *v;
	size_t n;
	size_t bytes;
};

struct eg_specbuf {
	long nspec, specsize;
	struct slot *slots; /* by ID, 1..nspec */
	int stats_fd;
	uint64_t drops;	  /* records past specsize, here */
	uint64_t seen[4]; /* reported: unavailable, busy, the programs' drops, ours */
};

struct eg_specbuf *eg_specbuf_new(long nspec, long specsize, int stats_fd)
{
	struct eg_specbuf *sb = dt_xmalloc(sizeof(*sb));

	memset(sb, 0, sizeof(*sb));
	sb->nspec = nspec;
	sb->specsize = specsize;
	sb->stats_fd = stats_fd;
	sb->slots = dt_xmalloc(((size_t)nspec + 1) * sizeof(*sb->slots));
	memset(sb->slots, 0, ((size_t)nspec + 1) * sizeof(*sb->slots));
	return sb;
}

void eg_specbuf_add(struct eg_specbuf *sb, uint32_t id, const void *d, size_t size, size_t dsize)
{
	struct slot *s;
	struct eg_spec_rec r;

	if (id < 1 || id > (uint64_t)sb->nspec)
		return;
	s = &sb->slots[id];
	if (s->bytes + dsize > (size_t)sb->specsize) {
		sb->drops++;
		return;
	}
	r.data = dt_xmalloc(size);
	memcpy(r.data, d, size);
	r.size = size;
	DT_PUSH(s->v, s->n, r);
	s->bytes += dsize;
}

struct eg_spec_rec *eg_specbuf_take(struct eg_specbuf *sb, uint32_t id, size_t *n)
{
	struct eg_spec_rec *v;

	*n = 0;
	if (id < 1 || id > (uint64_t)sb->nspec)
		return NULL;
	v = sb->slots[id].v;
	*n = sb->slots[id].n;
	memset(&sb->slots[id], 0, sizeof(sb->slots[id]));
	return v;
}

void eg_spec_recs_free(struct eg_spec_rec *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dt_free(v[i].data);
	dt_free(v);
}

static void say(uint64_t n, const char *one, const char *many)
{
	fflush(stdout);
	fprintf(stderr, "dtrace: %" PRIu64 " %s\n", n, n == 1 ? one : many);
}

void eg_specbuf_report(struct eg_specbuf *sb)
{
	uint64_t now[4] = {0, 0, 0, sb->drops};
	uint32_t k;

	for (k = 0; k < 3 && sb->stats_fd >= 0; k++)
		if (bpf_map_lookup_elem(sb->stats_fd, &k, &now[k]))
			now[k] = sb->seen[k];
	if (now[0] > sb->seen[0])
		say(now[0] - sb->seen[0], "failed speculation (no speculative buffer available)",
		    "failed speculations (no speculative buffer available)");
	if (now[1] > sb->seen[1])
		say(now[1] - sb->seen[1], "failed speculation (available buffer busy)",
		    "failed speculations (available buffers busy)");
	if (now[2] + now[3] > sb->seen[2] + sb->seen[3])
		say(now[2] + now[3] - sb->seen[2] - sb->seen[3], "speculative drop",
		    "speculative drops");
	memcpy(sb->seen, now, sizeof(now));
}

void eg_specbuf_free(struct eg_specbuf *sb)
{
	long i;

	if (!sb)
		return;
	for (i = 0; i <= sb->nspec; i++)
		eg_spec_recs_free(sb->slots[i].v, sb->slots[i].n);
	dt_free(sb->slots);
	dt_free(sb);
}
