/* SPDX-License-Identifier: MIT */
/*
 * The in-memory provider object: an ELF shared object, written byte by byte,
 * that the dynamic loader maps and every USDT consumer reads as it reads a
 * compiled provider (runtime/README.md, "The object").
 */
#ifndef USDT_RT_ELFSO_H
#define USDT_RT_ELFSO_H

#include <stddef.h>
#include <stdint.h>

#include "metadata.h"
#include "model.h"

/* One probe site of the object: what its `.note.stapsdt` note says. */
struct usdt_rt_site {
	const char *provider; /* as in the note: "electric__moray" */
	const char *name;     /* as in the note: "client__error" */
	const char *args;     /* the argument specs: "-4@8(%rdi) 8@16(%rdi)" */
	const char *symbol;   /* the stub's dynamic symbol: the probe's name as given */
};

/* A built object. Offsets are file offsets, which are also its link-time addresses. */
struct usdt_rt_image {
	unsigned char *bytes;
	size_t size;
	uint64_t *stub; /* per site: its `nop; ret` stub */
	uint64_t *sema; /* per site: its unsigned short semaphore */
	uint64_t meta;	/* the `.note.usdtkit` note */
	/* The two PT_LOAD segments: [0, text_end) and [rw_start, rw_end). */
	uint64_t text_end, rw_start, rw_end;
};

/*
 * Builds the object for `arch` (x86-64 or aarch64): `n` sites, the
 * metadata note's desc `meta`, and DT_SONAME `soname`. 0, or -ENOMEM,
 * -E2BIG (too large), -ENOTSUP (arch).
 */
int usdt_rt_image_build(enum usdt_arch arch, const char *soname, const struct usdt_rt_site *sites,
			size_t n, const struct usdt_meta_blob *meta, struct usdt_rt_image *img);
void usdt_rt_image_free(struct usdt_rt_image *img);

/*
 * The argument specs of a site whose arguments are `nargs` 64-bit slots of
 * an array whose address is the first argument register, each read as
 * `sizes[i]` bytes ([-]SIZE: negative for signed). Returns the length
 * written, or -1 when `len` is too small.
 */
int usdt_rt_argspecs(enum usdt_arch arch, const int *sizes, int nargs, char *buf, size_t len);

/* The architecture this library runs on, or -1 when it makes no runtime providers. */
int usdt_rt_host_arch(void);

#endif /* USDT_RT_ELFSO_H */
