/* SPDX-License-Identifier: MIT */
/*
 * meta.c: the metadata note as plain strings. Separate from helperd.h
 * because the provider model (metadata.h) and the note reader (notes.h) both
 * define a `struct usdt_probe`: no file may see both.
 */
#ifndef USDT_HELPERD_META_H
#define USDT_HELPERD_META_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*hd_meta_fn)(const char *provider, const char *probe, unsigned argi, const char *name,
			   bool is_string, void *arg);
/* Calls fn for every native argument of every probe of a valid desc; -1 (and *why) when invalid. */
int hd_meta_each(const void *desc, size_t size, bool big_endian, hd_meta_fn fn, void *arg,
		 const char **why);

#endif
