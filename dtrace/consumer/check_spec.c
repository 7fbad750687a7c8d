/* SPDX-License-Identifier: MIT */
/*
 * A clause's order of actions around speculate() and commit(), as DTrace's
 * compiler checks it: speculate() comes before any data-recording or
 * aggregating action of its clause, and once (D_SPEC_DREC, D_SPEC_SPEC),
 * never after commit() (D_SPEC_COMM); a speculative clause neither
 * aggregates, nor exits, nor takes a destructive action (D_AGG_SPEC,
 * D_EXIT_SPEC, D_ACT_SPEC); nothing is recorded or aggregated after a
 * commit(), nor before it (D_DREC_COMM, D_AGG_COMM, D_COMM_DREC).
 * discard() has no rule of its own.
 */
#include <string.h>

#include "check.h"

static const char *const drec[] = {"trace",  "printf", "printa", "tracemem", "stack",
				   "ustack", "jstack", "exit",	 "print",    NULL};
static const char *const destructive[] = {"chill",	"raise",     "stop",	   "panic",
					  "breakpoint", "copyout",   "copyoutstr", "system",
					  "freopen",	"pidresume", NULL};

struct order {
	bool spec, committed, recorded;
};

static void one(struct chk *k, struct order *s, const struct dt_node *e)
{
	if (e->kind == N_ASSIGN && e->a && e->a->kind == N_AGG) {
		if (s->committed)
			dt_check_fail(k, e, "D_AGG_COMM",
				      "aggregating actions may not follow commit( )");
		else if (s->spec)
			dt_check_fail(k, e, "D_AGG_SPEC",
				      "aggregating actions may not follow speculate( )");
		s->recorded = true;
		return;
	}
	if (e->kind != N_CALL)
		return;
	if (!strcmp(e->name, "speculate")) {
		if (s->spec)
			dt_check_fail(k, e, "D_SPEC_SPEC",
				      "speculate( ) may not follow speculate( )");
		else if (s->committed)
			dt_check_fail(k, e, "D_SPEC_COMM", "speculate( ) may not follow commit( )");
		else if (s->recorded)
			dt_check_fail(k, e, "D_SPEC_DREC",
				      "speculate( ) may not follow data-recording action(s)");
		s->spec = true;
	} else if (!strcmp(e->name, "commit")) {
		if (s->recorded)
			dt_check_fail(k, e, "D_COMM_DREC",
				      "commit( ) may not follow data-recording action(s)");
		s->committed = true;
	} else if (s->spec && !strcmp(e->name, "exit")) {
		dt_check_fail(k, e, "D_EXIT_SPEC", "exit( ) may not follow speculate( )");
	} else if (s->spec && dt_check_in_list(destructive, e->name)) {
		dt_check_fail(k, e, "D_ACT_SPEC",
			      "destructive actions may not follow speculate( )");
	} else if (dt_check_in_list(drec, e->name)) {
		if (s->committed)
			dt_check_fail(k, e, "D_DREC_COMM",
				      "data-recording actions may not follow commit( )");
		s->recorded = true;
	}
}

static void stmts(struct chk *k, struct order *s, struct dt_stmt *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n && !k->failed; i++) {
		if (v[i]->is_if) {
			stmts(k, s, v[i]->then, v[i]->nthen);
			stmts(k, s, v[i]->els, v[i]->nels);
		} else if (v[i]->e) {
			one(k, s, v[i]->e);
		}
	}
}

void dt_check_spec_order(struct chk *k, const struct dt_clause *c)
{
	struct order s = {false, false, false};

	stmts(k, &s, c->body, c->nbody);
}
