/* SPDX-License-Identifier: MIT */
/*
 * The D front end's internal interfaces: lexer (lexer.c), type table
 * (types.c) and the state the parser keeps between usdt_parse() calls
 * (parser.c). Nothing outside provider-compiler/ includes this file; the
 * rest of usdtkit sees only usdt_provider.h.
 */
#ifndef USDT_FRONT_H
#define USDT_FRONT_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"
#include "usdt_provider.h"

/* ---- strings ---------------------------------------------------------- */

char *fe_strndup(const char *s, size_t n);

/*
 * The next character of a probe's header macro name, advancing *p: upper
 * case, each "__" folded into "_"; 0 at the end. The one spelling of that
 * rule: usdt_probe_macro_name() builds names with it and the parser compares
 * and hashes them with it.
 */
int fe_macro_char(const char **p);

/* ---- lexer ------------------------------------------------------------ */

enum tok_kind {
	T_EOF,
	T_IDENT,
	T_NUMBER,
	T_STRING, /* "..." */
	T_CHAR,	  /* '...' */
	T_PUNCT,  /* one character, or "..." */
	T_HASH,	  /* '#' opening a preprocessor directive line */
	T_EOL,	  /* the end of a directive line */
};

struct token {
	enum tok_kind kind;
	const char *start;
	size_t len;
	struct usdt_loc loc;   /* logical position, after line markers */
	const char *line_text; /* start of the physical source line */
	bool sys;	       /* from a system header (line marker flag 3) */
};

struct lexer {
	const char *p, *end;
	const char *line_start;
	unsigned pline;	  /* physical line of *p, 1-based */
	long line_delta;  /* logical line = physical line + line_delta */
	const char *file; /* logical file name (interned) */
	long next_delta;  /* a line marker, applied at the next newline */
	const char *next_file;
	bool sys, next_sys; /* the logical file is a system header */
	bool marker_pending;
	bool in_directive;	/* between T_HASH and T_EOL */
	bool at_bol;		/* nothing but blanks since the line began */
	unsigned errors;	/* reported by the lexer */
	struct usdt_diag *diag; /* NULL: lexical errors are not reported */
};

void lex_init(struct lexer *lx, const char *file, const char *text, size_t len,
	      struct usdt_diag *diag);
void lex_next(struct lexer *lx, struct token *t);
/* Discard the rest of a directive line (up to, not including, its newline). */
void lex_skip_line(struct lexer *lx);
/*
 * A line marker: the line after the current one is `line` of `file`, which is
 * a system header when `sys` (the marker's flag 3).
 */
void lex_set_next_line(struct lexer *lx, unsigned long line, const char *file, bool sys);

bool tok_is(const struct token *t, const char *s);
bool tok_punct(const struct token *t, char c);

/* ---- types ------------------------------------------------------------ */

enum base_kind {
	B_VOID,
	B_INT,
	B_FLOAT,
	B_STRUCT,
	B_UNION,
	B_ENUM,
	B_STRING, /* D's string */
	B_FUNC,	  /* a function type: only ever pointed to */
	B_UNKNOWN /* after an error: accepted silently */
};

struct tag;

/*
 * A resolved type during parsing: a base, and pointer levels on top of it.
 * `c_base` is what C calls the base (NULL when C cannot name it safely).
 */
struct ctype {
	enum base_kind kind;
	const char *c_base; /* static or owned by the type table */
	unsigned size;	    /* of the base */
	unsigned align;
	bool is_signed;
	bool plain_char; /* "char" with no signed/unsigned: char * is a string */
	bool base_const; /* const on the base ("const char *") */
	bool base_volatile;
	bool no_c;	    /* no safe C spelling (multi-dimensional array parameter) */
	unsigned ptr;	    /* pointer levels */
	unsigned ptr_const; /* bit i: level i+1 of pointers is const */
	unsigned array;	    /* elements of an array typedef (then no C spelling); 0: not one */
	struct tag *tag;    /* struct/union/enum */
};

/* A struct, union or enum tag known from the .d. */
struct tag {
	char *name; /* NULL for an anonymous one */
	enum base_kind kind;
	bool defined;
	unsigned size, align; /* 0 when unknown */
	struct usdt_loc loc;
};

struct typedef_ent {
	char *name;
	struct ctype type;
	char *spelling; /* the type as written, for diagnostics */
	struct usdt_loc loc;
};

struct typetab {
	struct typedef_ent *defs;
	size_t ndefs, capdefs;
	struct tag **tags;
	size_t ntags, captags;
};

void types_free(struct typetab *tt);
/* A typedef name (declared in the .d, or well known), or NULL. */
const struct ctype *types_lookup(const struct typetab *tt, const char *name, size_t len);
const struct typedef_ent *types_user_typedef(const struct typetab *tt, const char *name,
					     size_t len);
int types_add_typedef(struct typetab *tt, const char *name, size_t len, const struct ctype *t,
		      const char *spelling, struct usdt_loc loc);
/* Finds or creates a tag of that kind; name NULL makes an anonymous one. */
struct tag *types_tag(struct typetab *tt, enum base_kind kind, const char *name, size_t len);
struct tag *types_find_tag(const struct typetab *tt, const char *name, size_t len);

/* The C keyword specifiers of one declaration, counted. */
struct int_spec {
	unsigned n_char, n_short, n_int, n_long, n_signed, n_unsigned;
	unsigned n_float, n_double, n_void, n_bool;
};

bool spec_any(const struct int_spec *s);
/* Resolves keyword specifiers; false when the combination is not a type. */
bool spec_resolve(const struct int_spec *s, struct ctype *t);

/* Fills a model type from a resolved one; -1 on allocation failure. */
int types_to_model(const struct ctype *t, const char *spelling, struct usdt_type *out);
/* Size and alignment of a value of type t (0 when unknown). */
void ctype_layout(const struct ctype *t, unsigned *size, unsigned *align);

/* ---- the parser's state across usdt_parse() calls ---------------------- */

struct pending_attr {
	char *provider;
	enum usdt_attr_which which;
	struct usdt_attr attr;
	unsigned mask; /* which of name/data/class the pragma gave: bits 0, 1, 2 */
};

/*
 * Probes indexed by (provider, macro name): a new probe is compared only with
 * the probes whose header macro could collide with its own, not with every
 * probe of its provider (a 1,000-probe provider would otherwise cost half a
 * million name comparisons).
 */
struct probe_slot {
	size_t provider, probe; /* indices into the model; probe == SIZE_MAX: empty */
	unsigned long hash;
	unsigned long block;	   /* the last `provider { }` block declaring it */
	struct usdt_loc block_loc; /* where that block declares it */
};

struct front {
	struct typetab types;
	struct probe_slot *slots; /* open addressing, power-of-two size */
	size_t nslots, nused;
	char **strings; /* interned file names */
	size_t nstrings, capstrings;
	struct pending_attr *pending; /* pragmas naming a provider not seen yet */
	size_t npending, cappending;
	unsigned long nblocks; /* `provider { }` blocks read, in every call */
};

const char *fe_intern(struct front *fe, const char *s, size_t n);
void fe_free(void *priv); /* a struct front: usdt_program.priv_free */

/* Grows *pp so that index n fits; cap tracks the capacity. -1 on failure. */
int fe_grow(void **pp, size_t *cap, size_t n, size_t elem);
/* The same for arrays whose capacity is not stored (the model's): call with
 * the current count before appending. */
int fe_grow_pow2(void **pp, size_t n, size_t elem);

#endif /* USDT_FRONT_H */
