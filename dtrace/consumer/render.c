/* SPDX-License-Identifier: MIT */
/*
 * DTrace's output, byte for byte, from the engine's records and
 * aggregation entries (dtrace/engine/records.c).
 *
 * Theory. Every byte on our stdout is written here, in DTrace's formats
 * (illumos libdtrace dt_consume.c, dt_printf.c, dt_aggregate.c): the
 * record prefix `"%3d %6d %32s "` under a `"%3s %6s %32s\n"` header and the
 * record's closing newline (unless quiet), printf with DTrace's conversions
 * (`%Y`, `%@d`, `%*s`, `%i`, `%S`, any width on any integer), trace()'s
 * widths by the value's size, printa() and the exit dump (entries sorted by
 * value, then key; keys `"  %-50s"` for strings and `" %16lld"`/`" %8d"`
 * by size; values `" %16lld"`, stddev's `" %16llu"`), the quantize,
 * lquantize and llquantize histograms, user stacks, the newline at the end
 * of the run. The engine hands each action's fields as text (the tables
 * say which action a record's fields are, and how each value is made of
 * them: dt_recipe), and between a printa's two actions the aggregation's
 * entries, merged across CPUs. This file is the top of the renderer's
 * layers (render.h lists them): records, the run's end, the engine's way
 * in.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "d.h"
#include "render.h"

void dt_render_init(struct dt_render *r, const struct dt_consumer_opts *o, struct dt_tables *t,
		    FILE *out)
{
	memset(r, 0, sizeof(*r));
	if (o)
		r->run_opts = *o;
	r->o = o ? &r->run_opts : NULL;
	r->t = t;
	r->out = out;
	r->printa_agg = -1;
}

/* ---- records ---- */

static void end_record(struct dt_render *r)
{
	if (r->in_record)
		fputc('\n', r->out);
	r->in_record = false;
}

/*
 * trace() of a value: DTrace's widths by the recorded size and its type's
 * sign (dt_print_trace: " %3d", " %5d", " %10d", " %19d" signed, " %20u"
 * for an unsigned 64-bit one), none under quiet.
 */
static void trace_value(struct dt_render *r, const struct val *v)
{
	static const int sw[] = {3, 5, 10, 19}, uw[] = {3, 5, 10, 20};
	unsigned long long u = (unsigned long long)v->i;
	long long s = (long long)v->i;
	int k;

	if (v->is_stack) {
		dtr_print_ustack(r->out, v->s);
		return;
	}
	if (v->is_sym) { /* DTrace's dt_print_sym(), quiet or not */
		fprintf(r->out, "  %-50s", v->s);
		return;
	}
	if (v->is_str) {
		fprintf(r->out, r->o->quiet ? "%s" : "  %-33s", v->s);
		return;
	}
	k = v->size == 1 ? 0 : v->size == 2 ? 1 : v->size == 4 ? 2 : 3;
	if (k < 3) { /* a narrow value as its type's sign reads it */
		u &= (1ULL << (8 << k)) - 1;
		s = (long long)(u ^ (1ULL << ((8 << k) - 1))) - (1LL << ((8 << k) - 1));
	}
	if (r->o->quiet && v->is_unsigned)
		fprintf(r->out, "%llu", u);
	else if (r->o->quiet)
		fprintf(r->out, "%lld", s);
	else if (v->is_unsigned)
		fprintf(r->out, " %*llu", uw[k], u);
	else
		fprintf(r->out, " %*lld", sw[k], s);
}

/*
 * system(): the command printf's conversions make, run by the shell as
 * DTrace's consumer runs it, when its record is read; what it writes goes
 * after what dtrace wrote before it.
 */
static void run_system(struct dt_render *r, const char *fmt, struct val *v, size_t nv, bool fre)
{
	static int saved = -1; /* the output as it was before the first freopen() */
	char *cmd = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&cmd, &len);
	int rc, fd;

	if (!m)
		return;
	dtr_dformat(m, fmt, v, nv, NULL, NULL);
	fclose(m);
	fflush(r->out);
	if (fre) { /* DTrace's freopen(): output appended to the file; "" the original output */
		if (saved < 0)
			saved = dup(fileno(r->out));
		fd = cmd[0] ? open(cmd, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666) : saved;
		if (fd < 0 || dup2(fd, fileno(r->out)) < 0)
			fprintf(stderr, "dtrace: failed to freopen \"%s\": %s\n", cmd,
				strerror(errno));
		if (fd >= 0 && fd != saved)
			close(fd);
		free(cmd);
		return;
	}
	rc = system(cmd);
	if (rc == -1)
		fprintf(stderr, "dtrace: system() failed: %s\n", cmd);
	free(cmd);
}

static void record(struct dt_render *r, size_t id, char **f, size_t nf)
{
	const struct dt_action *act;
	struct dt_agg *a;
	size_t i;

	if (id >= r->t->nacts)
		return;
	act = &r->t->acts[id];
	a = ((act->kind >= A_PRINTA && act->kind <= A_TRUNC) || act->kind == A_CLEAR) &&
		    act->agg < r->t->naggs
		? &r->t->aggs[act->agg]
		: NULL;
	switch (act->kind) {
	case A_CLAUSE: {
		char fn[600];

		end_record(r);
		if (r->o && r->o->quiet)
			return; /* setopt("quiet") of a program compiled without it */
		/* _DTRACE_TESTING: without the CPU and ID columns, as DTrace's */
		if (!r->header_done && r->o->testing)
			fprintf(r->out, "%32s\n", "FUNCTION:NAME");
		else if (!r->header_done)
			fprintf(r->out, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME");
		r->header_done = true;
		snprintf(fn, sizeof(fn), "%s:%s", act->probe->func, act->probe->name);
		if (r->o->testing)
			fprintf(r->out, "%32s ", fn);
		else
			fprintf(r->out, "%3d %6u %32s ", nf ? atoi(f[0]) : 0, act->probe->id, fn);
		r->in_record = true;
		return;
	}
	case A_PRINTF:
	case A_FREOPEN:
	case A_SYSTEM:
	case A_TRACE: {
		struct val *v = dt_xmalloc((act->nargs + 1) * sizeof(*v));

		for (i = 0; i < act->nargs; i++)
			dtr_eval(act->args[i].r, &act->args[i], f, nf, &v[i]);
		if (act->kind == A_SYSTEM || act->kind == A_FREOPEN)
			run_system(r, act->fmt, v, act->nargs, act->kind == A_FREOPEN);
		else if (act->kind == A_PRINTF)
			dtr_dformat(r->out, act->fmt, v, act->nargs, NULL, NULL);
		else if (act->nargs && v[0].is_str && r->o && r->o->rawbytes)
			dtr_print_rawbytes(r->out, v[0].s, r->t->strsize);
		else if (act->nargs)
			trace_value(r, &v[0]);
		for (i = 0; i < act->nargs; i++)
			dtr_val_free(&v[i]);
		dt_free(v);
		return;
	}
	case A_PRINTA:
		r->printa_agg = (long)act->agg;
		r->printa_act = id;
		r->nents = 0;
		return;
	case A_PRINTA_END: {
		const struct dt_action *start = &r->t->acts[r->printa_act];

		if (r->printa_agg < 0)
			return;
		if (r->njoined) {
			dtr_print_joined(r, start);
		} else if (start->clause != (size_t)-1) {
			if (!start->fmt)
				fputc('\n', r->out); /* DTrace's printa(@a): a blank line first */
			dtr_print_agg(r, start, a);
			a->printed = true;
		} else if (!a->printed) {
			dtr_print_agg(r, start, a); /* the exit dump: what no printa printed */
		}
		for (i = 0; i < r->nents; i++)
			dtr_entry_free(&r->ents[i]);
		r->nents = 0;
		r->printa_agg = -1;
		return;
	}
	case A_SETOPT: {
		char name[128], *eq;
		const char *why;

		snprintf(name, sizeof(name), "%s", act->fmt ? act->fmt : "");
		eq = strchr(name, '=');
		if (eq)
			*eq++ = '\0';
		why = dt_set_runtime_option(&r->run_opts, name, eq);
		if (why && act->probe) /* DTrace's words, for the probe and clause */
			fprintf(stderr,
				"dtrace: error in dt_clause_%zu for probe ID %u (%s:%s:%s:%s): "
				"couldn't set option \"%s\" to \"%s\": %s\n\n",
				act->clause, act->probe->id,
				act->probe->prov ? act->probe->prov : "",
				act->probe->mod ? act->probe->mod : "",
				act->probe->func ? act->probe->func : "", act->probe->name, name,
				eq ? eq : "1", why);
		return;
	}
	case A_EXIT:
		r->have_exit = true;
		r->exit_status = nf ? atoi(f[0]) : 0;
		return;
	case A_NORMALIZE:
		a->normal = nf ? strtoll(f[0], NULL, 10) : 1;
		if (a->normal <= 0)
			a->normal = 1;
		return;
	case A_DENORMALIZE:
		a->normal = 1;
		return;
	case A_TRUNC:
		a->has_trunc = true;
		a->trunc = nf ? strtoll(f[0], NULL, 10) : 0;
		return;
	case A_CLAUSE_END:
		end_record(r);
		return;
	case A_STARTED:
		return;
	case A_USTACK:
		dtr_print_ustack(r->out, nf ? f[0] : "");
		return;
	case A_TRACEMEM:
		dtr_print_bytes(r->out, nf ? f[0] : "", nf > 1 ? strtoul(f[1], NULL, 10) : 0);
		return;
	case A_PRINT:
		dt_render_print(r->out, act->fmt, nf ? f[0] : "0", nf > 1 ? f[1] : "",
				r->o->printsize);
		return;
	case A_CLEAR: /* (the engine clears the map when it reads the record) */
		return;
	case A_DUMP:
		end_record(r);
		fputc('\n', r->out);
		r->dumping = true;
		return;
	}
}

void dt_render_finish(struct dt_render *r)
{
	end_record(r);
	fflush(r->out);
}

/* ---- the engine's values (dtrace/engine/records.c) ---- */

/* (The caller flushes r->out: after each batch of records, not each record.) */
void dt_render_record(struct dt_render *r, size_t act, char **f, size_t nf)
{
	record(r, act, f, nf);
}

void dt_render_agg_entry(struct dt_render *r, char **keys, size_t nkeys, int64_t v,
			 const int64_t *buckets, size_t nbuckets)
{
	const struct dt_agg *a;
	struct dt_entry e;
	size_t k;

	if (r->printa_agg < 0)
		return;
	a = &r->t->aggs[r->printa_agg];
	memset(&e, 0, sizeof(e));
	e.v = v;
	if (a->fn == F_STDDEV && (nbuckets == 2 || nbuckets == 3)) {
		/* v the sum, then count, sum of squares (its low and high words) */
		e.st[0] = buckets[0];
		e.st[1] = v;
		e.st[2] = buckets[1];
		e.st[3] = nbuckets == 3 ? buckets[2] : 0;
		nbuckets = 0;
	}
	if (nbuckets) {
		e.buckets = dt_xmalloc(nbuckets * sizeof(int64_t));
		memcpy(e.buckets, buckets, nbuckets * sizeof(int64_t));
		e.nbuckets = nbuckets;
		dtr_bucket_sum(a, &e);
	}
	if (a->keyed) {
		e.nkeys = a->nkeys;
		e.keys = dt_xmalloc((a->nkeys + 1) * sizeof(*e.keys));
		for (k = 0; k < a->nkeys; k++)
			dtr_eval(a->keys[k].r, &a->keys[k], keys, nkeys, &e.keys[k]);
	}
	dtr_add_entry(&r->ents, &r->nents, a, &e, !a->keyed);
}
