/* SPDX-License-Identifier: MIT */
/*
 * The provider metadata note (`.note.usdtkit`, owner "usdtkit", type 1):
 * what a -G object tells the helper daemon and `dtrace -l -v` that the
 * SystemTap notes cannot (argument types, translated arguments and their
 * mapping, stability attributes). The byte format is specified in
 * METADATA-NOTE.md; this header is its writer and its validating reader.
 *
 * The reader is written for a root daemon reading untrusted files: it
 * never trusts a count, offset or length before checking it against the
 * bytes it was given, and it never allocates.
 */
#ifndef USDT_METADATA_H
#define USDT_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "notes.h"

#define USDT_META_NOTE_OWNER "usdtkit"
#define USDT_META_NOTE_SECTION ".note.usdtkit"
#define USDT_META_NOTE_TYPE 1u
#define USDT_META_VERSION 1u
#define USDT_META_NONE 0xffffffffu /* a string offset meaning "absent" */

/* Header words (index into the desc as uint32_t). */
enum {
	USDT_MH_VERSION,
	USDT_MH_HEADER_WORDS,
	USDT_MH_FLAGS,
	USDT_MH_DESC_SIZE,
	USDT_MH_NPROVIDERS,
	USDT_MH_PROVIDERS_OFF,
	USDT_MH_NPROBES,
	USDT_MH_PROBES_OFF,
	USDT_MH_NARGS,
	USDT_MH_ARGS_OFF,
	USDT_MH_STRTAB_OFF,
	USDT_MH_STRTAB_SIZE,
	USDT_MH_WORDS /* 12: the version-1 header */
};

/* Record sizes in words. */
#define USDT_META_PROVIDER_WORDS 8 /* name first_probe nprobes attr[5] */
#define USDT_META_PROBE_WORDS 5	   /* name nargs first_arg nxargs first_xarg */
#define USDT_META_ARG_WORDS 5	   /* name type c_type info source */

/*
 * A serialised desc: `nwords` host-order words followed by `strsize` bytes
 * of string table (strsize is a multiple of 4). The generator prints the
 * words as C unsigned ints so the target compiler lays them out in the
 * target's byte order.
 */
struct usdt_meta_blob {
	uint32_t *words;
	size_t nwords;
	char *strtab;
	size_t strsize;
};

/* Returns 0 or -ENOMEM / -E2BIG (the model does not fit 32-bit offsets). */
int usdt_meta_build(const struct usdt_program *prog, struct usdt_meta_blob *blob);
void usdt_meta_blob_free(struct usdt_meta_blob *blob);

/* A validated view of a desc: everything below points into the caller's bytes. */
struct usdt_meta_view {
	const unsigned char *desc;
	size_t size;
	bool swap; /* the desc's byte order is not the host's */
	uint32_t nproviders, nprobes, nargs;
	uint32_t providers_off, probes_off, args_off, strtab_off, strtab_size;
};

/*
 * Validates a desc of `size` bytes (the note's n_descsz), in big-endian
 * order when `big_endian`. Returns 0, or -EINVAL with *why set to a static
 * description of the first defect found.
 */
int usdt_meta_open(struct usdt_meta_view *v, const void *desc, size_t size, bool big_endian,
		   const char **why);

/* Accessors on a validated view: indices must be below the view's counts. */
struct usdt_meta_provider {
	const char *name;
	uint32_t first_probe, nprobes;
	struct usdt_attr attr[USDT_ATTR_COUNT];
};
struct usdt_meta_probe {
	const char *name;
	uint32_t nargs, first_arg, nxargs, first_xarg;
};
struct usdt_meta_arg {
	const char *name;   /* NULL when unnamed */
	const char *type;   /* as written in the .d */
	const char *c_type; /* NULL when not expressible in C */
	enum usdt_type_class cls;
	unsigned size;
	bool is_signed;
	uint32_t source; /* native argument index feeding this one */
};

void usdt_meta_provider(const struct usdt_meta_view *v, uint32_t i, struct usdt_meta_provider *p);
void usdt_meta_probe(const struct usdt_meta_view *v, uint32_t i, struct usdt_meta_probe *p);
void usdt_meta_arg(const struct usdt_meta_view *v, uint32_t i, struct usdt_meta_arg *a);

/* A stable, line-oriented text form of a view (for tests and `dtrace -l -v`). */
void usdt_meta_dump(const struct usdt_meta_view *v, FILE *out);

/* ---- A module's metadata notes, as the note reader kept them ---- */

/* What the metadata says of one probe (`dtrace -l -v`); strings point into the desc. */
struct usdt_meta_info {
	struct usdt_attr attr[USDT_ATTR_COUNT];
	unsigned nargs, nxargs;
	const char *native[USDT_MAX_ARGS]; /* types as written in the .d */
	const char *xlated[USDT_MAX_ARGS];
	bool translated; /* a `: (...)` list that differs from the native one */
};

/* DTrace's attribute defaults when nothing says otherwise: Private/Private/Unknown. */
void usdt_meta_default_attrs(struct usdt_attr attr[USDT_ATTR_COUNT]);

/*
 * Looks (provider, probe name as in the stapsdt note) up in the module's
 * metadata notes: a module may carry several (one per linked -G object);
 * the first that describes the probe wins, as notes from one .d describe
 * the same declarations. An invalid note is skipped as if absent; *why is
 * then set to its first defect (for a warning), else left alone.
 */
bool usdt_meta_find(const struct usdt_notes *n, const char *provider, const char *probe,
		    struct usdt_meta_info *out, const char **why);

/*
 * Metadata note `m` of `n` applied to its sites: every native argument's
 * name and string hint (usdt_notes_apply_arg_hint), as the daemon registers
 * them. Returns 0, or -1 with *why set when the note is invalid.
 */
int usdt_meta_apply_hints(struct usdt_notes *n, size_t m, const char **why);

#endif
