/* SPDX-License-Identifier: MIT */
/*
 * The driver of `dtrace -n/-s`: the top of the consumer's layers.
 *
 * Theory. The order is DTrace's: a -c command is created stopped at its
 * main (dtrace/list/list_create.c: every constructor has run, so its -G
 * object has registered and its libraries are mapped) and $target is its
 * pid, a -p process must exist; every -n/-s source is parsed (parse.c),
 * D's compile-time checks run (check*.c, formats.c), the descriptions are
 * matched (match.c), and the one engine (dtrace/engine: BPF C, clang,
 * libbpf) generates, compiles, loads and runs the program, and lets the
 * -c process go or destroys it. What the engine cannot compile is one
 * error at its file:line:column, with its tag (D_UNSUPPORTED for valid D
 * not done yet): nothing else runs the program. The exit status is
 * exit()'s, else 0, else 1 for an error (2: dtrace.c's usage errors).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "d.h"
#include "list_create.h"
#include "stability.h"

/* A macro argument the program never refers to: an error, unless -x argref. */
static int macros_unused(const struct dt_consumer_opts *o, const struct dt_src *src,
			 struct usdt_diag *diag)
{
	size_t i;

	if (o->argref || !src)
		return 0;
	for (i = 0; i < o->nmacros && i < 64; i++)
		if (!(o->macros_used & (1ULL << i))) {
			usdt_error_tag_at(diag, "D_MACRO_UNUSED",
					  diag->tags ? src->what : src->file, 0, 0, NULL,
					  "extraneous argument '%s' ($%zu is not referenced)",
					  o->macros[i], i + 1);
			return -1;
		}
	return 0;
}

/* DTrace's words for a source's errors under -xerrtags. */
static const char *dt_what(char kind, const char *name)
{
	struct dt_buf b = {0};

	if (kind == 's')
		dt_buf_printf(&b, "failed to compile script %s", name);
	else
		dt_buf_printf(&b, "invalid probe specifier %s", name);
	return b.s;
}

int dt_consume(struct dt_consumer_opts *o, struct usdt_diag *diag)
{
	struct dt_program prog = {.o = o};
	struct dt_probes probes = {0};
	const struct dt_src *first = NULL;
	int created = -1, rc = 1;
	size_t i;

	diag->tags = o->errtags;
	if (o->cmd) {
		created = usdt_list_create(o->cmd, diag);
		if (created < 0)
			return 1;
		o->target = created;
	} else if (o->npids) {
		o->target = o->pids[0];
		for (i = 0; i < o->npids; i++)
			if (kill(o->pids[i], 0) && errno == ESRCH) {
				/* DTrace's words */
				fprintf(diag->out,
					"dtrace: failed to grab pid %d: No such process\n",
					o->pids[i]);
				diag->errors++;
				return 1;
			}
	}
	for (i = 0; i < o->nsources; i++) {
		struct dt_src *src = dt_xmalloc(sizeof(*src));

		memset(src, 0, sizeof(*src)); /* not the library's: its declarations do not yield */
		/* the sources live until the end: positions point into them */
		src->file = o->sources[i].kind == 's' ? o->sources[i].name : "<command line>";
		src->text = o->sources[i].text;
		src->what = dt_what(o->sources[i].kind, o->sources[i].name);
		if (!first)
			first = src;
		dt_parse(&prog, src, i, o->sources[i].kind == 's', diag);
	}
	if (!diag->errors && o->opt_error[0])
		usdt_error(diag, "%s", o->opt_error);
	if (diag->errors || dt_stability_amin(&prog, o, false, diag) || dt_check(&prog, diag) ||
	    dt_stability_amin(&prog, o, true, diag) || macros_unused(o, first, diag))
		goto out;
	if (!prog.nclauses) {
		usdt_error(diag, "%s: no probe description: nothing to trace",
			   o->nsources ? o->sources[0].name : "program");
		goto out;
	}
	for (i = 0; o->verbose && i < o->nsources; i++)
		dt_stability_report(&prog, i, o->sources[i].kind == 's', o->sources[i].name,
				    stdout);
	if (o->destructive && !o->quiet)
		fprintf(stderr, "dtrace: allowing destructive actions\n");
	if (dt_match(&prog, &probes, diag) || diag->errors)
		goto out;
	rc = dt_engine_run(o, &prog, &probes, created, diag);
	created = -1; /* the engine let it go, or destroyed it */
out:
	if (created > 0)
		usdt_list_destroy(created, diag);
	dt_arena_release();
	return rc;
}
