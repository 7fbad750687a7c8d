/* SPDX-License-Identifier: MIT */
/*
 * The provider grammar: `provider NAME { probe NAME(params) [: (params)]; };`.
 *
 * Reads a provider block and its probes and checks what the grammar alone
 * decides: provider names (at most MAX_PROVIDER_NAME characters, no final
 * digit), probe names (at most 63 characters), parameter lists (`void` only
 * alone and unnamed, no `...`, at most 255 arguments, distinct native
 * names). Each probe read is handed to parse_merge.c, which maps its
 * translated arguments and adds it to the model, so every probe parsed
 * reaches the model even after an error. Errors in a block recover at its
 * next `probe`, `;` or `}`, so no later probe is lost.
 */
#include "parse_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PROVIDER_NAME 59 /* 63 - strlen("sdt_") */

static void free_arglist(struct arglist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free_arg(&l->v[i]);
	free(l->v);
	free(l->line_text);
	memset(l, 0, sizeof(*l));
}

/* `(params)`; cur is '('. Returns false after a syntax error. */
static bool parse_params(struct parser *ps, struct arglist *l, const char *probe)
{
	struct token open = ps->cur;
	char buf[64];
	bool ok = true;

	advance(ps);
	if (at_punct(ps, ')')) {
		advance(ps);
		return true;
	}
	for (;;) {
		struct decl d = {0};
		struct usdt_arg *a;
		struct token start = ps->cur;

		if (ps->cur.kind == T_PUNCT && ps->cur.len == 3) {
			error_tok(ps, &ps->cur,
				  "probe '%s' has a variable argument list ('...'): probes take "
				  "a fixed list",
				  probe);
			advance(ps);
			ok = false;
		} else if (!parse_specs(ps, &d)) {
			error_tok(ps, &ps->cur, "expected a parameter type, found %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			usdt_sb_free(&d.spell);
			ok = false;
		} else {
			parse_declarator(ps, &d, true);
			if (l->n >= USDT_MAX_ARGS) {
				if (!l->too_many)
					error_tok(ps, &start,
						  "probe '%s' has more than %d arguments", probe,
						  USDT_MAX_ARGS);
				l->too_many = true;
				ok = false;
			} else if (fe_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) ||
				   fe_grow((void **)&l->line_text, &l->capl, l->n,
					   sizeof(*l->line_text))) {
				oom(ps);
			} else {
				a = &l->v[l->n];
				memset(a, 0, sizeof(*a));
				a->loc = start.loc;
				l->line_text[l->n] = start.line_text;
				if (types_to_model(&d.t, d.spell.s ? d.spell.s : "", &a->type) ||
				    (d.name.kind == T_IDENT && !(a->name = tok_dup(&d.name)))) {
					free_arg(a);
					oom(ps);
				} else {
					/* Remember void (not void *) for the check below. */
					if (d.t.kind == B_VOID && d.t.ptr == 0)
						a->type.size = (unsigned)-1;
					l->n++;
				}
			}
			usdt_sb_free(&d.spell);
		}
		if (at_punct(ps, ',')) {
			advance(ps);
			continue;
		}
		if (at_punct(ps, ')')) {
			advance(ps);
			break;
		}
		if (ok)
			error_tok(ps, &ps->cur,
				  "expected ',' or ')' in the parameters of '%s', found %s", probe,
				  tok_desc(&ps->cur, buf, sizeof(buf)));
		ok = false;
		/* Recover: the rest of this list, not beyond the statement. */
		while (ps->cur.kind != T_EOF && !at_punct(ps, ')') && !at_punct(ps, ';') &&
		       !at_punct(ps, '}')) {
			if (at_punct(ps, '(') || at_punct(ps, '['))
				skip_balanced(ps);
			else
				advance(ps);
		}
		if (at_punct(ps, ')'))
			advance(ps);
		else if (ps->cur.kind == T_EOF)
			error_tok(ps, &open, "unbalanced '(': no matching ')'");
		break;
	}

	/* void: alone and unnamed it means "no arguments"; anywhere else an error. */
	{
		size_t i;

		for (i = 0; i < l->n; i++) {
			if (l->v[i].type.size != (unsigned)-1)
				continue;
			if (l->n == 1 && !l->v[i].name) {
				free_arglist(l);
				break;
			}
			error_loc(ps, l->v[i].loc, l->line_text[i],
				  "'void' must be the only parameter of probe '%s' and unnamed",
				  probe);
			l->v[i].type.size = 0;
			ok = false;
		}
	}
	return ok;
}

static void check_provider_name(struct parser *ps, const struct token *name)
{
	if (name->len > MAX_PROVIDER_NAME)
		error_tok(ps, name,
			  "provider name '%.*s' is too long: %zu characters, at most %d (the "
			  "tracefs group sdt_<provider> holds 63)",
			  (int)name->len, name->start, name->len, MAX_PROVIDER_NAME);
	if (name->start[name->len - 1] >= '0' && name->start[name->len - 1] <= '9')
		error_tok(ps, name,
			  "provider name '%.*s' may not end with a digit (DTrace appends the "
			  "process ID to it)",
			  (int)name->len, name->start);
}

/*
 * Native parameter names must be distinct (DTrace: "parameter is already
 * declared"): translated arguments are found by them.
 */
static void check_unique_names(struct parser *ps, const struct arglist *l, const char *probe)
{
	size_t i, j;

	for (i = 1; i < l->n; i++) {
		if (!l->v[i].name)
			continue;
		for (j = 0; j < i; j++) {
			if (l->v[j].name && strcmp(l->v[i].name, l->v[j].name) == 0) {
				error_loc(ps, l->v[i].loc, l->line_text[i],
					  "parameter '%s' of probe '%s' is already declared as "
					  "argument #%zu",
					  l->v[i].name, probe, j + 1);
				break;
			}
		}
	}
}

/* `probe name(params) [: (params)];`; cur is "probe". */
static void parse_probe(struct parser *ps, size_t pi)
{
	struct arglist nl = {0}, xl = {0};
	struct usdt_probe p = {0};
	struct token name;
	bool has_x = false;
	char buf[64];

	advance(ps);
	if (ps->cur.kind != T_IDENT) {
		error_tok(ps, &ps->cur, "expected a probe name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		skip_statement(ps);
		return;
	}
	name = ps->cur;
	advance(ps);
	p.name = tok_dup(&name);
	if (!p.name) {
		oom(ps);
		return;
	}
	p.loc = name.loc;
	if (name.len > USDT_MAX_NAME)
		error_tok(ps, &name, "probe name '%s' is too long: %zu characters, at most %d",
			  p.name, name.len, USDT_MAX_NAME);
	if (!at_punct(ps, '(')) {
		error_tok(ps, &ps->cur, "expected '(' after probe name '%s', found %s", p.name,
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		free(p.name);
		skip_statement(ps);
		return;
	}
	parse_params(ps, &nl, p.name);
	check_unique_names(ps, &nl, p.name);
	if (at_punct(ps, ':')) {
		advance(ps);
		if (at_punct(ps, '(')) {
			has_x = true;
			parse_params(ps, &xl, p.name);
		} else {
			error_tok(ps, &ps->cur,
				  "expected '(' to open the translated arguments of '%s', found %s",
				  p.name, tok_desc(&ps->cur, buf, sizeof(buf)));
		}
	}
	p.args = nl.v;
	p.nargs = nl.n;
	free(nl.line_text);
	map_args(ps, &p, &xl, has_x);
	free_arglist(&xl);
	if (ps->oom) {
		free_probe(&p);
		return;
	}
	add_probe(ps, pi, &p, &name);
	if (at_punct(ps, ';')) {
		advance(ps);
	} else {
		error_after_prev(ps, "expected ';' after the declaration of probe '%.*s'",
				 (int)name.len, name.start);
		/* A missing ';' before the next probe or '}' needs no skipping. */
		if (!at_ident(ps, "probe") && !at_punct(ps, '}'))
			skip_statement(ps);
	}
}

/* `provider NAME { probes };`; cur is "provider". */
void parse_provider(struct parser *ps)
{
	struct token name, open;
	struct usdt_provider *pv;
	size_t pi;
	char buf[64];

	advance(ps);
	if (ps->cur.kind != T_IDENT) {
		error_tok(ps, &ps->cur, "expected a provider name, found %s",
			  tok_desc(&ps->cur, buf, sizeof(buf)));
		skip_statement(ps);
		return;
	}
	name = ps->cur;
	advance(ps);
	pv = find_provider(ps->prog, name.start, name.len);
	if (!pv) {
		check_provider_name(ps, &name);
		pv = add_provider(ps, &name);
		if (!pv)
			return;
	}
	pi = (size_t)(pv - ps->prog->providers);
	if (!at_punct(ps, '{')) {
		error_tok(ps, &ps->cur, "expected '{' after provider name '%.*s', found %s",
			  (int)name.len, name.start, tok_desc(&ps->cur, buf, sizeof(buf)));
		skip_statement(ps);
		return;
	}
	open = ps->cur;
	advance(ps);
	ps->block = ++ps->fe->nblocks;
	for (;;) {
		if (ps->oom)
			return;
		if (ps->cur.kind == T_EOF) {
			error_tok(ps, &open, "provider '%.*s' is not closed: expected '}'",
				  (int)name.len, name.start);
			return;
		}
		if (at_punct(ps, '}')) {
			advance(ps);
			break;
		}
		if (at_punct(ps, ';')) {
			advance(ps);
			continue;
		}
		if (at_ident(ps, "probe")) {
			parse_probe(ps, pi);
			continue;
		}
		error_tok(ps, &ps->cur, "expected 'probe' or '}' in provider '%.*s', found %s",
			  (int)name.len, name.start, tok_desc(&ps->cur, buf, sizeof(buf)));
		/* Resynchronise at the next probe, ';' or '}': no probe is lost. */
		do {
			if (at_punct(ps, '(') || at_punct(ps, '[') || at_punct(ps, '{'))
				skip_balanced(ps);
			else
				advance(ps);
		} while (ps->cur.kind != T_EOF && !at_ident(ps, "probe") && !at_punct(ps, ';') &&
			 !at_punct(ps, '}'));
		if (at_punct(ps, ';'))
			advance(ps);
	}
	if (at_punct(ps, ';'))
		advance(ps);
	else
		error_after_prev(ps, "expected ';' after the definition of provider '%.*s'",
				 (int)name.len, name.start);
}
