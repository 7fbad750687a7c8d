/* SPDX-License-Identifier: MIT */
/*
 * A symbol's value by name (notes.h): what an argument spec that names a
 * symbol (`-8@g_var(%rip)`) needs to become an address. libelf, read-only,
 * the file never mapped whole.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "notes.h"

static int in_table(Elf *e, Elf64_Word type, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int usdt_elf_symbol(int fd, const char *name, uint64_t *value)
{
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
	rc = in_table(e, SHT_SYMTAB, name, value);
	if (rc)
		rc = in_table(e, SHT_DYNSYM, name, value);
	elf_end(e);
	return rc;
}
