// SPDX-License-Identifier: MIT
/*
 * The note reader: probes from an ELF file's `.note.stapsdt`, validated.
 *
 * The helper daemon registers uprobes from what this returns, as root, for
 * files any user can write. So every number read from the file is checked
 * before use, and a probe is only accepted when registering it cannot hurt the
 * processes that map the file:
 *
 *  - The file: a regular file of at most 1 GiB, ELF, ET_EXEC or ET_DYN, for
 *    x86-64, i386 or aarch64. It is read with libelf in ELF_C_READ mode
 *    (pread), never mapped: a file truncated under a mapping would SIGBUS the
 *    daemon. At most 65,536 notes and 32 MiB per note section are read.
 *  - A note: owner "stapsdt", type 3 (SystemTap v3; other types are refused
 *    with a reason). Its desc holds three addresses (4 bytes each in ELF32,
 *    8 in ELF64) then three NUL-terminated strings, all inside the desc; a
 *    note whose header or desc runs out of its section ends the section
 *    (the next note's position is unknowable), reported as one rejection.
 *  - Prelink adjustment (stapsdt-and-consumers.md §1.1): when the file has a
 *    `.stapsdt.base` section, pc and semaphore get sh_addr - note.base added.
 *    A note base of 0 next to an existing section is not a prelink: a tool
 *    zeroed it (libbpf/usdt PR#5), so nothing is added and the probe and
 *    file are flagged BASE_ZERO.
 *  - pc must fall in the file-backed part of an executable PT_LOAD, and the
 *    bytes there must be the NOP sdt.h emits (0x90; aarch64 `nop`): a probe
 *    anywhere else would plant an int3 inside another instruction, which the
 *    kernel does not check (uprobes.md §5).
 *  - The semaphore, when present, must fall in the file-backed part of a
 *    writable PT_LOAD and be 2-byte aligned: it is an unsigned short the
 *    kernel increments (an odd offset fails at enable time; one in the r-x
 *    segment is silently never updated).
 *  - File offsets come from the PT_LOAD containing the address
 *    (off = addr - p_vaddr + p_offset), which handles the RW segment whose
 *    vaddr and offset differ.
 *  - Names: see names.c (C identifiers, long ones shortened with a hash).
 *  - Arguments: see args.c; more than 12 rejects the probe.
 *
 * A rejected probe stays in the list with its reason, so the daemon can log it
 * and `usdtkit-probes list` can show it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "notes.h"

#define DEFAULT_MAX_FILE (1ull << 30)
#define DEFAULT_MAX_SECTION (32ull << 20)
#define DEFAULT_MAX_NOTES 65536
#define MAX_META_DESC (1u << 20) /* all metadata notes together */
#define MAX_META_NOTES 4096
#define MAX_SEGMENTS 256
#define DISPLAY_MAX 80

struct segment {
	uint64_t vaddr, offset, filesz; /* file-backed part only, clipped to the file */
	uint32_t flags;
};

struct reader {
	int fd;
	Elf *elf;
	struct usdt_notes *n;
	const struct usdt_notes_limits *lim;
	struct segment seg[MAX_SEGMENTS];
	size_t nseg;
	bool has_base;
	size_t cap;	   /* allocated probes */
	size_t meta_bytes; /* metadata note bytes kept */
};

static void set_err(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static int reject(struct usdt_site *p, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Returns -EINVAL so a check can `return reject(...)`. */
static int reject(struct usdt_site *p, const char *reason, const char *fmt, ...)
{
	va_list ap;

	if (p->reject)
		return -EINVAL; /* the first defect is the one reported */
	p->reject = reason;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A printable copy of at most `max` bytes of [s, s+len), for messages. */
static char *display(const char *s, size_t len, size_t max)
{
	size_t n = len > max ? max : len;
	char *out = malloc(n * 4 + 4), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			*o++ = (char)c;
		else
			o += sprintf(o, "\\x%02x", c);
	}
	if (n < len)
		o += sprintf(o, "...");
	*o = '\0';
	return out;
}

static uint32_t rd32(const struct reader *r, const unsigned char *p)
{
	if (r->n->big_endian)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t rdaddr(const struct reader *r, const unsigned char *p)
{
	uint64_t hi, lo;

	if (r->n->elf_class == 32)
		return rd32(r, p);
	hi = rd32(r, r->n->big_endian ? p : p + 4);
	lo = rd32(r, r->n->big_endian ? p + 4 : p);
	return hi << 32 | lo;
}

static int read_header(struct reader *r, char *err, size_t errlen)
{
	struct usdt_notes *n = r->n;
	GElf_Ehdr eh;

	if (elf_kind(r->elf) != ELF_K_ELF || !gelf_getehdr(r->elf, &eh)) {
		set_err(err, errlen, "not an ELF file");
		return -ENOEXEC;
	}
	n->elf_class = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 32 : 64;
	n->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	n->e_type = eh.e_type;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		set_err(err, errlen, "ELF type %u is neither an executable nor a shared object",
			(unsigned)eh.e_type);
		return -ENOEXEC;
	}
	if (eh.e_machine == EM_X86_64 && n->elf_class == 64 && !n->big_endian) {
		n->arch = USDT_ARCH_X86_64;
	} else if (eh.e_machine == EM_386 && n->elf_class == 32 && !n->big_endian) {
		n->arch = USDT_ARCH_I386;
	} else if (eh.e_machine == EM_AARCH64 && n->elf_class == 64) {
		n->arch = USDT_ARCH_AARCH64;
	} else {
		set_err(err, errlen, "unsupported machine %u (ELF%u)", (unsigned)eh.e_machine,
			n->elf_class);
		return -ENOEXEC;
	}
	return 0;
}

static int read_segments(struct reader *r, char *err, size_t errlen)
{
	size_t phnum;

	if (elf_getphdrnum(r->elf, &phnum) != 0) {
		set_err(err, errlen, "unreadable program headers: %s", elf_errmsg(-1));
		return -EIO;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct segment *s;

		if (!gelf_getphdr(r->elf, (int)i, &ph)) {
			set_err(err, errlen, "unreadable program header %zu: %s", i,
				elf_errmsg(-1));
			return -EIO;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (r->nseg == MAX_SEGMENTS) {
			set_err(err, errlen, "more than %d PT_LOAD segments", MAX_SEGMENTS);
			return -EFBIG;
		}
		s = &r->seg[r->nseg++];
		s->vaddr = ph.p_vaddr;
		s->offset = ph.p_offset;
		s->flags = ph.p_flags;
		/* Only bytes really in the file can be probed or counted. */
		if (ph.p_offset >= r->n->file_size)
			s->filesz = 0;
		else if (ph.p_filesz > r->n->file_size - ph.p_offset)
			s->filesz = r->n->file_size - ph.p_offset;
		else
			s->filesz = ph.p_filesz;
		if (s->filesz > ph.p_memsz)
			s->filesz = ph.p_memsz;
		if (s->vaddr + s->filesz < s->vaddr)
			s->filesz = 0; /* wraps: useless */
	}
	return 0;
}

/* The segment with `flag` whose file-backed part holds [addr, addr+len). */
static const struct segment *find_segment(const struct reader *r, uint64_t addr, uint64_t len,
					  uint32_t flag)
{
	for (size_t i = 0; i < r->nseg; i++) {
		const struct segment *s = &r->seg[i];

		if (!(s->flags & flag) || addr < s->vaddr)
			continue;
		if (addr - s->vaddr < s->filesz && s->filesz - (addr - s->vaddr) >= len)
			return s;
	}
	return NULL;
}

static struct usdt_site *new_probe(struct reader *r)
{
	struct usdt_notes *n = r->n;

	if (n->nsites == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct usdt_site *p = realloc(n->sites, cap * sizeof(*p));

		if (!p)
			return NULL;
		n->sites = p;
		r->cap = cap;
	}
	memset(&n->sites[n->nsites], 0, sizeof(n->sites[0]));
	n->sites[n->nsites].arch = n->arch;
	return &n->sites[n->nsites++];
}

static int check_pc(struct reader *r, struct usdt_site *p)
{
	static const unsigned char x86_nop[] = {0x90};
	static const unsigned char a64_nop[] = {0x1f, 0x20, 0x03, 0xd5};
	const unsigned char *nop = x86_nop;
	size_t nopsz = sizeof(x86_nop);
	unsigned char buf[4];
	const struct segment *s;

	if (r->n->arch == USDT_ARCH_AARCH64) {
		nop = a64_nop;
		nopsz = sizeof(a64_nop);
		if (p->pc % 4)
			return reject(p, "pc-misaligned", "pc 0x%llx is not 4-byte aligned",
				      (unsigned long long)p->pc);
	}
	s = find_segment(r, p->pc, nopsz, PF_X);
	if (!s)
		return reject(p, "pc-outside-code",
			      "pc 0x%llx is not in the file-backed part of an executable PT_LOAD",
			      (unsigned long long)p->pc);
	p->pc_off = p->pc - s->vaddr + s->offset;
	/* As for the semaphore: the kernel places the probe by the offset. */
	if (r->n->arch == USDT_ARCH_AARCH64 && p->pc_off % 4)
		return reject(p, "pc-misaligned",
			      "pc 0x%llx is at the misaligned file offset 0x%llx",
			      (unsigned long long)p->pc, (unsigned long long)p->pc_off);
	if (pread(r->fd, buf, nopsz, (off_t)p->pc_off) != (ssize_t)nopsz)
		return reject(p, "pc-unreadable", "cannot read the instruction at offset 0x%llx",
			      (unsigned long long)p->pc_off);
	if (memcmp(buf, nop, nopsz) != 0)
		return reject(p, "pc-not-nop",
			      "the byte at pc 0x%llx (offset 0x%llx) is 0x%02x, not a NOP",
			      (unsigned long long)p->pc, (unsigned long long)p->pc_off, buf[0]);
	return 0;
}

static int check_semaphore(struct reader *r, struct usdt_site *p)
{
	const struct segment *s;

	if (!p->sema)
		return 0;
	if (p->sema % 2)
		return reject(p, "semaphore-misaligned", "semaphore 0x%llx is not 2-byte aligned",
			      (unsigned long long)p->sema);
	s = find_segment(r, p->sema, 2, PF_W);
	if (!s)
		return reject(p, "semaphore-outside-data",
			      "semaphore 0x%llx is not in the file-backed part of a writable "
			      "PT_LOAD",
			      (unsigned long long)p->sema);
	p->sema_off = p->sema - s->vaddr + s->offset;
	/*
	 * The kernel is given the offset, and a segment whose p_vaddr and
	 * p_offset differ in parity (a crafted file) turns an aligned address
	 * into an odd offset (found by tests/fuzz/fuzz-notes.c).
	 */
	/* Offset 0 is the ELF header, and tracefs.c reads 0 as "no semaphore". */
	if (p->sema_off == 0)
		return reject(p, "semaphore-outside-data",
			      "semaphore 0x%llx is at file offset 0 (the ELF header)",
			      (unsigned long long)p->sema);
	if (p->sema_off % 2)
		return reject(p, "semaphore-misaligned",
			      "semaphore 0x%llx is at the odd file offset 0x%llx",
			      (unsigned long long)p->sema, (unsigned long long)p->sema_off);
	return 0;
}

/* A NUL-terminated string at *pos within desc[0..size); advances *pos. */
static const char *desc_string(const unsigned char *desc, size_t size, size_t *pos, size_t *len)
{
	const unsigned char *nul;

	if (*pos >= size)
		return NULL;
	nul = memchr(desc + *pos, '\0', size - *pos);
	if (!nul)
		return NULL;
	*len = (size_t)(nul - (desc + *pos));
	*pos += *len + 1;
	return (const char *)desc + (*pos - *len - 1);
}

static int check_name(struct usdt_site *p, const char *what, const char *s, size_t len)
{
	if (len > USDT_NAME_INPUT_MAX)
		return reject(p, "bad-name", "%s name is %zu characters long (at most %d)", what,
			      len, USDT_NAME_INPUT_MAX);
	if (!usdt_is_identifier(s, USDT_NAME_INPUT_MAX))
		return reject(p, "bad-name", "%s name is not a C identifier", what);
	return 0;
}

static int parse_probe(struct reader *r, uint32_t type, const unsigned char *desc, size_t size)
{
	struct usdt_notes *n = r->n;
	size_t asz = n->elf_class / 8, pos = 3 * asz, lprov = 0, lname = 0, largs = 0;
	const char *prov = NULL, *name = NULL, *args = NULL;
	struct usdt_site *p = new_probe(r);

	if (!p)
		return -ENOMEM;
	if (size >= 3 * asz) {
		p->pc = rdaddr(r, desc);
		p->note_base = rdaddr(r, desc + asz);
		p->sema = rdaddr(r, desc + 2 * asz);
		prov = desc_string(desc, size, &pos, &lprov);
		name = prov ? desc_string(desc, size, &pos, &lname) : NULL;
		args = name ? desc_string(desc, size, &pos, &largs) : NULL;
	}
	p->provider = display(prov ? prov : "?", prov ? lprov : 1, USDT_NAME_INPUT_MAX);
	p->name = display(name ? name : "?", name ? lname : 1, USDT_NAME_INPUT_MAX);
	p->args = display(args ? args : "", args ? largs : 0, USDT_ARGS_STR_MAX);
	if (!p->provider || !p->name || !p->args)
		return -ENOMEM;
	if (type != 3)
		reject(p, "bad-note-type", "stapsdt note type %u (only v3, type 3, is read)", type);
	if (!args)
		reject(p, "bad-desc",
		       "desc of %zu bytes does not hold 3 addresses and 3 NUL-terminated strings",
		       size);
	if (p->reject)
		return 0;
	for (; pos < size; pos++) {
		if (desc[pos] != '\0') {
			reject(p, "bad-desc", "%zu bytes after the argument string", size - pos);
			return 0;
		}
	}
	check_name(p, "provider", prov, lprov);
	check_name(p, "probe", name, lname);
	if (largs > USDT_ARGS_STR_MAX)
		reject(p, "args-too-long", "argument string is %zu bytes long (at most %d)", largs,
		       USDT_ARGS_STR_MAX);
	if (p->reject)
		return 0;
	if (usdt_tracefs_name(p->group, "sdt_", prov))
		p->flags |= USDT_SITE_SHORTENED;
	if (usdt_tracefs_name(p->event, "", name))
		p->flags |= USDT_SITE_SHORTENED;

	/* Undo a prelink, unless the base was zeroed (see the head comment). */
	if (r->has_base && p->note_base == 0) {
		p->flags |= USDT_SITE_BASE_ZERO;
		n->flags |= USDT_NOTES_BASE_ZERO;
	} else if (r->has_base) {
		uint64_t delta = n->base_addr - p->note_base;

		p->pc += delta;
		if (p->sema)
			p->sema += delta;
		if (n->elf_class == 32) {
			p->pc &= 0xffffffffu;
			p->sema &= 0xffffffffu;
		}
	}
	check_pc(r, p);
	check_semaphore(r, p);
	if (!p->reject && usdt_parse_args(n->arch, args, p) != 0)
		reject(p, "too-many-args", "more than %d arguments", USDT_SDT_MAX_ARGS);
	if (!p->reject)
		n->naccepted++;
	return 0;
}

static void note_bad_section(struct reader *r, const char *sec, size_t off, const char *why)
{
	struct usdt_site *p = new_probe(r);

	if (!p)
		return;
	p->provider = display("?", 1, DISPLAY_MAX);
	p->name = display("?", 1, DISPLAY_MAX);
	p->args = display("", 0, DISPLAY_MAX);
	reject(p, "bad-note-header", "%s at offset 0x%zx of %s: the rest of it is not read", why,
	       off, sec);
}

static int keep_meta(struct reader *r, const unsigned char *desc, size_t size)
{
	struct usdt_notes *n = r->n;
	struct usdt_meta_note *v;

	if (size > MAX_META_DESC - r->meta_bytes || n->nmeta >= MAX_META_NOTES) {
		n->flags |= USDT_NOTES_META_DROPPED;
		return 0;
	}
	v = realloc(n->meta, (n->nmeta + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n->meta = v;
	v = &n->meta[n->nmeta];
	v->desc = malloc(size ? size : 1);
	if (!v->desc)
		return -ENOMEM;
	memcpy(v->desc, desc, size);
	v->size = size;
	v->big_endian = n->big_endian;
	n->nmeta++;
	r->meta_bytes += size;
	return 0;
}

/* Walks one note section's bytes; a malformed header ends it. */
static int read_note_section(struct reader *r, const char *sec, const unsigned char *buf,
			     size_t size, size_t align)
{
	size_t off = 0;

	while (size - off >= 12) {
		uint64_t namesz = rd32(r, buf + off), descsz = rd32(r, buf + off + 4);
		uint32_t type = rd32(r, buf + off + 8);
		uint64_t name_off = off + 12, desc_off, next;
		int ret;

		if (namesz > size - name_off) {
			note_bad_section(r, sec, off, "note name runs out of the section");
			return 0;
		}
		desc_off = name_off + ((namesz + align - 1) & ~(uint64_t)(align - 1));
		if (desc_off > size || descsz > size - desc_off) {
			note_bad_section(r, sec, off, "note desc runs out of the section");
			return 0;
		}
		next = desc_off + ((descsz + align - 1) & ~(uint64_t)(align - 1));
		if (namesz == 8 && memcmp(buf + name_off, "stapsdt", 8) == 0) {
			if (r->n->nsites >= r->lim->max_notes) {
				r->n->flags |= USDT_NOTES_TOO_MANY;
				return 0;
			}
			ret = parse_probe(r, type, buf + desc_off, (size_t)descsz);
			if (ret)
				return ret;
		} else if (namesz == 8 && memcmp(buf + name_off, "usdtkit", 8) == 0 && type == 1) {
			ret = keep_meta(r, buf + desc_off, (size_t)descsz);
			if (ret)
				return ret;
		}
		if (next >= size)
			break;
		off = (size_t)next;
	}
	return 0;
}

static int read_sections(struct reader *r, char *err, size_t errlen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int ret;

	if (elf_getshdrstrndx(r->elf, &shstrndx) != 0) {
		set_err(err, errlen, "unreadable section headers: %s", elf_errmsg(-1));
		return -EIO;
	}
	/* First .stapsdt.base, which every note's adjustment needs. */
	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(r->elf, shstrndx, sh.sh_name);
		if (nm && strcmp(nm, ".stapsdt.base") == 0 && sh.sh_type == SHT_PROGBITS) {
			r->has_base = true;
			r->n->base_addr = sh.sh_addr;
		}
	}
	if (!r->has_base)
		r->n->flags |= USDT_NOTES_NO_BASE_SECTION;
	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		nm = elf_strptr(r->elf, shstrndx, sh.sh_name);
		if (!nm || (strcmp(nm, ".note.stapsdt") != 0 && strcmp(nm, ".note.usdtkit") != 0))
			continue;
		if (sh.sh_offset > r->n->file_size || sh.sh_size > r->n->file_size - sh.sh_offset) {
			note_bad_section(r, nm, 0, "section extends past the end of the file");
			continue;
		}
		if (sh.sh_size > r->lim->max_section_size) {
			set_err(err, errlen, "%s is %llu bytes (at most %llu read)", nm,
				(unsigned long long)sh.sh_size,
				(unsigned long long)r->lim->max_section_size);
			return -EFBIG;
		}
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size) {
			note_bad_section(r, nm, 0, "section unreadable");
			continue;
		}
		ret = read_note_section(r, nm, d->d_buf, d->d_size, sh.sh_addralign == 8 ? 8 : 4);
		if (ret)
			return ret;
		if (r->n->flags & USDT_NOTES_TOO_MANY)
			break;
	}
	return 0;
}

int usdt_notes_read(int fd, const struct usdt_notes_limits *lim, struct usdt_notes **out, char *err,
		    size_t errlen)
{
	static const struct usdt_notes_limits defaults = {DEFAULT_MAX_FILE, DEFAULT_MAX_SECTION,
							  DEFAULT_MAX_NOTES};
	struct reader r = {.fd = fd, .lim = lim ? lim : &defaults};
	struct stat st;
	int ret;

	*out = NULL;
	if (fstat(fd, &st) != 0) {
		set_err(err, errlen, "fstat: %s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		set_err(err, errlen, "not a regular file");
		return -ENOEXEC;
	}
	if ((uint64_t)st.st_size > r.lim->max_file_size) {
		set_err(err, errlen, "file is %llu bytes (at most %llu read)",
			(unsigned long long)st.st_size, (unsigned long long)r.lim->max_file_size);
		return -EFBIG;
	}
	r.n = calloc(1, sizeof(*r.n));
	if (!r.n)
		return -ENOMEM;
	r.n->dev = st.st_dev;
	r.n->ino = st.st_ino;
	r.n->file_size = (uint64_t)st.st_size;
	elf_version(EV_CURRENT);
	r.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!r.elf) {
		set_err(err, errlen, "libelf: %s", elf_errmsg(-1));
		ret = -ENOEXEC;
		goto fail;
	}
	ret = read_header(&r, err, errlen);
	if (!ret)
		ret = read_segments(&r, err, errlen);
	if (!ret)
		ret = read_sections(&r, err, errlen);
	if (ret == -ENOMEM)
		set_err(err, errlen, "out of memory");
	if (ret)
		goto fail;
	elf_end(r.elf);
	*out = r.n;
	return 0;
fail:
	if (r.elf)
		elf_end(r.elf);
	usdt_notes_free(r.n);
	return ret;
}

void usdt_notes_free(struct usdt_notes *n)
{
	if (!n)
		return;
	/* No array, nothing in it, whatever nprobes says (see below). */
	for (size_t i = 0; n->sites && i < n->nsites; i++) {
		free(n->sites[i].provider);
		free(n->sites[i].name);
		free(n->sites[i].args);
		/*
		 * Bounded by the array too: a result built elsewhere (the daemon's
		 * decoder of its worker's answer) may be freed half-filled, with
		 * a count it refused (tests/fuzz/fuzz-worker.c found one).
		 */
		for (unsigned a = 0; a < n->sites[i].nargs && a < USDT_SDT_MAX_ARGS; a++)
			free(n->sites[i].arg[a].name);
	}
	free(n->sites);
	for (size_t i = 0; i < n->nmeta; i++)
		free(n->meta[i].desc);
	free(n->meta);
	free(n);
}
