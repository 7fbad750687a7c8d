/* SPDX-License-Identifier: MIT */
/*
 * The BPF engine's driver (README.md here is the theory):
 * the matched program is generated (codegen), compiled, loaded and attached
 * (loader), the notices printed, BEGIN fired and its records read, then a
 * `-c` process let go, as DTrace does. Records are read as they
 * come, drops reported each second. The run ends with exit(), a signal
 * (SIGINT, SIGTERM, SIGHUP) or the `-c`/`-p` processes gone; then END is
 * fired, its records read, and the exit dump printed from the maps. The
 * links belong to this process: they are detached before it returns.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "list_create.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void drain(struct eg_reader *rd)
{
	while (eg_reader_poll(rd, 0) > 0)
		;
}

/*
 * exit() read: with -x statusrate, DTrace's consumer sees it at its next
 * status check (every statusrate from the start), and END runs then;
 * without, at once.
 */
static bool exit_seen(const struct dt_consumer_opts *o, bool have_exit, int64_t t0, int64_t *due)
{
	int64_t now, r = o->statusrate_ns;

	if (!have_exit)
		return false;
	if (r <= 0)
		return true;
	now = usdt_clock_ns(CLOCK_MONOTONIC);
	if (!*due)
		*due = t0 + ((now - t0) / r + 1) * r;
	return now >= *due;
}

static bool targets_gone(const struct dt_consumer_opts *o, int created, bool *gone)
{
	size_t i, n = 0, ngone = 0;

	if (created > 0) {
		n++;
		gone[0] = gone[0] || dt_pid_gone(created, true, o->quiet);
		ngone += gone[0];
	}
	for (i = 0; i < o->npids; i++) {
		n++;
		gone[i + 1] = gone[i + 1] || dt_pid_gone(o->pids[i], false, o->quiet);
		ngone += gone[i + 1];
	}
	return n && ngone == n;
}

/*
 * Retained enablings: the probes of files that appeared since the start
 * (retain.c lists them, answering the daemon's NOTICEs) get links to the
 * programs already loaded. A probe whose clause set has a program takes
 * it; else, for every process, one link per clause to the clause's own
 * program (codegen_args.c's spares), which run in script order (clause-
 * local variables are then not shared between them). Anything else is one
 * line, and the rest goes on.
 */
static void attach_new(struct eg_prog *p, struct eg_loaded *l, const struct dt_program *prog,
		       const struct dt_probes *nps)
{
	size_t i, k;

	for (i = 0; i < nps->n; i++) {
		const struct dt_probe *pr = &nps->v[i];
		uint32_t ix = (uint32_t)p->nprobes;
		size_t first = p->nsites;
		struct dt_buf key = {0};
		char *text = NULL;
		size_t len = 0;
		FILE *sink = open_memstream(&text, &len);
		struct usdt_diag q;
		long gi;
		int rc = 0;

		if (pr->kind != P_USDT || !sink)
			continue;
		usdt_diag_init(&q, sink, "dtrace");
		DT_PUSH(p->probes, p->nprobes, pr);
		eg_group_key(prog, pr, &key);
		gi = eg_group_find(p, key.s);
		if (gi >= 0)
			rc = eg_probe_sites(p, pr, (size_t)gi, ix, &q);
		/* the kernel runs a site's newest link first: the last clause is attached first */
		for (k = pr->npc; gi < 0 && !rc && k-- > 0;) {
			char one[32];
			long g1;

			snprintf(one, sizeof(one), "%zu:*;", pr->pc[k].clause);
			g1 = pr->pc[k].any_pid ? eg_group_find(p, one) : -1;
			if (g1 < 0) {
				usdt_error(&q,
					   "no program runs its clauses (a clause that names "
					   "processes, or reads args[] and matched nothing at the "
					   "start)");
				rc = -1;
			} else {
				rc = eg_probe_sites(p, pr, (size_t)g1, ix, &q);
			}
		}
		if (!rc)
			rc = eg_attach_sites(l, p, first, &q);
		fclose(sink);
		if (rc) {
			const char *m = text ? text : "";

			if (!strncmp(m, "dtrace: error: ", 15))
				m += 15;
			fprintf(stderr, "dtrace: the probes of %s cannot be traced: %.*s\n",
				pr->mod, (int)strcspn(m, "\n"), m);
		}
		free(text);
		dt_free(key.s);
	}
	eg_probe_sites_end(p);
}

static int trace(struct dt_consumer_opts *o, struct dt_program *prog, struct dt_probes *ps,
		 struct eg_prog *p, struct dt_tables *t, int *created, struct usdt_diag *diag)
{
	struct dt_retain *rt = NULL;
	struct sigaction sa;
	struct dt_render r;
	struct eg_loaded *l;
	struct eg_reader *rd;
	bool *gone = dt_xmalloc((o->npids + 1) * sizeof(bool));
	long long last_drops = usdt_now_ms();
	int64_t t_go, exit_due = 0;
	int rc = 0;

	memset(gone, 0, (o->npids + 1) * sizeof(bool));
	if (geteuid() != 0) {
		usdt_error(diag, "tracing needs root (BPF programs are loaded): run dtrace as "
				 "root, e.g. with sudo");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	l = eg_load(p, diag);
	if (!l)
		return 1;
	dt_render_init(&r, o, t, stdout);
	rd = eg_reader_new(p, l, &r, diag);
	if (!rd) {
		eg_unload(l);
		return 1;
	}
	/* watching the daemon before BEGIN: what BEGIN prints says new files are seen */
	rt = dt_retain_start(prog);
	/* as DTrace: the notices, BEGIN's output, then the -c process goes on */
	dt_notices(o, ps);
	eg_fire_begin(l);
	if (eg_attach(l, p, diag)) {
		eg_reader_free(rd);
		eg_unload(l);
		dt_retain_unwatch(rt);
		dt_free(gone);
		return 1;
	}
	drain(rd);
	if (*created > 0)
		usdt_list_release(*created);
	t_go = usdt_clock_ns(CLOCK_MONOTONIC);
	while (!interrupted && !exit_seen(o, r.have_exit, t_go, &exit_due) &&
	       !eg_reader_filled(rd)) {
		struct pollfd pfd[2] = {{eg_reader_fd(rd), POLLIN, 0},
					{dt_retain_fd(rt), POLLIN, 0}};

		/* the daemon's NOTICEs: a program is held until its file is attached */
		if (poll(pfd, 2, rt ? 10 : 50) < 0 && errno != EINTR)
			break;
		if (rt) {
			struct dt_probes *nps = dt_xmalloc(sizeof(*nps));
			int64_t t0 = usdt_clock_ns(CLOCK_MONOTONIC), t1;
			double k0 = eg_links_ms(l);
			size_t n0 = p->nsites;
			int b;

			memset(nps, 0, sizeof(*nps));
			b = dt_retain_poll_probes(rt, nps);
			if (b <= 0) { /* (a batch's probes stay: its records name them) */
				dt_free(nps->v);
				dt_free(nps->matched);
				dt_free(nps);
			} else {
				t1 = usdt_clock_ns(CLOCK_MONOTONIC);
				attach_new(p, l, prog, nps);
				if (getenv("USDTKIT_ENGINE_TIMES"))
					fprintf(
					    stderr,
					    "dtrace: new files listed in %.2f ms, %zu sites "
					    "attached in %.2f ms (the kernel's links %.2f ms)\n",
					    (double)(t1 - t0) / 1e6, p->nsites - n0,
					    (double)(usdt_clock_ns(CLOCK_MONOTONIC) - t1) / 1e6,
					    eg_links_ms(l) - k0);
				dt_retain_started(rt, (unsigned)b);
			}
		}
		if (eg_reader_poll(rd, 0) < 0) {
			usdt_error(diag, "reading the ring buffer failed: %s", strerror(errno));
			rc = 1;
			break;
		}
		if (usdt_now_ms() - last_drops >= 1000) {
			eg_reader_drops(rd);
			last_drops = usdt_now_ms();
		}
		if (targets_gone(o, *created, gone))
			break;
	}
	dt_retain_unwatch(rt); /* no new file is attached now: hold nobody */
	drain(rd);
	if (!r.have_exit || rc == 0) {
		eg_fire_end(l);
		drain(rd);
	}
	eg_reader_dump(rd);
	dt_render_finish(&r);
	eg_reader_drops(rd);
	eg_reader_free(rd);
	eg_unload(l);
	if (*created > 0 && !gone[0])
		usdt_list_destroy(*created, diag);
	*created = -1;
	dt_free(gone);
	if (rc)
		return rc;
	return r.have_exit ? r.exit_status : 0;
}

static bool node_uses_args(const struct dt_node *n)
{
	size_t i;

	if (!n)
		return false;
	if (n->kind == N_ARGS || node_uses_args(n->a) || node_uses_args(n->b) ||
	    node_uses_args(n->c))
		return true;
	for (i = 0; i < n->nargs; i++)
		if (node_uses_args(n->args[i]))
			return true;
	return false;
}

static bool stmts_use_args(struct dt_stmt *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (node_uses_args(v[i]->e) || stmts_use_args(v[i]->then, v[i]->nthen) ||
		    stmts_use_args(v[i]->els, v[i]->nels))
			return true;
	return false;
}

/*
 * -e compiles every clause, as DTrace's does, matched or not (-Z): a clause
 * that matched no probe is given a stand-in, a probe of no file whose
 * arguments are 0 (no note types them), loaded with the rest and never
 * attached. Its code goes through clang and the verifier all the same. A
 * clause that uses args[] has none: their types are the probe's, and there
 * is no probe to give them.
 */
static void stand_ins(struct dt_program *prog, struct dt_probes *ps)
{
	size_t c, i, k;

	for (c = 0; c < prog->nclauses; c++) {
		const struct dt_pdesc *d = &prog->clauses[c]->descs[0];
		struct dt_pclause pc;
		struct dt_probe p;
		bool used = false;

		for (i = 0; i < ps->n && !used; i++)
			for (k = 0; k < ps->v[i].npc && !used; k++)
				used = ps->v[i].pc[k].clause == c;
		if (used || node_uses_args(prog->clauses[c]->pred) ||
		    stmts_use_args(prog->clauses[c]->body, prog->clauses[c]->nbody))
			continue;
		memset(&p, 0, sizeof(p));
		memset(&pc, 0, sizeof(pc));
		p.kind = P_TICK; /* a program of its own, attached to nothing under -e */
		p.attach = dt_xstrdup("interval:s:1");
		p.prov = dt_xstrdup(d->field[0] ? d->field[0] : "");
		p.mod = dt_xstrdup(d->field[1] ? d->field[1] : "");
		p.func = dt_xstrdup(d->field[2] ? d->field[2] : "");
		p.name = dt_xstrdup(d->field[3] ? d->field[3] : "");
		p.id = ++ps->next_id;
		pc.clause = c;
		pc.any_pid = true;
		DT_PUSH(p.pc, p.npc, pc);
		DT_PUSH(ps->v, ps->n, p);
	}
}

int dt_engine_run(struct dt_consumer_opts *o, struct dt_program *prog, struct dt_probes *ps,
		  int created, struct usdt_diag *diag)
{
	struct dt_tables t;
	struct eg_prog p;
	int rc = 1;

	memset(&t, 0, sizeof(t));
	if (o->compile_only && !o->show_program)
		stand_ins(prog, ps);
	/* what it cannot compile: one error at the construct */
	if (eg_codegen(prog, ps, &t, &p, diag) || diag->errors)
		goto out;
	if (o->show_program) {
		fwrite(p.c.s, 1, p.c.n, stdout);
		rc = 0;
		goto out;
	}
	if (o->compile_only) {
		/* (as a user, the load says root is needed: after the cache, which is theirs) */
		struct eg_loaded *l = eg_check(&p, diag);

		if (!l)
			goto out;
		eg_unload(l);
		dt_notices(o, ps);
		rc = 0;
		goto out;
	}
	rc = trace(o, prog, ps, &p, &t, &created, diag);
out:
	if (created > 0)
		usdt_list_destroy(created, diag);
	return rc;
}
