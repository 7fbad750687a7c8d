/* SPDX-License-Identifier: MIT */
/*
 * The D program as one BPF C file (README.md here is the theory). Every
 * probe's clauses, in script order, make one body; a USDT probe gets a
 * program per site (codegen_args.c), BEGIN and END one each. A clause
 * that prints writes one record into the ring buffer: a header (the
 * record's number, the CPU) and its actions' fields at offsets fixed here;
 * eg_rec says which renderer action reads which fields. An aggregation is
 * a per-CPU hash map whose key is built in the per-CPU scratch area,
 * cleared first. The renderer's tables (dt_tables) say what each record's
 * fields are, so render.c prints DTrace's output.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cg.h"

#define ROUND8(n) (((n) + 7u) & ~7u)

static struct dt_recipe *const_recipe(const char *s)
{
	struct dt_recipe *r = cg_field_recipe(0);

	r->op = R_CONST;
	r->str = dt_xstrdup(s);
	return r;
}

static size_t new_action(struct cg *g, enum dt_akind kind)
{
	struct dt_action a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.clause = (size_t)-1;
	DT_PUSH(g->t->acts, g->t->nacts, a);
	return g->t->nacts - 1;
}

/* The record a clause is writing. */
struct recw {
	struct eg_rec *r; /* NULL: the clause writes none */
	struct dt_buf *o;
	struct cg *g;
	const struct dt_clause *c;
};

/*
 * An action of the record: its bit in the record's mask is set where its
 * code runs, so that one in a branch not taken is skipped by the reader.
 */
static void item_begin(struct recw *w, size_t act)
{
	struct eg_item it = {act, w->r->nf, 0, 8};

	if (w->r->nitems >= 64 * 64) {
		if (!w->g->failed)
			dt_error_at(w->g->diag, &w->c->pos, "D_UNSUPPORTED",
				    "a clause of more than 4096 actions");
		w->g->failed = true;
		return;
	}
	/* past the header's 64 bits: a mask word of the record's own, cleared at its reserve */
	if (w->r->nitems >= 64)
		it.mask_off = w->r->nitems % 64 ? w->r->items[w->r->nitems - 1].mask_off
						: (w->r->size += 8) - 8;
	dt_buf_printf(w->o, "\t\tif (rec)\n\t\t\t*(__u64 *)(rec + %u) |= 1ULL << %zu;\n",
		      it.mask_off, w->r->nitems % 64);
	DT_PUSH(w->r->items, w->r->nitems, it);
}

/* A value written as the current item's next field; its dt_value for the renderer. */
static void put_value(struct cg *g, struct recw *w, struct cv *v, struct dt_value *dv)
{
	struct eg_item *it = &w->r->items[w->r->nitems - 1];
	struct eg_field f = {v->type, w->r->size, 8, false, false, v->size, 0};
	char dst[64];

	dv->type = v->type;
	dv->size = v->size;
	dv->is_unsigned = v->is_unsigned;
	dv->is_float = v->is_float;
	if (v->type == TY_STR && v->skind == SV_CONST) {
		dv->r = const_recipe(v->text);
		w->r->const_bytes += (unsigned)g->strsize + 1;
		return;
	}
	dv->r = v->skind == SV_STACK ? cg_stack_recipe(it->n, v) : cg_field_recipe(it->n);
	if (v->type == TY_STR)
		f.size = ROUND8((unsigned)g->strsize);
	if (v->skind == SV_STACK) {
		f.size = cg_stack_bytes(v);
		f.is_stack = v->symfn < EG_SYM_SYM;
		f.sym = v->symfn >= EG_SYM_SYM ? v->symfn : 0;
	}
	snprintf(dst, sizeof(dst), "(rec + %u)", f.off);
	if (v->type == TY_STR)
		cg_store_rec_str(g, v, dst, w->o, "\t\t\t"); /* DTrace's NULL faults */
	else {
		cg_narrow(v); /* DTrace records the type's width */
		dt_buf_printf(w->o, "\t\t\t*(__s64 *)%s = %s;\n", dst, v->text);
	}
	DT_PUSH(w->r->f, w->r->nf, f);
	it->n++;
	w->r->size += f.size;
}

static void print_action(struct cg *g, struct recw *w, const struct dt_node *n)
{
	bool fre = !strcmp(n->name, "freopen");
	bool sys = fre || !strcmp(n->name, "system"), is_printf = sys || !strcmp(n->name, "printf");
	size_t i, first = is_printf ? 1 : 0, act;
	struct dt_action *a;

	if (sys && !cg_destructive(g, n))
		return;
	if (is_printf && (!n->nargs || n->args[0]->kind != N_STR)) {
		cg_err(g, n, "printf() without a constant format");
		return;
	}
	if (!is_printf && n->nargs != 1) {
		cg_err(g, n, "trace() of other than one value");
		return;
	}
	act = new_action(g, fre ? A_FREOPEN : sys ? A_SYSTEM : is_printf ? A_PRINTF : A_TRACE);
	item_begin(w, act);
	dt_buf_printf(w->o, "\t\tif (rec) {\n");
	for (i = first; i < n->nargs && !g->failed; i++) {
		struct cv v;
		struct dt_value dv;

		if (cg_ustack(g, n->args[i], &v))
			;
		else if (is_printf && n->args[i]->kind != N_KTASK)
			cg_value(g, n->args[i], &v);
		else /* trace() of a char *, printf() of psinfo_t's char arrays: the string */
			cg_strval(g, n->args[i], &v);
		if (g->failed)
			break;
		put_value(g, w, &v, &dv);
		cv_free(&v);
		a = &g->t->acts[act];
		DT_PUSH(a->args, a->nargs, dv);
	}
	dt_buf_printf(w->o, "\t\t}\n");
	if (is_printf)
		g->t->acts[act].fmt = dt_xstrdup(n->args[0]->str);
}

static void exit_action(struct cg *g, struct recw *w, const struct dt_node *n)
{
	struct cv v;
	struct dt_value dv;

	if (n->nargs != 1) {
		cg_err(g, n, "exit() without one status");
		return;
	}
	cg_int(g, n->args[0], &v);
	if (g->failed)
		return;
	item_begin(w, new_action(g, A_EXIT));
	/* draining: no probe but END runs after it (codegen_fault.c) */
	dt_buf_printf(w->o, "\t\tif (rec) {\n\t\t\tset_draining();\n");
	put_value(g, w, &v, &dv);
	dt_buf_printf(w->o, "\t\t}\n");
	cv_free(&v);
}

static const char *const fnames[] = {"count",	 "sum",	      "avg",	"min",	      "max",
				     "quantize", "lquantize", "stddev", "llquantize", NULL};
static const enum dt_afn fns[] = {F_COUNT,    F_SUM,	   F_AVG,    F_MIN,	  F_MAX,
				  F_QUANTIZE, F_LQUANTIZE, F_STDDEV, F_LLQUANTIZE};

static void agg_update(struct cg *g, struct recw *w, const struct dt_node *n)
{
	const struct dt_node *lhs = n->a, *fn = n->b;
	struct cv keys[16], arg = {0}, incr = {0};
	int64_t lq[4] = {0, 0, 0, 0};
	struct eg_agg *e;
	size_t i, nk = 0;
	long ai;
	enum dt_afn f;

	if (strcmp(n->op, "=") || !fn || fn->kind != N_CALL) {
		cg_err(g, n, "this aggregation statement");
		return;
	}
	for (i = 0; fnames[i] && strcmp(fnames[i], fn->name); i++)
		;
	if (!fnames[i]) {
		cg_err(g, fn, "this aggregating function");
		return;
	}
	f = fns[i];
	if (f == F_LLQUANTIZE) {
		if (!cg_llq_params(g, fn, lq))
			return;
	} else if (f == F_LQUANTIZE ? !cg_lq_params(g, fn, lq)
				    : (f == F_COUNT) != (fn->nargs == 0) ||
					  fn->nargs > (f == F_QUANTIZE ? 2u : 1u)) {
		cg_err(g, fn, "these arguments of an aggregating function");
		return;
	}
	if (lhs->nargs > 16) {
		cg_err(g, lhs, "a key of more than 16 parts");
		return;
	}
	for (nk = 0; nk < lhs->nargs && !g->failed; nk++)
		if (!cg_ustack(g, lhs->args[nk], &keys[nk]))
			cg_value(g, lhs->args[nk], &keys[nk]);
	if (fn->nargs)
		cg_int(g, fn->args[0], &arg);
	/* the quantizations' increment: their last argument after the parameters */
	if ((f == F_QUANTIZE && fn->nargs == 2) || (f == F_LQUANTIZE && fn->nargs == 5) ||
	    (f == F_LLQUANTIZE && fn->nargs == 6))
		cg_int(g, fn->args[fn->nargs - 1], &incr);
	if (g->failed)
		goto out;
	ai = cg_agg_get(g, lhs, f, keys, lq);
	if (ai < 0)
		goto out;
	e = &g->out->aggs[ai];
	e->used = true;
	dt_buf_printf(w->o,
		      "\t\t{\n\t\t\t__u8 *k = scratch_zeroed();\n\t\t\tvoid *zv = zero_value();\n");
	dt_buf_printf(w->o, "\t\t\tif (k && zv) {\n");
	if (e->prefix)
		dt_buf_printf(w->o, "\t\t\t\t*(__u64 *)k = %" PRIu64 "ULL;\n", e->tag);
	for (i = 0; i < nk; i++) {
		char dst[48];

		snprintf(dst, sizeof(dst), "(k + %u)", e->keys[i].off);
		if (keys[i].type == TY_STR)
			cg_store_str(g, &keys[i], dst, true, w->o, "\t\t\t\t");
		else
			dt_buf_printf(w->o, "\t\t\t\t*(__s64 *)%s = %s;\n", dst, keys[i].text);
	}
	dt_buf_printf(w->o, "\t\t\t\t__s64 x = %s;\n", fn->nargs ? arg.text : "1");
	if (f == F_QUANTIZE || f == F_LQUANTIZE || f == F_LLQUANTIZE)
		dt_buf_printf(w->o, "\t\t\t\t__s64 inc = %s;\n", incr.text ? incr.text : "1");
	dt_buf_printf(w->o,
		      "\t\t\t\tstruct v_%s *v = bpf_map_lookup_elem(&%s, k);\n"
		      "\t\t\t\tif (!v) {\n"
		      "\t\t\t\t\tbpf_map_update_elem(&%s, k, zv, 1);\n"
		      "\t\t\t\t\tv = bpf_map_lookup_elem(&%s, k);\n"
		      "\t\t\t\t\tif (!v) AGG_DROP();\n"
		      "\t\t\t\t}\n",
		      e->map, e->map, e->map, e->map);
	switch (f) {
	case F_COUNT:
	case F_SUM:
	case F_AVG:
		dt_buf_printf(w->o, "\t\t\t\tif (v) { v->v += x; v->n++; }\n");
		break;
	case F_STDDEV:
		dt_buf_printf(w->o, "\t\t\t\tif (v) { v->v += x; v->n++; sq128_add(v->b, x); }\n");
		break;
	case F_MIN:
	case F_MAX:
		dt_buf_printf(w->o,
			      "\t\t\t\tif (v) { if (!v->n || x %c v->v) v->v = x; v->n++; }\n",
			      f == F_MIN ? '<' : '>');
		break;
	case F_LQUANTIZE: {
		int64_t nb = (lq[1] - lq[0]) / lq[2] + 2;

		/* render.c's layout: 0 below base, 1..levels, nb - 1 at or past the limit */
		dt_buf_printf(w->o,
			      "\t\t\t\t__u32 b = x < %lldLL ? 0 : x >= %lldLL ? %lld : "
			      "(__u32)((__u64)(x - %lldLL) / %lldULL) + 1;\n"
			      "\t\t\t\tBOUNDED(b);\n"
			      "\t\t\t\tif (v && b < %lld) { v->b[b] += inc; v->n++; }\n",
			      (long long)lq[0], (long long)lq[1], (long long)nb - 1,
			      (long long)lq[0], (long long)lq[2], (long long)nb);
		break;
	}
	case F_LLQUANTIZE:
		cg_llq_bucket(w->o, lq);
		dt_buf_printf(w->o,
			      "\t\t\t\tBOUNDED(b);\n"
			      "\t\t\t\tif (v && b < %zu) { v->b[b] += inc; v->n++; }\n",
			      cg_llq_nbuckets(lq));
		break;
	default:
		dt_buf_printf(w->o, "\t\t\t\t__u32 b = qidx(x);\n\t\t\t\tBOUNDED(b);\n"
				    "\t\t\t\tif (v && b < 128) { v->b[b] += inc; v->n++; }\n");
		break;
	}
	dt_buf_printf(w->o, "\t\t\t}\n\t\t}\n");
out:
	for (i = 0; i < nk; i++)
		cv_free(&keys[i]);
	cv_free(&arg);
	cv_free(&incr);
}

/* The aggregation an action names (@name), which some earlier clause must assign. */
static long agg_named(struct cg *g, const struct dt_node *n)
{
	size_t i;

	if (!n || n->kind != N_AGG || n->nargs) {
		cg_err(g, n, "this argument where an aggregation is wanted");
		return -1;
	}
	for (i = 0; i < g->t->naggs; i++)
		if (!strcmp(g->t->aggs[i].name, n->name))
			return (long)i;
	if (!g->failed)
		dt_error_at(g->diag, &n->pos, "D_UNSUPPORTED",
			    "@%s: no clause before this one assigns it (END's clauses are "
			    "written last)",
			    n->name);
	g->failed = true;
	return -1;
}

/* printa, normalize, denormalize, clear: records the reader acts on (records.c). */
static void agg_action(struct cg *g, struct recw *w, const struct dt_node *n)
{
	const char *f = n->name;
	bool printa = !strcmp(f, "printa"), norm = !strcmp(f, "normalize");
	bool trunc = !strcmp(f, "trunc");
	size_t want = printa || trunc ? (n->nargs == 2 ? 2 : 1) : norm ? 2 : 1, act, k;
	long ai;

	/* printa(fmt, @a, @b, ...): joined by key (render_join.c) */
	if (printa && n->nargs > 2 && n->nargs <= 16 && n->args[0]->kind == N_STR)
		want = n->nargs;
	if (n->nargs != want || (printa && n->nargs >= 2 && n->args[0]->kind != N_STR)) {
		cg_err(g, n, "these arguments of an aggregation action");
		return;
	}
	ai = agg_named(g, n->args[printa && n->nargs >= 2 ? 1 : 0]);
	if (ai < 0)
		return;
	act = new_action(g, printa	  ? A_PRINTA
			    : norm	  ? A_NORMALIZE
			    : trunc	  ? A_TRUNC
			    : f[0] == 'd' ? A_DENORMALIZE
					  : A_CLEAR);
	g->t->acts[act].agg = (size_t)ai;
	g->t->acts[act].clause = g->clause;
	if (printa && n->nargs >= 2)
		g->t->acts[act].fmt = dt_xstrdup(n->args[0]->str);
	for (k = 2; printa && k < n->nargs; k++) {
		long more = agg_named(g, n->args[k]);

		if (more < 0)
			return;
		DT_PUSH(g->t->acts[act].more, g->t->acts[act].nmore, (size_t)more);
	}
	item_begin(w, act);
	if (norm || (trunc && n->nargs == 2)) {
		struct cv v;
		struct dt_value dv;

		cg_int(g, n->args[1], &v);
		if (g->failed)
			return;
		dt_buf_printf(w->o, "\t\tif (rec) {\n");
		put_value(g, w, &v, &dv);
		dt_buf_printf(w->o, "\t\t}\n");
		cv_free(&v);
	}
	if (printa) {
		act = new_action(g, A_PRINTA_END);
		g->t->acts[act].agg = (size_t)ai;
		item_begin(w, act);
	}
}

/* setopt(name[, value]): a record whose reader sets the option (dt_set_runtime_option()) */
static void setopt_action(struct cg *g, struct recw *w, const struct dt_node *n)
{
	size_t act, len;
	char *f;

	if (n->nargs < 1 || n->nargs > 2 || n->args[0]->kind != N_STR ||
	    (n->nargs == 2 && n->args[1]->kind != N_STR)) {
		cg_err(g, n, "setopt() of other than string constants");
		return;
	}
	act = new_action(g, A_SETOPT);
	len = strlen(n->args[0]->str) + (n->nargs == 2 ? strlen(n->args[1]->str) + 1 : 0) + 1;
	f = dt_xmalloc(len);
	snprintf(f, len, n->nargs == 2 ? "%s=%s" : "%s", n->args[0]->str,
		 n->nargs == 2 ? n->args[1]->str : "");
	g->t->acts[act].fmt = f;
	g->t->acts[act].clause = g->clause;
	item_begin(w, act);
}

static void statement(struct cg *g, struct recw *w, const struct dt_stmt *s)
{
	const struct dt_node *n = s->e;

	if (s->is_if) {
		struct cv c;
		size_t i;

		cg_int(g, n, &c);
		if (g->failed)
			return;
		dt_buf_printf(w->o, "\t\tif (%s) {\n", c.text);
		cv_free(&c);
		for (i = 0; i < s->nthen && !g->failed; i++)
			statement(g, w, s->then[i]);
		dt_buf_printf(w->o, "\t\t} else {\n");
		for (i = 0; i < s->nels && !g->failed; i++)
			statement(g, w, s->els[i]);
		dt_buf_printf(w->o, "\t\t}\n");
		return;
	}
	if (n->kind == N_ASSIGN && n->a && n->a->kind == N_AGG) {
		agg_update(g, w, n);
	} else if (n->kind == N_CALL && w->r &&
		   (!strcmp(n->name, "tracemem") || cg_trace_object(g, n))) {
		item_begin(w, new_action(g, A_TRACEMEM));
		cg_tracemem(g, n, w->r, w->o);
	} else if (n->kind == N_CALL && w->r && !strcmp(n->name, "print")) {
		size_t act = new_action(g, A_PRINT);

		item_begin(w, act);
		cg_print(g, n, act, w->r, w->o);
	} else if (n->kind == N_CALL && w->r &&
		   (!strcmp(n->name, "printf") || !strcmp(n->name, "trace") ||
		    !strcmp(n->name, "system") || !strcmp(n->name, "freopen"))) {
		print_action(g, w, n);
	} else if (n->kind == N_CALL && w->r && !strcmp(n->name, "setopt")) {
		setopt_action(g, w, n);
	} else if (n->kind == N_CALL && w->r && !strcmp(n->name, "exit")) {
		exit_action(g, w, n);
	} else if (n->kind == N_CALL && w->r && cg_is_stack_call(n)) {
		struct cv v;
		struct dt_value dv;

		if (cg_ustack(g, n, &v) && !g->failed) {
			size_t act = new_action(g, v.symfn >= EG_SYM_SYM ? A_TRACE : A_USTACK);

			item_begin(w, act);
			dt_buf_printf(w->o, "\t\tif (rec) {\n");
			put_value(g, w, &v, &dv);
			dt_buf_printf(w->o, "\t\t}\n");
			DT_PUSH(g->t->acts[act].args, g->t->acts[act].nargs, dv);
		}
		cv_free(&v);
	} else if (n->kind == N_CALL && w->r &&
		   (!strcmp(n->name, "printa") || !strcmp(n->name, "normalize") ||
		    !strcmp(n->name, "denormalize") || !strcmp(n->name, "clear") ||
		    !strcmp(n->name, "trunc"))) {
		agg_action(g, w, n);
	} else if (cg_ptr_stmt(g, n, w->o, "\t\t")) {
		/* a store through a pointer, bcopy(), copyinto() */
	} else if (n->kind == N_CALL &&
		   cg_spec_stmt(g, n, w->r != NULL, g->out->nrecs, w->o, "\t\t")) {
		/* speculate(), commit(), discard(): codegen_spec.c */
	} else if (n->kind == N_CALL) {
		if (!cg_call_stmt(g, n, w->o, "\t\t"))
			cg_unknown_call(g, n, "this action");
	} else if (!cg_var_byte_stmt(g, n, w->o, "\t\t") && !cg_array_stmt(g, n, w->o, "\t\t") &&
		   !cg_var_stmt(g, n, w->o, "\t\t") && !cg_expr_stmt(g, n, w->o, "\t\t")) {
		cg_err(g, n, "this statement (associative arrays, assignments as values)");
	}
}

static void clause(struct cg *g, const struct dt_pclause *pc, struct dt_buf *o)
{
	const struct dt_clause *c = g->prog->clauses[pc->clause];
	bool quiet = g->prog->o->quiet, recs = cg_clause_records(c);
	struct dt_buf cond = {0}, body = {0}, cond0 = {0};
	struct eg_rec rec = {0};
	struct recw w = {recs ? &rec : NULL, &body, g, c};
	size_t k, nfaults = g->out->nfaults;

	/* the record's number, its CPU, the mask of its actions that ran, its probe */
	rec.size = 24;
	g->clause = pc->clause;
	g->dclause = pc->desc;
	for (k = 0; k < pc->clause; k++)
		g->dclause += g->prog->clauses[k]->ndescs;
	if (!pc->any_pid) {
		dt_buf_add(&cond, "(", 1);
		for (k = 0; k < pc->npids; k++)
			dt_buf_printf(&cond, "%spid == %d", k ? " || " : "", pc->pids[k]);
		dt_buf_add(&cond, pc->npids ? ")" : "0)", pc->npids ? 1 : 2);
	}
	/* after exit(), no clause runs but END's (and ERROR's): DTrace's activity test */
	if (g->probe->kind != P_END && g->probe->kind != P_ERROR)
		dt_buf_printf(&cond, "%s!draining()", cond.n ? " && " : "");
	dt_buf_add(&cond0, cond.n ? cond.s : "1", cond.n ? cond.n : 1);
	if (c->pred) {
		struct cv p;

		cg_int(g, c->pred, &p);
		if (!g->failed)
			dt_buf_printf(&cond, "%s(%s)", cond.n ? " && " : "", p.text);
		cv_free(&p);
	}
	if (recs && !quiet) {
		struct eg_field f = {TY_INT, 4, 4, false, false, 0, 0};
		size_t act = new_action(g, A_CLAUSE);

		g->t->acts[act].probe = g->probe;
		g->t->acts[act].clause = pc->clause;
		item_begin(&w, act);
		DT_PUSH(rec.f, rec.nf, f);
		rec.items[rec.nitems - 1].n = 1;
	}
	for (k = 0; k < c->nbody && !g->failed; k++)
		statement(g, &w, c->body[k]);
	if (recs && !quiet)
		item_begin(&w, new_action(g, A_CLAUSE_END));
	cg_spec_clause_head(g, o, g->out->nrecs, &rec);
	cg_buf_size(g, &rec);
	/* a fault (codegen_fault.c) jumps to the clause's end: its record discarded */
	/* alloca()'s scratch: from its start again at each clause (codegen_ptr.c) */
	dt_buf_printf(o, "#define FAULT_LABEL fault_%zu\n\t{\n\tDMEM_RESET();\n", pc->clause);
	if (recs)
		dt_buf_printf(o, "\t__u8 *rec = 0;\n");
	dt_buf_printf(o, "\tif (%s) {\n", cond.n ? cond.s : "1");
	if (recs) {
		dt_buf_printf(o,
			      "\t\trec = bpf_ringbuf_reserve(&events, %u, 0);\n"
			      "\t\tif (!rec) {\n\t\t\tdrop();\n\t\t} else {\n"
			      "\t\t\t*(__u32 *)rec = %zu;\n"
			      "\t\t\t*(__u32 *)(rec + 4) = bpf_get_smp_processor_id();\n"
			      "\t\t\t*(__u64 *)(rec + 8) = 0;\n"
			      "\t\t\t*(__u64 *)(rec + 16) = probe_ix;\n",
			      rec.size, g->out->nrecs);
		for (k = 64; k < rec.nitems; k += 64)
			dt_buf_printf(o, "\t\t\t*(__u64 *)(rec + %u) = 0;\n",
				      rec.items[k].mask_off);
		dt_buf_printf(o, "\t\t}\n");
	}
	if (body.n)
		dt_buf_add(o, body.s, body.n);
	if (recs) {
		dt_buf_printf(o, "\t\tif (rec)\n\t\t\tbpf_ringbuf_submit(rec, 0);\n");
		DT_PUSH(g->out->recs, g->out->nrecs, rec);
	}
	dt_buf_printf(o, "\t}\n");
	if (recs && c->pred)
		cg_buf_phantom(g, o, cond0.s, g->out->nrecs - 1);
	if (g->out->nfaults != nfaults)
		dt_buf_printf(o,
			      "\tgoto ok_%zu;\nfault_%zu:\n%s"
			      "\tfault_rec(flt_site, flt_kind, flt_val);\nok_%zu:;\n",
			      pc->clause, pc->clause,
			      recs ? "\tif (rec)\n\t\tbpf_ringbuf_discard(rec, 0);\n" : "",
			      pc->clause);
	cg_spec_clause_end(g, o, recs);
	dt_buf_printf(o, "\t}\n#undef FAULT_LABEL\n");
	dt_free(cond.s);
	dt_free(cond0.s);
	dt_free(body.s);
}

static int probe(struct cg *g, size_t pi, struct dt_buf *o)
{
	const struct dt_probe *p = g->probe;
	struct dt_buf body = {0};
	size_t i;
	uint32_t ix = (uint32_t)g->out->nprobes;
	bool added = true;
	long gi = -1;
	int rc = 0;

	DT_PUSH(g->out->probes, g->out->nprobes, p);
	if (p->kind == P_USDT && (gi = cg_usdt_group(g, &added)) >= 0 && !added)
		return p->attach ? eg_probe_sites(g->out, p, (size_t)gi, ix, g->diag) : 0;
	memset(g->arg_used, 0, sizeof(g->arg_used));
	cg_vars_body_top(g, &body);
	/* (ERROR too: the reader fires it for a fault of before the exit) */
	if (p->kind != P_END && p->kind != P_ERROR)
		dt_buf_printf(&body, "\tif (draining())\n\t\treturn 0;\n");
	dt_buf_printf(&body, "\t__s64 pid = (__s64)(bpf_get_current_pid_tgid() >> 32);\n");
	dt_buf_printf(&body, "\t(void)pid;\n\t__u64 ts_now = 0;\n\t(void)ts_now;\n");
	if (p->kind == P_USDT)
		dt_buf_printf(&body, "\t__u32 probe_ix = site->probe;\n");
	else
		dt_buf_printf(&body, "\t__u32 probe_ix = %u;\n", ix);
	dt_buf_printf(&body, "\t__u64 flt_site = 0, flt_kind = 0, flt_val = 0;\n"
			     "\t(void)flt_site;\n\t(void)flt_kind;\n\t(void)flt_val;\n");
	for (i = 0; i < p->npc && !g->failed; i++) {
		/* an exit() in an earlier clause of this firing: the later ones do not run */
		if (i > 0 && p->kind != P_END && p->kind != P_ERROR)
			dt_buf_printf(&body, "\tif (draining())\n\t\treturn 0;\n");
		clause(g, &p->pc[i], &body);
	}
	if (g->failed) {
		dt_free(body.s);
		return -1;
	}
	if (p->kind == P_USDT) {
		memcpy(g->out->groups[gi].arg_used, g->arg_used, sizeof(g->arg_used));
		cg_group_program(g, (size_t)gi, body.s, o);
		rc = p->attach ? eg_probe_sites(g->out, p, (size_t)gi, ix, g->diag) : 0;
	} else {
		rc = cg_other_program(g, pi, body.s, o);
	}
	dt_free(body.s);
	return rc;
}

/* Programs for clauses that files coming later may need (cg_spare_probe()). */
static void spares(struct cg *g, struct dt_buf *o)
{
	size_t c;

	for (c = 0; c < g->prog->nclauses && !g->failed; c++) {
		const struct dt_probe *p = cg_spare_probe(g, c);

		if (p) {
			g->probe = p;
			if (probe(g, (size_t)-1, o))
				g->failed = true;
		}
	}
}

int eg_codegen(struct dt_program *prog, struct dt_probes *probes, struct dt_tables *t,
	       struct eg_prog *out, struct usdt_diag *diag)
{
	struct cg g = {.prog = prog, .t = t, .out = out, .diag = diag, .expr = cg_expr_value};
	struct dt_buf progs = {0};
	long rb = prog->o->bufsize > 0 ? prog->o->bufsize : 4L << 20;
	size_t i;

	memset(out, 0, sizeof(*out));
	g.strsize = prog->o->strsize > 0 ? prog->o->strsize : EG_STRSIZE_DEFAULT;
	if (prog->o->scratchsize > (long)CG_DMEM_MAX) {
		usdt_error(diag, "scratchsize %ld: -x engine=bpf has %u bytes of scratch at most",
			   prog->o->scratchsize, CG_DMEM_MAX);
		return -1;
	}
	if (g.strsize > EG_STRSIZE_MAX) {
		usdt_error(diag, "strsize %ld: dtrace reads strings of %d bytes at most", g.strsize,
			   EG_STRSIZE_MAX);
		return -1;
	}
	t->strsize = g.strsize;
	g.strsize++; /* a string holds strsize characters and its NUL (DTrace's strsize) */
	t->wall_offset = usdt_wall_offset_ns();
	out->strsize = g.strsize;
	g.scratch = 16 + 8 * EG_NQ; /* also the zero value of any aggregation */
	out->started_act = new_action(&g, A_STARTED);
	if (cg_check_unmatched(&g, probes))
		return -1;
	cg_vars_scan(&g, probes);
	if (g.scratch < cg_vars_size(&g))
		g.scratch = cg_vars_size(&g); /* a thread's variables start from zeroes */
	/* END last: its printa()s name what the other clauses aggregate */
	for (int end = 0; end < 2; end++)
		for (i = 0; i < probes->n && !g.failed; i++) {
			g.probe = &probes->v[i];
			if ((g.probe->kind == P_END) == end && probe(&g, i, &progs))
				g.failed = true;
		}
	if (!prog->o->compile_only && !prog->o->show_program)
		spares(&g, &progs);
	eg_probe_sites_end(out);
	cg_btf_free(&g);
	if (!g.failed && cg_fault_sizes(&g, probes)) {
		dt_free(progs.s);
		return -1;
	}
	if (g.failed) {
		dt_free(progs.s);
		return -1;
	}
	/* the exit dump: every aggregation, in order */
	out->dump_act = new_action(&g, A_DUMP);
	out->dump_printa = dt_xmalloc((t->naggs + 1) * sizeof(size_t));
	for (i = 0; i < t->naggs; i++) {
		size_t a = new_action(&g, A_PRINTA);

		t->acts[a].agg = i;
		size_t end = new_action(&g, A_PRINTA_END); /* (it moves t->acts) */

		t->acts[end].agg = i;
		out->dump_printa[i] = a;
	}
	/* the ring buffer: a power of two pages, room for 4 of the largest records */
	for (i = 0; i < out->nrecs; i++)
		if (rb < 4L * out->recs[i].size)
			rb = 4L * out->recs[i].size;
	for (i = 4096; (long)i < rb && i < (1ul << 30); i <<= 1)
		;
	rb = (long)i;
	dt_buf_printf(&out->c, "#define RINGBUF_SIZE %ld\n", rb);
	eg_prelude(&out->c, g.strsize, ROUND8(g.scratch));
	cg_sites_prelude(&out->c);
	cg_fault_functions(&out->c);
	cg_buf_functions(&g, &out->c);
	out->bufpolicy = prog->o->bufpolicy;
	out->bufsize = prog->o->bufsize > 0 ? prog->o->bufsize : 4L << 20;
	if (cg_spec_functions(&g, &out->c)) {
		dt_free(progs.s);
		return -1;
	}
	cg_agg_maps(&g, &out->c);
	cg_vars_maps(&g, &out->c);
	cg_dmem_maps(&g, &out->c);
	cg_strfn_maps(&g, &out->c);
	cg_arrays_maps(&g, &out->c);
	cg_bvar_maps(&g, &out->c);
	dt_buf_add(&out->c, progs.s, progs.n);
	dt_free(progs.s);
	return 0;
}
