/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what the helper daemon runs on a file any user can
 * write: the input is the file.
 *
 * An ELF input goes, through a memfd (the readers take an fd and pread it,
 * as in the daemon), to
 *   - hd_elf_note_kinds (helperd/proc.c, linked unchanged): the cheap check;
 *   - usdt_notes_read (core/notes.c, argspec.c, names.c): the validating
 *     `.note.stapsdt` reader. Its result is walked (every string read to its
 *     NUL, every index and offset checked against the file, each accepted
 *     probe's NOP read again here) and freed, so ASan/LSan see misuse;
 *   - each `.note.usdtkit` desc it kept: usdt_meta_apply_hints (what the
 *     worker does with it: argument names and string hints applied with
 *     usdt_site_set_arg_hint), dtrace -l's usdt_meta_find for every probe,
 *     and the metadata reader itself, walked through every accessor.
 * Any other input is also handed directly to the metadata reader (both byte
 * orders) and, up to its first NUL, to the argument-string parser for each
 * architecture: the fuzzer need not get through an ELF file to reach them.
 *
 * The custom mutator knows where an ELF file keeps what these readers read
 * (see elf_regions): it mutates the note sections, the program headers or
 * the section headers in place most of the time, and otherwise mutates the
 * whole file while restoring the ELF header often enough that the readers
 * get past it.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "helperd.h"
#include "metadata.h"
#include "notes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

static volatile size_t sink;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-notes: invariant broken: %s\n", what);
		abort();
	}
}

/* A string inside a fixed array must end inside it. */
static size_t fixed_len(const char *s, size_t cap, const char *what)
{
	const char *nul = memchr(s, '\0', cap);

	check(nul != NULL, what);
	return (size_t)(nul - s);
}

static bool is_ident(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static void walk_arg(const struct usdt_site *p, const struct usdt_argspec *a)
{
	unsigned width;

	check(a->kind <= USDT_ARG_MEM, "argument kind");
	sink += fixed_len(a->reg, sizeof(a->reg), "register name unterminated");
	if (a->name)
		check(is_ident(a->name) && strlen(a->name) <= USDT_TRACEFS_NAME_MAX,
		      "argument name not an identifier");
	if (a->kind == USDT_ARG_UNSUPPORTED) {
		check(a->why != NULL, "unsupported argument without a reason");
		sink += strlen(a->why);
		return;
	}
	check(a->size == 1 || a->size == 2 || a->size == 4 || a->size == 8, "argument size");
	if (a->kind == USDT_ARG_REG || a->kind == USDT_ARG_MEM) {
		const char *f = usdt_reg_fetch_name(p->arch, a->reg, &width);

		check(f != NULL, "accepted register without a fetch name");
		sink += strlen(f) + width;
	}
}

/* The bytes at an accepted probe's site, read again: the NOP sdt.h emits. */
static void check_site(int fd, const struct usdt_notes *n, const struct usdt_site *p)
{
	static const unsigned char a64_nop[] = {0x1f, 0x20, 0x03, 0xd5};
	unsigned char b[4];
	size_t len = n->arch == USDT_ARCH_AARCH64 ? 4 : 1;

	check(p->pc_off < n->file_size && n->file_size - p->pc_off >= len, "pc_off past the file");
	check(n->arch != USDT_ARCH_AARCH64 || p->pc_off % 4 == 0, "misaligned aarch64 pc_off");
	check(pread(fd, b, len, (off_t)p->pc_off) == (ssize_t)len, "pc_off unreadable");
	check(len == 4 ? memcmp(b, a64_nop, 4) == 0 : b[0] == 0x90, "accepted site is no NOP");
	if (p->sema) {
		check(p->sema_off % 2 == 0 && p->sema_off != 0, "odd or zero semaphore offset");
		check(p->sema_off < n->file_size && n->file_size - p->sema_off >= 2,
		      "semaphore offset past the file");
	}
}

static void walk_probe(int fd, const struct usdt_notes *n, const struct usdt_site *p)
{
	check(p->provider && p->name && p->args, "probe without its strings");
	sink += strlen(p->provider) + strlen(p->name) + strlen(p->args);
	sink += fixed_len(p->group, sizeof(p->group), "group unterminated");
	sink += fixed_len(p->event, sizeof(p->event), "event unterminated");
	sink += fixed_len(p->detail, sizeof(p->detail), "detail unterminated");
	check(p->arch == n->arch, "probe arch differs from the file's");
	if (p->reject) {
		sink += strlen(p->reject);
		return;
	}
	check(is_ident(p->provider) && is_ident(p->name), "accepted names are not identifiers");
	check(is_ident(p->group) && is_ident(p->event), "tracefs names are not identifiers");
	check(strncmp(p->group, "sdt_", 4) == 0, "group without its prefix");
	check(p->nargs <= USDT_SDT_MAX_ARGS, "too many arguments");
	check_site(fd, n, p);
	for (unsigned i = 0; i < p->nargs; i++)
		walk_arg(p, &p->arg[i]);
}

static void walk_meta_arg(const struct usdt_meta_view *v, uint32_t i)
{
	struct usdt_meta_arg a;

	check(i < v->nargs, "metadata: argument index past the table");
	usdt_meta_arg(v, i, &a);
	check(a.type != NULL, "argument without a type");
	sink += strlen(a.type) + (a.name ? strlen(a.name) : 0) + (a.c_type ? strlen(a.c_type) : 0);
}

/* usdt_meta_open and every accessor, on one desc; each index checked before use. */
static void fz_meta_desc(const void *desc, size_t size, bool big_endian)
{
	static FILE *devnull;
	struct usdt_meta_view v;
	const char *why = NULL;

	if (usdt_meta_open(&v, desc, size, big_endian, &why) != 0) {
		check(why != NULL, "refused without a reason");
		sink += strlen(why);
		return;
	}
	for (uint32_t i = 0; i < v.nproviders; i++) {
		struct usdt_meta_provider p;

		usdt_meta_provider(&v, i, &p);
		check(p.name != NULL, "provider without a name");
		sink += strlen(p.name);
		check(p.first_probe <= v.nprobes && p.nprobes <= v.nprobes - p.first_probe,
		      "provider's probes past the table");
		for (uint32_t j = 0; j < p.nprobes; j++) {
			struct usdt_meta_probe pr;

			usdt_meta_probe(&v, p.first_probe + j, &pr);
			check(pr.name != NULL, "probe without a name");
			sink += strlen(pr.name);
			for (uint32_t k = 0; k < pr.nargs; k++) {
				check(pr.first_arg + k >= pr.first_arg, "argument index wraps");
				walk_meta_arg(&v, pr.first_arg + k);
			}
			for (uint32_t k = 0; k < pr.nxargs; k++) {
				struct usdt_meta_arg a;

				check(pr.first_xarg + k >= pr.first_xarg, "argument index wraps");
				walk_meta_arg(&v, pr.first_xarg + k);
				usdt_meta_arg(&v, pr.first_xarg + k, &a);
				check(a.source < pr.nargs,
				      "translated argument from no native one");
			}
		}
	}
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (devnull)
		usdt_meta_dump(&v, devnull);
}

/* dtrace -l -v: the metadata of every probe the notes name. */
static void list_meta(const struct usdt_notes *n)
{
	for (size_t k = 0; k < n->nsites && k < 64; k++) {
		struct usdt_meta_info info;
		const char *why = NULL;

		if (!usdt_meta_find(n, n->sites[k].provider, n->sites[k].name, &info, &why))
			continue;
		check(info.nargs <= USDT_MAX_ARGS && info.nxargs <= USDT_MAX_ARGS,
		      "list metadata counts");
		for (unsigned a = 0; a < info.nargs; a++)
			sink += info.native[a] ? strlen(info.native[a]) : 0;
		for (unsigned a = 0; a < info.nxargs; a++)
			sink += info.xlated[a] ? strlen(info.xlated[a]) : 0;
		if (why)
			sink += strlen(why);
	}
}

static void read_elf(int fd, size_t size, const struct usdt_notes_limits *lim)
{
	struct usdt_notes *n = NULL;
	char err[256];
	size_t accepted = 0;
	int ret;

	ret = usdt_notes_read(fd, lim, &n, err, sizeof(err));
	if (ret) {
		check(ret < 0 && n == NULL, "error with a result");
		sink += fixed_len(err, sizeof(err), "error message unterminated");
		return;
	}
	check(n != NULL && n->file_size == size, "file size");
	check(n->elf_class == 32 || n->elf_class == 64, "ELF class");
	for (size_t i = 0; i < n->nsites; i++) {
		walk_probe(fd, n, &n->sites[i]);
		accepted += !n->sites[i].reject;
	}
	check(accepted == n->naccepted, "naccepted differs from the accepted probes");
	for (size_t m = 0; m < n->nmeta; m++) {
		const char *why = NULL;

		if (usdt_meta_apply_hints(n, m, &why) != 0)
			check(why != NULL, "invalid metadata without a reason");
		fz_meta_desc(n->meta[m].desc, n->meta[m].size, n->meta[m].big_endian);
	}
	list_meta(n);
	/* The hints again, as the worker's answer would carry them. */
	for (size_t i = 0; i < n->nsites; i++)
		walk_probe(fd, n, &n->sites[i]);
	usdt_notes_free(n);
}

static void read_raw(const uint8_t *data, size_t size)
{
	static const enum usdt_arch arch[] = {USDT_ARCH_X86_64, USDT_ARCH_I386, USDT_ARCH_AARCH64};
	size_t len = strnlen((const char *)data, size);
	char *s = malloc(len + 1);

	fz_meta_desc(data, size, false);
	fz_meta_desc(data, size, true);
	if (!s)
		return;
	memcpy(s, data, len);
	s[len] = '\0';
	for (size_t i = 0; i < 3; i++) {
		struct usdt_site p;

		memset(&p, 0, sizeof(p));
		p.arch = arch[i];
		if (usdt_parse_args(arch[i], s, &p) == 0) {
			check(p.nargs <= USDT_SDT_MAX_ARGS, "parsed too many arguments");
			for (unsigned a = 0; a < p.nargs; a++)
				walk_arg(&p, &p.arg[a]);
		}
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (size < 4 || memcmp(data, ELFMAG, SELFMAG) != 0) {
		read_raw(data, size);
		return 0;
	}
	if (fd < 0)
		fd = memfd_create("fuzz-notes", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	sink += hd_elf_note_kinds(fd);
	read_elf(fd, size, NULL);
	/*
	 * The caps (65,536 notes, 32 MiB sections, 1 GiB files) are far beyond
	 * an input's size: one input in four is read again under tiny ones,
	 * either on the notes or on the sizes (a size cap fails the file before
	 * any note is read).
	 */
	if (size % 4 == 0) {
		static const struct usdt_notes_limits few_notes = {1ull << 30, 32ull << 20, 2};
		static const struct usdt_notes_limits small = {8192, 256, 65536};

		read_elf(fd, size, size % 8 ? &few_notes : &small);
	}
	return 0;
}

/* ---- the ELF-aware mutator ---- */

struct region {
	size_t off, len;
};

/* Host-order fields (the corpus is little-endian: x86-64, i386, aarch64). */
static uint64_t get(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void add_region(struct region *r, size_t *n, size_t max, uint64_t off, uint64_t len,
		       size_t size)
{
	if (*n < max && len && off < size && len <= size - off) {
		r[*n].off = (size_t)off;
		r[*n].len = (size_t)len;
		(*n)++;
	}
}

/* The program headers, the section headers and every SHT_NOTE section of an ELF input. */
static size_t elf_regions(const uint8_t *d, size_t size, struct region *r, size_t max)
{
	bool is64;
	uint64_t phoff, shoff, phentsize, phnum, shentsize, shnum;
	size_t n = 0;

	if (size < 52 || memcmp(d, ELFMAG, SELFMAG) != 0 || d[EI_DATA] != ELFDATA2LSB)
		return 0;
	is64 = d[EI_CLASS] == ELFCLASS64;
	if (is64 && size < 64)
		return 0;
	phoff = is64 ? get(d + 32, 8) : get(d + 28, 4);
	shoff = is64 ? get(d + 40, 8) : get(d + 32, 4);
	phentsize = get(d + (is64 ? 54 : 42), 2);
	phnum = get(d + (is64 ? 56 : 44), 2);
	shentsize = get(d + (is64 ? 58 : 46), 2);
	shnum = get(d + (is64 ? 60 : 48), 2);
	add_region(r, &n, max, phoff, phentsize * phnum, size);
	add_region(r, &n, max, shoff, shentsize * shnum, size);
	if (shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) || shoff >= size ||
	    shnum > (size - shoff) / shentsize)
		return n;
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *s = d + shoff + i * shentsize;

		if (get(s + 4, 4) != SHT_NOTE)
			continue;
		add_region(r, &n, max, is64 ? get(s + 24, 8) : get(s + 16, 4),
			   is64 ? get(s + 32, 8) : get(s + 20, 4), size);
	}
	return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed)
{
	struct region r[32];
	size_t n = elf_regions(data, size, r, 32);
	unsigned pick;
	uint8_t ehdr[64];
	size_t hlen = size > EI_CLASS && data[EI_CLASS] == ELFCLASS64 ? 64 : 52;
	bool elf = n > 0 && size >= hlen;

	if (!n)
		return LLVMFuzzerMutate(data, size, max);
	/* Half the time a note section (or header table) in place, its size unchanged. */
	pick = seed % (2 * (unsigned)n + 2);
	if (pick < 2 * n) {
		struct region *g = &r[pick / 2];

		LLVMFuzzerMutate(data + g->off, g->len, g->len);
		return size;
	}
	/* Else the whole file, with the ELF header put back one time in two. */
	if (elf)
		memcpy(ehdr, data, hlen);
	size = LLVMFuzzerMutate(data, size, max);
	if (elf && pick % 2 == 0 && size >= hlen)
		memcpy(data, ehdr, hlen);
	return size;
}
