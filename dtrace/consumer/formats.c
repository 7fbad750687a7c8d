/* SPDX-License-Identifier: MIT */
/*
 * printf() and printa() formats checked before any engine sees them, as
 * DTrace's compiler checks them: a positional conversion (`%1$d`,
 * `%*1$d`, `%.*2$s`) is refused with DTrace's words, never printed as
 * text. (The conversions themselves are render_printf.c's.)
 */
#include <string.h>

#include "d.h"

/* `%` past: digits then `$` (an argument position). */
static bool positional(const char *p)
{
	const char *d = p;

	while (*d >= '0' && *d <= '9')
		d++;
	return d > p && *d == '$';
}

static int check_format(const struct dt_node *n, const char *fmt, struct usdt_diag *diag)
{
	const char *p = fmt;
	int conv = 0;

	while ((p = strchr(p, '%'))) {
		bool pos;

		p++;
		if (*p == '%') {
			p++;
			continue;
		}
		conv++;
		pos = positional(p);
		while (*p && strchr("-+ #0@", *p))
			p++;
		if (*p == '*')
			pos = pos || positional(++p);
		while (*p >= '0' && *p <= '9')
			p++;
		pos = pos || *p == '$';
		if (*p == '.' && p[1] == '*')
			pos = pos || positional(p + 2);
		if (pos) {
			dt_error_at(
			    diag, &n->pos, "D_PRINTF_ARG_FMT",
			    "format conversion #%d uses unsupported positional format (%%n$)",
			    conv);
			return -1;
		}
	}
	return 0;
}

static int check_stmts(struct dt_stmt **s, size_t n, struct usdt_diag *diag)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		const struct dt_node *e = s[i]->e;

		if (s[i]->is_if) {
			rc |= check_stmts(s[i]->then, s[i]->nthen, diag);
			rc |= check_stmts(s[i]->els, s[i]->nels, diag);
		} else if (e && e->kind == N_CALL && e->nargs && e->args[0]->kind == N_STR &&
			   (!strcmp(e->name, "printf") || !strcmp(e->name, "printa"))) {
			rc |= check_format(e, e->args[0]->str, diag);
		}
	}
	return rc;
}

int dt_check_formats(const struct dt_program *prog, struct usdt_diag *diag)
{
	size_t c;
	int rc = 0;

	for (c = 0; c < prog->nclauses; c++)
		rc |= check_stmts(prog->clauses[c]->body, prog->clauses[c]->nbody, diag);
	return rc;
}
