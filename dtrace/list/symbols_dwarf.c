/* SPDX-License-Identifier: MIT */
/*
 * DWARF names for probe sites (symbols.c's second and third steps; its head
 * comment is the theory): the inlined function and the subprogram that hold
 * each site, from one walk of the DIE tree that skips subtrees whose ranges
 * hold no pc of interest. libdwarf is not hardened against malformed input,
 * and the files are anyone's, so the walk runs in a child process with CPU,
 * time and memory limits that hands back only (index, depth, name) records,
 * checked before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols_dwarf.h"

#define MAX_DIE_DEPTH 64
#define MAX_ORIGIN_HOPS 8
#define CHILD_CPU_SECONDS 20
#define CHILD_WALL_SECONDS 60
#define CHILD_ADDRESS_SPACE (4ull << 30)
#define MAX_NAME 4096

/*
 * AddressSanitizer reserves terabytes of shadow at start: under an
 * address-space limit its every later allocation fails, so a sanitizer build
 * (scripts/test.sh's second run) walks without one; the CPU and wall limits
 * stay. gcc says so with __SANITIZE_ADDRESS__, clang with __has_feature.
 */
#if defined(__SANITIZE_ADDRESS__)
#define USDT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USDT_ASAN 1
#endif
#endif

/* ---- DWARF: inlined sites ---- */

#if USDTKIT_HAVE_LIBDWARF

struct range {
	uint64_t lo, hi;
};

struct ranges {
	struct range v[64];
	size_t n;
	bool overflow; /* more than fit: treat as containing everything */
};

static void add_range(struct ranges *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	if (r->n == sizeof(r->v) / sizeof(r->v[0])) {
		r->overflow = true;
		return;
	}
	r->v[r->n].lo = lo;
	r->v[r->n++].hi = hi;
}

static void rnglist_ranges(Dwarf_Attribute attr, Dwarf_Half form, struct ranges *r)
{
	Dwarf_Rnglists_Head head = NULL;
	Dwarf_Unsigned val = 0, count = 0, off = 0, i;
	Dwarf_Off ref = 0;
	Dwarf_Error e = NULL;

	if (form == DW_FORM_rnglistx) {
		if (dwarf_formudata(attr, &val, &e) != DW_DLV_OK)
			return;
	} else if (dwarf_global_formref(attr, &ref, &e) == DW_DLV_OK) {
		val = ref;
	} else if (dwarf_formudata(attr, &val, &e) != DW_DLV_OK) {
		return;
	}
	if (dwarf_rnglists_get_rle_head(attr, form, val, &head, &count, &off, &e) != DW_DLV_OK)
		return;
	for (i = 0; i < count; i++) {
		Dwarf_Unsigned raw1, raw2, c1, c2;
		Dwarf_Bool unavailable = 0;
		unsigned len, code;

		if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2,
						      &unavailable, &c1, &c2, &e) != DW_DLV_OK)
			break;
		if (unavailable)
			continue;
		switch (code) {
		case DW_RLE_startx_endx:
		case DW_RLE_startx_length:
		case DW_RLE_offset_pair:
		case DW_RLE_start_end:
		case DW_RLE_start_length:
			add_range(r, c1, c2);
			break;
		default:
			break;
		}
	}
	dwarf_dealloc_rnglists_head(head);
}

static void debug_ranges(struct dw_walk *w, Dwarf_Die die, Dwarf_Attribute attr, struct ranges *r)
{
	Dwarf_Ranges *rv = NULL;
	Dwarf_Signed cnt = 0, i;
	Dwarf_Unsigned bytes = 0, val = 0;
	Dwarf_Off ref = 0, real = 0;
	Dwarf_Addr base = w->cu_base;
	Dwarf_Error e = NULL;

	if (dwarf_global_formref(attr, &ref, &e) == DW_DLV_OK)
		val = ref;
	else if (dwarf_formudata(attr, &val, &e) != DW_DLV_OK)
		return;
	if (dwarf_get_ranges_b(w->dbg, val, die, &real, &rv, &cnt, &bytes, &e) != DW_DLV_OK)
		return;
	for (i = 0; i < cnt; i++) {
		if (rv[i].dwr_type == DW_RANGES_END)
			break;
		if (rv[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
			base = rv[i].dwr_addr2;
		else
			add_range(r, base + rv[i].dwr_addr1, base + rv[i].dwr_addr2);
	}
	dwarf_ranges_dealloc(w->dbg, rv, cnt);
}

/* The code ranges of a DIE. Returns false when it has none (no pc attributes). */
static bool die_ranges(struct dw_walk *w, Dwarf_Die die, struct ranges *r)
{
	Dwarf_Addr lo, hi;
	Dwarf_Half form = 0, version = 2, offsize = 4;
	enum Dwarf_Form_Class cls;
	Dwarf_Attribute attr = NULL;
	Dwarf_Error e = NULL;

	r->n = 0;
	r->overflow = false;
	if (dwarf_lowpc(die, &lo, &e) == DW_DLV_OK &&
	    dwarf_highpc_b(die, &hi, &form, &cls, &e) == DW_DLV_OK) {
		if (cls == DW_FORM_CLASS_CONSTANT)
			hi += lo;
		add_range(r, lo, hi);
		return true;
	}
	if (dwarf_attr(die, DW_AT_ranges, &attr, &e) != DW_DLV_OK)
		return false;
	if (dwarf_whatform(attr, &form, &e) == DW_DLV_OK) {
		dwarf_get_version_of_die(die, &version, &offsize);
		if (version >= 5)
			rnglist_ranges(attr, form, r);
		else
			debug_ranges(w, die, attr, r);
	}
	dwarf_dealloc_attribute(attr);
	/* Ranges we could not read: look inside, but name nothing by them. */
	if (r->n == 0)
		r->overflow = true;
	return true;
}

/* First index of a pc >= lo. */
static size_t lower_bound(const struct dw_walk *w, uint64_t lo)
{
	size_t a = 0, b = w->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (w->pcs[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static bool ranges_hold_pc(const struct dw_walk *w, const struct ranges *r)
{
	size_t i, k;

	if (r->overflow)
		return true;
	for (i = 0; i < r->n; i++) {
		k = lower_bound(w, r->v[i].lo);
		if (k < w->n && w->pcs[k] < r->v[i].hi)
			return true;
	}
	return false;
}

/*
 * The name of an inlined subroutine or of a function's code: from its
 * abstract origin (and that one's specification, for a C++ member), the
 * linkage name when there is one, as the symbol table would name it, else
 * DW_AT_name.
 */
static char *die_name(struct dw_walk *w, Dwarf_Die die)
{
	Dwarf_Die cur = die, next;
	char *name = NULL;
	int hops;

	for (hops = 0; hops < MAX_ORIGIN_HOPS; hops++) {
		static const Dwarf_Half refs[] = {DW_AT_abstract_origin, DW_AT_specification};
		Dwarf_Error e = NULL;
		Dwarf_Attribute attr;
		Dwarf_Off off;
		char *s = NULL;
		size_t k;

		if ((dwarf_die_text(cur, DW_AT_linkage_name, &s, &e) == DW_DLV_OK ||
		     dwarf_die_text(cur, DW_AT_MIPS_linkage_name, &s, &e) == DW_DLV_OK ||
		     dwarf_diename(cur, &s, &e) == DW_DLV_OK) &&
		    s && *s) {
			name = strdup(s);
			if (!name)
				w->nomem = true;
			break;
		}
		next = NULL;
		for (k = 0; k < sizeof(refs) / sizeof(refs[0]) && !next; k++) {
			if (dwarf_attr(cur, refs[k], &attr, &e) != DW_DLV_OK)
				continue;
			if (dwarf_global_formref(attr, &off, &e) != DW_DLV_OK ||
			    dwarf_offdie_b(w->dbg, off, 1, &next, &e) != DW_DLV_OK)
				next = NULL;
			dwarf_dealloc_attribute(attr);
		}
		if (cur != die)
			dwarf_dealloc_die(cur);
		if (!next)
			return NULL;
		cur = next;
	}
	if (cur != die)
		dwarf_dealloc_die(cur);
	return name;
}

static void name_sites(struct dw_walk *w, Dwarf_Die die, const struct ranges *r, unsigned depth)
{
	char *name = NULL;
	size_t i, k;

	for (i = 0; i < r->n; i++) {
		for (k = lower_bound(w, r->v[i].lo); k < w->n && w->pcs[k] < r->v[i].hi; k++) {
			if (w->depth[k] >= depth)
				continue;
			if (!name && !(name = die_name(w, die)))
				return;
			free(w->names[k]);
			w->names[k] = strdup(name);
			if (!w->names[k])
				w->nomem = true;
			w->depth[k] = depth;
		}
	}
	free(name);
}

/* The subprogram's name for the sites in its ranges; an inner one (a nested function) overrides. */
static void name_function(struct dw_walk *w, Dwarf_Die die, const struct ranges *r)
{
	char *name = NULL;
	size_t i, k;

	for (i = 0; i < r->n; i++) {
		for (k = lower_bound(w, r->v[i].lo); k < w->n && w->pcs[k] < r->v[i].hi; k++) {
			if (!name && !(name = die_name(w, die)))
				return;
			free(w->fnames[k]);
			w->fnames[k] = strdup(name);
			if (!w->fnames[k])
				w->nomem = true;
		}
	}
	free(name);
}

/* Walks die and its siblings; depth counts the inlined subroutines around them. */
static void walk(struct dw_walk *w, Dwarf_Die die, unsigned depth, int level)
{
	Dwarf_Die cur = die, child, sib;

	while (cur) {
		Dwarf_Error e = NULL;
		Dwarf_Half tag = 0;
		bool descend = false;
		unsigned inner = depth;
		struct ranges r;

		dwarf_tag(cur, &tag, &e);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
			/* A subprogram without code (an abstract instance) holds no site. */
			if (!die_ranges(w, cur, &r)) {
				descend = tag == DW_TAG_lexical_block;
				break;
			}
			if (!ranges_hold_pc(w, &r))
				break;
			descend = true;
			if (tag == DW_TAG_inlined_subroutine && !r.overflow) {
				inner = depth + 1;
				name_sites(w, cur, &r, inner);
			} else if (tag == DW_TAG_subprogram && !r.overflow) {
				name_function(w, cur, &r);
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			descend = true;
			break;
		default:
			break;
		}
		if (descend && level < MAX_DIE_DEPTH && dwarf_child(cur, &child, &e) == DW_DLV_OK)
			walk(w, child, inner, level + 1);
		sib = NULL;
		if (dwarf_siblingof_b(w->dbg, cur, 1, &sib, &e) != DW_DLV_OK)
			sib = NULL;
		dwarf_dealloc_die(cur);
		cur = sib;
	}
}

static void dwarf_errhand(Dwarf_Error e, Dwarf_Ptr arg)
{
	(void)e;
	(void)arg;
}

static void dwarf_names(int fd, struct dw_walk *w)
{
	Dwarf_Error e = NULL;

	if (dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, dwarf_errhand, NULL, &w->dbg, &e) !=
	    DW_DLV_OK)
		return; /* no DWARF: the symbol names stand */
	for (;;) {
		Dwarf_Unsigned hdr_len, typeoff, next_off;
		Dwarf_Half version, addr_size, off_size, ext_size, cu_type;
		Dwarf_Off abbrev;
		Dwarf_Sig8 sig;
		Dwarf_Die cu = NULL, child;
		struct ranges r;
		bool has;

		if (dwarf_next_cu_header_d(w->dbg, 1, &hdr_len, &version, &abbrev, &addr_size,
					   &off_size, &ext_size, &sig, &typeoff, &next_off,
					   &cu_type, &e) != DW_DLV_OK)
			break;
		if (dwarf_siblingof_b(w->dbg, NULL, 1, &cu, &e) != DW_DLV_OK)
			continue;
		w->cu_base = 0;
		dwarf_lowpc(cu, &w->cu_base, &e);
		has = die_ranges(w, cu, &r);
		if ((!has || ranges_hold_pc(w, &r)) && dwarf_child(cu, &child, &e) == DW_DLV_OK)
			walk(w, child, 0, 1);
		dwarf_dealloc_die(cu);
	}
	dwarf_finish(w->dbg, &e);
}

/* ---- the DWARF walk in a child ---- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* One record: {index, depth, length} and the name; depth 0 for the subprogram. */
static int send_record(int out, size_t i, unsigned depth, const char *name)
{
	uint32_t rec[3];

	rec[0] = (uint32_t)i;
	rec[1] = depth;
	rec[2] = (uint32_t)strnlen(name, MAX_NAME);
	return write_all(out, rec, sizeof(rec)) || write_all(out, name, rec[2]) ? -1 : 0;
}

/* In the child: walk, then send the names found for each site. */
_Noreturn static void child_walk(int fd, int out, struct dw_walk *w)
{
	struct rlimit cpu = {CHILD_CPU_SECONDS, CHILD_CPU_SECONDS};
	struct rlimit as = {CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE};
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	size_t i;

	/* libc's own abort messages are the parent's to summarise. */
	if (null >= 0)
		dup2(null, STDERR_FILENO);

	setrlimit(RLIMIT_CPU, &cpu);
#ifndef USDT_ASAN
	setrlimit(RLIMIT_AS, &as);
#else
	(void)as;
#endif
	alarm(CHILD_WALL_SECONDS);
	dwarf_names(fd, w);
	for (i = 0; i < w->n; i++)
		if ((w->fnames[i] && send_record(out, i, 0, w->fnames[i])) ||
		    (w->names[i] && send_record(out, i, w->depth[i], w->names[i])))
			_exit(1);
	_exit(w->nomem ? 2 : 0);
}

/* Reads the child's records into w->names; false when they are malformed. */
static bool read_records(int in, struct dw_walk *w)
{
	for (;;) {
		uint32_t rec[3];
		size_t got = 0;
		char *name;

		while (got < sizeof(rec)) {
			ssize_t r = read(in, (char *)rec + got, sizeof(rec) - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return r == 0 && got == 0; /* a clean end between records */
			got += (size_t)r;
		}
		if (rec[0] >= w->n || rec[2] == 0 || rec[2] >= MAX_NAME)
			return false;
		name = malloc(rec[2] + 1);
		if (!name) {
			w->nomem = true;
			return false;
		}
		for (got = 0; got < rec[2];) {
			ssize_t r = read(in, name + got, rec[2] - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				free(name);
				return false;
			}
			got += (size_t)r;
		}
		name[rec[2]] = '\0';
		if (rec[1] == 0) {
			free(w->fnames[rec[0]]);
			w->fnames[rec[0]] = name;
			continue;
		}
		free(w->names[rec[0]]);
		w->names[rec[0]] = name;
		w->depth[rec[0]] = rec[1];
	}
}

/*
 * Debian 12's libdwarf (20210528) goes on after a .debug_rnglists or
 * .debug_loclists unit header it rejects, using the context it has just
 * freed, and frees it again (dwarf_rnglists.c, internal_load_*_contexts;
 * fixed upstream later). glibc then aborts the child, and AddressSanitizer
 * reports a double free. So the unit headers are checked here first, a little
 * more strictly than libdwarf checks them (length within the section and
 * holding the header, version 5, address size 2, 4 or 8), and a file that
 * fails is named from its symbol table without calling libdwarf at all.
 * Compressed sections are left to the child (libdwarf inflates them).
 */
static uint64_t get_uint(const unsigned char *p, unsigned len, bool msb)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < len; i++)
		v |= (uint64_t)p[msb ? len - 1 - i : i] << (8 * i);
	return v;
}

static bool lists_headers_ok(const unsigned char *d, uint64_t size, bool msb)
{
	uint64_t off = 0;

	while (off < size) {
		uint64_t len, hdr = 4, left = size - off;

		if (left < 4)
			return false;
		len = get_uint(d + off, 4, msb);
		if (len == 0xffffffffu) {
			if (left < 12)
				return false;
			len = get_uint(d + off + 4, 8, msb);
			hdr = 12;
		} else if (len >= 0xfffffff0u) {
			return false; /* reserved */
		}
		/* version (2), address size (1), segment selector size (1), count (4) */
		if (len < 8 || len > left - hdr)
			return false;
		if (get_uint(d + off + hdr, 2, msb) != 5)
			return false;
		switch (d[off + hdr + 2]) {
		case 2:
		case 4:
		case 8:
			break;
		default:
			return false;
		}
		off += hdr + len;
	}
	return true;
}

/*
 * NULL, or why libdwarf must not see this file; *has_info: it has a
 * .debug_info section (none: no DWARF to read, and no child to fork: a
 * stripped program, as most packaged ones are, is named from its symbols
 * without the fork, which a new file's hold under a watching dtrace pays).
 */
static const char *dwarf_lists_check(int fd, bool *has_info)
{
	const char *why = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf *elf;

	*has_info = true; /* unless the section headers say otherwise */
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	*has_info = false;
	while (!why && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			*has_info = true;
		if (sh.sh_type != SHT_PROGBITS || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		if (!name || (strcmp(name, ".debug_rnglists") && strcmp(name, ".debug_loclists")))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		if (!lists_headers_ok(data->d_buf, data->d_size,
				      eh.e_ident[EI_DATA] == ELFDATA2MSB))
			why = !strcmp(name, ".debug_rnglists")
				  ? "a malformed .debug_rnglists unit header"
				  : "a malformed .debug_loclists unit header";
	}
out:
	if (elf)
		elf_end(elf);
	return why;
}

/* Fills w->names from DWARF through a child; NULL, or why nothing came of it. */
const char *usdt_sym_dwarf_names(int fd, struct dw_walk *w)
{
	bool ok, has_info;
	const char *why = dwarf_lists_check(fd, &has_info);
	int p[2], status = 0;
	pid_t pid;
	size_t i;

	if (why || !has_info)
		return why;
	if (pipe2(p, O_CLOEXEC))
		return "cannot create a pipe for the DWARF reader";
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return "cannot fork the DWARF reader";
	}
	if (pid == 0) {
		close(p[0]);
		child_walk(fd, p[1], w);
	}
	close(p[1]);
	ok = read_records(p[0], w);
	close(p[0]);
	if (!ok)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		why = "the DWARF reader was killed by a signal (malformed debug information?)";
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !ok)
		why = w->nomem ? NULL : "the DWARF reader failed";
	if (why || w->nomem)
		for (i = 0; i < w->n; i++) {
			free(w->names[i]);
			free(w->fnames[i]);
			w->names[i] = w->fnames[i] = NULL;
		}
	return why;
}

#else /* !USDTKIT_HAVE_LIBDWARF */

/* Built with -Dlibdwarf=disabled: every site is named from the symbol table. */
const char *usdt_sym_dwarf_names(int fd, struct dw_walk *w)
{
	(void)fd;
	(void)w;
	return NULL;
}

#endif /* USDTKIT_HAVE_LIBDWARF */
