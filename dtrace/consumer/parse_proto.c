/* SPDX-License-Identifier: MIT */
/*
 * D's rules for the type words of a declaration and for the parameters of
 * a prototype (under parse_decl.c, which reads them: this file only
 * judges).
 *
 * Theory. DTrace's grammar reads C's declarations, then refuses what D
 * gives no meaning to. Type words: an attribute (short, long, signed,
 * unsigned) on void (D_DECL_VOIDATTR), short or long on char
 * (D_DECL_CHARATTR), long on what is not an integer or a floating-point
 * type (D_DECL_LONGINT), signed or unsigned on what is not an integer
 * (D_DECL_SIGNINT). Parameters, of a function's prototype (`int f(int,
 * char *)`) or of an associative array's key signature (`int a[int,
 * string]`): a storage class other than register (D_DECL_PARMCLASS); a
 * parameter that is itself an associative array (D_DECL_PROTO_TYPE); void,
 * which must be the sole parameter of a function (D_DECL_PROTO_VOID), may
 * not be named (D_DECL_PROTO_NAME) and is no key of an array
 * (D_DECL_PROTO_TYPE); `...`, which only a function may end with
 * (D_DECL_PROTO_VARARGS). The first rule broken, parameter by parameter,
 * is the error, as in DTrace.
 */
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "parse_proto.h"

static bool refuse(struct dt_proto_err *e, const char *tag, const struct dt_pos *pos,
		   const char *msg, const char *name)
{
	e->tag = tag;
	e->pos = *pos;
	snprintf(e->msg, sizeof(e->msg), "%s%s", msg, name ? name : "");
	return false;
}

static bool is_word(const char *words, const char *w)
{
	size_t n = strlen(w);
	const char *p = words;

	while ((p = strstr(p, w)) != NULL) {
		if ((p == words || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

static bool is_integer_word(const char *w, size_t n)
{
	static const char *const ints[] = {"int", "short", "long", "char", "signed", "unsigned"};
	size_t i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (strlen(ints[i]) == n && !strncmp(w, ints[i], n))
			return true;
	return false;
}

bool dt_proto_check_words(const char *words, const struct dt_pos *pos, struct dt_proto_err *e)
{
	bool attr_long = is_word(words, "long"), attr_short = is_word(words, "short");
	bool attr_sign = is_word(words, "signed") || is_word(words, "unsigned");
	bool other = false, fp = is_word(words, "float") || is_word(words, "double");
	const char *p = words;

	e->tag = NULL;
	if (!attr_long && !attr_short && !attr_sign)
		return true;
	if (is_word(words, "void"))
		return refuse(e, "D_DECL_VOIDATTR", pos,
			      "invalid type declaration: attributes may not be used with void "
			      "type",
			      NULL);
	if (is_word(words, "char") && (attr_long || attr_short))
		return refuse(e, "D_DECL_CHARATTR", pos,
			      "invalid type declaration: short and long may not be used with "
			      "char type",
			      NULL);
	while (*p) { /* a word that is no integer's: a struct, a typedef, a float */
		size_t n = strcspn(p, " ");

		if (!is_integer_word(p, n) && strncmp(p, "*", n) && strncmp(p, "const", n) &&
		    strncmp(p, "volatile", n))
			other = true;
		p += n + (p[n] == ' ');
	}
	if (attr_long && other && !fp)
		return refuse(e, "D_DECL_LONGINT", pos,
			      "invalid type declaration: long and long long may only be used "
			      "with integer or floating-point type",
			      NULL);
	if (attr_sign && other)
		return refuse(e, "D_DECL_SIGNINT", pos,
			      "invalid type declaration: signed and unsigned may only be used "
			      "with integer type",
			      NULL);
	return true;
}

bool dt_proto_check_params(const struct dt_param *p, size_t n, bool array, const struct dt_pos *at,
			   struct dt_proto_err *e)
{
	const char *kind = array ? "array" : "function";
	char what[96];
	size_t i, nvoid = 0;

	e->tag = NULL;
	for (i = 0; i < n; i++) {
		const char *name = p[i].name ? p[i].name : "(anonymous)";

		if (p[i].sclass && strcmp(p[i].sclass, "register"))
			return refuse(e, "D_DECL_PARMCLASS", &p[i].pos,
				      "inappropriate storage class for function or associative "
				      "array parameter",
				      NULL);
		if (p[i].varargs) {
			if (array)
				return refuse(e, "D_DECL_PROTO_VARARGS", &p[i].pos,
					      "array prototype may not use a variable-length "
					      "argument list",
					      NULL);
			continue;
		}
		if (p[i].dynamic || (array && p[i].is_void)) {
			snprintf(what, sizeof(what),
				 "%s prototype may not use parameter of type %s", kind,
				 p[i].dynamic ? "dynamic variable" : "void");
			e->tag = "D_DECL_PROTO_TYPE";
			e->pos = p[i].pos;
			snprintf(e->msg, sizeof(e->msg), "%s: %s, parameter #%zu", what, name,
				 i + 1);
			return false;
		}
		if (p[i].is_void && p[i].name)
			return refuse(e, "D_DECL_PROTO_NAME", &p[i].pos,
				      "void parameter may not have a name: ", p[i].name);
		nvoid += p[i].is_void;
	}
	if (nvoid && n > 1)
		return refuse(e, "D_DECL_PROTO_VOID", at, "void must be sole parameter", NULL);
	return true;
}

bool dt_proto_check_bitfield(const char *type, const char *name, const struct dt_pos *pos,
			     int64_t width, struct dt_proto_err *e)
{
	unsigned size;
	bool uns;

	e->tag = NULL;
	if (strchr(type, '*') || strstr(type, "float") || strstr(type, "double") ||
	    !strncmp(type, "string", 6) || !strncmp(type, "struct ", 7) ||
	    !strncmp(type, "union ", 6) || strchr(type, '['))
		return refuse(e, "D_DECL_BFTYPE", pos,
			      "invalid type for bit-field: ", name ? name : "(anon)");
	if (width <= 0)
		return refuse(e, "D_DECL_BFCONST", pos,
			      "positive integral constant expression expected as bit-field size",
			      NULL);
	dt_ctype_size(type, &size, &uns);
	if (width > (int64_t)size * 8)
		return refuse(e, "D_DECL_BFSIZE", pos,
			      "bit-field too big for type: ", name ? name : "(anon)");
	return true;
}

bool dt_proto_declared(const struct parser *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->prog->ndecls; i++)
		if (strchr("gst", ps->prog->decls[i].kind) &&
		    !strcmp(ps->prog->decls[i].name, name))
			return true;
	for (i = 0; i < ps->ninl; i++)
		if (!strcmp(ps->inl[i].name, name))
			return true;
	return false;
}
