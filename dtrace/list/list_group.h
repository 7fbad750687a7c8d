/* SPDX-License-Identifier: MIT */
/*
 * A file's sites grouped into the lines dtrace -l prints (list_group.c).
 */
#ifndef USDT_LIST_GROUP_H
#define USDT_LIST_GROUP_H

#include <stddef.h>

#include "notes.h"

/* One line of a file's listing, before the pid is known. */
struct file_probe {
	const char *provider; /* the note's strings (owned by the notes) */
	const char *name;
	char *dname;   /* DTrace's spelling */
	char *func;    /* "" when unknown */
	size_t site;   /* index of its first site in the notes */
	size_t nfuncs; /* lines of the same provider and name in this file */
};

/*
 * The accepted sites of n grouped by (provider, name, function), in the
 * order of each group's first site. funcs[i] is site i's function name
 * (printable, "" when unknown); a group's line takes its first site's
 * string (funcs[i] set to NULL), the caller frees the rest. 0 or -ENOMEM
 * (*out then holds the lines made so far, *nout of them, to free).
 */
int list_group_sites(const struct usdt_notes *n, char **funcs, struct file_probe **out,
		     size_t *nout);

#endif
