/* SPDX-License-Identifier: MIT */
/*
 * Which function a probe site is in, for `dtrace -l`'s FUNCTION column
 * (internal to the listing; see symbols.c).
 */
#ifndef USDT_SYMBOLS_H
#define USDT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/*
 * For each pcs[i] (a link-time address in the ELF file open on fd), sets
 * names[i] to the function containing it: the innermost inlined function
 * when the file's DWARF says the site was inlined, else the symbol from
 * .symtab or .dynsym (for a compiler's copy, f.part.0 and the like, the
 * source function f: DWARF's, else the symbol cut), else NULL. Names are
 * malloc'd; the caller frees them.
 * A file without symbols or debug information is not an error; DWARF that
 * could not be read leaves the symbol names and sets *why to a static
 * explanation (else *why is NULL). Returns 0, or -ENOMEM (names then all
 * NULL).
 */
int usdt_sym_functions(int fd, const uint64_t *pcs, size_t n, char **names, const char **why);

#endif /* USDT_SYMBOLS_H */
