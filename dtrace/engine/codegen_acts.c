/* SPDX-License-Identifier: MIT */
/*
 * Which of a clause's statements are DTrace's data-recording actions. A
 * clause writes a record (and, without quiet, its probe's line) when it
 * has one, or when it has no statement at all (DTrace's default action);
 * a clause of assignments and aggregations alone prints nothing, nor one
 * that only commits or discards a speculation (Oracle DTrace's).
 */
#include <stdio.h>
#include <string.h>

#include "cg.h"

static const char *const recording[] = {
    "trace",  "printf",	   "printa",	  "exit",  "ustack",	 "stack",   "jstack",
    "clear",  "normalize", "denormalize", "trunc", "system",	 "freopen", "ftruncate",
    "raise",  "stop",	   "panic",	  "chill", "breakpoint", "setopt",  "tracemem",
    "printm", "print",	   "speculate",	  "sym",   "func",	 "mod",	    "usym",
    "ufunc",  "umod",	   "uaddr",	  NULL,
};

static bool is_action(const char *name)
{
	size_t k;

	for (k = 0; recording[k]; k++)
		if (!strcmp(recording[k], name))
			return true;
	return false;
}

static bool stmts_record(struct dt_stmt *const *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i]->is_if) {
			if (stmts_record(s[i]->then, s[i]->nthen) ||
			    stmts_record(s[i]->els, s[i]->nels))
				return true;
			continue;
		}
		if (s[i]->e && s[i]->e->kind == N_CALL && s[i]->e->name && is_action(s[i]->e->name))
			return true;
	}
	return false;
}

bool cg_clause_records(const struct dt_clause *c)
{
	return !c->nbody || stmts_record(c->body, c->nbody);
}

/* A destructive action (system()) without -w or the destructive option: DTrace's refusal. */
bool cg_destructive(struct cg *g, const struct dt_node *n)
{
	struct dt_consumer_opts *o = g->prog->o;

	(void)n;
	if (o->destructive)
		return true;
	snprintf(o->opt_error, sizeof(o->opt_error),
		 "could not enable tracing: Destructive actions not allowed");
	if (!g->failed)
		usdt_error(g->diag, "%s", o->opt_error);
	g->failed = true;
	return false;
}

/* copyinstr(p) dropped: read all the same, so that a bad address faults as DTrace's does */
static void cg_call_stmt_str(struct cg *g, const struct cv *v, struct dt_buf *o, const char *ind)
{
	dt_buf_printf(o, "%s{\n%s\t__u8 *cs = scratch_zeroed();\n%s\tif (cs) {\n", ind, ind, ind);
	cg_store_str(g, v, "cs", true, o, "\t\t\t\t");
	dt_buf_printf(o, "%s\t}\n%s}\n", ind, ind);
}

/*
 * A subroutine called as a statement (`strlen("a");`): its value computed,
 * as DTrace computes it, and dropped. An action is not one.
 */
bool cg_call_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	struct cv v = {0};

	if (n->kind == N_CALL && n->name && !strcmp(n->name, "chill")) {
		cg_chill(g, n, o, ind); /* an action, but no data: codegen_fault.c */
		return true;
	}
	if (n->kind != N_CALL || !n->name || is_action(n->name))
		return false;
	cg_value(g, n, &v);
	if (!g->failed && v.type == TY_STR && v.skind == SV_USER) {
		cg_call_stmt_str(g, &v, o, ind);
	} else if (!g->failed && v.text && (v.type == TY_INT || v.skind == SV_MEM)) {
		dt_buf_printf(o, "%s(void)(%s);\n", ind, v.text);
	}
	cv_free(&v);
	return true;
}

/*
 * An expression as a statement that is neither a call nor a store
 * (`*(char *)NULL;`, `a + b;`): computed and dropped, as DTrace computes
 * it, so that a bad address read faults (the ERROR probe) where DTrace's does.
 */
bool cg_expr_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	struct cv v = {0};

	if (n->kind == N_ASSIGN || n->kind == N_INCDEC || n->kind == N_CALL || n->kind == N_AGG)
		return false;
	cg_value(g, n, &v);
	if (!g->failed && v.text && (v.type == TY_INT || v.skind == SV_MEM))
		dt_buf_printf(o, "%s(void)(%s);\n", ind, v.text);
	else if (!g->failed && v.type == TY_STR && v.skind == SV_USER)
		cg_call_stmt_str(g, &v, o, ind);
	cv_free(&v);
	return true;
}
