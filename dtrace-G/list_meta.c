/* SPDX-License-Identifier: MIT */
/*
 * The metadata side of `dtrace -l -v`: finds a probe in a module's
 * `.note.usdtkit` notes (METADATA-NOTE.md) through the validating reader of
 * metadata.c, and hands back plain data. A module may carry several notes
 * (one per linked -G object); the first that describes the probe wins, as
 * notes from one .d describe the same declarations.
 */
#include <string.h>

#include "list_meta.h"
#include "metadata.h"
#include "usdt_provider.h"

void usdt_list_default_attrs(struct usdt_list_probe_info *out)
{
	unsigned i;

	for (i = 0; i < 5; i++) {
		out->attr[i][0] = USDT_STAB_PRIVATE;
		out->attr[i][1] = USDT_STAB_PRIVATE;
		out->attr[i][2] = USDT_CLASS_UNKNOWN;
	}
}

static bool same_types(const struct usdt_list_probe_info *p)
{
	unsigned i;

	if (p->nargs != p->nxargs)
		return false;
	for (i = 0; i < p->nargs; i++)
		if (strcmp(p->native[i], p->xlated[i]))
			return false;
	return true;
}

static bool find_in(const struct usdt_meta_view *v, const char *provider, const char *probe,
		    struct usdt_list_probe_info *out)
{
	uint32_t i, j, k;

	for (i = 0; i < v->nproviders; i++) {
		struct usdt_meta_provider pv;

		usdt_meta_provider(v, i, &pv);
		if (strcmp(pv.name, provider))
			continue;
		for (j = 0; j < pv.nprobes; j++) {
			struct usdt_meta_probe pr;
			struct usdt_meta_arg a;
			bool identity = true;

			usdt_meta_probe(v, pv.first_probe + j, &pr);
			if (strcmp(pr.name, probe))
				continue;
			for (k = 0; k < 5; k++) {
				out->attr[k][0] = pv.attr[k].name_stab;
				out->attr[k][1] = pv.attr[k].data_stab;
				out->attr[k][2] = pv.attr[k].dep_class;
			}
			out->nargs = pr.nargs;
			out->nxargs = pr.nxargs;
			for (k = 0; k < pr.nargs && k < USDT_LIST_MAX_ARGS; k++) {
				usdt_meta_arg(v, pr.first_arg + k, &a);
				out->native[k] = a.type;
			}
			for (k = 0; k < pr.nxargs && k < USDT_LIST_MAX_ARGS; k++) {
				usdt_meta_arg(v, pr.first_xarg + k, &a);
				out->xlated[k] = a.type;
				if (a.source != k)
					identity = false;
			}
			out->translated = !identity || !same_types(out);
			return true;
		}
	}
	return false;
}

bool usdt_list_meta_find(const struct usdt_list_meta_ref *refs, size_t nrefs, const char *provider,
			 const char *probe, struct usdt_list_probe_info *out, const char **why)
{
	size_t i;

	for (i = 0; i < nrefs; i++) {
		struct usdt_meta_view v;
		const char *bad = NULL;

		if (usdt_meta_open(&v, refs[i].desc, refs[i].size, refs[i].big_endian, &bad)) {
			if (why && bad)
				*why = bad;
			continue;
		}
		if (find_in(&v, provider, probe, out))
			return true;
	}
	return false;
}

const char *usdt_list_stability_name(unsigned s)
{
	return usdt_stability_name((enum usdt_stability)s);
}

const char *usdt_list_class_name(unsigned c)
{
	return usdt_depclass_name((enum usdt_depclass)c);
}

char *usdt_list_dtrace_name(const char *name)
{
	return usdt_probe_dtrace_name(name);
}
