/* SPDX-License-Identifier: MIT */
/*
 * D's rules for a declaration's type words and for a prototype's
 * parameters (parse_proto.c), below the parser that reads them.
 */
#ifndef DT_PARSE_PROTO_H
#define DT_PARSE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lex.h"

/* One parameter of a function's prototype or of an array's key signature, as read. */
struct dt_param {
	struct dt_pos pos;
	const char *sclass; /* a storage class written before it, or NULL */
	const char *name;   /* its name, or NULL (anonymous) */
	bool is_void;	    /* of type void (not a pointer) */
	bool dynamic;	    /* declared an associative array: `int a[int]` */
	bool varargs;	    /* `...` */
};

/* The verdict of a check: NULL when D allows it, else the tag, where and why. */
struct dt_proto_err {
	const char *tag;
	struct dt_pos pos;
	char msg[256];
};

/*
 * The type words of one declaration (`unsigned long`, `short void`,
 * `long struct s`), space-separated, checked as D checks their combination.
 */
bool dt_proto_check_words(const char *words, const struct dt_pos *pos, struct dt_proto_err *e);

/* A parameter list: array (an associative array's key signature) or function. */
bool dt_proto_check_params(const struct dt_param *p, size_t n, bool array, const struct dt_pos *at,
			   struct dt_proto_err *e);

/*
 * A bit-field of `type` (typedefs undone) `width` bits wide (0 when no
 * positive constant was written): D_DECL_BFTYPE, BFCONST, BFSIZE.
 */
bool dt_proto_check_bitfield(const char *type, const char *name, const struct dt_pos *pos,
			     int64_t width, struct dt_proto_err *e);

struct parser;
/* A name the program declared so far: a variable (global, self->, this->) or an inline. */
bool dt_proto_declared(const struct parser *ps, const char *name);

#endif
