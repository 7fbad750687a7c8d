/* SPDX-License-Identifier: MIT */
/*
 * ELF symbol tables, walked (elfsym.h), and a symbol's value by name
 * (notes.h): what an argument spec that names a symbol (`-8@g_var(%rip)`)
 * needs to become an address. libelf, read-only, the file never mapped
 * whole.
 */
#include <errno.h>
#include <string.h>

#include "elfsym.h"
#include "notes.h"

int usdt_elf_table_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, usdt_elf_sym_fn fn, void *arg)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		struct usdt_elf_sym s;
		int rc;

		if (!gelf_getsym(d, (int)i, &s.sym))
			break;
		s.name = s.sym.st_name ? elf_strptr(e, sh->sh_link, s.sym.st_name) : NULL;
		if (!s.name)
			s.name = "";
		s.type = GELF_ST_TYPE(s.sym.st_info);
		s.bind = GELF_ST_BIND(s.sym.st_info);
		rc = fn(&s, arg);
		if (rc)
			return rc;
	}
	return 0;
}

int usdt_elf_symbols(Elf *e, Elf64_Word table, usdt_elf_sym_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	bool found = false;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		int rc;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != table)
			continue;
		found = true;
		rc = usdt_elf_table_symbols(e, scn, &sh, fn, arg);
		if (rc)
			return rc;
	}
	return found ? 0 : -ENOENT;
}

struct by_name {
	const char *name;
	uint64_t value;
};

static int is_named(const struct usdt_elf_sym *s, void *arg)
{
	struct by_name *b = arg;

	if (s->sym.st_shndx == SHN_UNDEF || strcmp(s->name, b->name))
		return 0;
	b->value = s->sym.st_value;
	return 1;
}

int usdt_elf_symbol(int fd, const char *name, uint64_t *value)
{
	struct by_name b = {name, 0};
	Elf *e;
	int rc;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		return -EINVAL;
	}
	rc = usdt_elf_symbols(e, SHT_SYMTAB, is_named, &b) == 1 ||
		     usdt_elf_symbols(e, SHT_DYNSYM, is_named, &b) == 1
		 ? 0
		 : -ENOENT;
	if (!rc)
		*value = b.value;
	elf_end(e);
	return rc;
}
