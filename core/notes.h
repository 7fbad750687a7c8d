/* SPDX-License-Identifier: MIT */
/*
 * The validating `.note.stapsdt` reader: what probes an ELF file (executable
 * or shared object, 32- or 64-bit, possibly hostile) declares, with every
 * address already converted to the file offset tracefs wants.
 *
 * The file is untrusted input. The reader never trusts a count, an offset or a
 * size it has not checked, returns plain data (no pointers into the file) and
 * reports a probe it refuses as data too (a reason and a detail), so one bad
 * note never hides the others. Whole-file problems (not ELF, truncated, too
 * big, unknown machine) are the only errors. See notes.c for the rules.
 */
#ifndef USDT_NOTES_H
#define USDT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

/* File flags. */
#define USDT_NOTES_NO_BASE_SECTION 0x1u /* no .stapsdt.base: addresses used as noted */
#define USDT_NOTES_BASE_ZERO 0x2u	/* some note had base 0 (see USDT_SITE_BASE_ZERO) */
#define USDT_NOTES_TOO_MANY 0x4u	/* max_notes reached: the rest was not read */
#define USDT_NOTES_META_DROPPED 0x8u	/* a metadata note over the 1 MiB budget, not kept */

struct usdt_notes {
	enum usdt_arch arch;
	unsigned elf_class; /* 32 or 64 */
	bool big_endian;
	unsigned e_type; /* ET_EXEC or ET_DYN */
	dev_t dev;
	ino_t ino;
	uint64_t file_size;
	unsigned flags;
	uint64_t base_addr; /* sh_addr of .stapsdt.base when present */
	size_t nsites;	    /* every stapsdt note, accepted or rejected, in file order */
	size_t naccepted;
	struct usdt_site *sites;
	/*
	 * Extension point for our own provider metadata notes (".note.usdtkit",
	 * owner "usdtkit", type 1: core/METADATA-NOTE.md; one per linked -G
	 * object, so possibly several). The reader only copies each desc, at
	 * most 1 MiB in all, so that format's validating reader (metadata.h:
	 * usdt_meta_apply_hints for the daemon, usdt_meta_find for dtrace -l)
	 * can name arguments and mark strings. A note beyond the budget sets
	 * USDT_NOTES_META_DROPPED.
	 */
	struct usdt_meta_note {
		unsigned char *desc;
		size_t size;
		bool big_endian;
	} * meta;
	size_t nmeta;
};

struct usdt_notes_limits {
	uint64_t max_file_size;	   /* default 1 GiB */
	uint64_t max_section_size; /* of one note section; default 32 MiB */
	size_t max_notes;	   /* default 65,536 */
};

/*
 * Reads the probes of the ELF file open on `fd` (it is only read, with
 * pread: the file may be changed under us, so it is never mapped). `lim` may
 * be NULL for the defaults. Returns 0 and *out (free it with
 * usdt_notes_free), or a negative errno with a message in err: -ENOEXEC not
 * an ELF file we read, -EFBIG over a cap, -EIO truncated or unreadable,
 * -ENOMEM.
 */
int usdt_notes_read(int fd, const struct usdt_notes_limits *lim, struct usdt_notes **out, char *err,
		    size_t errlen);
void usdt_notes_free(struct usdt_notes *n);

/*
 * Names argument `i` (0-based) of an accepted probe and says whether it is a
 * char * to fetch as a string. Returns 0, or -EINVAL when the name is not a C
 * identifier of at most 63 characters, is reserved ("common_*"), or when a
 * string is asked of an immediate; -EOPNOTSUPP for a string whose pointer is
 * a memory operand narrower than 8 bytes (i386: the kernel's nested fetch
 * reads 8 bytes).
 */
int usdt_site_set_arg_hint(struct usdt_site *p, unsigned i, const char *name, bool is_string);
/*
 * One argument of a metadata note, applied to every accepted probe it names
 * (provider:probe): its name and string hint, or failing that the name
 * alone, or the hint alone, rather than nothing.
 */
void usdt_notes_apply_arg_hint(struct usdt_notes *n, const char *provider, const char *probe,
			       unsigned argi, const char *name, bool is_string);

/*
 * A note's argument string, one spec at a time (argspec.c): the start of
 * the next spec at or after `s` and its end in *end, or NULL when none is
 * left. Specs are separated by spaces outside brackets (an aarch64 memory
 * operand holds one: "8@[sp, 16]"). This is the one splitting rule: the
 * daemon, `dtrace -l` and `dtrace -G`'s argument count all use it.
 */
const char *usdt_argspec_next(const char *s, const char **end);
/* How many specs `s` holds, by that rule. */
unsigned usdt_argspec_count(const char *s);

/* An argument at a symbol's address (usdt_argspec_symbol()). */
struct usdt_argsym {
	char sym[256]; /* the symbol */
	int64_t add;   /* added to its address */
	char reg[8];   /* arm64: the register holding the 4 KiB page of sym + add; x86-64: "" */
	bool page;     /* arm64: the address is reg + ((sym + add) & 0xfff) */
};

/*
 * A spec [s, e) whose operand is a symbol's address, which usdt_parse_args()
 * keeps as USDT_ARG_UNSUPPORTED (tracefs has no way to fetch it), into out:
 * gcc's operand for a global with SystemTap's "nor" constraint. On x86-64
 * relative to %rip (`-8@g_var(%rip)`, `4@tab+8(%rip)`: the address is the
 * symbol's plus add); on arm64 a register that adrp loaded with the
 * symbol's page and the low 12 bits of its address (`-8@[x0,
 * #:lo12:g_var]`; the load bias is a whole number of pages, so the low
 * bits are the link-time address's). Returns 0, or -EINVAL for any other
 * operand.
 */
int usdt_argspec_symbol(enum usdt_arch arch, const char *s, const char *e, struct usdt_argsym *out);

/*
 * The value (link-time address) of a defined symbol `name` of the ELF file
 * open on fd: .symtab first (it has the static ones), then .dynsym.
 * Returns 0, or -ENOENT (no such symbol) or -EINVAL (not ELF).
 */
int usdt_elf_symbol(int fd, const char *name, uint64_t *value);

/*
 * The argument-string parser (argspec.c), exposed for tests: parses `s` (a
 * note's argument string) for `arch` into p->arg[] and p->nargs. Returns 0, or
 * -E2BIG for more than USDT_SDT_MAX_ARGS arguments. Unparsable arguments are kept
 * as USDT_ARG_UNSUPPORTED.
 */
int usdt_parse_args(enum usdt_arch arch, const char *s, struct usdt_site *p);

/*
 * The register as the kernel's uprobe fetch arguments name it ("%di" for
 * "edi"), or NULL when it has no such name. *width is the register's own
 * width in bytes (4 for "edi").
 */
const char *usdt_reg_fetch_name(enum usdt_arch arch, const char *reg, unsigned *width);

const char *usdt_arch_name(enum usdt_arch arch);

/*
 * tracefs names: `prefix` + `name` when they fit in 63 characters, else cut to
 * 54 characters + '_' + 8 hex digits of the FNV-1a hash of the whole name (so
 * long names stay distinct and any tool can recompute them). Returns true
 * when shortened. `out` holds USDT_TRACEFS_NAME_MAX + 1 bytes.
 */
bool usdt_tracefs_name(char *out, const char *prefix, const char *name);

#endif /* USDT_NOTES_H */
