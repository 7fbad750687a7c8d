/* SPDX-License-Identifier: MIT */
/*
 * meta_dump FILE: every usdtkit metadata note in an ELF file (a -G object or
 * a linked executable or library holding several), validated and printed
 * with usdt_meta_dump(), each preceded by "note N". Exit 1 on a note that
 * fails validation or a file without notes. A test tool, and a sketch of
 * what the helper daemon and `dtrace -l -v` do.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "metadata.h"

int main(int argc, char **argv)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;
	GElf_Ehdr eh;
	Elf *elf;
	int fd, bad = 0;

	if (argc != 2)
		return 2;
	fd = open(argv[1], O_RDONLY);
	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx)) {
		fprintf(stderr, "%s: not ELF\n", argv[1]);
		return 1;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = NULL;
		GElf_Shdr sh;
		const char *name;

		gelf_getshdr(scn, &sh);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type != SHT_NOTE || !name || strcmp(name, USDT_META_NOTE_SECTION))
			continue;
		while ((d = elf_getdata(scn, d))) {
			size_t off = 0, next, no, dof;
			GElf_Nhdr nh;

			while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &no, &dof))) {
				struct usdt_meta_view v;
				const char *why = "?";

				off = next;
				if (nh.n_namesz != 8 ||
				    memcmp((char *)d->d_buf + no, "usdtkit", 8) ||
				    nh.n_type != USDT_META_NOTE_TYPE)
					continue;
				printf("note %zu\n", n++);
				if (usdt_meta_open(&v, (char *)d->d_buf + dof, nh.n_descsz,
						   eh.e_ident[EI_DATA] == ELFDATA2MSB, &why)) {
					printf("invalid: %s\n", why);
					bad = 1;
					continue;
				}
				usdt_meta_dump(&v, stdout);
			}
		}
	}
	elf_end(elf);
	close(fd);
	return bad || !n;
}
