/* SPDX-License-Identifier: MIT */
/*
 * Writes a runtime provider's ELF shared object (elfso.h).
 *
 * The object is the smallest one that the dynamic loader maps and that a
 * tracer cannot tell from a compiled provider. File offsets equal virtual
 * addresses, and the writable segment starts on a boundary of the largest
 * page size of the architecture, so each segment is mapped straight from
 * the file:
 *
 *   PT_LOAD  R+X   ELF header, program headers, .hash, .dynsym, .dynstr,
 *                  .text (one stub per probe), .stapsdt.base, .note.usdtkit
 *   PT_LOAD  RW    .dynamic (the loader relocates it in place), .probes
 *                  (one unsigned short semaphore per probe, in the file
 *                  so that the kernel's reference counter finds it)
 *   PT_DYNAMIC, PT_NOTE (.note.usdtkit), PT_GNU_STACK (RW: no executable stack)
 *   unmapped       .note.stapsdt, .shstrtab, the section headers
 *
 * A stub is the probe site: one NOP, the instruction a uprobe replaces,
 * then a return. Firing a probe calls its stub with the address of an
 * array of 64-bit argument slots in the first argument register; each
 * argument spec reads its slot from memory (`-4@8(%rdi)`, `-4@[x0, 8]`), so
 * one calling convention serves every arity up to 12. There are no
 * relocations: nothing in the object points anywhere at run time.
 */
#include "elfso.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

#define STUB_STRIDE 16u /* one stub per 16 bytes: aligned, distinct pcs */

struct arch_desc {
	uint16_t machine;
	uint64_t page; /* the largest page size the loader may use */
	unsigned char stub[8];
	size_t stub_len;
};

static const struct arch_desc *arch_desc(enum usdt_arch arch)
{
	static const struct arch_desc x86_64 = {
	    EM_X86_64, 0x1000, {0x90, 0xc3}, 2, /* nop; ret */
	};
	static const struct arch_desc aarch64 = {
	    EM_AARCH64, 0x10000, {0x1f, 0x20, 0x03, 0xd5, 0xc0, 0x03, 0x5f, 0xd6}, 8, /* nop; ret */
	};

	if (arch == USDT_ARCH_X86_64)
		return &x86_64;
	if (arch == USDT_ARCH_AARCH64)
		return &aarch64;
	return NULL;
}

int usdt_rt_host_arch(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	return USDT_ARCH_X86_64;
#elif defined(__aarch64__) && defined(__LP64__) && defined(__ORDER_LITTLE_ENDIAN__) &&             \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return USDT_ARCH_AARCH64;
#else
	return -1;
#endif
}

int usdt_rt_argspecs(enum usdt_arch arch, const int *sizes, int nargs, char *buf, size_t len)
{
	size_t used = 0;
	int i, n;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < nargs; i++) {
		const char *sep = i ? " " : "";
		unsigned off = 8u * (unsigned)i;

		/*
		 * aarch64's first slot is written `[x0, 0]`, not `[x0]`: bcc
		 * before 0.31 (bpftrace's parser, Debian 12's 0.26 among
		 * them) reads a bracket without an offset as the register
		 * itself, so bpftrace printed the array's address as arg0.
		 */
		if (arch == USDT_ARCH_AARCH64)
			n = snprintf(buf + used, len - used, "%s%d@[x0, %u]", sep, sizes[i], off);
		else
			n = off ? snprintf(buf + used, len - used, "%s%d@%u(%%rdi)", sep, sizes[i],
					   off)
				: snprintf(buf + used, len - used, "%s%d@(%%rdi)", sep, sizes[i]);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	return (int)used;
}

/* Section indices, in file order. */
enum {
	S_NULL,
	S_HASH,
	S_DYNSYM,
	S_DYNSTR,
	S_TEXT,
	S_BASE,
	S_META,
	S_DYNAMIC,
	S_PROBES,
	S_STAPSDT,
	S_SHSTRTAB,
	S_COUNT
};

static const char *const section_name[S_COUNT] = {
    "",		".hash",   ".dynsym",	    ".dynstr",	 ".text", ".stapsdt.base", ".note.usdtkit",
    ".dynamic", ".probes", ".note.stapsdt", ".shstrtab",
};

#define NPHDR 5
#define NDYN 7

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static size_t note_size(size_t namesz, size_t descsz)
{
	return 12 + align_up(namesz, 4) + align_up(descsz, 4);
}

/* Writes one note at p; returns the bytes written. */
static size_t put_note(unsigned char *p, const char *name, uint32_t type, const void *desc,
		       size_t descsz)
{
	uint32_t h[3];
	size_t namesz = strlen(name) + 1;

	h[0] = (uint32_t)namesz;
	h[1] = (uint32_t)descsz;
	h[2] = type;
	memcpy(p, h, sizeof(h));
	memcpy(p + 12, name, namesz);
	memcpy(p + 12 + align_up(namesz, 4), desc, descsz);
	return note_size(namesz, descsz);
}

static size_t stapsdt_desc_size(const struct usdt_rt_site *s)
{
	return 24 + strlen(s->provider) + 1 + strlen(s->name) + 1 + strlen(s->args) + 1;
}

int usdt_rt_image_build(enum usdt_arch arch, const char *soname, const struct usdt_rt_site *sites,
			size_t n, const struct usdt_meta_blob *meta, struct usdt_rt_image *img)
{
	const struct arch_desc *ad = arch_desc(arch);
	Elf64_Shdr sh[S_COUNT];
	Elf64_Phdr ph[NPHDR];
	Elf64_Ehdr eh;
	Elf64_Dyn dyn[NDYN];
	uint64_t off[S_COUNT], size[S_COUNT], end, rw, shoff;
	size_t i, dynstr_size, shstr_size, stapsdt_size, meta_desc;
	unsigned char *b, *p;
	uint32_t *hash;
	char *dynstr;
	uint32_t name_off;

	memset(img, 0, sizeof(*img));
	if (!ad)
		return -ENOTSUP;
	if (n == 0 || n > 100000)
		return -E2BIG;

	/* Sizes. */
	dynstr_size = 1 + strlen(soname) + 1;
	stapsdt_size = 0;
	for (i = 0; i < n; i++) {
		dynstr_size += strlen(sites[i].symbol) + 1;
		stapsdt_size += note_size(sizeof("stapsdt"), stapsdt_desc_size(&sites[i]));
	}
	shstr_size = 1;
	for (i = 1; i < S_COUNT; i++)
		shstr_size += strlen(section_name[i]) + 1;
	meta_desc = meta->nwords * 4 + meta->strsize;

	memset(size, 0, sizeof(size));
	size[S_HASH] = 4 * (2 + 1 + (n + 1));
	size[S_DYNSYM] = sizeof(Elf64_Sym) * (n + 1);
	size[S_DYNSTR] = dynstr_size;
	size[S_TEXT] = STUB_STRIDE * n;
	size[S_BASE] = 1;
	size[S_META] = note_size(sizeof(USDT_META_NOTE_OWNER), meta_desc);
	size[S_DYNAMIC] = sizeof(dyn);
	size[S_PROBES] = 2 * n;
	size[S_STAPSDT] = stapsdt_size;
	size[S_SHSTRTAB] = shstr_size;

	/* Layout: offsets are addresses; the RW segment starts a page of its own. */
	memset(off, 0, sizeof(off));
	end = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) * NPHDR;
	off[S_HASH] = end = align_up(end, 8);
	off[S_DYNSYM] = end = align_up(end + size[S_HASH], 8);
	off[S_DYNSTR] = end = end + size[S_DYNSYM];
	off[S_TEXT] = end = align_up(end + size[S_DYNSTR], 16);
	off[S_BASE] = end = end + size[S_TEXT];
	off[S_META] = end = align_up(end + size[S_BASE], 4);
	end += size[S_META];
	off[S_DYNAMIC] = rw = align_up(end, ad->page);
	off[S_PROBES] = end = rw + size[S_DYNAMIC];
	off[S_STAPSDT] = end = align_up(end + size[S_PROBES], 4);
	off[S_SHSTRTAB] = end = end + size[S_STAPSDT];
	shoff = align_up(end + size[S_SHSTRTAB], 8);
	img->size = (size_t)(shoff + sizeof(Elf64_Shdr) * S_COUNT);
	if (img->size > (size_t)1 << 30)
		return -E2BIG;

	b = img->bytes = calloc(1, img->size);
	img->stub = calloc(n, sizeof(*img->stub));
	img->sema = calloc(n, sizeof(*img->sema));
	if (!b || !img->stub || !img->sema) {
		usdt_rt_image_free(img);
		return -ENOMEM;
	}

	/* .dynstr, .dynsym and .hash: one symbol per stub, all in one bucket. */
	dynstr = (char *)b + off[S_DYNSTR];
	name_off = 1;
	memcpy(dynstr + name_off, soname, strlen(soname) + 1);
	name_off += (uint32_t)strlen(soname) + 1;
	hash = (uint32_t *)(void *)(b + off[S_HASH]);
	hash[0] = 1;		     /* nbucket */
	hash[1] = (uint32_t)(n + 1); /* nchain */
	hash[2] = (uint32_t)n;	     /* bucket[0]: the last symbol */
	for (i = 0; i < n; i++) {
		Elf64_Sym sym;
		size_t len = strlen(sites[i].symbol) + 1;

		memset(&sym, 0, sizeof(sym));
		sym.st_name = name_off;
		sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym.st_other = STV_DEFAULT;
		sym.st_shndx = S_TEXT;
		sym.st_value = off[S_TEXT] + STUB_STRIDE * i;
		sym.st_size = ad->stub_len;
		memcpy(b + off[S_DYNSYM] + sizeof(sym) * (i + 1), &sym, sizeof(sym));
		memcpy(dynstr + name_off, sites[i].symbol, len);
		name_off += (uint32_t)len;
		hash[3 + 1 + i] = (uint32_t)i; /* chain[i + 1] -> i (0 ends it) */
		img->stub[i] = sym.st_value;
		img->sema[i] = off[S_PROBES] + 2 * i;
		memcpy(b + sym.st_value, ad->stub, ad->stub_len);
	}

	/* .note.usdtkit: the metadata (core/METADATA-NOTE.md). */
	p = b + off[S_META];
	{
		uint32_t h[3] = {sizeof(USDT_META_NOTE_OWNER), (uint32_t)meta_desc,
				 USDT_META_NOTE_TYPE};
		size_t name_at = 12 + align_up(sizeof(USDT_META_NOTE_OWNER), 4);

		memcpy(p, h, sizeof(h));
		memcpy(p + 12, USDT_META_NOTE_OWNER, sizeof(USDT_META_NOTE_OWNER));
		memcpy(p + name_at, meta->words, meta->nwords * 4);
		memcpy(p + name_at + meta->nwords * 4, meta->strtab, meta->strsize);
	}
	img->meta = off[S_META];

	/* .note.stapsdt: pc, base, semaphore, then provider, name and args. */
	p = b + off[S_STAPSDT];
	for (i = 0; i < n; i++) {
		const struct usdt_rt_site *s = &sites[i];
		size_t dsz = stapsdt_desc_size(s), at = 24;
		unsigned char *desc = malloc(dsz);
		uint64_t a[3] = {img->stub[i], off[S_BASE], img->sema[i]};

		if (!desc) {
			usdt_rt_image_free(img);
			return -ENOMEM;
		}
		memcpy(desc, a, sizeof(a));
		memcpy(desc + at, s->provider, strlen(s->provider) + 1);
		at += strlen(s->provider) + 1;
		memcpy(desc + at, s->name, strlen(s->name) + 1);
		at += strlen(s->name) + 1;
		memcpy(desc + at, s->args, strlen(s->args) + 1);
		p += put_note(p, "stapsdt", 3, desc, dsz);
		free(desc);
	}

	/* .dynamic */
	memset(dyn, 0, sizeof(dyn));
	dyn[0].d_tag = DT_HASH;
	dyn[0].d_un.d_ptr = off[S_HASH];
	dyn[1].d_tag = DT_STRTAB;
	dyn[1].d_un.d_ptr = off[S_DYNSTR];
	dyn[2].d_tag = DT_SYMTAB;
	dyn[2].d_un.d_ptr = off[S_DYNSYM];
	dyn[3].d_tag = DT_STRSZ;
	dyn[3].d_un.d_val = dynstr_size;
	dyn[4].d_tag = DT_SYMENT;
	dyn[4].d_un.d_val = sizeof(Elf64_Sym);
	dyn[5].d_tag = DT_SONAME;
	dyn[5].d_un.d_val = 1;
	dyn[6].d_tag = DT_NULL;
	memcpy(b + off[S_DYNAMIC], dyn, sizeof(dyn));

	/* .shstrtab and the section headers. */
	memset(sh, 0, sizeof(sh));
	p = b + off[S_SHSTRTAB];
	name_off = 1;
	for (i = 1; i < S_COUNT; i++) {
		size_t len = strlen(section_name[i]) + 1;

		memcpy(p + name_off, section_name[i], len);
		sh[i].sh_name = name_off;
		sh[i].sh_offset = off[i];
		sh[i].sh_size = size[i];
		sh[i].sh_addr = i < S_STAPSDT ? off[i] : 0;
		name_off += (uint32_t)len;
	}
	sh[S_HASH].sh_type = SHT_HASH;
	sh[S_HASH].sh_flags = SHF_ALLOC;
	sh[S_HASH].sh_link = S_DYNSYM;
	sh[S_HASH].sh_addralign = 8;
	sh[S_HASH].sh_entsize = 4;
	sh[S_DYNSYM].sh_type = SHT_DYNSYM;
	sh[S_DYNSYM].sh_flags = SHF_ALLOC;
	sh[S_DYNSYM].sh_link = S_DYNSTR;
	sh[S_DYNSYM].sh_info = 1;
	sh[S_DYNSYM].sh_addralign = 8;
	sh[S_DYNSYM].sh_entsize = sizeof(Elf64_Sym);
	sh[S_DYNSTR].sh_type = SHT_STRTAB;
	sh[S_DYNSTR].sh_flags = SHF_ALLOC;
	sh[S_DYNSTR].sh_addralign = 1;
	sh[S_TEXT].sh_type = SHT_PROGBITS;
	sh[S_TEXT].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[S_TEXT].sh_addralign = 16;
	sh[S_BASE].sh_type = SHT_PROGBITS;
	sh[S_BASE].sh_flags = SHF_ALLOC;
	sh[S_BASE].sh_addralign = 1;
	sh[S_META].sh_type = SHT_NOTE;
	sh[S_META].sh_flags = SHF_ALLOC;
	sh[S_META].sh_addralign = 4;
	sh[S_DYNAMIC].sh_type = SHT_DYNAMIC;
	sh[S_DYNAMIC].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[S_DYNAMIC].sh_link = S_DYNSTR;
	sh[S_DYNAMIC].sh_addralign = 8;
	sh[S_DYNAMIC].sh_entsize = sizeof(Elf64_Dyn);
	sh[S_PROBES].sh_type = SHT_PROGBITS;
	sh[S_PROBES].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[S_PROBES].sh_addralign = 2;
	sh[S_STAPSDT].sh_type = SHT_NOTE;
	sh[S_STAPSDT].sh_addralign = 4;
	sh[S_SHSTRTAB].sh_type = SHT_STRTAB;
	sh[S_SHSTRTAB].sh_addralign = 1;
	memcpy(b + shoff, sh, sizeof(sh));

	/* Program headers. */
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_filesz = ph[0].p_memsz = off[S_META] + size[S_META];
	ph[0].p_align = ad->page;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R | PF_W;
	ph[1].p_offset = ph[1].p_vaddr = ph[1].p_paddr = rw;
	ph[1].p_filesz = ph[1].p_memsz = off[S_PROBES] + size[S_PROBES] - rw;
	ph[1].p_align = ad->page;
	ph[2].p_type = PT_DYNAMIC;
	ph[2].p_flags = PF_R | PF_W;
	ph[2].p_offset = ph[2].p_vaddr = ph[2].p_paddr = off[S_DYNAMIC];
	ph[2].p_filesz = ph[2].p_memsz = size[S_DYNAMIC];
	ph[2].p_align = 8;
	ph[3].p_type = PT_NOTE;
	ph[3].p_flags = PF_R;
	ph[3].p_offset = ph[3].p_vaddr = ph[3].p_paddr = off[S_META];
	ph[3].p_filesz = ph[3].p_memsz = size[S_META];
	ph[3].p_align = 4;
	ph[4].p_type = PT_GNU_STACK;
	ph[4].p_flags = PF_R | PF_W;
	ph[4].p_align = 16;
	memcpy(b + sizeof(Elf64_Ehdr), ph, sizeof(ph));
	img->text_end = ph[0].p_filesz;
	img->rw_start = rw;
	img->rw_end = rw + ph[1].p_filesz;

	/* The ELF header. */
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_DYN;
	eh.e_machine = ad->machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(Elf64_Ehdr);
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = NPHDR;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = S_COUNT;
	eh.e_shstrndx = S_SHSTRTAB;
	memcpy(b, &eh, sizeof(eh));
	return 0;
}

void usdt_rt_image_free(struct usdt_rt_image *img)
{
	free(img->bytes);
	free(img->stub);
	free(img->sema);
	memset(img, 0, sizeof(*img));
}
