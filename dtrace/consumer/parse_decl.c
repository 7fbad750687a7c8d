/* SPDX-License-Identifier: MIT */
/*
 * D's types as the parser reads them (under parse.c): the words of a type,
 * struct, union and enum bodies, and the declarators after a type.
 *
 * Theory. The parser does not size types: a type stays its words
 * ("unsigned short", "struct rec", "int *"), and what it means (its width,
 * its signedness, a struct's layout) is the engine's (codegen_types.c),
 * which reads the declarations the parser keeps in prog->decls: typed
 * variables, typedefs, and each struct's or union's members. An enum's
 * enumerators are integer constants, kept as `inline`s are and substituted
 * where they are named; their values are counted here (int, as DTrace's).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbtf.h"
#include "parse.h"
#include "parse_proto.h"

static const char *const type_words[] = {
    "int",
    "long",
    "short",
    "char",
    "unsigned",
    "signed",
    "string",
    "void",
    "float",
    "double",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "uintptr_t",
    "intptr_t",
    "size_t",
    "ssize_t",
    "pid_t",
    "id_t",
    "uid_t",
    "user_addr_t",
    "caddr_t",
    "off_t",
    "hrtime_t",
    "processorid_t",
    "const",
    "volatile",
    "struct",
    "union",
    "enum",
    "bool",
    "boolean_t",
    "uchar_t",
    "ushort_t",
    "uint_t",
    "ulong_t",
    "u_longlong_t",
    "longlong_t",
    "dev_t",
    "ino_t",
    "time_t",
    "timestamp_t",
    "gid_t",
    "mode_t",
    /* the kernel's (linux/types.h), which DTrace on Linux knows from its CTF */
    "uint",
    "ushort",
    "ulong",
    "u_char",
    "u_short",
    "u_int",
    "u_long",
    "u8",
    "u16",
    "u32",
    "u64",
    "s8",
    "s16",
    "s32",
    "s64",
    NULL,
};

void dt_parse_fail(struct parser *ps, const struct dt_pos *pos, const char *fmt, ...)
{
	const char *tag = ps->tag ? ps->tag : "D_SYNTAX";
	char msg[1024];
	va_list ap;

	ps->tag = NULL;
	if (ps->failed)
		return; /* one error per construct: the rest would only echo it */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dt_error_at(ps->diag, pos, tag, "%s", msg);
	ps->failed = true;
}

#define fail dt_parse_fail
/* An error with its D_ tag. */
#define fail_tag(ps, t, ...) ((ps)->tag = (t), dt_parse_fail(ps, __VA_ARGS__))

#define next dt_parse_next
#define expect dt_parse_expect

struct dt_node *dt_parse_node(struct parser *ps, enum dt_nkind kind)
{
	struct dt_node *n = dt_xmalloc(sizeof(*n));

	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->pos = ps->lx.pos;
	return n;
}

/* `#pragma D attributes` of a name: one the program declared before (a variable, an inline). */
static void pragma_attributes(struct parser *ps)
{
	if (!dt_proto_declared(ps, ps->lx.attr_name)) {
		ps->tag = "D_PRAGMA_UNUSED";
		dt_parse_fail(ps, &ps->lx.attr_pos,
			      "unused #pragma attributes: nothing declared before it is named %s",
			      ps->lx.attr_name);
	}
	ps->lx.attr_name[0] = '\0';
}

void dt_parse_next(struct parser *ps)
{
	dt_lex_next(&ps->lx);
	if (ps->lx.err)
		ps->failed = true;
	if (ps->lx.attr_name[0])
		pragma_attributes(ps);
}

const char *dt_parse_tok_desc(struct parser *ps)
{
	static char buf[80];

	switch (ps->lx.tok) {
	case T_EOF:
		return "the end of the program";
	case T_INT:
		return "a number";
	case T_STR:
		return "a string";
	case T_IDENT:
	case T_AGG:
		snprintf(buf, sizeof(buf), "'%s%.60s'", ps->lx.tok == T_AGG ? "@" : "",
			 ps->lx.text);
		return buf;
	case T_OP:
		snprintf(buf, sizeof(buf), "'%s'", ps->lx.op);
		return buf;
	default:
		return "an invalid token";
	}
}

bool dt_parse_expect(struct parser *ps, const char *op, const char *what)
{
	char msg[160];

	if (dt_lex_is(&ps->lx, op)) {
		dt_parse_next(ps);
		return true;
	}
	snprintf(msg, sizeof(msg), "expected '%s' %s, found %s", op, what, dt_parse_tok_desc(ps));
	dt_parse_fail(ps, &ps->lx.pos, "%s", msg);
	return false;
}

static const struct dt_decl *find_typedef(const struct parser *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->prog->ndecls; i++)
		if (ps->prog->decls[i].kind == 'T' && !strcmp(ps->prog->decls[i].name, name))
			return &ps->prog->decls[i];
	return NULL;
}

/* A declaration of the D library yields to the program's of its name: hidden (dlib.c). */
static bool library_yields(const struct dt_decl *o)
{
	if (!o->pos.src || !o->pos.src->library)
		return false;
	o->name[0] = '\0';
	return true;
}

void dt_parse_inline_yields(struct parser *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->ninl; i++)
		if (ps->inl[i].library && !strcmp(ps->inl[i].name, name))
			ps->inl[i].name[0] = '\0';
}

static bool is_c_word(const char *w)
{
	size_t i;

	for (i = 0; type_words[i]; i++)
		if (!strcmp(w, type_words[i]))
			return true;
	return false;
}

bool dt_parse_type_word(const struct parser *ps, const char *w)
{
	size_t i;

	for (i = 0; type_words[i]; i++)
		if (!strcmp(w, type_words[i]))
			return true;
	/* a kernel typedef (`__u8`, `atomic_t`) is a type's name, as in DTrace's kernel CTF */
	return find_typedef(ps, w) != NULL || dt_kbtf_typedef(w);
}

static bool is_ident(const struct parser *ps)
{
	return ps->lx.tok == T_IDENT;
}

/* An enumerator's value: an integer constant, signed or not. */
static bool enum_value(struct parser *ps, int64_t *v)
{
	bool neg = false;

	if (dt_lex_is(&ps->lx, "-") || dt_lex_is(&ps->lx, "+")) {
		neg = ps->lx.op[0] == '-';
		next(ps);
	}
	if (ps->lx.tok == T_INT) {
		*v = neg ? -ps->lx.ival : ps->lx.ival;
		next(ps);
		return true;
	}
	if (is_ident(ps)) {
		size_t i;

		for (i = 0; i < ps->ninl; i++)
			if (!strcmp(ps->inl[i].name, ps->lx.text) &&
			    ps->inl[i].value->kind == N_INT) {
				*v = neg ? -ps->inl[i].value->ival : ps->inl[i].value->ival;
				next(ps);
				return true;
			}
	}
	fail(ps, &ps->lx.pos, "an enumerator's value must be an integer constant");
	return false;
}

/* `{ A, B = 5, C }`: each enumerator an int constant (the last one's plus 1 by default). */
static void enum_body(struct parser *ps, const char *name)
{
	size_t first = ps->ninl; /* this enum's enumerators are from here */
	int64_t v = 0;
	struct dt_decl e = {.kind = 'E', .pos = ps->lx.pos};

	e.name = dt_xstrdup(name); /* its enumerators, for print() (d.h) */

	next(ps);
	while (!ps->failed && !dt_lex_is(&ps->lx, "}")) {
		struct inline_def d = {0};
		struct dt_node *n;
		size_t i;

		if (!is_ident(ps)) {
			fail(ps, &ps->lx.pos, "expected an enumerator's name");
			return;
		}
		dt_parse_inline_yields(ps, ps->lx.text);
		for (i = 0; i < ps->ninl; i++)
			if (!strcmp(ps->inl[i].name, ps->lx.text) && i >= first) {
				/* twice in one enum: DTrace's type library refuses the member */
				fail_tag(ps, "D_UNKNOWN", &ps->lx.pos,
					 "failed to define enumerator '%s': Duplicate member or "
					 "variable name",
					 ps->lx.text);
				return;
			} else if (!strcmp(ps->inl[i].name, ps->lx.text)) {
				fail_tag(ps, "D_DECL_IDRED", &ps->lx.pos,
					 "identifier redeclared: %s", ps->lx.text);
				return;
			}
		n = dt_xmalloc(sizeof(*n));
		memset(n, 0, sizeof(*n));
		n->kind = N_INT;
		n->pos = ps->lx.pos;
		d.name = dt_xstrdup(ps->lx.text);
		next(ps);
		if (dt_lex_is(&ps->lx, "=")) {
			next(ps);
			if (!enum_value(ps, &v))
				return;
		}
		if (v < INT32_MIN || v > INT32_MAX) {
			fail_tag(ps, "D_DECL_ENOFLOW", &n->pos, "enumerator '%s' overflows an int",
				 d.name);
			return;
		}
		n->ival = v++;
		n->size = 4;
		n->type = TY_INT;
		d.value = n;
		DT_PUSH(ps->inl, ps->ninl, d);
		{
			struct dt_decl m = {.kind = 'm', .pos = n->pos};
			char val[32];

			snprintf(val, sizeof(val), "%lld", (long long)n->ival);
			m.name = dt_xstrdup(d.name);
			m.type = dt_xstrdup(val);
			DT_PUSH(e.members, e.nmembers, m);
		}
		if (!dt_lex_is(&ps->lx, ","))
			break;
		next(ps);
	}
	expect(ps, "}", "to close the enum");
	DT_PUSH(ps->prog->decls, ps->prog->ndecls, e);
}

static const struct dt_decl *find_decl(const struct parser *ps, char kind, const char *name);
static const char *resolve(const struct parser *ps, const char *ty);

/* A struct's or union's members, up to its '}', as the decl's children. */
static void members(struct parser *ps, struct dt_decl *d)
{
	next(ps);
	while (!ps->failed && !dt_lex_is(&ps->lx, "}")) {
		struct dt_pos at = ps->lx.pos;
		char *type = dt_parse_type(ps);
		const char *ty = type ? resolve(ps, type) : NULL;

		if (ty && (!strncmp(ty, "struct ", 7) || !strncmp(ty, "union ", 6)) &&
		    !strchr(ty, '*') && !dt_lex_is(&ps->lx, "*") &&
		    !find_decl(ps, ty[0] == 's' ? 'S' : 'U', ty)) {
			fail_tag(ps, "D_DECL_INCOMPLETE", &at,
				 "%s is incomplete: a member's type is declared before it", ty);
			dt_free(type);
			return;
		}

		while (type && !ps->failed) {
			struct dt_decl m = {.kind = 'm', .pos = ps->lx.pos};
			struct dt_buf t = {0};
			bool fnptr;

			dt_buf_printf(&t, "%s", type);
			while (dt_lex_is(&ps->lx, "*")) {
				dt_buf_printf(&t, " *");
				next(ps);
			}
			m.type = t.s;
			fnptr = dt_lex_is(&ps->lx, "(");
			if (fnptr) { /* `int (*fp)()`, `int (*afp[2])()`: a pointer's bytes */
				next(ps);
				expect(ps, "*", "in a function pointer's declarator");
				dt_free(t.s);
				t = (struct dt_buf){0};
				dt_buf_printf(&t, "void *");
				m.type = t.s;
			}
			if (is_ident(ps)) {
				m.name = dt_xstrdup(ps->lx.text);
				next(ps);
			}
			if (dt_lex_is(&ps->lx, "(")) { /* a function: no object, D's void member */
				fail_tag(ps, "D_DECL_VOIDOBJ", &m.pos,
					 "cannot have void member: %s", m.name ? m.name : "(anon)");
				break;
			}
			while (dt_lex_is(&ps->lx, "[") && !ps->failed) {
				next(ps);
				if (ps->lx.tok != T_INT || ps->lx.ival <= 0) {
					fail(ps, &ps->lx.pos,
					     "an array member needs a positive size");
					break;
				}
				dt_buf_printf(&t, " [%lld]", (long long)ps->lx.ival);
				m.type = t.s;
				next(ps);
				expect(ps, "]", "to close the array's size");
			}
			if (fnptr && !ps->failed) { /* its parameters, which D does not keep */
				int depth = 0;

				expect(ps, ")", "to close a function pointer's declarator");
				if (!ps->failed && !dt_lex_is(&ps->lx, "("))
					fail(ps, &ps->lx.pos,
					     "expected a function pointer's parameters");
				while (!ps->failed && ps->lx.tok != T_EOF) {
					depth += dt_lex_is(&ps->lx, "(") - dt_lex_is(&ps->lx, ")");
					next(ps);
					if (!depth)
						break;
				}
			}
			if (dt_lex_is(&ps->lx, ":")) {
				struct dt_proto_err e;
				int64_t w;

				next(ps);
				w = dt_lex_is(&ps->lx, "-") || ps->lx.tok != T_INT ? 0
										   : ps->lx.ival;
				if (!dt_proto_check_bitfield(resolve(ps, m.type), m.name,
							     &ps->lx.pos, w, &e)) {
					fail_tag(ps, e.tag, &e.pos, "%s", e.msg);
					break;
				}
				m.bits = (unsigned)ps->lx.ival;
				next(ps);
			}
			DT_PUSH(d->members, d->nmembers, m);
			if (!dt_lex_is(&ps->lx, ","))
				break;
			next(ps);
		}
		dt_free(type);
		if (!ps->failed)
			expect(ps, ";", "after a member");
	}
	expect(ps, "}", "to close the members");
}

/* `struct tag`, `struct tag { … }`, `struct { … }` (and union, enum). */
static char *tagged(struct parser *ps, const char *word)
{
	struct dt_buf t = {0};
	struct dt_pos pos = ps->lx.pos;
	char kw[8];

	snprintf(kw, sizeof(kw), "%s", word); /* the token's text goes with next() */

	next(ps);
	if (is_ident(ps)) {
		const char *tag = ps->lx.text, *bq = strchr(tag, '`');

		/* D`s: the program's own types are module D's */
		dt_buf_printf(&t, "%s %s", kw, bq && !strncmp(tag, "D`", 2) ? bq + 1 : tag);
		next(ps);
	} else {
		dt_buf_printf(&t, "%s <unnamed %u>", kw, ++ps->nanon);
		if (!dt_lex_is(&ps->lx, "{")) {
			fail(ps, &ps->lx.pos, "expected a name or '{' after '%s'", kw);
			dt_free(t.s);
			return NULL;
		}
	}
	if (!dt_lex_is(&ps->lx, "{"))
		return t.s;
	if (kw[0] == 'e') {
		enum_body(ps, t.s);
	} else {
		struct dt_decl d = {.kind = kw[0] == 's' ? 'S' : 'U', .pos = pos};
		size_t i;

		for (i = 0; i < ps->prog->ndecls; i++)
			if (ps->prog->decls[i].kind == d.kind &&
			    !strcmp(ps->prog->decls[i].name, t.s) &&
			    !library_yields(&ps->prog->decls[i])) {
				fail_tag(ps, "D_DECL_IDRED", &pos, "%s redeclared", t.s);
				return NULL;
			}
		d.name = dt_xstrdup(t.s);
		members(ps, &d);
		DT_PUSH(ps->prog->decls, ps->prog->ndecls, d);
	}
	return ps->failed ? NULL : t.s;
}

char *dt_parse_type(struct parser *ps)
{
	struct dt_proto_err e;
	struct dt_buf t = {0};
	struct dt_pos pos = ps->lx.pos;

	while (!ps->failed && is_ident(ps) && dt_parse_type_word(ps, ps->lx.text)) {
		const char *w = ps->lx.text;

		if (t.n && find_typedef(ps, w) && !is_c_word(w))
			break; /* `char new_int`: a typedef's name after a type is a declarator */

		if (!strcmp(w, "const") || !strcmp(w, "volatile")) {
			next(ps);
			continue;
		}
		if (!strcmp(w, "struct") || !strcmp(w, "union") || !strcmp(w, "enum")) {
			char *s = tagged(ps, w);

			if (s && t.n)
				dt_buf_printf(&t, " ");
			if (s)
				dt_buf_printf(&t, "%s", s);
			dt_free(s);
			if (s && is_ident(ps) && is_c_word(ps->lx.text) &&
			    strcmp(ps->lx.text, "const") && strcmp(ps->lx.text, "volatile"))
				/* `struct a { ... } struct b { ... }`: a ';' left out */
				fail_tag(ps, "D_DECL_COMBO", &ps->lx.pos,
					 "invalid type combination");
			break;
		}
		if (t.n)
			dt_buf_printf(&t, " ");
		dt_buf_printf(&t, "%s", w);
		next(ps);
		if ((find_typedef(ps, t.s) || dt_kbtf_typedef(t.s)) && !strchr(t.s, ' '))
			break; /* a typedef's name is the whole type */
	}
	if (ps->failed) {
		dt_free(t.s);
		return NULL;
	}
	if (!t.n) {
		fail(ps, &pos, "expected a type");
		return NULL;
	}
	if (!dt_proto_check_words(t.s, &pos, &e)) {
		fail_tag(ps, e.tag, &e.pos, "%s", e.msg);
		dt_free(t.s);
		return NULL;
	}
	while (dt_lex_is(&ps->lx, "*")) {
		dt_buf_printf(&t, " *");
		next(ps);
	}
	return t.s;
}

static bool is_sclass(const char *w)
{
	static const char *const classes[] = {"static", "auto", "extern",   "typedef",
					      "self",	"this", "register", "inline"};
	size_t i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(w, classes[i]))
			return true;
	return false;
}

/* A key signature `[int, string]` rather than a size `[5]`, at the token after '['. */
static bool signature_ahead(const struct parser *ps)
{
	return dt_lex_is(&ps->lx, ".") ||
	       (is_ident(ps) && (dt_parse_type_word(ps, ps->lx.text) || is_sclass(ps->lx.text) ||
				 !strcmp(ps->lx.text, "struct") || !strcmp(ps->lx.text, "union") ||
				 !strcmp(ps->lx.text, "enum")));
}

/*
 * A prototype's parameters or an array's key signature, from after its '(' or
 * '[' to its closing token, judged by parse_proto.c's rules. Nothing is kept.
 */
static void params(struct parser *ps, bool array, const struct dt_pos *at)
{
	const char *close = array ? "]" : ")";
	struct dt_param p[16];
	struct dt_proto_err e;
	size_t n = 0;

	while (!ps->failed && !dt_lex_is(&ps->lx, close) && ps->lx.tok != T_EOF) {
		struct dt_param q = {.pos = ps->lx.pos};
		char *ty = NULL;

		if (is_ident(ps) && is_sclass(ps->lx.text)) {
			q.sclass = dt_lex_is_word(&ps->lx, "register") ? "register" : "other";
			next(ps);
		}
		if (dt_lex_is(&ps->lx, ".")) {
			q.varargs = true;
			while (dt_lex_is(&ps->lx, "."))
				next(ps);
		} else if (!q.sclass || q.sclass[0] == 'r') {
			ty = dt_parse_type(ps);
			if (!ty)
				return;
			q.is_void = !strcmp(ty, "void");
			dt_free(ty);
			if (is_ident(ps)) {
				q.name = dt_xstrdup(ps->lx.text);
				next(ps);
			}
			while (dt_lex_is(&ps->lx, "[") && !ps->failed) {
				next(ps);
				q.dynamic = q.dynamic || signature_ahead(ps);
				while (!ps->failed && !dt_lex_is(&ps->lx, "]") &&
				       ps->lx.tok != T_EOF)
					next(ps);
				expect(ps, "]", "to close the array's keys");
			}
		}
		if (n < sizeof(p) / sizeof(p[0]))
			p[n++] = q;
		if (q.sclass && q.sclass[0] != 'r')
			break; /* refused below: the rest is not read */
		if (!dt_lex_is(&ps->lx, ","))
			break;
		next(ps);
	}
	if (!ps->failed && !dt_proto_check_params(p, n, array, at, &e))
		fail_tag(ps, e.tag, &e.pos, "%s", e.msg);
	while (!ps->failed && !dt_lex_is(&ps->lx, close) && ps->lx.tok != T_EOF)
		next(ps);
}

void dt_parse_declarators(struct parser *ps, char kind, const char *type)
{
	while (!ps->failed && !dt_lex_is(&ps->lx, ";")) {
		struct dt_decl d = {.kind = kind, .pos = ps->lx.pos};
		struct dt_buf t = {0};
		bool array = false, assoc = false;
		size_t i;

		dt_buf_printf(&t, "%s", type);
		while (dt_lex_is(&ps->lx, "*")) {
			dt_buf_printf(&t, " *");
			next(ps);
		}
		if (!is_ident(ps)) {
			if (kind == 'g' && ps->lx.tok == T_EOF)
				break;
			fail(ps, &ps->lx.pos, "expected a name in the declaration");
			dt_free(t.s);
			return;
		}
		if (strchr(ps->lx.text, '`')) {
			fail_tag(ps, "D_DECL_SCOPE", &d.pos,
				 "D scoping operator may not be used in a declaration name (%s)",
				 ps->lx.text);
			dt_free(t.s);
			return;
		}
		d.name = dt_xstrdup(ps->lx.text);
		next(ps);
		/* an array (associative `int a[int]` or sized): its element type is not kept */
		while (dt_lex_is(&ps->lx, "[") && !ps->failed) {
			bool sized;

			next(ps);
			if (dt_lex_is(&ps->lx, "]")) {
				fail_tag(ps, "D_DECL_ARRNULL", &d.pos,
					 "array declaration requires array dimension or tuple "
					 "signature: %s",
					 d.name);
				dt_free(t.s);
				return;
			}
			if (dt_lex_is(&ps->lx, "-") || (ps->lx.tok == T_INT && ps->lx.ival <= 0)) {
				fail_tag(ps, "D_DECL_ARRSUB", &ps->lx.pos,
					 "positive integral constant expression or tuple signature "
					 "expected as array declaration subscript");
				dt_free(t.s);
				return;
			}
			if (signature_ahead(ps))
				params(ps, true, &d.pos);
			/* `int a[5]` keeps its size; an associative `int a[int]` is not kept */
			sized = ps->lx.tok == T_INT && ps->lx.ival > 0;
			if (sized && ps->lx.ival > UINT32_MAX) {
				fail_tag(ps, "D_DECL_ARRBIG", &d.pos, "array dimension too big");
				dt_free(t.s);
				return;
			}
			if (sized)
				dt_buf_printf(&t, " [%lld]", (long long)ps->lx.ival);
			else
				array = assoc = true;
			if (!sized && kind == 't' && !ps->failed) {
				fail_tag(ps, "D_DECL_LOCASSC", &d.pos,
					 "associative arrays may not be declared as local "
					 "variables: %s",
					 d.name);
				dt_free(t.s);
				return;
			}
			while (!ps->failed && !dt_lex_is(&ps->lx, "]") && ps->lx.tok != T_EOF)
				next(ps);
			expect(ps, "]", "to close the array's keys");
		}
		if (dt_lex_is(&ps->lx, "(")) { /* a function's prototype: nothing to keep */
			next(ps);
			params(ps, false, &d.pos);
			expect(ps, ")", "to close the prototype");
			array = true;
			assoc = false;
		}
		d.type = t.s;
		for (i = 0; !array && i < ps->prog->ndecls; i++) {
			const struct dt_decl *o = &ps->prog->decls[i];

			if (o->kind == kind && !strcmp(o->name, d.name) && kind == 'T' &&
			    !library_yields(o)) {
				fail_tag(ps, "D_DECL_IDRED", &d.pos, "typedef '%s' redeclared",
					 d.name);
				return;
			}
			/* a variable declared again: only with the same type */
			if (o->kind == kind && kind != 'T' && !strcmp(o->name, d.name) &&
			    strcmp(o->type, t.s)) {
				fail_tag(ps, "D_DECL_IDRED", &d.pos,
					 "identifier redeclared: %s (%s, then %s)", d.name, o->type,
					 t.s);
				return;
			}
		}
		if (kind == 'g') /* a declared global is defined (check_type.c) */
			DT_PUSH(ps->prog->declared, ps->prog->ndeclared, dt_xstrdup(d.name));
		if (!array) {
			DT_PUSH(ps->prog->decls, ps->prog->ndecls, d);
		} else if (assoc && kind == 'g') {
			/* a global associative array: kind 'A' (a struct value's members are
			 * arrays of their own), and 'a', its value's type (read before set) */
			DT_PUSH(ps->prog->decls, ps->prog->ndecls,
				((struct dt_decl){
				    .kind = 'A', .name = d.name, .type = d.type, .pos = d.pos}));
			if (!strchr(t.s, '[')) {
				d.kind = 'a';
				DT_PUSH(ps->prog->decls, ps->prog->ndecls, d);
			}
		}
		if (!dt_lex_is(&ps->lx, ","))
			break;
		next(ps);
	}
}

const struct dt_decl *dt_parse_find(const struct parser *ps, char kind, const char *name)
{
	return find_decl(ps, kind, name);
}

const char *dt_parse_resolve(const struct parser *ps, const char *ty)
{
	return resolve(ps, ty);
}

static const struct dt_decl *find_decl(const struct parser *ps, char kind, const char *name)
{
	size_t i;

	for (i = 0; i < ps->prog->ndecls; i++)
		if (ps->prog->decls[i].kind == kind && !strcmp(ps->prog->decls[i].name, name))
			return &ps->prog->decls[i];
	/* a struct or union the program does not declare: the kernel's (kbtf.c) */
	return kind == 'S' || kind == 'U' ? dt_kbtf_decl(kind, name) : NULL;
}

/* A type with its typedefs undone. */
static const char *resolve(const struct parser *ps, const char *ty)
{
	const struct dt_decl *d;
	int guard = 0;

	while (ty && (d = find_typedef(ps, ty)) != NULL && strcmp(d->type, ty) && guard++ < 32)
		ty = d->type;
	return ty;
}
