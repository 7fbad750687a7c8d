// SPDX-License-Identifier: MIT
/*
 * Registering a file's sites as events (the tracefs uprobe layer,
 * tracefs.c), in slices: usdt_tracefs_reg_begin, _step as often as it
 * says more remains, _end. usdt_tracefs_register is the three at once.
 *
 * Names. The kernel appends a site to an existing event of the same name
 * when the argument NAMES AND TYPES are the same (measured: the fetch
 * registers may differ), which is what the sites of one probe need. Sites
 * of one probe whose sizes or signs differ cannot share an event: the
 * first signature in note order gets <probe>, the next <probe>_2, and so
 * on; an event of the name that someone else made with another signature
 * is skipped the same way. uprobe_events is not read first (a first-seen
 * file's events are written straight away): only a refusal (EEXIST: the
 * name taken with other arguments, or this very site there already) makes
 * us read it, and choose again knowing it. The names chosen and the
 * listing are kept in hash indexes, so a file of many thousand probes
 * costs no quadratic search here (the kernel's side is costly enough).
 *
 * Batches (tracefs_batch.c). Lines are packed into as few write()s as the
 * slice's budget allows, but only the sites of a group that did not exist
 * when the registration began (checked once per group, one access()):
 * none of their sites can have existed before, so when a batch fails and
 * its lines are written again alone, a line that answers EEXIST with its
 * very site listed was run by the batch, and is ours. A site of a group
 * that existed may be someone else's (perf probe on the same file), and
 * its one-line write is the only way to know: those go one per write(),
 * their results exact, as before batching.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracefs.h"
#include "tracefs_int.h"

#define SUFFIX_TRIES 16
#define LISTINGS_MAX 8 /* readings of uprobe_events per registration, at most (2 each) */

/* An open-addressing index of entry numbers (+1; 0 is empty), by a hash. */
struct idx {
	size_t *slot;
	size_t mask;
};

static int idx_init(struct idx *x, size_t n)
{
	size_t cap = 64;

	while (cap < 2 * n + 16)
		cap *= 2;
	free(x->slot);
	x->slot = calloc(cap, sizeof(*x->slot));
	x->mask = cap - 1;
	return x->slot ? 0 : -ENOMEM;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t name_hash(const char *group, const char *event)
{
	return fnv(fnv(0xcbf29ce484222325ull, group), event);
}

/* A name chosen in this run: (group, event) -> signature. */
struct choice {
	const char *group;
	char event[USDT_TRACEFS_NAME_MAX + 1];
	char *sig;
	bool taken; /* refused by the kernel: someone else's since */
};

/* A group of the file, and whether it existed when the registration began. */
struct group {
	const char *name;
	bool existed;
};

struct usdt_tracefs_reg {
	struct usdt_tracefs *t;
	const struct usdt_notes *n;
	char *path;
	struct usdt_site_result *out;
	size_t nout, next; /* results so far; the next site of n->sites */
	struct choice *ch;
	size_t nch, chcap;
	struct idx chx;
	struct usdt_uprobe_entry *ls; /* the listing, once read */
	size_t nls;
	struct idx lsx_name, lsx_site;
	unsigned listings;
	struct group *groups;
	size_t ngroups;
	struct usdt_tracefs_batch *batch;
	size_t *pend; /* the results in the batch */
	char sig[USDT_UPROBE_LINE_MAX + 1];
	char line[USDT_UPROBE_LINE_MAX + 1];
};

static struct choice *choice_find(struct usdt_tracefs_reg *r, const char *group, const char *event)
{
	for (size_t h = name_hash(group, event);; h++) {
		size_t v = r->chx.slot[h & r->chx.mask];

		if (!v)
			return NULL;
		if (strcmp(r->ch[v - 1].group, group) == 0 &&
		    strcmp(r->ch[v - 1].event, event) == 0)
			return &r->ch[v - 1];
	}
}

static void choice_index(struct usdt_tracefs_reg *r, size_t i)
{
	size_t h = name_hash(r->ch[i].group, r->ch[i].event);

	while (r->chx.slot[h & r->chx.mask])
		h++;
	r->chx.slot[h & r->chx.mask] = i + 1;
}

static int choice_add(struct usdt_tracefs_reg *r, const char *group, const char *event,
		      const char *sig)
{
	struct choice *c;

	if (r->nch == r->chcap) {
		/* A name chosen again (taken meanwhile) adds one: room for more. */
		struct choice *nc = realloc(r->ch, 2 * r->chcap * sizeof(*nc));

		if (!nc || idx_init(&r->chx, 2 * r->chcap))
			return -ENOMEM;
		r->ch = nc;
		r->chcap *= 2;
		for (size_t i = 0; i < r->nch; i++)
			choice_index(r, i);
	}
	c = &r->ch[r->nch];
	c->taken = false;

	c->sig = strdup(sig);
	if (!c->sig)
		return -ENOMEM;
	c->group = group;
	snprintf(c->event, sizeof(c->event), "%s", event);
	choice_index(r, r->nch++);
	return 0;
}

/* The first listed entry of an event (the kernel keeps one signature per event). */
static const struct usdt_uprobe_entry *listed_event(struct usdt_tracefs_reg *r, const char *group,
						    const char *event)
{
	if (!r->ls)
		return NULL;
	for (size_t h = name_hash(group, event);; h++) {
		size_t v = r->lsx_name.slot[h & r->lsx_name.mask];

		if (!v)
			return NULL;
		if (strcmp(r->ls[v - 1].group, group) == 0 &&
		    strcmp(r->ls[v - 1].event, event) == 0)
			return &r->ls[v - 1];
	}
}

static uint64_t site_hash(const char *group, const char *event, const char *path, uint64_t off)
{
	return fnv(name_hash(group, event), path) ^ (off * 0x9e3779b97f4a7c15ull);
}

static bool site_listed(struct usdt_tracefs_reg *r, const char *group, const char *event,
			uint64_t off)
{
	if (!r->ls)
		return false;
	for (size_t h = site_hash(group, event, r->path, off);; h++) {
		size_t v = r->lsx_site.slot[h & r->lsx_site.mask];
		const struct usdt_uprobe_entry *e;

		if (!v)
			return false;
		e = &r->ls[v - 1];
		if (e->off == off && strcmp(e->group, group) == 0 && strcmp(e->event, event) == 0 &&
		    strcmp(e->path, r->path) == 0)
			return true;
	}
}

/*
 * Reads uprobe_events (again) and indexes it: two readings put together,
 * since the kernel lists it a page at a time and a reading while others
 * add and remove events can skip a line (a site of ours missed here would
 * be taken for someone else's).
 */
static int list_now(struct usdt_tracefs_reg *r)
{
	struct usdt_uprobe_entry *more = NULL, *all;
	size_t nmore = 0;
	int ret;

	usdt_tracefs_list_free(r->ls, r->nls);
	r->ls = NULL;
	r->nls = 0;
	r->listings++;
	ret = usdt_tracefs_list(r->t, &r->ls, &r->nls);
	if (!ret)
		ret = usdt_tracefs_list(r->t, &more, &nmore);
	if (!ret && nmore) {
		all = realloc(r->ls, (r->nls + nmore) * sizeof(*all));
		if (!all) {
			usdt_tracefs_list_free(more, nmore);
			return -ENOMEM;
		}
		memcpy(all + r->nls, more, nmore * sizeof(*all));
		free(more); /* (its entries' strings are all's now) */
		r->ls = all;
		r->nls += nmore;
	} else {
		usdt_tracefs_list_free(more, nmore);
	}
	if (!ret)
		ret = idx_init(&r->lsx_name, r->nls);
	if (!ret)
		ret = idx_init(&r->lsx_site, r->nls);
	for (size_t i = 0; !ret && i < r->nls; i++) {
		const struct usdt_uprobe_entry *e = &r->ls[i];
		size_t h = name_hash(e->group, e->event);

		if (!listed_event(r, e->group, e->event)) {
			while (r->lsx_name.slot[h & r->lsx_name.mask])
				h++;
			r->lsx_name.slot[h & r->lsx_name.mask] = i + 1;
		}
		h = site_hash(e->group, e->event, e->path, e->off);
		while (r->lsx_site.slot[h & r->lsx_site.mask])
			h++;
		r->lsx_site.slot[h & r->lsx_site.mask] = i + 1;
	}
	return ret;
}

/* Is `event` free for `sig`: not chosen in this run for another one, not listed with another? */
static bool name_fits(struct usdt_tracefs_reg *r, const char *group, const char *event,
		      const char *sig)
{
	char other[USDT_UPROBE_LINE_MAX + 1];
	const struct choice *c = choice_find(r, group, event);
	const struct usdt_uprobe_entry *e;

	if (c)
		return !c->taken && strcmp(c->sig, sig) == 0;
	e = listed_event(r, group, event);
	if (!e)
		return true;
	usdt_uprobe_signature(e->args, other, sizeof(other));
	return e->type == 'p' && strcmp(other, sig) == 0;
}

static void suffixed(char *out, const char *event, unsigned k)
{
	char sfx[16];
	size_t ls, le = strlen(event);

	if (k == 1) {
		strcpy(out, event);
		return;
	}
	ls = (size_t)snprintf(sfx, sizeof(sfx), "_%u", k);
	if (le + ls > USDT_TRACEFS_NAME_MAX)
		le = USDT_TRACEFS_NAME_MAX - ls;
	memcpy(out, event, le);
	strcpy(out + le, sfx);
}

static bool group_existed(struct usdt_tracefs_reg *r, const char *group)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i].name == group || strcmp(r->groups[i].name, group) == 0)
			return r->groups[i].existed;
	return true;
}

/*
 * Chooses s's event name and builds its line (into s->line); false, with
 * s->err, when no name or no line can be had.
 */
static bool site_prepare(struct usdt_tracefs_reg *r, struct usdt_site_result *s)
{
	const struct usdt_site *p = s->probe;
	const char *args;
	int len;

	/* The signature, from the definition built under the plain name. */
	len = usdt_uprobe_def(r->line, sizeof(r->line), p->group, p->event, r->path, p);
	if (len < 0) {
		s->err = len;
		usdt_tracefs_msg(s->msg, sizeof(s->msg), "cannot build the definition: %s",
				 strerror(-len));
		return false;
	}
	args = strchr(strchr(r->line, ' ') + 1, ' ');
	usdt_uprobe_signature(args ? args : "", r->sig, sizeof(r->sig));
	s->event[0] = '\0';
	for (unsigned k = 1; k <= SUFFIX_TRIES && !s->event[0]; k++) {
		char name[USDT_TRACEFS_NAME_MAX + 1];

		suffixed(name, p->event, k);
		if (name_fits(r, p->group, name, r->sig))
			strcpy(s->event, name);
	}
	if (!s->event[0]) {
		s->err = -EEXIST;
		usdt_tracefs_msg(s->msg, sizeof(s->msg),
				 "%s/%s and %d suffixed names are taken with other argument types",
				 p->group, p->event, SUFFIX_TRIES - 1);
		return false;
	}
	len = usdt_uprobe_def(r->line, sizeof(r->line), p->group, s->event, r->path, p);
	if (len < 0) {
		s->err = len;
		return false;
	}
	free(s->line);
	s->line = strdup(r->line);
	if (!s->line) {
		s->err = -ENOMEM;
		return false;
	}
	/* First use of this name in this file: remember its signature. */
	if (!choice_find(r, p->group, s->event) && choice_add(r, p->group, s->event, r->sig)) {
		s->err = -ENOMEM;
		return false;
	}
	return true;
}

/*
 * Writes a prepared site alone; on EEXIST reads the listing (a few times at
 * most) and decides: our very site listed is there already (ours, made by
 * a batch, when its group is new), else the name is someone else's and
 * another is chosen.
 */
static void site_alone(struct usdt_tracefs_reg *r, struct usdt_site_result *s)
{
	const struct usdt_site *p = s->probe;

	for (;;) {
		const struct usdt_uprobe_entry *e;
		struct choice *c;

		s->err = usdt_tracefs_write(r->t, s->line, s->msg, sizeof(s->msg));
		if (s->err != -EEXIST)
			return;
		if (site_listed(r, p->group, s->event, p->pc_off) ||
		    (r->listings < LISTINGS_MAX && list_now(r) == 0 &&
		     site_listed(r, p->group, s->event, p->pc_off))) {
			s->err = 0;
			s->existed = group_existed(r, p->group);
			usdt_tracefs_msg(s->msg, sizeof(s->msg), "%s",
					 s->existed ? "already registered" : "");
			return;
		}
		/*
		 * Not our site. The name listed with our very arguments: the
		 * kernel found this site in it already, under another path to
		 * the same file (someone else's, perf probe's): refused, as it
		 * is. Listed with other arguments: taken, never again in this
		 * run, and another name chosen.
		 */
		c = choice_find(r, p->group, s->event);
		e = listed_event(r, p->group, s->event);
		if (!c || c->taken || !e)
			return;
		usdt_uprobe_signature(e->args, r->sig, sizeof(r->sig));
		if (e->type == 'p' && strcmp(r->sig, c->sig) == 0)
			return;
		c->taken = true;
		if (!site_prepare(r, s))
			return;
	}
}

int usdt_tracefs_reg_begin(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			   struct usdt_tracefs_reg **out)
{
	struct usdt_tracefs_reg *r;
	size_t cap = n->naccepted ? n->naccepted : 1;

	*out = NULL;
	if (!usdt_tracefs_path_ok(path))
		return -EINVAL;
#if defined(__x86_64__)
	if (n->arch != USDT_ARCH_X86_64 && n->arch != USDT_ARCH_I386)
		return -ENOEXEC;
#elif defined(__aarch64__)
	if (n->arch != USDT_ARCH_AARCH64)
		return -ENOEXEC;
#else
	return -ENOEXEC;
#endif
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->t = t;
	r->n = n;
	r->path = strdup(path);
	r->out = calloc(cap, sizeof(*r->out));
	r->ch = calloc(cap, sizeof(*r->ch));
	r->chcap = cap;
	r->groups = calloc(cap, sizeof(*r->groups));
	r->pend = calloc(cap, sizeof(*r->pend));
	r->batch = malloc(sizeof(*r->batch));
	if (!r->path || !r->out || !r->ch || !r->groups || !r->pend || !r->batch ||
	    idx_init(&r->chx, cap)) {
		usdt_tracefs_reg_end(r, NULL, NULL);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n->nsites; i++) {
		const char *g = n->sites[i].group;
		char dir[256];
		bool seen = false;

		if (n->sites[i].reject)
			continue;
		for (size_t k = r->ngroups; k-- > 0 && !seen;)
			seen = strcmp(r->groups[k].name, g) == 0;
		if (seen)
			continue;
		snprintf(dir, sizeof(dir), "%s/events/%s", t->root, g);
		r->groups[r->ngroups].name = g;
		r->groups[r->ngroups++].existed = access(dir, F_OK) == 0;
	}
	*out = r;
	return 0;
}

/* The next accepted site's result, or NULL when none is left. */
static struct usdt_site_result *next_site(struct usdt_tracefs_reg *r)
{
	while (r->next < r->n->nsites && r->n->sites[r->next].reject)
		r->next++;
	if (r->next == r->n->nsites)
		return NULL;
	r->out[r->nout].probe = &r->n->sites[r->next++];
	return &r->out[r->nout++];
}

/* One batch of sites of new groups, at most `want` lines; false when the next site is not one. */
static bool batch_step(struct usdt_tracefs_reg *r, size_t want)
{
	struct usdt_tracefs_batch *b = r->batch;
	size_t npend = 0;

	b->len = b->lines = 0;
	while (b->lines < want && b->len + USDT_UPROBE_LINE_MAX + 1 <= USDT_TRACEFS_BATCH_MAX) {
		struct usdt_site_result *s;
		size_t at = r->next;

		while (at < r->n->nsites && r->n->sites[at].reject)
			at++;
		if (at == r->n->nsites || group_existed(r, r->n->sites[at].group))
			break;
		s = next_site(r);
		if (!site_prepare(r, s))
			continue;
		if (!usdt_tracefs_batch_add(b, s->line)) {
			site_alone(r, s);
			continue;
		}
		r->pend[npend++] = (size_t)(s - r->out);
	}
	if (!b->lines)
		return npend > 0;
	if (usdt_tracefs_write_many(r->t, b->buf, b->len, b->lines) == 0)
		return true;
	for (size_t i = 0; i < npend; i++)
		site_alone(r, &r->out[r->pend[i]]);
	return true;
}

int usdt_tracefs_reg_step(struct usdt_tracefs_reg *r, uint64_t budget_ns)
{
	uint64_t start = usdt_tracefs_now_ns();
	bool did = false;

	for (;;) {
		uint64_t spent = usdt_tracefs_now_ns() - start;
		size_t at = r->next;

		while (at < r->n->nsites && r->n->sites[at].reject)
			at++;
		r->next = at;
		if (at == r->n->nsites)
			return 0;
		if (did && (spent >= budget_ns || usdt_tracefs_yielding(r->t)))
			return 1;
		did = true;
		if (batch_step(r, usdt_tracefs_batch_lines(
				      r->t, spent < budget_ns ? budget_ns - spent : 0)))
			continue;
		/* A site of a group that existed: alone, its result exact. */
		{
			struct usdt_site_result *s = next_site(r);

			if (s && site_prepare(r, s))
				site_alone(r, s);
		}
	}
}

void usdt_tracefs_reg_end(struct usdt_tracefs_reg *r, struct usdt_site_result **sites,
			  size_t *nsites)
{
	if (sites) {
		*sites = r->out;
		*nsites = r->nout;
		r->out = NULL;
	}
	usdt_tracefs_results_free(r->out, r->nout);
	for (size_t i = 0; i < r->nch; i++)
		free(r->ch[i].sig);
	free(r->ch);
	free(r->chx.slot);
	usdt_tracefs_list_free(r->ls, r->nls);
	free(r->lsx_name.slot);
	free(r->lsx_site.slot);
	free(r->groups);
	free(r->pend);
	free(r->batch);
	free(r->path);
	free(r);
}

void usdt_tracefs_results_free(struct usdt_site_result *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].line);
	free(s);
}

int usdt_tracefs_register(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			  struct usdt_site_result **sites, size_t *nsites)
{
	struct usdt_tracefs_reg *r;
	int ret = usdt_tracefs_reg_begin(t, n, path, &r);

	*sites = NULL;
	*nsites = 0;
	if (ret)
		return ret;
	while (usdt_tracefs_reg_step(r, UINT64_MAX / 2) > 0)
		;
	usdt_tracefs_reg_end(r, sites, nsites);
	return 0;
}
