/* SPDX-License-Identifier: MIT */
/*
 * The metadata note's reader (dtrace-G/metadata.c) for fuzz-notes.c, in a
 * file of its own because metadata.h and notes.h both define a
 * `struct usdt_probe`. A desc usdt_meta_open accepts is walked through every
 * accessor, each index checked against the view's counts before use (the
 * reader promises that a valid view keeps them in range), and dumped.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metadata.h"

void fz_meta_desc(const void *desc, size_t size, bool big_endian);

static volatile size_t sink;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-notes: metadata invariant broken: %s\n", what);
		abort();
	}
}

static void walk_arg(const struct usdt_meta_view *v, uint32_t i)
{
	struct usdt_meta_arg a;

	check(i < v->nargs, "argument index past the table");
	usdt_meta_arg(v, i, &a);
	check(a.type != NULL, "argument without a type");
	sink += strlen(a.type) + (a.name ? strlen(a.name) : 0) + (a.c_type ? strlen(a.c_type) : 0);
}

void fz_meta_desc(const void *desc, size_t size, bool big_endian)
{
	static FILE *devnull;
	struct usdt_meta_view v;
	const char *why = NULL;

	if (usdt_meta_open(&v, desc, size, big_endian, &why) != 0) {
		check(why != NULL, "refused without a reason");
		sink += strlen(why);
		return;
	}
	for (uint32_t i = 0; i < v.nproviders; i++) {
		struct usdt_meta_provider p;

		usdt_meta_provider(&v, i, &p);
		check(p.name != NULL, "provider without a name");
		sink += strlen(p.name);
		check(p.first_probe <= v.nprobes && p.nprobes <= v.nprobes - p.first_probe,
		      "provider's probes past the table");
		for (uint32_t j = 0; j < p.nprobes; j++) {
			struct usdt_meta_probe pr;

			usdt_meta_probe(&v, p.first_probe + j, &pr);
			check(pr.name != NULL, "probe without a name");
			sink += strlen(pr.name);
			for (uint32_t k = 0; k < pr.nargs; k++) {
				check(pr.first_arg + k >= pr.first_arg, "argument index wraps");
				walk_arg(&v, pr.first_arg + k);
			}
			for (uint32_t k = 0; k < pr.nxargs; k++) {
				struct usdt_meta_arg a;

				check(pr.first_xarg + k >= pr.first_xarg, "argument index wraps");
				walk_arg(&v, pr.first_xarg + k);
				usdt_meta_arg(&v, pr.first_xarg + k, &a);
				check(a.source < pr.nargs,
				      "translated argument from no native one");
			}
		}
	}
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (devnull)
		usdt_meta_dump(&v, devnull);
}
