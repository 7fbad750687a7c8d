/* SPDX-License-Identifier: MIT */
/*
 * Directive lines, read wherever advance() meets them (a line marker may sit
 * between two parameters), each up to and including its T_EOL.
 *
 * Line markers and #line set the logical file, line and system-header flag
 * that the lexer applies from the next line on. `#pragma D attributes`
 * applies to a provider already in the model, or waits in fe->pending for
 * one declared later, maybe in another call (parse_merge.c applies it);
 * other pragmas are the consumer's. #define and #undef are skipped, the
 * defined names kept to explain an unknown type that is one of them; #error
 * is an error, #warning a warning. Conditionals and includes are errors
 * saying to pass -C: the command runs cpp, never this parser.
 */
#include "parse_internal.h"

#include <string.h>

/* Consumes the rest of a directive line and its end. */
static void end_directive(struct parser *ps)
{
	if (ps->cur.kind != T_EOL && ps->cur.kind != T_EOF) {
		lex_skip_line(&ps->lx);
		advance(ps);
	}
	if (ps->cur.kind == T_EOL)
		advance(ps);
}

/* `# 12 "file" flags` or `#line 12 "file"`: cur is the line number. */
static void line_marker(struct parser *ps)
{
	struct token num = ps->cur;
	const char *file = NULL;
	unsigned long line;
	bool sys = false;

	if (!parse_ulong(&num, &line) || (num.start[0] == '0' && num.len > 1)) {
		error_tok(ps, &num, "invalid line number in line marker");
		end_directive(ps);
		return;
	}
	advance(ps);
	if (ps->cur.kind == T_STRING) {
		/* The name as cpp wrote it, quotes removed; escapes are kept as is. */
		file = fe_intern(ps->fe, ps->cur.start + 1,
				 ps->cur.len >= 2 && ps->cur.start[ps->cur.len - 1] == '"'
				     ? ps->cur.len - 2
				     : ps->cur.len - 1);
		if (!file) {
			oom(ps);
			return;
		}
		advance(ps);
	}
	/*
	 * Flags: 1 and 2 enter and leave an include, 4 is extern "C"; 3 says the
	 * text comes from a system header, which is read leniently
	 * (sys_declaration()).
	 */
	while (ps->cur.kind == T_NUMBER) {
		if (ps->cur.len == 1 && ps->cur.start[0] == '3')
			sys = true;
		advance(ps);
	}
	if (ps->cur.kind != T_EOL && ps->cur.kind != T_EOF)
		lex_skip_line(&ps->lx), advance(ps);
	if (ps->cur.kind == T_EOL) {
		lex_set_next_line(&ps->lx, line, file, sys);
		advance(ps);
	}
}

static const char *const stab_names[] = {
    "Internal", "Private", "Obsolete", "External", "Unstable", "Evolving", "Stable", "Standard",
};
static const char *const class_names[] = {
    "Unknown", "CPU", "Platform", "Group", "ISA", "Common",
};
static const char *const which_names[] = {
    "provider", "module", "function", "name", "args",
};

static int lookup_name(const struct token *t, const char *const *names, size_t n)
{
	size_t i;

	if (t->kind != T_IDENT)
		return -1;
	for (i = 0; i < n; i++)
		if (strlen(names[i]) == t->len && strncasecmp(names[i], t->start, t->len) == 0)
			return (int)i;
	return -1;
}

/* `#pragma D attributes Name/Data/Class provider P which`; cur follows "attributes". */
static void pragma_attributes(struct parser *ps)
{
	struct usdt_attr attr = {0};
	struct token ptok;
	unsigned mask = 0, part = 0;
	int which, v;
	char buf[64];

	for (;;) {
		const struct token *t = &ps->cur;

		if (part >= 3 || t->kind != T_IDENT || at_ident(ps, "provider"))
			break;
		if (part < 2) {
			v = lookup_name(t, stab_names, 8);
			if (v < 0) {
				error_tok(
				    ps, t,
				    "unknown stability %s: expected Internal, Private, Obsolete, "
				    "External, Unstable, Evolving, Stable or Standard",
				    tok_desc(t, buf, sizeof(buf)));
				end_directive(ps);
				return;
			}
			if (part == 0)
				attr.name_stab = (enum usdt_stability)v;
			else
				attr.data_stab = (enum usdt_stability)v;
		} else {
			v = lookup_name(t, class_names, 6);
			if (v < 0) {
				error_tok(ps, t,
					  "unknown dependency class %s: expected Unknown, CPU, "
					  "Platform, Group, ISA or Common",
					  tok_desc(t, buf, sizeof(buf)));
				end_directive(ps);
				return;
			}
			attr.dep_class = (enum usdt_depclass)v;
		}
		mask |= 1u << part;
		part++;
		advance(ps);
		if (!at_punct(ps, '/'))
			break;
		advance(ps);
	}
	if (!mask) {
		error_tok(ps, &ps->cur,
			  "expected stability attributes after '#pragma D attributes'");
		end_directive(ps);
		return;
	}
	if (!at_ident(ps, "provider")) {
		/* The form that sets attributes of a D identifier: not ours. */
		end_directive(ps);
		return;
	}
	advance(ps);
	if (ps->cur.kind != T_IDENT) {
		error_tok(ps, &ps->cur, "expected a provider name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		end_directive(ps);
		return;
	}
	ptok = ps->cur;
	advance(ps);
	which = lookup_name(&ps->cur, which_names, USDT_ATTR_COUNT);
	if (which < 0 || !tok_is(&ps->cur, which_names[which])) {
		error_tok(ps, &ps->cur,
			  "expected provider, module, function, name or args after the provider "
			  "name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		end_directive(ps);
		return;
	}
	advance(ps);
	if (ps->cur.kind != T_EOL && ps->cur.kind != T_EOF)
		error_tok(ps, &ps->cur, "unexpected %s at the end of '#pragma D attributes'",
			  tok_desc(&ps->cur, buf, sizeof(buf)));

	{
		struct usdt_provider *pv = find_provider(ps->prog, ptok.start, ptok.len);
		struct pending_attr *pa;

		if (pv) {
			apply_attr(&pv->attr[which], &attr, mask);
		} else if (fe_grow((void **)&ps->fe->pending, &ps->fe->cappending, ps->fe->npending,
				   sizeof(*ps->fe->pending)) == 0 &&
			   (ps->fe->pending[ps->fe->npending].provider = tok_dup(&ptok))) {
			/* Kept for a provider declared later, maybe in another file. */
			pa = &ps->fe->pending[ps->fe->npending++];
			pa->which = (enum usdt_attr_which)which;
			pa->attr = attr;
			pa->mask = mask;
		} else {
			oom(ps);
		}
	}
	end_directive(ps);
}

static void pragma(struct parser *ps)
{
	advance(ps); /* "pragma" */
	if (at_ident(ps, "D")) {
		advance(ps);
		if (at_ident(ps, "attributes")) {
			advance(ps);
			pragma_attributes(ps);
			return;
		}
		/* depends_on, option, binding, ident, line, error: consumer matters. */
	}
	/* Other pragmas (#pragma once, #pragma ident) mean nothing to a provider. */
	end_directive(ps);
}

static void remember_macro(struct parser *ps)
{
	if (ps->cur.kind != T_IDENT)
		return;
	if (fe_grow((void **)&ps->macros, &ps->capmacros, ps->nmacros, sizeof(*ps->macros)) ||
	    !(ps->macros[ps->nmacros] = tok_dup(&ps->cur))) {
		oom(ps);
		return;
	}
	ps->nmacros++;
}

/* A directive line: cur is its '#'; returns with cur after its end. */
void directive_line(struct parser *ps)
{
	struct token word;

	advance(ps); /* '#' */
	word = ps->cur;
	if (word.kind == T_NUMBER) {
		line_marker(ps);
		return;
	}
	if (tok_is(&word, "line")) {
		advance(ps);
		line_marker(ps);
		return;
	}
	if (tok_is(&word, "pragma")) {
		pragma(ps);
		return;
	}
	if (tok_is(&word, "define") || tok_is(&word, "undef")) {
		advance(ps);
		if (tok_is(&word, "define"))
			remember_macro(ps);
		end_directive(ps);
		return;
	}
	if (tok_is(&word, "error") || tok_is(&word, "warning")) {
		const char *s = word.start + word.len, *e = s;

		while (e < ps->lx.end && *e != '\n' && *e != '\r')
			e++;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (tok_is(&word, "error"))
			error_tok(ps, &word, "#error %.*s", (int)(e - s), s);
		else
			usdt_warning_at(ps->diag, word.loc.file, word.loc.line, word.loc.col,
					word.line_text, "#warning %.*s", (int)(e - s), s);
		end_directive(ps);
		return;
	}
	if (tok_is(&word, "ident") || tok_is(&word, "sccs") || tok_is(&word, "assert") ||
	    tok_is(&word, "unassert")) {
		end_directive(ps);
		return;
	}
	/* include, include_next, import, if, ifdef, ifndef, elif*, else, endif. */
	error_tok(ps, &word, "'#%.*s' needs the C preprocessor%s", (int)word.len, word.start,
		  ps->cpp_hint_given ? "" : ": run dtrace with -C (and -I/-D as needed)");
	ps->cpp_hint_given = true;
	end_directive(ps);
}
