/* SPDX-License-Identifier: MIT */
/*
 * Sites into listing lines: DTrace lists one line per provider, name and
 * function, however many sites share them, and -v says in how many
 * functions a probe has sites. A library with 12,000 probes is common
 * enough (and a daemon's user may register one), so the grouping sorts
 * the sites once, O(n log n), instead of comparing each with every line
 * made before it: that was 4.2 billion instructions, 0.8 s, for one
 * `dtrace -l` of such a file.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "list_group.h"
#include "model.h"

struct keyed {
	const struct usdt_notes *n;
	char **funcs;
};

/* provider, name, then function; the site's index last: a group's first site sorts first */
static int by_key(const void *a, const void *b, void *arg)
{
	const struct keyed *k = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct usdt_site *x = &k->n->sites[i], *y = &k->n->sites[j];
	int c = strcmp(x->provider, y->provider);

	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = strcmp(k->funcs[i], k->funcs[j]);
	return c ? c : (i > j) - (i < j);
}

static bool same(const struct usdt_site *x, const struct usdt_site *y)
{
	return !strcmp(x->provider, y->provider) && !strcmp(x->name, y->name);
}

int list_group_sites(const struct usdt_notes *n, char **funcs, struct file_probe **out,
		     size_t *nout)
{
	struct keyed k = {n, funcs};
	size_t *idx = calloc(n->nsites ? n->nsites : 1, sizeof(*idx));
	size_t *nf =
	    calloc(n->nsites ? n->nsites : 1, sizeof(*nf)); /* a group's first site: its count */
	size_t m = 0, i, a, b;
	int rc = -ENOMEM;

	*nout = 0;
	*out = calloc(n->nsites ? n->nsites : 1, sizeof(**out));
	if (!idx || !nf || !*out)
		goto out;
	for (i = 0; i < n->nsites; i++)
		if (!n->sites[i].reject)
			idx[m++] = i;
	qsort_r(idx, m, sizeof(*idx), by_key, &k);
	/* each run of one provider and name: its groups' first sites, counted */
	for (a = 0; a < m; a = b) {
		size_t groups = 0;

		for (b = a; b < m && same(&n->sites[idx[a]], &n->sites[idx[b]]); b++)
			groups += b == a || strcmp(funcs[idx[b - 1]], funcs[idx[b]]) != 0;
		for (i = a; i < b; i++)
			if (i == a || strcmp(funcs[idx[i - 1]], funcs[idx[i]]) != 0)
				nf[idx[i]] = groups;
	}
	for (i = 0; i < n->nsites; i++) {
		struct file_probe *p = &(*out)[*nout];

		if (!nf[i])
			continue;
		p->provider = n->sites[i].provider;
		p->name = n->sites[i].name;
		p->site = i;
		p->nfuncs = nf[i];
		p->func = funcs[i];
		funcs[i] = NULL;
		p->dname = usdt_probe_dtrace_name(p->name);
		++*nout;
		if (!p->dname)
			goto out;
	}
	rc = 0;
out:
	free(idx);
	free(nf);
	return rc;
}
