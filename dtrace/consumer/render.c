/* SPDX-License-Identifier: MIT */
/*
 * DTrace's output, byte for byte, from bpftrace's -f json stream.
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
 * of the run. bpftrace only carries values: records of
 * `\036<action>\037<field>...` (translate.c; a record's fields may come
 * before it, one event each, `\035<cpu>\037<field>`, kept per CPU) and its
 * map dumps, which arrive between a printa's two records (stddev's three
 * maps, llquantize's count per bucket, merged here into entries).
 * This file is the top of the renderer's layers (render.h lists them):
 * records, the run's end, and the BPF engine's way in.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "json.h"
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

static void trace_value(struct dt_render *r, const struct val *v)
{
	if (v->is_stack) {
		dtr_print_ustack(r->out, v->s);
		return;
	}
	if (r->o->quiet) {
		if (v->is_str)
			fputs(v->s, r->out);
		else
			fprintf(r->out, "%lld", (long long)v->i);
		return;
	}
	if (v->is_str) {
		fprintf(r->out, "  %-33s", v->s);
		return;
	}
	switch (v->size) { /* a narrow value as its type's sign reads it (DTrace: by size) */
	case 1:
		fprintf(r->out, " %3d", v->is_unsigned ? (int)(uint8_t)v->i : (int)(int8_t)v->i);
		break;
	case 2:
		fprintf(r->out, " %5d", v->is_unsigned ? (int)(uint16_t)v->i : (int)(int16_t)v->i);
		break;
	case 4:
		if (v->is_unsigned)
			fprintf(r->out, " %8u", (unsigned)v->i);
		else
			fprintf(r->out, " %8d", (int)v->i);
		break;
	default:
		fprintf(r->out, " %16lld", (long long)v->i);
		break;
	}
}

static void record(struct dt_render *r, size_t id, char **f, size_t nf)
{
	const struct dt_action *act;
	struct dt_agg *a;
	size_t i;

	if (id >= r->t->nacts || r->done)
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
		/* _DTRACE_TESTING (DTrace's test mode): no CPU and ID, which vary between runs */
		if (!r->header_done && getenv("_DTRACE_TESTING"))
			fprintf(r->out, "%32s\n", "FUNCTION:NAME");
		else if (!r->header_done)
			fprintf(r->out, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME");
		r->header_done = true;
		snprintf(fn, sizeof(fn), "%s:%s", act->probe->func, act->probe->name);
		if (getenv("_DTRACE_TESTING"))
			fprintf(r->out, "%32s ", fn);
		else
			fprintf(r->out, "%3d %6u %32s ", nf ? atoi(f[0]) : 0, act->probe->id, fn);
		r->in_record = true;
		return;
	}
	case A_PRINTF:
	case A_TRACE: {
		struct val *v = dt_xmalloc((act->nargs + 1) * sizeof(*v));

		for (i = 0; i < act->nargs; i++)
			dtr_eval(act->args[i].r, &act->args[i], f, nf, &v[i]);
		if (act->kind == A_PRINTF)
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
		} else if (r->retained && start->clause == (size_t)-1) {
			dtr_merged_take(r, a); /* printed by the first instance */
		} else if (start->clause != (size_t)-1) {
			dtr_merged_add(r, a);
			if (!start->fmt)
				fputc('\n', r->out); /* DTrace's printa(@a): a blank line first */
			dtr_print_agg(r, start, a);
			a->printed = true;
		} else if (!a->printed) {
			dtr_merged_add(r, a);
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
		r->started = true;
		return;
	case A_USTACK:
		dtr_print_ustack(r->out, nf ? f[0] : "");
		return;
	case A_CLEAR:
		if (a)
			dtr_merged_clear(r, a, nf && atoi(f[0]));
		return;
	case A_DUMP:
		end_record(r);
		if (!r->retained)
			fputc('\n', r->out);
		r->dumping = true;
		return;
	}
}

static struct dt_pending *pending(struct dt_render *r, long cpu)
{
	struct dt_pending p = {.cpu = cpu};
	size_t i;

	for (i = 0; i < r->npend; i++)
		if (r->pend[i].cpu == cpu)
			return &r->pend[i];
	DT_PUSH(r->pend, r->npend, p);
	return &r->pend[r->npend - 1];
}

int dt_render_line(struct dt_render *r, const char *line, struct usdt_diag *diag)
{
	struct dt_json *j = dt_json_parse(line);
	const struct dt_json *type, *data;
	int rc = 0;

	(void)diag;
	if (!j)
		return -1;
	type = dt_json_get(j, "type");
	data = dt_json_get(j, "data");
	if (!type || type->kind != J_STRING) {
		rc = -1;
	} else if (!strcmp(type->s, "printf") && data && data->kind == J_STRING) {
		const char *s = data->s;

		if (s[0] == '\035') {
			/* "\035cpu\037field": a field sent alone, the CPU's next record's */
			char *end;
			struct dt_pending *pd = pending(r, strtol(s + 1, &end, 10));

			DT_PUSH(pd->f, pd->n, dt_xstrdup(*end == '\037' ? end + 1 : end));
		} else if (s[0] == '\036') {
			char **f = NULL, *end;
			size_t nf = 0, id = strtoul(s + 1, &end, 10);
			const char *p = end;

			if (*p == '\035') { /* "\036act\035cpu": its fields came alone */
				struct dt_pending *pd = pending(r, strtol(p + 1, &end, 10));

				f = pd->f, nf = pd->n;
				pd->f = NULL, pd->n = 0;
				p = end;
			}

			while (*p == '\037') {
				const char *e = strchr(p + 1, '\037');
				size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
				char *field = dt_xmalloc(n + 1);

				memcpy(field, p + 1, n);
				field[n] = '\0';
				DT_PUSH(f, nf, field);
				p += n + 1;
			}
			record(r, id, f, nf);
			while (nf)
				dt_free(f[--nf]);
			dt_free(f);
		}
	} else if (!strcmp(type->s, "attached_probes")) {
		const struct dt_json *n = dt_json_get(data, "probes");

		r->attached = n ? (unsigned long)n->i : 0;
		r->attached_seen = true;
	} else if ((!strcmp(type->s, "map") || !strcmp(type->s, "hist") ||
		    !strcmp(type->s, "stats")) &&
		   r->printa_agg >= 0) {
		dtr_gather(r, data);
	} else if (!strcmp(type->s, "lost_events")) {
		const struct dt_json *n = dt_json_get(data, "events");

		fprintf(stderr, "dtrace: %lld drops\n", n ? (long long)n->i : 0LL);
	}
	fflush(r->out);
	dt_json_free(j);
	return rc;
}

void dt_render_finish(struct dt_render *r)
{
	end_record(r);
	if (!r->retained)
		dtr_merged_print_rest(r);
	fflush(r->out);
}

/* ---- the BPF engine's values (dtrace/engine/records.c) ---- */

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
