/* SPDX-License-Identifier: MIT */
/*
 * A user stack the program recorded ({pid, bytes, return addresses}: see
 * codegen_stack.c), named as the renderer reads stacks (render.c's
 * print_ustack(): "\t<hex address> <symbol>+<decimal offset> (<path>)" a
 * frame, the text bpftrace's ustack(perf) writes). An address is found in
 * the process's /proc/PID/maps, made the file's link-time address by its
 * PT_LOAD segments, and named by the function symbol (.symtab, else
 * .dynsym) that holds it. A process that is gone, a mapping without a
 * file, a file without the symbol: the frame keeps what is known, and the
 * renderer prints `module`0xaddress` or `0xaddress`, as DTrace does.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

struct mapping {
	uint64_t start, end, off;
	char path[512];
};

/* The mapping of pid that holds addr: 0, or -1. */
static int find_mapping(uint32_t pid, uint64_t addr, struct mapping *m)
{
	char name[64], line[1024];
	FILE *f;
	int rc = -1;

	snprintf(name, sizeof(name), "/proc/%u/maps", pid);
	f = fopen(name, "re");
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s%n", &s, &e, &off, &n) < 3 || !n)
			continue;
		if (addr < s || addr >= e)
			continue;
		m->start = s;
		m->end = e;
		m->off = off;
		m->path[0] = '\0';
		sscanf(line + n, " %511[^\n]", m->path);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* The function symbol of `file` holding file offset `foff`: its name and the offset in it. */
static int name_in_file(const char *path, uint64_t foff, char *sym, size_t n, uint64_t *into)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	uint64_t va = 0;
	bool have_va = false;
	size_t i, nph;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &nph))
		goto out;
	for (i = 0; i < nph && !have_va; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && foff >= ph.p_offset &&
		    foff < ph.p_offset + ph.p_filesz) {
			va = foff - ph.p_offset + ph.p_vaddr;
			have_va = true;
		}
	}
	for (int pass = 0; have_va && pass < 2 && rc; pass++) {
		Elf_Scn *scn = NULL;

		while (rc && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t k, ns;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			ns = sh.sh_size / sh.sh_entsize;
			for (k = 0; d && k < ns; k++) {
				GElf_Sym s;
				const char *nm;

				if (!gelf_getsym(d, (int)k, &s) ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_shndx == SHN_UNDEF || va < s.st_value ||
				    va >= s.st_value + (s.st_size ? s.st_size : 1))
					continue;
				nm = elf_strptr(e, sh.sh_link, s.st_name);
				if (!nm || !*nm)
					continue;
				snprintf(sym, n, "%s", nm);
				*into = va - s.st_value;
				rc = 0;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

char *eg_ustack_text(const unsigned char *p, size_t size)
{
	struct dt_buf o = {0};
	uint32_t pid, bytes;
	size_t i, n;

	if (size < 8)
		return dt_xstrdup("");
	memcpy(&pid, p, 4);
	memcpy(&bytes, p + 4, 4);
	n = bytes / 8;
	if (n > (size - 8) / 8)
		n = (size - 8) / 8;
	for (i = 0; i < n; i++) {
		uint64_t a, into = 0;
		struct mapping m;
		char sym[256];

		memcpy(&a, p + 8 + 8 * i, 8);
		if (!a)
			break;
		if (find_mapping(pid, a, &m) || m.path[0] != '/') {
			dt_buf_printf(&o, "\t%" PRIx64 " [unknown] ([unknown])\n", a);
			continue;
		}
		if (name_in_file(m.path, a - m.start + m.off, sym, sizeof(sym), &into))
			dt_buf_printf(&o, "\t%" PRIx64 " [unknown] (%s)\n", a, m.path);
		else
			dt_buf_printf(&o, "\t%" PRIx64 " %s+%" PRIu64 " (%s)\n", a, sym, into,
				      m.path);
	}
	if (!o.s)
		return dt_xstrdup("");
	return o.s;
}
