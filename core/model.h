/* SPDX-License-Identifier: MIT */
/*
 * The probe model: the one description of providers, probes, sites and
 * arguments that every stage of usdtkit speaks.
 *
 * Two levels, named for what they are:
 *
 *  - A *declaration* is what a D provider file says: struct usdt_program,
 *    usdt_provider, usdt_probe (a probe as declared), usdt_arg (a declared
 *    argument with its type). The provider compiler builds it; `dtrace -h`
 *    emits it as a header, `dtrace -G` checks sites against it and writes it
 *    into the metadata note (metadata.h), from which the daemon and
 *    `dtrace -l -v` read it back.
 *
 *  - A *site* is what a `.note.stapsdt` note in a linked file says: one
 *    place in the code where a probe fires (struct usdt_site), with an
 *    argument spec per argument (struct usdt_argspec: "-4@%edi", where the
 *    value is and how wide). The note reader (notes.h) builds sites from
 *    untrusted files; the daemon registers them with the kernel and
 *    `dtrace -l` lists them.
 *
 * A declared probe has any number of sites (one per expansion of its macro),
 * and a site names its probe by (provider, name), exactly as written in the
 * .d file (`query__start` keeps its double underscore: that is the name
 * SystemTap-note consumers see). The DTrace spelling (`query-start`) is
 * derived by usdt_probe_dtrace_name().
 *
 * Every string of a declaration is owned by its program and freed by
 * usdt_program_free(); a site's strings by the usdt_notes it belongs to.
 */
#ifndef USDT_MODEL_H
#define USDT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Declarations: what a .d file says ---- */

/* DTrace stability levels, in DTrace's order (lowest first). */
enum usdt_stability {
	USDT_STAB_INTERNAL,
	USDT_STAB_PRIVATE,
	USDT_STAB_OBSOLETE,
	USDT_STAB_EXTERNAL,
	USDT_STAB_UNSTABLE,
	USDT_STAB_EVOLVING,
	USDT_STAB_STABLE,
	USDT_STAB_STANDARD,
};

/* DTrace dependency classes. */
enum usdt_depclass {
	USDT_CLASS_UNKNOWN,
	USDT_CLASS_CPU,
	USDT_CLASS_PLATFORM,
	USDT_CLASS_GROUP,
	USDT_CLASS_ISA,
	USDT_CLASS_COMMON,
};

struct usdt_attr {
	enum usdt_stability name_stab;
	enum usdt_stability data_stab;
	enum usdt_depclass dep_class;
};

/* The five attribute sets of `#pragma D attributes ... provider P <which>`. */
enum usdt_attr_which {
	USDT_ATTR_PROVIDER,
	USDT_ATTR_MODULE,
	USDT_ATTR_FUNCTION,
	USDT_ATTR_NAME,
	USDT_ATTR_ARGS,
	USDT_ATTR_COUNT
};

/* What kind of value an argument carries, for consumers that fetch it. */
enum usdt_type_class {
	USDT_T_INTEGER, /* any integer, enum, bool */
	USDT_T_POINTER, /* pointer to anything except char */
	USDT_T_STRING,	/* char *, const char *, D's string */
	USDT_T_FLOAT,	/* float, double */
	USDT_T_OTHER,	/* struct/union by value, arrays, unknown: never checked */
};

struct usdt_type {
	/* As written in the .d, whitespace normalised: "const char *", "uint64_t". */
	char *spelling;
	/*
	 * The same type spelled so that a C or C++ compiler knows it after
	 * <stddef.h>, <stdint.h> and <sys/types.h> (typedefs and structs declared
	 * only in the .d resolved; D's `string` -> "char *"), or NULL when it
	 * cannot be expressed safely. The header emitter leaves a NULL-typed
	 * argument unchecked.
	 */
	char *c_spelling;
	enum usdt_type_class cls;
	unsigned size;	/* bytes on the LP64 target; 0 when unknown */
	bool is_signed; /* integers only */
};

/* Where something was declared: for diagnostics that point back into the .d. */
struct usdt_loc {
	const char *file; /* owned by the program (or static) */
	unsigned line;	  /* 1-based */
	unsigned col;	  /* 1-based, in bytes */
};

struct usdt_arg {
	char *name; /* NULL when the parameter is unnamed */
	struct usdt_type type;
	struct usdt_loc loc;
};

struct usdt_probe {
	char *name; /* as written: "query__start" */
	struct usdt_loc loc;
	size_t nargs; /* native arguments (what the site passes) */
	struct usdt_arg *args;
	/*
	 * Translated arguments `: (...)`. When the probe has no translated list,
	 * nxargs == nargs, xargs describes the same types and argmap[i] == i.
	 * Otherwise xargs[i] is fed from native argument argmap[i] (mapped by
	 * name, names may repeat).
	 */
	size_t nxargs;
	struct usdt_arg *xargs;
	unsigned char *argmap;
};

struct usdt_provider {
	char *name;
	struct usdt_loc loc;
	struct usdt_attr attr[USDT_ATTR_COUNT]; /* default: Private/Private/Unknown */
	size_t nprobes;
	struct usdt_probe *probes; /* in declaration order */
};

struct usdt_program {
	size_t nproviders;
	struct usdt_provider *providers; /* in declaration order */
	void *priv;			 /* the parser's: type table, sources */
	void (*priv_free)(void *priv);	 /* how usdt_program_free() frees priv */
};

/* Limits DTrace imposes and we keep. */
#define USDT_MAX_ARGS 255    /* per probe, native or translated */
#define USDT_MAX_NAME 63     /* provider/probe name length; tracefs caps at 63 */
#define USDT_SDT_MAX_ARGS 12 /* what <sys/sdt.h> sites can carry */

void usdt_program_init(struct usdt_program *prog);
/* Frees every declaration, then the parser's data (locations point into it). */
void usdt_program_free(struct usdt_program *prog);

/* "query__start" -> "query-start" (DTrace's probe name). Caller frees; NULL when out of memory. */
char *usdt_probe_dtrace_name(const char *name);

const char *usdt_stability_name(enum usdt_stability s);
const char *usdt_depclass_name(enum usdt_depclass c);

/* ---- Sites: what a .note.stapsdt note in a linked file says ---- */

/* tracefs group and event names: C identifiers of at most 63 characters. */
#define USDT_TRACEFS_NAME_MAX 63
/* A provider or probe name in a note longer than this is rejected, not shortened. */
#define USDT_NAME_INPUT_MAX 255
/* The longest argument string of a note that is read. */
#define USDT_ARGS_STR_MAX 1024

enum usdt_arch {
	USDT_ARCH_X86_64,
	USDT_ARCH_I386,
	USDT_ARCH_AARCH64,
};

enum usdt_argspec_kind {
	USDT_ARG_UNSUPPORTED, /* parsed no further; the site registers without it */
	USDT_ARG_REG,	      /* the value is in a register */
	USDT_ARG_IMM,	      /* a constant */
	USDT_ARG_MEM,	      /* the value is in memory at register + displacement */
};

/*
 * One argument spec of a site ("-4@%edi", "8@[sp, 16]"): where the value
 * is and how wide. The note says no more; what the metadata note adds (the
 * declared argument's name, whether it is a string) is kept as hints.
 */
struct usdt_argspec {
	enum usdt_argspec_kind kind;
	unsigned size; /* 1, 2, 4 or 8 bytes (0 when the size itself was bad) */
	bool is_signed;
	char reg[8];	 /* as written, without '%': "edi", "r12", "x0", "sp" */
	int64_t value;	 /* the immediate, or the memory operand's displacement */
	const char *why; /* USDT_ARG_UNSUPPORTED: a static explanation */
	/* Hints from the metadata note's declaration (usdt_site_set_arg_hint). */
	char *name;	/* NULL -> "argN"; freed by usdt_notes_free() */
	bool is_string; /* a char *: fetched as a user string */
};

/* Site flags. */
#define USDT_SITE_SHORTENED 0x1u /* group or event name shortened to fit tracefs */
#define USDT_SITE_BASE_ZERO 0x2u /* note base 0 while .stapsdt.base exists: not adjusted */

/* One probe site: a `.note.stapsdt` note, checked, its addresses as file offsets. */
struct usdt_site {
	enum usdt_arch arch; /* the file's, here too so a site stands alone */
	/*
	 * The note's strings. Exact for an accepted site (its names are
	 * identifiers); for a rejected one, printable copies (bytes outside
	 * ASCII escaped as \xNN, names cut at 255 bytes) for messages.
	 */
	char *provider, *name, *args;
	char group[USDT_TRACEFS_NAME_MAX + 1]; /* "sdt_<provider>" */
	char event[USDT_TRACEFS_NAME_MAX + 1]; /* "<name>" */
	uint64_t pc, pc_off;	 /* link-time address (base-adjusted) and its file offset */
	uint64_t sema, sema_off; /* same for the semaphore; 0, 0 when there is none */
	uint64_t note_base;	 /* the note's own view of _.stapsdt.base */
	unsigned flags;
	unsigned nargs;
	struct usdt_argspec arg[USDT_SDT_MAX_ARGS];
	/* NULL when accepted; else a short static reason class ("pc-not-nop"). */
	const char *reject;
	char detail[160]; /* what exactly was wrong, for the daemon's log */
};

#endif /* USDT_MODEL_H */
