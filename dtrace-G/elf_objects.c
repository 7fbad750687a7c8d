/* SPDX-License-Identifier: MIT */
/*
 * Input objects, read with libelf and never written: files are opened
 * O_RDONLY and read through ELF_C_READ_MMAP (a private read-only mapping),
 * so `dtrace -G` cannot change a byte of them (Ruby's configure compares).
 *
 * From each ELF file (a command-line object, or each member of a static
 * archive) we keep its class and machine, the provider/name/argument count
 * of each SystemTap v3 note in `.note.stapsdt` (owner "stapsdt", type 3;
 * desc = three addresses of the file's class size, then provider, name and
 * argument strings, each NUL-terminated), and undefined symbols named
 * `__dtrace_*` or `__dtraceenabled_*` (objects compiled against an
 * illumos-style `dtrace -h` header, which only illumos' -G could patch).
 * Addresses in relocatable notes need relocations; the checks do not need
 * them, so they are skipped.
 *
 * LTO objects hold compiler IR instead of machine code, so their probe
 * sites (inline assembly) have no notes yet: gcc's slim LTO objects (ELF
 * with a `__gnu_lto_slim` symbol) and LLVM bitcode files get a warning that
 * they cannot be checked, and "declared but no site" warnings are then
 * withheld. Other archive members that are not ELF are passed over; other
 * command-line inputs that are not ELF are errors.
 */
#include "elf_objects.h"
#include "elfsym.h"
#include "notes.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct reader {
	struct usdt_elf_objects *objs;
	size_t cap_units, cap_sites, cap_refs;
	struct usdt_diag *diag;
	int failed;
};

/* arr with room for element n: arr itself, a larger copy, or NULL (arr intact). */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 16;
	p = reallocarray(arr, ncap, size);
	if (p)
		*cap = ncap;
	return p;
}

const char *usdt_elf_machine_name(int machine, char *buf, size_t len)
{
	switch (machine) {
	case EM_X86_64:
		return "x86-64";
	case EM_386:
		return "i386";
	case EM_AARCH64:
		return "aarch64";
	case EM_ARM:
		return "arm";
	case EM_RISCV:
		return "riscv";
	case EM_PPC64:
		return "ppc64";
	case EM_PPC:
		return "ppc";
	case EM_S390:
		return "s390";
	case EM_MIPS:
		return "mips";
	case EM_LOONGARCH:
		return "loongarch";
	default:
		snprintf(buf, len, "machine %d", machine);
		return buf;
	}
}

static int oom(struct reader *r)
{
	usdt_error(r->diag, "out of memory reading objects");
	r->failed = 1;
	return -1;
}

/* One note desc: returns 0, or -1 when malformed (reported by the caller). */
static int add_site(struct reader *r, size_t unit, const char *desc, size_t len, int elfclass)
{
	size_t asz = elfclass == ELFCLASS64 ? 8 : 4, off = 3 * asz;
	const char *prov, *name, *args, *end;
	struct usdt_elf_site *s;

	if (len < off)
		return -1;
	prov = desc + off;
	end = desc + len;
	name = memchr(prov, '\0', (size_t)(end - prov));
	if (!name++ || name >= end)
		return -1;
	args = memchr(name, '\0', (size_t)(end - name));
	if (!args++)
		return -1;
	/* The argument string may be absent at the very end of an old note. */
	if (args < end && !memchr(args, '\0', (size_t)(end - args)))
		return -1;
	s = grow(r->objs->sites, r->objs->nsites, &r->cap_sites, sizeof(*s));
	if (!s)
		return oom(r), 0;
	r->objs->sites = s;
	s += r->objs->nsites;
	s->unit = unit;
	s->provider = strdup(prov);
	s->name = strdup(name);
	/* Counted as the daemon splits them (core/argspec.c). */
	s->nargs = args < end ? usdt_argspec_count(args) : 0;
	if (!s->provider || !s->name) {
		free(s->provider);
		free(s->name);
		return oom(r), 0;
	}
	r->objs->nsites++;
	return 0;
}

static void read_notes(struct reader *r, size_t unit, Elf *elf, Elf_Scn *scn, int elfclass)
{
	const char *origin = r->objs->units[unit].origin;
	Elf_Data *data = NULL;

	while ((data = elf_getdata(scn, data))) {
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;

		while (off < data->d_size &&
		       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *base = data->d_buf;

			if (nh.n_namesz == 8 && memcmp(base + name_off, "stapsdt", 8) == 0 &&
			    nh.n_type == 3 &&
			    add_site(r, unit, base + desc_off, nh.n_descsz, elfclass) < 0) {
				usdt_error_at(r->diag, origin, 0, 0, NULL,
					      "malformed .note.stapsdt entry at offset %zu", off);
				r->failed = 1;
			}
			off = next;
		}
	}
	(void)elf;
}

static void unchecked(struct reader *r, const char *origin, bool gcc)
{
	usdt_warning_at(r->diag, origin, 0, 0, NULL,
			"probe sites not checked: %s (build it %s to have them checked)",
			gcc ? "a gcc LTO object without code" : "LLVM bitcode",
			gcc ? "with -ffat-lto-objects or without -flto" : "without -flto");
	r->objs->nunchecked++;
}

static bool is_bitcode(const char *p, size_t n)
{
	/* Raw LLVM bitcode, or the bitcode wrapper header. */
	return n >= 4 && (memcmp(p, "BC\xc0\xde", 4) == 0 || memcmp(p, "\xde\xc0\x17\x0b", 4) == 0);
}

/* The reading of one unit's symbol table. */
struct unit_syms {
	struct reader *r;
	size_t unit;
};

/*
 * One symbol (core/elfsym.h's walk): an undefined __dtrace_* or
 * __dtraceenabled_* is a reference the link resolves; a defined
 * __gnu_lto_slim marks an LTO object. Non-zero stops (out of memory).
 */
static int read_symbol(const struct usdt_elf_sym *sym, void *arg)
{
	struct unit_syms *us = arg;
	struct reader *r = us->r;
	struct usdt_elf_dtref *d;
	const char *name = sym->name;

	if (!sym->sym.st_name)
		return 0;
	if (sym->sym.st_shndx != SHN_UNDEF && strcmp(name, "__gnu_lto_slim") == 0) {
		unchecked(r, r->objs->units[us->unit].origin, true);
		return 0;
	}
	if (sym->sym.st_shndx != SHN_UNDEF)
		return 0;
	if (strncmp(name, "__dtrace", 8) != 0 ||
	    (strncmp(name, "__dtrace_", 9) != 0 && strncmp(name, "__dtraceenabled_", 16) != 0))
		return 0;
	d = grow(r->objs->dtrefs, r->objs->ndtrefs, &r->cap_refs, sizeof(*d));
	if (!d) {
		oom(r);
		return 1;
	}
	r->objs->dtrefs = d;
	d += r->objs->ndtrefs;
	d->unit = us->unit;
	d->symbol = strdup(name);
	if (!d->symbol) {
		oom(r);
		return 1;
	}
	r->objs->ndtrefs++;
	return 0;
}

static void read_symbols(struct reader *r, size_t unit, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	struct unit_syms us = {r, unit};

	usdt_elf_table_symbols(elf, scn, sh, read_symbol, &us);
}

static void read_elf(struct reader *r, Elf *elf, char *origin)
{
	struct usdt_elf_unit *u;
	Elf_Scn *scn = NULL;
	size_t shstrndx, unit;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		usdt_error_at(r->diag, origin, 0, 0, NULL, "corrupt ELF file: %s", elf_errmsg(-1));
		r->failed = 1;
		free(origin);
		return;
	}
	u = grow(r->objs->units, r->objs->nunits, &r->cap_units, sizeof(*u));
	if (!u) {
		free(origin);
		oom(r);
		return;
	}
	r->objs->units = u;
	unit = r->objs->nunits++;
	u += unit;
	u->origin = origin;
	u->elfclass = eh.e_ident[EI_CLASS];
	u->machine = eh.e_machine;
	u->data = eh.e_ident[EI_DATA];

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			break;
		if (sh.sh_type == SHT_SYMTAB) {
			read_symbols(r, unit, elf, scn, &sh);
		} else if (sh.sh_type == SHT_NOTE) {
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && strcmp(name, ".note.stapsdt") == 0)
				read_notes(r, unit, elf, scn, u->elfclass);
		}
	}
}

static char *member_origin(const char *path, const char *member)
{
	size_t n = strlen(path) + strlen(member) + 3;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s(%s)", path, member);
	return s;
}

static void read_archive(struct reader *r, Elf *ar, const char *path)
{
	Elf_Cmd cmd = ELF_C_READ_MMAP;
	Elf *m;

	while ((m = elf_begin(-1, cmd, ar))) {
		Elf_Arhdr *ah = elf_getarhdr(m);
		const char *mname = ah && ah->ar_name ? ah->ar_name : "?";

		/* "/" and "//" are the symbol and long-name tables. */
		if (mname[0] != '/' && (elf_kind(m) == ELF_K_ELF || elf_kind(m) == ELF_K_NONE)) {
			char *origin = member_origin(path, mname);
			size_t n = 0;
			char *raw = elf_rawfile(m, &n);

			if (!origin)
				oom(r);
			else if (elf_kind(m) == ELF_K_ELF)
				read_elf(r, m, origin), origin = NULL;
			else if (raw && is_bitcode(raw, n))
				unchecked(r, origin, false);
			free(origin);
		}
		cmd = elf_next(m);
		elf_end(m);
	}
}

static void read_thin_archive(struct reader *r, int fd, const char *path);

/*
 * Reads one input file. `origin` names it in diagnostics: the path itself, or
 * "archive(member)" for a member of a thin archive.
 */
static void read_file(struct reader *r, const char *path, const char *origin)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char magic[8];
	Elf *elf;

	if (fd < 0) {
		usdt_error_at(r->diag, origin, 0, 0, NULL, "cannot open object: %s",
			      strerror(errno));
		r->failed = 1;
		return;
	}
	if (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	    memcmp(magic, "!<thin>\n", 8) == 0) {
		if (origin != path) {
			usdt_error_at(r->diag, origin, 0, 0, NULL,
				      "a thin archive inside a thin archive is not supported: "
				      "pass its objects instead");
			r->failed = 1;
		} else {
			read_thin_archive(r, fd, path);
		}
		close(fd);
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		usdt_error_at(r->diag, origin, 0, 0, NULL, "cannot read object: %s",
			      elf_errmsg(-1));
		r->failed = 1;
	} else if (elf_kind(elf) == ELF_K_AR) {
		read_archive(r, elf, origin);
	} else if (elf_kind(elf) == ELF_K_ELF) {
		char *o = strdup(origin);

		if (o)
			read_elf(r, elf, o);
		else
			oom(r);
	} else {
		size_t n = 0;
		char *raw = elf_rawfile(elf, &n);

		if (raw && is_bitcode(raw, n)) {
			unchecked(r, origin, false);
		} else {
			usdt_error_at(r->diag, origin, 0, 0, NULL, "not an ELF object or archive");
			r->failed = 1;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

static void read_path(struct reader *r, const char *path)
{
	read_file(r, path, path);
}

/* The decimal field of an ar header, or -1 when it is not one. */
static long ar_number(const char *field, size_t width)
{
	long v = 0;
	size_t i;

	for (i = 0; i < width && field[i] >= '0' && field[i] <= '9'; i++) {
		if (v > 1000000000L)
			return -1;
		v = v * 10 + (field[i] - '0');
	}
	if (i == 0)
		return -1;
	for (; i < width; i++)
		if (field[i] != ' ')
			return -1;
	return v;
}

/*
 * A GNU thin archive ("!<thin>\n", what `ar T` and meson's internal static
 * libraries make) holds only member headers, a symbol table and a long-name
 * table; each member's bytes stay in its own file, named relative to the
 * archive's directory. libelf does not read them, so the headers are walked
 * here (every size and offset checked against the bytes read) and each member
 * file is read as an object of its own, named "archive(member)".
 */
static void read_thin_archive(struct reader *r, int fd, const char *path)
{
	struct stat st;
	char *buf = NULL, *names = NULL;
	size_t len, off = 8, nnames = 0;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	if (fstat(fd, &st) != 0 || st.st_size < 8 || st.st_size > (64L << 20)) {
		usdt_error_at(r->diag, path, 0, 0, NULL, "cannot read thin archive");
		r->failed = 1;
		return;
	}
	len = (size_t)st.st_size;
	buf = malloc(len);
	if (!buf) {
		oom(r);
		return;
	}
	if (pread(fd, buf, len, 0) != (ssize_t)len)
		goto bad;
	while (off + 60 <= len) {
		const char *h = buf + off;
		long size = ar_number(h + 48, 10);
		char name[4096];
		size_t nlen;

		if (size < 0 || h[58] != '`' || h[59] != '\n')
			goto bad;
		off += 60;
		if (h[0] == '/' && (h[1] == ' ' || h[1] == '/' || memcmp(h, "/SYM64/", 7) == 0)) {
			/* The symbol table ("/", "/SYM64/") and the long-name table ("//") have
			 * data. */
			if ((size_t)size > len - off)
				goto bad;
			if (h[1] == '/') {
				names = buf + off;
				nnames = (size_t)size;
			}
			off += (size_t)size + (size & 1);
			continue;
		}
		if (h[0] == '/') {
			long at = ar_number(h + 1, 15);
			const char *e;

			if (at < 0 || !names || (size_t)at >= nnames)
				goto bad;
			e = memchr(names + at, '\n', nnames - (size_t)at);
			if (!e || e == names + at || e[-1] != '/')
				goto bad;
			nlen = (size_t)(e - 1 - (names + at));
			if (nlen >= sizeof(name))
				goto bad;
			memcpy(name, names + at, nlen);
		} else {
			const char *e = memchr(h, '/', 16);

			if (!e || e == h)
				goto bad;
			nlen = (size_t)(e - h);
			memcpy(name, h, nlen);
		}
		name[nlen] = '\0';
		/* Members carry no data in a thin archive: the next header follows. */
		{
			size_t n = (size_t)dirlen + nlen + 1;
			char *file = malloc(n);
			char *origin = member_origin(path, name);

			if (!file || !origin) {
				free(file);
				free(origin);
				oom(r);
				break;
			}
			if (name[0] == '/')
				snprintf(file, n, "%s", name);
			else
				snprintf(file, n, "%.*s%s", dirlen, path, name);
			read_file(r, file, origin);
			free(file);
			free(origin);
		}
	}
	if (off != len)
		goto bad;
	free(buf);
	return;
bad:
	usdt_error_at(r->diag, path, 0, 0, NULL, "malformed thin archive");
	r->failed = 1;
	free(buf);
}

int usdt_elf_objects_read(char *const *paths, size_t n, struct usdt_elf_objects *objs,
			  struct usdt_diag *diag)
{
	struct reader r = {.objs = objs, .diag = diag};
	size_t i;

	memset(objs, 0, sizeof(*objs));
	if (elf_version(EV_CURRENT) == EV_NONE) {
		usdt_error(diag, "libelf is out of date");
		return -1;
	}
	for (i = 0; i < n; i++)
		read_path(&r, paths[i]);
	return r.failed ? -1 : 0;
}

void usdt_elf_objects_free(struct usdt_elf_objects *objs)
{
	size_t i;

	for (i = 0; i < objs->nunits; i++)
		free(objs->units[i].origin);
	for (i = 0; i < objs->nsites; i++) {
		free(objs->sites[i].provider);
		free(objs->sites[i].name);
	}
	for (i = 0; i < objs->ndtrefs; i++)
		free(objs->dtrefs[i].symbol);
	free(objs->units);
	free(objs->sites);
	free(objs->dtrefs);
	memset(objs, 0, sizeof(*objs));
}
