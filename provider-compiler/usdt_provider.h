/* SPDX-License-Identifier: MIT */
/*
 * The provider model: what a D provider file declares, as plain data.
 *
 * Data flows one way: the parser (lexer.c, parser.c, types.c) builds a
 * struct usdt_program from one or more .d sources; the emitters (the header
 * emitter for `dtrace -h`, the object builder for `dtrace -G`, the helper's
 * metadata reader and `dtrace -l -v`) read it and never re-parse.
 *
 * Names are kept exactly as written in the .d file (`query__start` keeps its
 * double underscore: that is the name SystemTap-note consumers see).  The
 * DTrace spelling (`query-start`) and the macro spelling (`QUERY_START`) are
 * derived by the helpers declared at the end of this file.
 *
 * Every string in the model is owned by the program and freed by
 * usdt_program_free().
 */
#ifndef USDT_PROVIDER_H
#define USDT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

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
	USDT_T_STRING,  /* char *, const char *, D's string */
	USDT_T_FLOAT,   /* float, double */
	USDT_T_OTHER,   /* struct/union by value, arrays, unknown: never checked */
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
	unsigned size;  /* bytes on the LP64 target; 0 when unknown */
	bool is_signed; /* integers only */
};

/* Where something was declared: for diagnostics that point back into the .d. */
struct usdt_loc {
	const char *file; /* owned by the program (or static) */
	unsigned line;    /* 1-based */
	unsigned col;     /* 1-based, in bytes */
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
	void *priv;                      /* parser-private: type table, sources */
};

/* Limits DTrace imposes and we keep. */
#define USDT_MAX_ARGS 255     /* per probe, native or translated */
#define USDT_MAX_NAME 63      /* provider/probe name length; tracefs caps at 63 */
#define USDT_SDT_MAX_ARGS 12  /* what <sys/sdt.h> sites can carry */

void usdt_program_init(struct usdt_program *prog);
void usdt_program_free(struct usdt_program *prog);

/*
 * Parse one D source into prog. `file` names the input for diagnostics; the
 * text may contain cpp line markers (`# 12 "x.d"`), which re-point later
 * diagnostics. Calling it again with another source adds to the same program:
 * a provider named again gains the new probes; a probe declared again (in
 * another `provider { }` block) with the same signature is accepted, with
 * another signature is an error, and twice in one block is always an error.
 *
 * Returns 0, or -1 after reporting every error found to diag. On error the
 * program may hold part of the input and must not be emitted.
 */
int usdt_parse(struct usdt_program *prog, const char *file, const char *text, size_t len,
	       struct usdt_diag *diag);

/* A directive that only the C preprocessor can give its meaning. */
struct usdt_cpp_need {
	unsigned line, col;    /* physical position of the directive's name */
	const char *directive; /* "ifdef", "include", "define"... (static) */
};

/*
 * Whether a D source needs the C preprocessor (lexer.c): true, with the first
 * such line in *need, when it has a conditional (#if, #ifdef, #ifndef, #elif,
 * #elifdef, #elifndef, #else, #endif), an inclusion (#include, #include_next,
 * #import), or a #define whose macro is used after it outside directives.
 * Line markers, #line, #pragma, unused #defines, #undef and `#` comment
 * lines do not count: usdt_parse() reads them alone. Reports nothing.
 */
bool usdt_needs_cpp(const char *text, size_t len, struct usdt_cpp_need *need);

/* "query__start" -> "query-start" (DTrace's probe name). Caller frees. */
char *usdt_probe_dtrace_name(const char *name);
/* ("pg", "query__start") -> "PG_QUERY_START" (header macro). Caller frees. */
char *usdt_probe_macro_name(const char *provider, const char *probe);
/* ("pg", "query__start") -> "pg_query__start_semaphore" (SystemTap's name). Caller frees. */
char *usdt_probe_semaphore_name(const char *provider, const char *probe);

const char *usdt_stability_name(enum usdt_stability s);
const char *usdt_depclass_name(enum usdt_depclass c);

#endif /* USDT_PROVIDER_H */
