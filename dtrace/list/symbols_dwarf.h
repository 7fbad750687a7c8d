/* SPDX-License-Identifier: MIT */
/*
 * The DWARF half of a site's function name (symbols_dwarf.c), for
 * symbols.c: which inlined function, and which subprogram, holds each pc.
 * Internal to the listing.
 */
#ifndef USDT_SYMBOLS_DWARF_H
#define USDT_SYMBOLS_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if USDTKIT_HAVE_LIBDWARF
#if USDTKIT_LIBDWARF_SUBDIR /* Debian 12: /usr/include/libdwarf/ */
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#else
#include <dwarf.h>
#include <libdwarf.h>
#endif
#endif

struct dw_walk {
#if USDTKIT_HAVE_LIBDWARF
	Dwarf_Debug dbg;
	Dwarf_Addr cu_base;
#endif
	const uint64_t *pcs; /* sorted */
	size_t n;
	char **names;	 /* parallel to pcs: the innermost inlined function */
	unsigned *depth; /* inlining depth that named names[i] (0: none) */
	char **fnames;	 /* parallel to pcs: the innermost subprogram */
	bool nomem;
};

/*
 * Fills w->names, w->depth and w->fnames (parallel to w->pcs, sorted) from
 * the DWARF of the file open on fd, read in a child process under limits;
 * NULL, or a static explanation of why nothing came of it (then the names
 * are all NULL). w->nomem: out of memory.
 */
const char *usdt_sym_dwarf_names(int fd, struct dw_walk *w);

#endif /* USDT_SYMBOLS_DWARF_H */
