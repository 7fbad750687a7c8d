/* SPDX-License-Identifier: MIT */
/*
 * The tree's one reader of ELF symbol tables (elfsym.c): every place that
 * looks a symbol up by name, names an address by its function, or lists a
 * file's undefined references walks the tables through this, with its own
 * test of each symbol. usdt_elf_symbol() (notes.h) is built on it.
 */
#ifndef USDT_ELFSYM_H
#define USDT_ELFSYM_H

#include <gelf.h>
#include <libelf.h>
#include <stdint.h>

/* One symbol of a table: its entry, and its name ("" where it has none). */
struct usdt_elf_sym {
	GElf_Sym sym;
	const char *name; /* in libelf's string data: valid while the Elf is open */
	unsigned type;	  /* GELF_ST_TYPE: STT_FUNC, STT_OBJECT, ... */
	unsigned bind;	  /* GELF_ST_BIND: STB_GLOBAL, STB_WEAK, STB_LOCAL */
};

/* fn's answer: 0 goes on to the next symbol, anything else stops the walk and is returned. */
typedef int (*usdt_elf_sym_fn)(const struct usdt_elf_sym *s, void *arg);

/*
 * Calls fn for each symbol of e's tables of section type `table`
 * (SHT_SYMTAB or SHT_DYNSYM; a file has one of each at most), the null
 * symbol at index 0 left out. Returns fn's first non-zero answer, 0 when
 * every symbol was seen, or -ENOENT when e has no such table.
 */
int usdt_elf_symbols(Elf *e, Elf64_Word table, usdt_elf_sym_fn fn, void *arg);

/* The same over one symbol table section (scn, its header sh). */
int usdt_elf_table_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, usdt_elf_sym_fn fn,
			   void *arg);

#endif /* USDT_ELFSYM_H */
