/* SPDX-License-Identifier: MIT */
/*
 * D's checks of printf()/printa() formats and of aggregations (check.c's
 * theory): a format is read conversion by conversion as DTrace reads it
 * (flags, width and precision, `*` taking an argument, the conversion
 * letter), each conversion given its argument (printf) or its key
 * (printa); an aggregation keeps its first function, keys and quantize()
 * parameters, and each later use must agree.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

struct conv {
	bool star_width, star_prec, agg;
	char letter;
	char text[32]; /* "%d" */
};

/*
 * The conversions of fmt into cv (up to max); returns how many, or -1 when
 * the format is malformed (reported at n with DTrace's D_SYNTAX words).
 */
static int parse_fmt(struct chk *k, const struct dt_node *n, const char *fmt, struct conv *cv,
		     int max)
{
	static const char letters[] = "aAcCdeEfFgGiIkopPsSuxXYw";
	const char *p = fmt;
	int nc = 0;

	while ((p = strchr(p, '%'))) {
		const char *start = p++;
		struct conv c;
		bool flags = false;
		int dots = 0, wstars = 0, pstars = 0;

		memset(&c, 0, sizeof(c));
		for (;; p++) {
			if (*p && strchr("-+ #0'?", *p)) {
				flags = true;
			} else if (*p == '@') {
				c.agg = true;
				flags = true;
			} else if (*p >= '0' && *p <= '9') {
				while (*p >= '0' && *p <= '9')
					p++;
				if (*p == '$') {
					dt_check_fail(k, n, "D_SYNTAX",
						      "format conversion #%d uses unsupported "
						      "positional format (%%n$)",
						      nc + 1);
					return -1;
				}
				p--;
				flags = true;
			} else if (*p == '*') {
				if (dots ? ++pstars > 1 : ++wstars > 1) {
					dt_check_fail(k, n, "D_SYNTAX",
						      "format conversion #%d has more than one '*' "
						      "specified for the output %s",
						      nc + 1, dots ? "precision" : "width");
					return -1;
				}
				flags = true;
			} else if (*p == '.') {
				if (++dots > 1) {
					dt_check_fail(k, n, "D_SYNTAX",
						      "format conversion #%d has more than one '.' "
						      "specified",
						      nc + 1);
					return -1;
				}
				flags = true;
			} else if (*p && strchr("hlL", *p)) {
				flags = true;
			} else {
				break;
			}
		}
		if (!*p) {
			dt_check_fail(
			    k, n, "D_SYNTAX",
			    "format conversion #%d name expected before end of format string",
			    nc + 1);
			return -1;
		}
		if (*p == '%') {
			if (flags) {
				dt_check_fail(k, n, "D_SYNTAX",
					      "format conversion #%d cannot be combined with other "
					      "format flags: %%%%",
					      nc + 1);
				return -1;
			}
			p++;
			continue;
		}
		if (!strchr(letters, *p)) {
			dt_check_fail(k, n, "D_SYNTAX", "format conversion #%d is undefined: %%%c",
				      nc + 1, *p);
			return -1;
		}
		c.letter = *p++;
		c.star_width = wstars > 0;
		c.star_prec = pstars > 0;
		snprintf(c.text, sizeof(c.text), "%%%c", c.letter);
		(void)start;
		if (nc < max)
			cv[nc] = c;
		nc++;
	}
	return nc < max ? nc : max;
}

/* Whether a value of type t fits conversion c; else the prototype's words. */
static const char *conv_mismatch(const struct conv *c, enum dt_ctype t)
{
	if (t == CT_UNKNOWN)
		return NULL;
	switch (c->letter) {
	case 'd':
	case 'i':
	case 'u':
	case 'o':
	case 'x':
	case 'X':
	case 'c':
		return t == CT_INT || t == CT_PTR ? NULL : "char, short, int, long, or long long";
	case 's':
	case 'S':
		return t == CT_STR ? NULL : "char [] or string (or use stringof)";
	case 'p':
		return t == CT_INT || t == CT_PTR ? NULL : "pointer or integer";
	default:
		return NULL;
	}
}

static bool dyn_arg(struct chk *k, const struct dt_node *call, size_t *ai, int ci,
		    const struct conv *c, const char *which)
{
	enum dt_ctype t;

	if (*ai >= call->nargs) {
		dt_check_fail(k, call, "D_PRINTF_DYN_PROTO",
			      "%s( ) prototype mismatch: conversion #%d (%s) is missing a "
			      "corresponding \"%s\" argument",
			      call->name, ci + 1, c->text, which);
		return false;
	}
	t = dt_check_type(k, call->args[*ai]);
	if (t != CT_UNKNOWN && t != CT_INT) {
		char conv[16];

		snprintf(conv, sizeof(conv), "%% %s %c", which, c->letter);
		dt_check_conv_fail(k, call->args[*ai], "D_PRINTF_DYN_TYPE", call->name, *ai + 1,
				   ci + 1, conv, "int");
		return false;
	}
	(*ai)++;
	return true;
}

void dt_check_printf(struct chk *k, const struct dt_node *call)
{
	struct conv cv[64];
	const struct dt_node *f = call->args[0];
	size_t ai = 1;
	int nc, i;

	if (f->kind != N_STR) {
		if (dt_check_type(k, f) == CT_STR)
			dt_check_proto_fail(k, f, "D_PRINTF_ARG_FMT", "printf", 1,
					    "string constant", "string");
		return;
	}
	if (!f->slen) {
		dt_check_fail(k, f, "D_PRINTF_FMT_EMPTY", "printf( ) format string is empty");
		return;
	}
	nc = parse_fmt(k, call, f->str, cv, 64);
	for (i = 0; i < nc && !k->failed; i++) {
		const char *want;

		if (cv[i].agg) {
			dt_check_fail(k, call, "D_PRINTF_AGG_CONV",
				      "%%@ conversion requires an aggregation and is not for use "
				      "with printf( )");
			return;
		}
		if (cv[i].star_width && !dyn_arg(k, call, &ai, i, &cv[i], "*"))
			return;
		if (cv[i].star_prec && !dyn_arg(k, call, &ai, i, &cv[i], ".*"))
			return;
		if (ai >= call->nargs) {
			dt_check_fail(
			    k, call, "D_PRINTF_ARG_PROTO",
			    "printf( ) prototype mismatch: conversion #%d (%s) is missing a "
			    "corresponding value argument",
			    i + 1, cv[i].text);
			return;
		}
		want = conv_mismatch(&cv[i], call->args[ai]->kind == N_AGG
						 ? CT_AGG
						 : dt_check_type(k, call->args[ai]));
		if (want) {
			dt_check_conv_fail(k, call->args[ai], "D_PRINTF_ARG_TYPE", "printf", ai + 1,
					   i + 1, cv[i].text, want);
			return;
		}
		ai++;
	}
	if (nc >= 0 && !k->failed && ai < call->nargs)
		dt_check_fail(k, call, "D_PRINTF_ARG_EXTRA",
			      "printf( ) prototype mismatch: only %zu arguments required by this "
			      "format string",
			      ai - 1);
}

static struct aggty *agg_find(struct chk *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->naggs; i++)
		if (!strcmp(k->aggs[i].name, name))
			return &k->aggs[i];
	return NULL;
}

void dt_check_printa(struct chk *k, const struct dt_node *call)
{
	const struct dt_node *f = call->args[0];
	const struct aggty *first = NULL;
	size_t i, a0 = f->kind == N_STR ? 1 : 0;
	struct conv cv[64];
	int nc, c;

	for (i = a0; i < call->nargs; i++) {
		const struct aggty *ag;

		if (call->args[i]->kind != N_AGG) {
			dt_check_proto_fail(k, call->args[i], "D_PRINTA_AGGARG", "printa", i + 1,
					    "aggregation",
					    dt_ctype_name(dt_check_type(k, call->args[i])));
			return;
		}
		ag = agg_find(k, call->args[i]->name);
		if (!ag)
			continue;
		if (!first) {
			first = ag;
			continue;
		}
		if (ag->nkeys != first->nkeys) {
			dt_check_fail(k, call->args[i], "D_PRINTA_AGGKEY",
				      "printa( ) argument #%zu is incompatible with argument #%zu: "
				      "@%s and @%s have different keys",
				      i + 1, a0 + 1, ag->name, first->name);
			return;
		}
		for (c = 0; c < (int)ag->nkeys && c < 8; c++)
			if (ag->keys[c] != first->keys[c] && ag->keys[c] != CT_UNKNOWN &&
			    first->keys[c] != CT_UNKNOWN) {
				dt_check_fail(
				    k, call->args[i], "D_PRINTA_AGGPROTO",
				    "printa( ) argument #%zu is incompatible with argument "
				    "#%zu: key #%d of @%s is not of @%s's type",
				    i + 1, a0 + 1, c + 1, ag->name, first->name);
				return;
			}
	}
	if (!a0)
		return;
	if (call->nargs < 2) {
		dt_check_fail(k, call, "D_PRINTA_PROTO",
			      "printa( ) prototype mismatch: %zu args passed, 2 expected",
			      call->nargs);
		return;
	}
	nc = parse_fmt(k, call, f->str, cv, 64);
	if (nc < 0 || k->failed || !first)
		return;
	for (c = 0, i = 0; c < nc; c++) {
		const char *want;

		if (cv[c].agg)
			continue;
		if (i >= first->nkeys) {
			dt_check_fail(
			    k, call, "D_PRINTF_ARG_PROTO",
			    "printa( ) prototype mismatch: conversion #%d (%s) is missing a "
			    "corresponding value argument",
			    c + 1, cv[c].text);
			return;
		}
		want = conv_mismatch(&cv[c], i < 8 ? first->keys[i] : CT_UNKNOWN);
		if (want) {
			dt_check_conv_fail(k, call, "D_PRINTF_ARG_TYPE", "printa", 2, c + 1,
					   cv[c].text, want);
			return;
		}
		i++;
	}
}

static void lquantize_check(struct chk *k, const struct dt_node *n)
{
	int64_t base, lim, step = 1, levels;

	if (!dt_check_const(n->args[1], &base)) {
		dt_check_fail(k, n->args[1], "D_LQUANT_BASETYPE",
			      "lquantize( ) argument #2 must be an integer constant");
		return;
	}
	if (!dt_check_const(n->args[2], &lim)) {
		dt_check_fail(k, n->args[2], "D_LQUANT_LIMTYPE",
			      "lquantize( ) argument #3 must be an integer constant");
		return;
	}
	if (base < INT32_MIN || base > INT32_MAX) {
		dt_check_fail(k, n->args[1], "D_LQUANT_BASEVAL",
			      "lquantize( ) base (argument #2) must be a 32-bit quantity");
		return;
	}
	if (lim < INT32_MIN || lim > INT32_MAX) {
		dt_check_fail(k, n->args[2], "D_LQUANT_LIMVAL",
			      "lquantize( ) limit (argument #3) must be a 32-bit quantity");
		return;
	}
	if (lim <= base) {
		dt_check_fail(k, n, "D_LQUANT_MISMATCH",
			      "lquantize( ) base (argument #2) must be less than limit "
			      "(argument #3)");
		return;
	}
	if (n->nargs > 3 && (!dt_check_const(n->args[3], &step) || step <= 0)) {
		dt_check_fail(k, n->args[3], "D_LQUANT_STEPTYPE",
			      "lquantize( ) argument #4 must be a non-zero positive integer "
			      "constant");
		return;
	}
	if (step > UINT16_MAX) {
		dt_check_fail(k, n->args[3], "D_LQUANT_STEPVAL",
			      "lquantize( ) step (argument #4) must be a 16-bit quantity");
		return;
	}
	levels = (lim - base) / step;
	if (levels == 0)
		dt_check_fail(k, n, "D_LQUANT_STEPLARGE",
			      "lquantize( ) step (argument #4) too large (limit - base is %lld)",
			      (long long)(lim - base));
	else if (levels > UINT16_MAX)
		dt_check_fail(k, n, "D_LQUANT_STEPSMALL",
			      "lquantize( ) step (argument #4) too small: %lld levels",
			      (long long)levels);
}

static void llquantize_check(struct chk *k, const struct dt_node *n)
{
	static const char *const what[] = {"factor", "low magnitude", "high magnitude", "steps"};
	static const char *const type_tag[] = {"D_LLQUANT_FACTORTYPE", "D_LLQUANT_LMAGTYPE",
					       "D_LLQUANT_HMAGTYPE", "D_LLQUANT_STEPTYPE"};
	static const char *const val_tag[] = {"D_LLQUANT_FACTORVAL", "D_LLQUANT_LMAGVAL",
					      "D_LLQUANT_HMAGVAL", "D_LLQUANT_STEPVAL"};
	int64_t v[4];
	uint64_t pw;
	int i;

	for (i = 0; i < 4; i++) {
		const struct dt_node *a = n->args[i + 1];

		if (!dt_check_const(a, &v[i]) || (i == 3 && v[i] <= 0)) {
			dt_check_fail(
			    k, a, type_tag[i],
			    "llquantize( ) argument #%d (%s) must be a%s integer constant", i + 2,
			    what[i], i == 3 ? " non-zero positive" : "n");
			return;
		}
		if (v[i] < (i == 0 ? 2 : 0) || v[i] > UINT16_MAX) {
			dt_check_fail(k, a, val_tag[i],
				      "llquantize( ) %s (argument #%d) must be a 16-bit unsigned "
				      "integer%s",
				      what[i], i + 2, i == 0 ? " of at least 2" : "");
			return;
		}
		if (i == 2 && v[2] < v[1]) {
			dt_check_fail(k, a, val_tag[2],
				      "llquantize( ) high magnitude (argument #4) must be at least "
				      "the low magnitude (argument #3)");
			return;
		}
		if (i == 2) {
			int64_t j;

			for (pw = 1, j = 0; j <= v[2]; j++) {
				if (pw > UINT64_MAX / (uint64_t)v[0]) {
					dt_check_fail(
					    k, a, val_tag[2],
					    "llquantize( ) factor (argument #2) raised to "
					    "the high magnitude (argument #4) overflows 64 "
					    "bits");
					return;
				}
				pw *= (uint64_t)v[0];
			}
		}
	}
	if (v[3] < v[0] ? v[0] % v[3] != 0 : v[3] > v[0] && v[3] % v[0] != 0) {
		dt_check_fail(
		    k, n->args[4], "D_LLQUANT_STEPVAL",
		    "llquantize( ) factor (argument #2) and steps (argument #5) must divide "
		    "each other evenly");
		return;
	}
	if (v[3] > v[0]) {
		for (pw = (uint64_t)v[0]; pw < (uint64_t)v[3];)
			pw *= (uint64_t)v[0];
		if (pw % (uint64_t)v[3] == 0 && v[1] > 0) {
			int64_t j;

			for (pw = 1, j = 0; j <= v[1]; j++)
				pw *= (uint64_t)v[0];
		}
		if (pw % (uint64_t)v[3] != 0)
			dt_check_fail(
			    k, n->args[4], "D_LLQUANT_STEPVAL",
			    "llquantize( ) steps (argument #5) must evenly divide a power "
			    "of the factor (argument #2)");
	}
}

void dt_check_aggfn(struct chk *k, const struct dt_node *call)
{
	if (!strcmp(call->name, "lquantize"))
		lquantize_check(k, call);
	else if (!strcmp(call->name, "llquantize"))
		llquantize_check(k, call);
}

/* Two uses of one aggregation's l(l)quantize(): the same parameters. */
static void match_params(struct chk *k, const struct dt_node *was, const struct dt_node *now)
{
	static const char *const lq[] = {"D_LQUANT_MATCHBASE", "D_LQUANT_MATCHLIM",
					 "D_LQUANT_MATCHSTEP"};
	static const char *const llq[] = {"D_LLQUANT_MATCHFACTOR", "D_LLQUANT_MATCHLMAG",
					  "D_LLQUANT_MATCHHMAG", "D_LLQUANT_MATCHSTEPS"};
	bool ll = !strcmp(now->name, "llquantize");
	size_t i, n = ll ? 4 : 3;

	if (strcmp(now->name, "lquantize") && !ll)
		return;
	for (i = 0; i < n; i++) {
		int64_t a = 1, b = 1;

		if (i + 1 < was->nargs)
			dt_check_const(was->args[i + 1], &a);
		if (i + 1 < now->nargs)
			dt_check_const(now->args[i + 1], &b);
		if (a != b) {
			dt_check_fail(k, now->args[i + 1 < now->nargs ? i + 1 : 0],
				      ll ? llq[i] : lq[i],
				      "%s( ) argument #%zu must match the aggregation's earlier "
				      "use",
				      now->name, i + 2);
			return;
		}
	}
}

bool dt_check_aggfn_of(struct chk *k, const struct dt_node *n)
{
	const struct dt_node *ag = n->a, *f = n->b;
	size_t i;

	for (i = 0; i < ag->nargs && !k->failed; i++)
		if (dt_check_type(k, ag->args[i]) == CT_VOID)
			dt_check_fail(k, ag->args[i], "D_KEY_TYPE",
				      "aggregation key #%zu is of type void", i + 1);
	if (k->failed)
		return false;
	if (strcmp(n->op, "=") || !f || f->kind != N_CALL || !f->name) {
		dt_check_fail(k, n, "D_AGG_FUNC",
			      "@%s: an aggregation is assigned an aggregating function", ag->name);
		return false;
	}
	{
		const char *const fns[] = {"count",  "sum",	 "avg",	      "min",	    "max",
					   "stddev", "quantize", "lquantize", "llquantize", NULL};

		for (i = 0; fns[i] && strcmp(fns[i], f->name); i++)
			;
		if (!fns[i] && !dt_check_known(f->name)) {
			dt_check_fail(k, f, "D_FUNC_UNDEF",
				      "failed to resolve %s: Unknown function name", f->name);
			return false;
		}
		if (!fns[i]) {
			dt_check_fail(
			    k, f, "D_AGG_FUNC",
			    "%s( ) is not an aggregating function: @%s cannot be assigned "
			    "it",
			    f->name, ag->name);
			return false;
		}
	}
	return true;
}

void dt_check_aggassign(struct chk *k, const struct dt_node *n)
{
	const struct dt_node *ag = n->a, *f = n->b;
	struct aggty *was;
	size_t i;

	was = agg_find(k, ag->name);
	if (was) {
		if (strcmp(was->fn, f->name))
			dt_check_fail(k, f, "D_AGG_REDEF",
				      "@%s: aggregation redefined: %s( ) here, %s( ) before",
				      ag->name, f->name, was->fn);
		else
			match_params(k, was->call, f);
		return;
	}
	{
		struct aggty a;

		memset(&a, 0, sizeof(a));
		a.name = ag->name;
		a.fn = f->name;
		a.call = f;
		a.nkeys = ag->nargs;
		for (i = 0; i < ag->nargs && i < 8; i++)
			a.keys[i] = dt_check_type(k, ag->args[i]);
		DT_PUSH(k->aggs, k->naggs, a);
	}
}

bool dt_check_agg_known(struct chk *k, const char *name)
{
	return agg_find(k, name) != NULL;
}
