/* SPDX-License-Identifier: MIT */
/*
 * C declarations: declaration specifiers, declarators, struct/union/enum
 * definitions and typedefs, resolved into a struct ctype (types.c) together
 * with the type's spelling as written (struct decl).
 *
 * Specifiers are read left to right: qualifiers, C keywords (counted, then
 * resolved by spec_resolve()), a struct/union/enum, or one typedef name; an
 * identifier that is none of these is an unknown type. A declarator adds
 * pointer levels with their qualifiers, an optional name, array sizes and
 * the `(*name)(params)` form; function parameter lists inside a type are
 * spelled from the source, not parsed, and a parameter decays arrays and
 * functions to pointers, as in C. Struct and union bodies are laid out for
 * LP64 as they are read (size unknown with bit-fields or unknown members);
 * enumerator values are skipped. Nesting is bounded by MAX_NEST.
 */
#include "parse_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_NEST 64 /* struct/declarator nesting the fuzzer cannot exceed */

static bool is_qualifier(const struct token *t)
{
	return tok_is(t, "const") || tok_is(t, "volatile") || tok_is(t, "restrict") ||
	       tok_is(t, "__restrict") || tok_is(t, "__restrict__") || tok_is(t, "__const") ||
	       tok_is(t, "__volatile__");
}

static void spell_word(struct usdt_sbuf *b, const char *s, size_t n)
{
	if (b->len && b->s[b->len - 1] != '(' && b->s[b->len - 1] != '[')
		usdt_sb_putc(b, ' ');
	usdt_sb_putn(b, s, n);
}

static const char *kind_word(enum base_kind k)
{
	return k == B_UNION ? "union" : k == B_ENUM ? "enum" : "struct";
}

static void parse_enum_body(struct parser *ps, struct tag *tag)
{
	char buf[64];

	advance(ps); /* '{' */
	while (ps->cur.kind != T_EOF && !at_punct(ps, '}')) {
		if (ps->cur.kind != T_IDENT) {
			error_tok(ps, &ps->cur, "expected an enumerator name, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			break;
		}
		advance(ps);
		if (at_punct(ps, '=')) {
			/* The value matters to D programs only: skip the expression. */
			advance(ps);
			while (ps->cur.kind != T_EOF && !at_punct(ps, ',') && !at_punct(ps, '}') &&
			       !at_punct(ps, ';')) {
				if (at_punct(ps, '(') || at_punct(ps, '['))
					skip_balanced(ps);
				else
					advance(ps);
			}
		}
		if (at_punct(ps, ','))
			advance(ps);
		else if (!at_punct(ps, '}')) {
			error_tok(ps, &ps->cur, "expected ',' or '}' in enum, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			break;
		}
	}
	/* Recover to the closing brace of the enum. */
	while (ps->cur.kind != T_EOF && !at_punct(ps, '}')) {
		if (at_punct(ps, '{'))
			skip_balanced(ps);
		else
			advance(ps);
	}
	if (at_punct(ps, '}'))
		advance(ps);
	tag->defined = true;
	tag->size = tag->align = 4;
}

static void parse_struct_body(struct parser *ps, struct tag *tag)
{
	unsigned long off = 0, size = 0, align = 1;
	bool known = true;
	char buf[64];

	advance(ps); /* '{' */
	while (ps->cur.kind != T_EOF && !at_punct(ps, '}') && !ps->oom) {
		struct decl m = {0};

		if (at_punct(ps, ';')) {
			advance(ps);
			continue;
		}
		if (!parse_specs(ps, &m)) {
			usdt_sb_free(&m.spell);
			error_tok(ps, &ps->cur, "expected a member declaration, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			skip_statement(ps);
			known = false;
			continue;
		}
		for (;;) {
			struct decl one = m;
			unsigned msize, malign;

			one.spell.s = NULL; /* the spelling of members is not kept */
			one.spell.len = one.spell.cap = 0;
			if (at_punct(ps, ';') || at_punct(ps, ',')) {
				/* No declarator: an anonymous struct/union member. */
			} else {
				parse_declarator(ps, &one, false);
			}
			usdt_sb_free(&one.spell);
			if (at_punct(ps, ':')) {
				/* Bit-fields: their layout is the compiler's business. */
				known = false;
				advance(ps);
				while (ps->cur.kind != T_EOF && !at_punct(ps, ',') &&
				       !at_punct(ps, ';') && !at_punct(ps, '}'))
					advance(ps);
			}
			ctype_layout(&one.t, &msize, &malign);
			if (!msize || !malign) {
				known = false;
			} else if (known) {
				if (malign > align)
					align = malign;
				if (tag->kind == B_UNION) {
					if (msize > size)
						size = msize;
				} else {
					off = (off + malign - 1) / malign * malign + msize;
					if (off > 0xffffffu)
						known = false;
				}
			}
			if (!at_punct(ps, ','))
				break;
			advance(ps);
		}
		usdt_sb_free(&m.spell);
		if (at_punct(ps, ';')) {
			advance(ps);
		} else {
			error_after_prev(ps, "expected ';' after member declaration");
			skip_statement(ps);
		}
	}
	if (at_punct(ps, '}'))
		advance(ps);
	else
		error_tok(ps, &ps->cur, "expected '}' to end the %s definition",
			  kind_word(tag->kind));
	tag->defined = true;
	if (known) {
		if (tag->kind != B_UNION)
			size = off;
		tag->size = (unsigned)((size + align - 1) / align * align);
		tag->align = (unsigned)align;
	}
}

/* `struct|union|enum [tag] [{ ... }]`; cur is the keyword. */
static void parse_tag_spec(struct parser *ps, struct decl *d)
{
	enum base_kind kind = at_ident(ps, "union")  ? B_UNION
			      : at_ident(ps, "enum") ? B_ENUM
						     : B_STRUCT;
	struct token kw = ps->cur, name = {.kind = T_EOF};
	struct tag *tag;

	advance(ps);
	if (ps->cur.kind == T_IDENT) {
		name = ps->cur;
		advance(ps);
	}
	spell_word(&d->spell, kw.start, kw.len);
	if (name.kind == T_IDENT) {
		spell_word(&d->spell, name.start, name.len);
		tag = types_tag(&ps->fe->types, kind, name.start, name.len);
	} else if (at_punct(ps, '{')) {
		usdt_sb_puts(&d->spell, " {...}");
		tag = types_tag(&ps->fe->types, kind, NULL, 0);
	} else {
		error_tok(ps, &ps->cur, "expected a name or '{' after '%s'", kind_word(kind));
		d->t.kind = B_UNKNOWN;
		return;
	}
	if (!tag) {
		oom(ps);
		d->t.kind = B_UNKNOWN;
		return;
	}
	if (tag->kind != kind) {
		error_tok(ps, &name, "'%.*s' is a %s, used here as a %s", (int)name.len, name.start,
			  kind_word(tag->kind), kind_word(kind));
		kind = tag->kind;
	}
	if (at_punct(ps, '{')) {
		if (tag->defined && name.kind == T_IDENT) {
			/* Same definition twice is common with split files: harmless. */
			skip_balanced(ps);
		} else if (ps->nest >= MAX_NEST) {
			error_tok(ps, &ps->cur, "declarations nested too deeply");
			skip_balanced(ps);
		} else {
			if (!tag->defined)
				tag->loc = kw.loc;
			ps->nest++;
			if (kind == B_ENUM)
				parse_enum_body(ps, tag);
			else
				parse_struct_body(ps, tag);
			ps->nest--;
		}
	}
	d->t.kind = kind;
	d->t.tag = tag;
	if (kind == B_ENUM) {
		d->t.c_base = "int";
		d->t.size = d->t.align = 4;
		d->t.is_signed = true;
	}
}

static bool count_keyword(const struct token *t, struct int_spec *s)
{
	static const struct {
		const char *kw;
		size_t off;
	} kws[] = {
	    {"char", offsetof(struct int_spec, n_char)},
	    {"short", offsetof(struct int_spec, n_short)},
	    {"int", offsetof(struct int_spec, n_int)},
	    {"long", offsetof(struct int_spec, n_long)},
	    {"signed", offsetof(struct int_spec, n_signed)},
	    {"__signed__", offsetof(struct int_spec, n_signed)},
	    {"unsigned", offsetof(struct int_spec, n_unsigned)},
	    {"float", offsetof(struct int_spec, n_float)},
	    {"double", offsetof(struct int_spec, n_double)},
	    {"void", offsetof(struct int_spec, n_void)},
	    {"_Bool", offsetof(struct int_spec, n_bool)},
	};
	size_t i;

	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (tok_is(t, kws[i].kw)) {
			unsigned *n = (unsigned *)((char *)s + kws[i].off);

			if (*n < 3)
				(*n)++;
			return true;
		}
	}
	return false;
}

/*
 * Declaration specifiers: qualifiers, C keywords, struct/union/enum, or one
 * typedef name. False when there is no type at all (nothing consumed then,
 * unless it was an unknown type name, which is reported).
 */
bool parse_specs(struct parser *ps, struct decl *d)
{
	struct int_spec is = {0};
	struct token first_kw = {.kind = T_EOF};
	bool have_base = false, is_const = false, is_volatile = false, any = false;

	memset(&d->t, 0, sizeof(d->t));
	d->name.kind = T_EOF;
	for (;;) {
		const struct token *t = &ps->cur;
		const struct ctype *td;

		if (t->kind != T_IDENT)
			break;
		if (is_qualifier(t)) {
			if (tok_is(t, "const") || tok_is(t, "__const"))
				is_const = true;
			else if (tok_is(t, "volatile") || tok_is(t, "__volatile__"))
				is_volatile = true;
			spell_word(&d->spell, t->start, t->len);
			advance(ps);
			any = true;
			continue;
		}
		if (!have_base && count_keyword(t, &is)) {
			if (first_kw.kind == T_EOF)
				first_kw = *t;
			spell_word(&d->spell, t->start, t->len);
			advance(ps);
			continue;
		}
		if (have_base || spec_any(&is))
			break;
		if (tok_is(t, "struct") || tok_is(t, "union") || tok_is(t, "enum")) {
			parse_tag_spec(ps, d);
			have_base = true;
			continue;
		}
		td = types_lookup(&ps->fe->types, t->start, t->len);
		if (td) {
			d->t = *td;
			spell_word(&d->spell, t->start, t->len);
			advance(ps);
			have_base = true;
			continue;
		}
		break;
	}
	if (spec_any(&is)) {
		if (!spec_resolve(&is, &d->t)) {
			error_tok(ps, &first_kw, "invalid combination of type specifiers in '%s'",
				  d->spell.s ? d->spell.s : "");
			d->t.kind = B_UNKNOWN;
		}
		have_base = true;
	}
	if (!have_base && any) {
		/* `const x`: C89's implicit int is not D. */
		if (ps->cur.kind == T_IDENT)
			goto unknown;
		error_tok(ps, &ps->cur, "expected a type after '%s'", d->spell.s ? d->spell.s : "");
		d->t.kind = B_UNKNOWN;
		return true;
	}
	if (!have_base) {
		if (ps->cur.kind == T_IDENT && !tok_is(&ps->cur, "probe") &&
		    !tok_is(&ps->cur, "provider"))
			goto unknown;
		return false;
	}
	if (is_volatile && d->t.ptr == 0)
		d->t.base_volatile = true;
	if (is_const) {
		if (d->t.ptr == 0)
			d->t.base_const = true;
		else if (d->t.ptr <= 32)
			d->t.ptr_const |= 1u << (d->t.ptr - 1);
	}
	return true;

unknown:
	error_tok(ps, &ps->cur, "unknown type '%.*s'", (int)ps->cur.len, ps->cur.start);
	if (!ps->macro_note_given && is_skipped_macro(ps, &ps->cur)) {
		ps->macro_note_given = true;
		note_loc(
		    ps, ps->cur.loc,
		    "'%.*s' is a macro: run dtrace with -C so that the preprocessor expands it",
		    (int)ps->cur.len, ps->cur.start);
	}
	spell_word(&d->spell, ps->cur.start, ps->cur.len);
	advance(ps);
	d->t.kind = B_UNKNOWN;
	return true;
}

/* Appends the source text of [from, to) with whitespace runs folded. */
static void spell_source(struct usdt_sbuf *b, const char *from, const char *to)
{
	bool space = false;

	for (; from < to; from++) {
		if (*from == ' ' || *from == '\t' || *from == '\n' || *from == '\r') {
			space = true;
			continue;
		}
		if (space && b->len && b->s[b->len - 1] != '(')
			usdt_sb_putc(b, ' ');
		space = false;
		usdt_sb_putc(b, *from);
	}
}

/*
 * A declarator: pointers with qualifiers, an optional name, array and
 * function suffixes, and the `(*name)(params)` form of function pointers.
 * Parameters (param) decay arrays and functions to pointers, as in C.
 */
void parse_declarator(struct parser *ps, struct decl *d, bool param)
{
	unsigned fn_ptr = 0;
	bool is_func = false;
	const char *params_from = NULL, *params_to = NULL;
	unsigned long elems = 1;
	unsigned dims = 0;
	char buf[64];

	d->name.kind = T_EOF;
	for (;;) {
		if (at_punct(ps, '*')) {
			if (d->t.ptr >= 32) {
				if (d->t.kind != B_UNKNOWN)
					error_tok(ps, &ps->cur, "too many levels of pointers");
				d->t.kind = B_UNKNOWN;
			} else {
				d->t.ptr++;
			}
			usdt_sb_puts(&d->spell, d->spell.len && d->spell.s[d->spell.len - 1] == '*'
						    ? "*"
						    : " *");
			advance(ps);
			continue;
		}
		if (is_qualifier(&ps->cur) && d->t.ptr) {
			if ((tok_is(&ps->cur, "const") || tok_is(&ps->cur, "__const")) &&
			    d->t.ptr <= 32)
				d->t.ptr_const |= 1u << (d->t.ptr - 1);
			spell_word(&d->spell, ps->cur.start, ps->cur.len);
			advance(ps);
			continue;
		}
		break;
	}
	if (ps->cur.kind == T_IDENT && !is_qualifier(&ps->cur)) {
		d->name = ps->cur;
		advance(ps);
	} else if (at_punct(ps, '(')) {
		/* `(*name)(...)` or `(*)(...)`; a bare `(params)` is a function type. */
		struct token open = ps->cur;

		advance(ps);
		while (at_punct(ps, '*')) {
			fn_ptr++;
			advance(ps);
			while (is_qualifier(&ps->cur))
				advance(ps);
		}
		if (fn_ptr) {
			if (ps->cur.kind == T_IDENT) {
				d->name = ps->cur;
				advance(ps);
			}
			if (!at_punct(ps, ')')) {
				error_tok(ps, &ps->cur, "expected ')' in declarator, found %s",
					  tok_desc(&ps->cur, buf, sizeof(buf)));
				d->t.kind = B_UNKNOWN;
				return;
			}
			advance(ps);
			if (!at_punct(ps, '(')) {
				error_tok(ps, &ps->cur,
					  "only pointers to functions may be parenthesised here");
				d->t.kind = B_UNKNOWN;
				return;
			}
		} else {
			/* Rewind is not possible: treat `(` as the function's parameters. */
			params_from = open.start;
			while (ps->cur.kind != T_EOF && !at_punct(ps, ')')) {
				if (at_punct(ps, '(') || at_punct(ps, '[') || at_punct(ps, '{'))
					skip_balanced(ps);
				else if (at_punct(ps, ';') || at_punct(ps, '}'))
					break;
				else
					advance(ps);
			}
			if (!at_punct(ps, ')')) {
				error_tok(ps, &open, "unbalanced '('");
				d->t.kind = B_UNKNOWN;
				return;
			}
			params_to = ps->cur.start + 1;
			advance(ps);
			is_func = true;
		}
	}
	if ((fn_ptr || (d->name.kind == T_IDENT && !is_func)) && at_punct(ps, '(')) {
		params_from = ps->cur.start;
		skip_balanced(ps);
		params_to = ps->prev.start + ps->prev.len;
		is_func = true;
	}
	while (!is_func && at_punct(ps, '[')) {
		struct token open = ps->cur;
		unsigned long n = 0;

		advance(ps);
		if (!parse_ulong(&ps->cur, &n) || n == 0)
			elems = 0;
		else if (elems > 0xffffffffUL / n)
			elems = 0;
		else
			elems *= n;
		/* Array sizes that are expressions: the length is then unknown. */
		while (ps->cur.kind != T_EOF && !at_punct(ps, ']') && !at_punct(ps, ';') &&
		       !at_punct(ps, ')') && !at_punct(ps, '}'))
			advance(ps);
		if (!at_punct(ps, ']')) {
			error_tok(ps, &open, "expected ']' to close the array size");
			d->t.kind = B_UNKNOWN;
			return;
		}
		spell_source(&d->spell, open.start, ps->cur.start + 1);
		advance(ps);
		dims++;
	}
	if (is_func) {
		struct usdt_sbuf s = {0};

		/* Only pointers to functions travel in registers: spell "(*)(...)". */
		if (d->spell.s)
			usdt_sb_puts(&s, d->spell.s);
		if (fn_ptr) {
			unsigned i;

			usdt_sb_puts(&s, " (");
			for (i = 0; i < fn_ptr; i++)
				usdt_sb_putc(&s, '*');
			usdt_sb_putc(&s, ')');
		}
		spell_source(&s, params_from, params_to);
		usdt_sb_free(&d->spell);
		d->spell = s;
		/*
		 * A function type (typedef'd, or a parameter, which decays) or a
		 * pointer to one; a pointer to a function pointer is a pointer too.
		 */
		d->t.kind = B_FUNC;
		d->t.c_base = NULL;
		d->t.tag = NULL;
		d->t.array = 0;
		d->t.ptr = fn_ptr > 32 ? 32 : fn_ptr;
		d->t.ptr_const = 0;
		if (param && d->t.ptr == 0)
			d->t.ptr = 1;
		return;
	}
	if (param && d->t.array && d->t.ptr == 0) {
		/* A parameter of array typedef type is a pointer to its element. */
		d->t.array = 0;
		d->t.ptr = 1;
	}
	if (param && d->t.kind == B_FUNC && d->t.ptr == 0)
		d->t.ptr = 1; /* and one of function typedef type a function pointer */
	if (dims) {
		if (param) {
			/* int a[4] is int *a; more dimensions have no simple C spelling. */
			if (dims == 1 && d->t.ptr < 32) {
				d->t.ptr++;
			} else {
				/* A pointer to an array: no C spelling, not a string. */
				d->t.no_c = true;
				d->t.plain_char = false;
				if (d->t.ptr < 32)
					d->t.ptr++;
			}
		} else {
			d->t.array = elems ? (unsigned)(elems > 0xffffffffUL ? 0 : elems) : 0;
			if (!elems) {
				/* Unknown length: the layout is unknown, no C spelling. */
				d->t.kind = B_UNKNOWN;
			}
		}
	}
}

/* `typedef specs declarator, ... ;`; cur is "typedef". */
void parse_typedef(struct parser *ps)
{
	struct decl base = {0};
	size_t first = ps->fe->types.ndefs, i;
	unsigned long quiet_errors = ps->quiet_errors;
	char buf[64];

	advance(ps);
	if (!parse_specs(ps, &base)) {
		error_tok(ps, &ps->cur, "expected a type after 'typedef', found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		usdt_sb_free(&base.spell);
		skip_statement(ps);
		return;
	}
	for (;;) {
		struct decl d = base;
		const struct typedef_ent *old;

		d.spell.s = base.spell.s ? strdup(base.spell.s) : NULL;
		d.spell.cap = d.spell.len = d.spell.s ? strlen(d.spell.s) : 0;
		if (d.spell.cap)
			d.spell.cap++;
		parse_declarator(ps, &d, false);
		if (d.name.kind != T_IDENT) {
			error_tok(ps, &ps->cur, "expected a name for the typedef, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			usdt_sb_free(&d.spell);
			break;
		}
		old = types_user_typedef(&ps->fe->types, d.name.start, d.name.len);
		if (!old && ps->quiet && types_lookup(&ps->fe->types, d.name.start, d.name.len)) {
			/*
			 * A system header's own definition of a well-known name
			 * (`typedef __uint8_t uint8_t;`): the table's entry is the same
			 * type and keeps the standard spelling in the header's checks.
			 */
		} else if (old) {
			/* C11 allows the same typedef twice; another type is a conflict. */
			if (old->type.kind != d.t.kind || old->type.c_base != d.t.c_base ||
			    old->type.ptr != d.t.ptr || old->type.tag != d.t.tag ||
			    old->type.array != d.t.array ||
			    old->type.base_const != d.t.base_const) {
				error_tok(ps, &d.name, "typedef '%.*s' redefined as another type",
					  (int)d.name.len, d.name.start);
				note_loc(ps, old->loc, "previous definition of '%s' was here",
					 old->name);
			}
		} else if (types_add_typedef(&ps->fe->types, d.name.start, d.name.len, &d.t,
					     d.spell.s ? d.spell.s : "", d.name.loc)) {
			oom(ps);
		}
		usdt_sb_free(&d.spell);
		if (!at_punct(ps, ','))
			break;
		advance(ps);
	}
	usdt_sb_free(&base.spell);
	if (at_punct(ps, ';')) {
		advance(ps);
	} else {
		error_after_prev(ps, "expected ';' after typedef");
		skip_statement(ps);
	}
	/*
	 * A system header's typedef not fully read (`typedef int register_t
	 * __attribute__((__mode__(__word__)));` is not an int) is left
	 * unchecked: a probe may use it, and the header does not check it.
	 */
	if (ps->quiet_errors != quiet_errors)
		for (i = first; i < ps->fe->types.ndefs; i++)
			ps->fe->types.defs[i].type.kind = B_UNKNOWN;
}

/* `struct x { ... } [declarators];` and friends at file scope. */
void parse_tag_declaration(struct parser *ps)
{
	struct decl d = {0};

	parse_specs(ps, &d);
	usdt_sb_free(&d.spell);
	/* Declarators here would be D variables: the consumer's business. */
	if (at_punct(ps, ';'))
		advance(ps);
	else if (ps->cur.kind == T_IDENT || at_punct(ps, '*'))
		skip_statement(ps);
	else
		error_after_prev(ps, "expected ';' after the %s definition", "type");
}
