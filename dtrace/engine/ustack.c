/* SPDX-License-Identifier: MIT */
/*
 * A user stack the program recorded ({pid, bytes, return addresses}: see
 * codegen_stack.c), named as the renderer reads stacks (render_printf.c's
 * dtr_print_ustack(): "\t<hex address> <symbol>+<decimal offset> (<path>)"
 * a frame, the text bpftrace's ustack(perf) writes). An address is found in
 * the process's /proc/PID/maps (read again for each stack: a dlopen() moves
 * it), made the file's link-time address by its PT_LOAD segments, and
 * named by the function symbol (.symtab, else .dynsym) that holds it. A
 * file's segments and functions are read once (struct eg_syms, the
 * reader's: an aggregation of a thousand stacks reads libc once), by path,
 * again if its inode changed. A process that is gone, a mapping without a
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
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"
#include "engine.h"

struct mapping {
	uint64_t start, end, off;
	char path[512];
};

struct func {
	uint64_t start, size;
	char *name;
};

struct seg {
	uint64_t off, filesz, vaddr;
};

/* One file's segments and functions, sorted by address. */
struct efile {
	char *path;
	dev_t dev;
	ino_t ino;
	struct seg *segs;
	size_t nsegs;
	struct func *funcs;
	size_t nfuncs;
};

struct eg_syms {
	struct efile *files;
	size_t nfiles;
};

struct eg_syms *eg_syms_new(void)
{
	struct eg_syms *s = dt_xmalloc(sizeof(*s));

	memset(s, 0, sizeof(*s));
	return s;
}

static void efile_clear(struct efile *f)
{
	size_t i;

	for (i = 0; i < f->nfuncs; i++)
		dt_free(f->funcs[i].name);
	dt_free(f->funcs);
	dt_free(f->segs);
	f->funcs = NULL;
	f->segs = NULL;
	f->nfuncs = f->nsegs = 0;
}

void eg_syms_free(struct eg_syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++) {
		efile_clear(&s->files[i]);
		dt_free(s->files[i].path);
	}
	dt_free(s->files);
	dt_free(s);
}

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

static int by_start(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A defined, named STT_FUNC symbol: one of the file's functions (core/elfsym.h's walk). */
static int add_func(const struct usdt_elf_sym *s, void *arg)
{
	struct efile *f = arg;
	struct func fn;

	if (s->type != STT_FUNC || s->sym.st_shndx == SHN_UNDEF || !*s->name)
		return 0;
	fn.start = s->sym.st_value;
	fn.size = s->sym.st_size ? s->sym.st_size : 1;
	fn.name = dt_xstrdup(s->name);
	DT_PUSH(f->funcs, f->nfuncs, fn);
	return 0;
}

/* Reads a file's PT_LOAD segments and STT_FUNC symbols (.symtab, else .dynsym). */
static void efile_read(struct efile *f, int fd)
{
	size_t i, nph;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &nph))
		goto out;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			struct seg sg = {ph.p_offset, ph.p_filesz, ph.p_vaddr};

			DT_PUSH(f->segs, f->nsegs, sg);
		}
	}
	usdt_elf_symbols(e, SHT_SYMTAB, add_func, f);
	if (!f->nfuncs)
		usdt_elf_symbols(e, SHT_DYNSYM, add_func, f);
	if (f->nfuncs)
		qsort(f->funcs, f->nfuncs, sizeof(*f->funcs), by_start);
out:
	if (e)
		elf_end(e);
}

/* The cached file at path, read if new or replaced; NULL if it cannot be opened. */
static struct efile *efile_get(struct eg_syms *s, const char *path)
{
	struct efile *f = NULL;
	struct stat st;
	size_t i;
	int fd;

	if (stat(path, &st))
		return NULL;
	for (i = 0; i < s->nfiles && !f; i++)
		if (!strcmp(s->files[i].path, path))
			f = &s->files[i];
	if (f && f->dev == st.st_dev && f->ino == st.st_ino)
		return f;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (f) {
		efile_clear(f);
	} else {
		struct efile nf;

		memset(&nf, 0, sizeof(nf));
		nf.path = dt_xstrdup(path);
		DT_PUSH(s->files, s->nfiles, nf);
		f = &s->files[s->nfiles - 1];
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	efile_read(f, fd);
	close(fd);
	return f;
}

/* The function holding file offset foff: 0 with its name and the offset in it, or -1. */
static int name_in_file(const struct efile *f, uint64_t foff, const char **name, uint64_t *into)
{
	size_t i, lo = 0, hi = f->nfuncs;
	uint64_t va = 0;
	bool have_va = false;

	for (i = 0; i < f->nsegs && !have_va; i++)
		if (foff >= f->segs[i].off && foff < f->segs[i].off + f->segs[i].filesz) {
			va = foff - f->segs[i].off + f->segs[i].vaddr;
			have_va = true;
		}
	if (!have_va)
		return -1;
	/* the last function starting at or before va */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->funcs[mid].start <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* functions may nest or share an address: look back for one that holds va */
	for (i = lo; i-- > 0;) {
		if (va < f->funcs[i].start + f->funcs[i].size) {
			*name = f->funcs[i].name;
			*into = va - f->funcs[i].start;
			return 0;
		}
		if (lo - i > 16)
			break;
	}
	return -1;
}

int eg_uaddr_name(struct eg_syms *s, uint32_t pid, uint64_t a, char *mod, size_t modlen,
		  const char **sym, uint64_t *into)
{
	struct mapping m;
	const struct efile *f;
	const char *b;

	if (find_mapping(pid, a, &m) || m.path[0] != '/')
		return -1;
	b = strrchr(m.path, '/');
	snprintf(mod, modlen, "%s", b ? b + 1 : m.path);
	f = efile_get(s, m.path);
	return !f || name_in_file(f, a - m.start + m.off, sym, into) ? 1 : 0;
}

char *eg_ustack_text(struct eg_syms *s, const unsigned char *p, size_t size)
{
	struct dt_buf o = {0};
	uint32_t pid, bytes;
	size_t i, n;

	if (size < 8)
		return dt_xstrdup("");
	memcpy(&pid, p, 4);
	if (pid == EG_KERNEL_PID)
		return eg_kstack_text(p, size);
	memcpy(&bytes, p + 4, 4);
	n = bytes / 8;
	if (n > (size - 8) / 8)
		n = (size - 8) / 8;
	for (i = 0; i < n; i++) {
		uint64_t a, into = 0;
		struct mapping m;
		const struct efile *f;
		const char *sym;

		memcpy(&a, p + 8 + 8 * i, 8);
		if (!a)
			break;
		if (find_mapping(pid, a, &m) || m.path[0] != '/') {
			dt_buf_printf(&o, "\t%" PRIx64 " [unknown] ([unknown])\n", a);
			continue;
		}
		f = efile_get(s, m.path);
		if (!f || name_in_file(f, a - m.start + m.off, &sym, &into))
			dt_buf_printf(&o, "\t%" PRIx64 " [unknown] (%s)\n", a, m.path);
		else
			dt_buf_printf(&o, "\t%" PRIx64 " %s+%" PRIu64 " (%s)\n", a, sym, into,
				      m.path);
	}
	if (!o.s)
		return dt_xstrdup("");
	return o.s;
}

/*
 * sym(), func(), mod() of a kernel address, usym(), ufunc(), umod(), uaddr()
 * of the process's, as DTrace's dt_print_sym() and dt_print_usym() write
 * them: "mod`func" (uaddr: "+0xoffset" when not 0), "mod", "mod`0xaddr" for
 * a file without the symbol, "0xaddr" for an address nothing holds.
 */
char *eg_sym_text(struct eg_syms *s, const unsigned char *p, size_t size, int kind)
{
	uint32_t pid;
	uint64_t a, into = 0;
	const char *sym = NULL, *kmod = NULL;
	char mod[256], buf[800];
	int rc;

	if (size < 16)
		return dt_xstrdup("");
	memcpy(&pid, p, 4);
	memcpy(&a, p + 8, 8);
	if (kind < EG_SYM_USYM) {
		rc = eg_ksym_name(a, &kmod, &sym, &into);
		if (!rc)
			snprintf(mod, sizeof(mod), "%s", kmod);
	} else {
		rc = a ? eg_uaddr_name(s, pid, a, mod, sizeof(mod), &sym, &into) : -1;
	}
	if (rc < 0)
		snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	else if (kind == EG_SYM_MOD || kind == EG_SYM_UMOD)
		snprintf(buf, sizeof(buf), "%s", mod);
	else if (rc > 0)
		snprintf(buf, sizeof(buf), "%s`0x%" PRIx64, mod, a);
	else if (kind == EG_SYM_UADDR && into)
		snprintf(buf, sizeof(buf), "%s`%s+0x%" PRIx64, mod, sym, into);
	else
		snprintf(buf, sizeof(buf), "%s`%s", mod, sym);
	return dt_xstrdup(buf);
}
