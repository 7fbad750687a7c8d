/* SPDX-License-Identifier: MIT */
/*
 * Between the parser's files, top to bottom: parse.c (clauses, statements,
 * declarations) on parse_expr.c (expressions) on parse_decl.c (types, and
 * the parser's tokens: next, expect, a node, the one error).
 */
#ifndef DT_PARSE_H
#define DT_PARSE_H

#include "lex.h"

struct inline_def {
	char *name;
	struct dt_node *value;
	/* an inline array (`inline int a[int x, int y] = x + y;`): its keys' names */
	char **params;
	size_t nparams;
	bool library; /* the D library's (dlib.c): a program's inline or enumerator hides it */
};

/* A translator (parse_xlate.c): its output and input types, resolved, its members. */
struct dt_xlator {
	char *out, *in, *var;
	char **mname;
	struct dt_node **mexpr;
	size_t nm;
	int builtin; /* DTrace's own (dlib.h: DT_XL_PSINFO...): no members, N_KTASK */
};

struct parser {
	struct dt_lex lx;
	struct dt_program *prog;
	struct usdt_diag *diag;
	int depth; /* parentheses and brackets */
	bool in_pred;
	bool failed;
	const char *tag; /* the next error's, when not D_SYNTAX */
	struct inline_def *inl;
	size_t ninl;
	unsigned nanon; /* unnamed struct, union and enum types so far */
	struct dt_xlator *xl;
	size_t nxl;
	const char *xvar; /* a translator's input, while its members are read */
	/* an inline array's keys, while its expression is read: N_IDENT, op "$aK" */
	const struct inline_def *iparams;
};

/* The translator's input in its members: an N_IDENT marked so (op). */
#define DT_XVAR_OP "$in"

/*
 * The parser's one error: at pos, tagged ps->tag (then cleared) or
 * D_SYNTAX; only the first of a construct (ps->failed).
 */
void dt_parse_fail(struct parser *ps, const struct dt_pos *pos, const char *fmt, ...)
    USDT_PRINTF(3, 4);

/* The next token (an error of the lexer fails the parse). */
void dt_parse_next(struct parser *ps);
/* The token op, consumed; else an error "expected 'op' what, found ...". */
bool dt_parse_expect(struct parser *ps, const char *op, const char *what);
/* The current token in an error's words ("'x'", "a number"...). */
const char *dt_parse_tok_desc(struct parser *ps);
/* A node of the tree at the current token. */
struct dt_node *dt_parse_node(struct parser *ps, enum dt_nkind kind);
/* An expression (parse_expr.c): assignments, no comma operator outside brackets. */
struct dt_node *dt_parse_expr(struct parser *ps);

/* A word that starts a type: C's and D's type words, a typedef's name. */
bool dt_parse_type_word(const struct parser *ps, const char *w);
/*
 * A type at the current token: its words joined by one space into the
 * returned string ("unsigned short", "struct rec", "int *"); a struct,
 * union or enum body is read, its members kept in prog->decls, its
 * enumerators as inline constants. NULL (and ps->failed) on an error.
 */
char *dt_parse_type(struct parser *ps);
/* The declarators of a declaration after its type, to its ';' (kind 'g', 's', 't', 'T'). */
void dt_parse_declarators(struct parser *ps, char kind, const char *type);

/*
 * `var.member` of a variable (kind 'g', 's', 't') declared as a struct:
 * the member is a variable of its own, named "var.member" (*flat), its
 * type the member's (declared here). 0; -1 var is no struct; -2 a union;
 * -3 an incomplete struct; -4 no such member; -5 a global struct without
 * bit-fields (the engine's memory: N_MEMBER).
 */
int dt_parse_member(struct parser *ps, char kind, const char *var, const char *member, char **flat);

/*
 * `a[k].member` of an associative array declared of a struct (`struct {
 * int x; } a[int]`): each member an array of its own, named "a.member"
 * (*flat), typed by its first assignment. 0; -1 no such array of a
 * struct; -4 no such member.
 */
int dt_parse_assoc_member(struct parser *ps, const char *array, const char *member, char **flat);

/*
 * The struct a place is of (a variable declared as one, a member variable
 * "v.m", a member of one reached by '.'), or NULL.
 */
const struct dt_decl *dt_parse_place_struct(struct parser *ps, const struct dt_node *n);

/* A variable not declared yet (kind by n) declared of `type`: D's implicit declaration. */
void dt_parse_declare_as(struct parser *ps, const struct dt_node *n, const char *type);

/* A declaration of kind and name, or NULL; a type with its typedefs undone. */
const struct dt_decl *dt_parse_find(const struct parser *ps, char kind, const char *name);
const char *dt_parse_resolve(const struct parser *ps, const char *ty);

/* The D library's inline of `name` hidden: the program declares the name (an inline, an
 * enumerator). */
void dt_parse_inline_yields(struct parser *ps, const char *name);

/*
 * Translators (parse_xlate.c, under parse_expr.c). A type with its
 * typedefs undone at each level ("output_t *" -> "struct o *"), allocated.
 */
char *dt_xlate_canon(const struct parser *ps, const char *ty);
/* One member `name = e` of translator x, checked (D_XLATE_MEMB, _INCOMPAT...). */
void dt_xlate_add_member(struct parser *ps, struct dt_xlator *x, const char *name,
			 struct dt_node *e, const struct dt_pos *pos);
/* `xlate <type> (in)` read: n (N_XLATE) checked, its translator found (ival) or an error. */
void dt_xlate_resolve(struct parser *ps, struct dt_node *n);
/*
 * The member m of a translated value n (N_XLATE): the translator's
 * expression with the input substituted, as the member's type; 0 for a
 * member the translator does not define. NULL on an error.
 */
struct dt_node *dt_xlate_member(struct parser *ps, const struct dt_node *n, const char *m,
				const struct dt_pos *pos);
/* a[k] of a translated char array (N_KTASK): a constant k past its end is D_ARR_BOUNDS. */
void dt_xlate_index_check(struct parser *ps, const struct dt_node *ix);
/* The output struct or union of n (N_XLATE). */
const struct dt_decl *dt_xlate_output(struct parser *ps, const struct dt_node *n);

/* parse_expr.c: an inline array's `[type name, …]`, its keys' names into d */
void dt_parse_inline_keys(struct parser *ps, struct inline_def *d);

#endif /* DT_PARSE_H */
