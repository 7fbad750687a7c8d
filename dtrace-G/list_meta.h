/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l -v` from our metadata note (internal to the listing). This
 * header stands between the note reader's world (kernel-helper/lib/notes.h)
 * and the provider model's (usdt_provider.h, through metadata.h), which
 * cannot meet in one file: their probe structures share names. So it speaks
 * only plain C types.
 */
#ifndef USDT_LIST_META_H
#define USDT_LIST_META_H

#include <stdbool.h>
#include <stddef.h>

/* One metadata note's desc, as the note reader kept it. */
struct usdt_list_meta_ref {
	const unsigned char *desc;
	size_t size;
	bool big_endian;
};

#define USDT_LIST_MAX_ARGS 255

/* What the metadata says about one probe; strings point into the desc. */
struct usdt_list_probe_info {
	/* [provider, module, function, name, args][name stability, data stability, class] */
	unsigned attr[5][3];
	unsigned nargs, nxargs;
	const char *native[USDT_LIST_MAX_ARGS]; /* types as written in the .d */
	const char *xlated[USDT_LIST_MAX_ARGS];
	bool translated; /* the probe has a `: (...)` list that differs from the native one */
};

/*
 * Looks (provider, probe name as in the stapsdt note) up in the module's
 * metadata notes. Returns true and fills *out when one describes it. An
 * invalid note is skipped as if absent; *why is then set to its first defect
 * (for a warning), else left alone.
 */
bool usdt_list_meta_find(const struct usdt_list_meta_ref *refs, size_t nrefs, const char *provider,
			 const char *probe, struct usdt_list_probe_info *out, const char **why);

/* DTrace's attribute defaults when nothing says otherwise: Private/Private/Unknown. */
void usdt_list_default_attrs(struct usdt_list_probe_info *out);

const char *usdt_list_stability_name(unsigned s);
const char *usdt_list_class_name(unsigned c);

/* "query__start" -> "query-start". Caller frees; NULL when out of memory. */
char *usdt_list_dtrace_name(const char *name);

#endif /* USDT_LIST_META_H */
