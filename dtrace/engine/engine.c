/* SPDX-License-Identifier: MIT */
/*
 * The BPF engine's driver (`-x engine=bpf`; README.md here is the theory):
 * the matched program is generated (codegen), compiled, loaded and attached
 * (loader), the notices printed, BEGIN fired and its records read, then a
 * `-c` process let go, as with the bpftrace backend. Records are read as they
 * come, drops reported each second. The run ends with exit(), a signal
 * (SIGINT, SIGTERM, SIGHUP) or the `-c`/`-p` processes gone; then END is
 * fired, its records read, and the exit dump printed from the maps. The
 * links belong to this process: they are detached before it returns.
 */
#include <errno.h>
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

static int trace(struct dt_consumer_opts *o, struct dt_probes *ps, struct eg_prog *p,
		 struct dt_tables *t, int *created, struct usdt_diag *diag)
{
	struct sigaction sa;
	struct dt_render r;
	struct eg_loaded *l;
	struct eg_reader *rd;
	bool *gone = dt_xmalloc((o->npids + 1) * sizeof(bool));
	long long last_drops = usdt_now_ms();
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
	r.merged = dt_merged_new();
	rd = eg_reader_new(p, l, &r, diag);
	if (!rd) {
		eg_unload(l);
		return 1;
	}
	/* as DTrace: the notices, BEGIN's output, then the -c process goes on */
	dt_notices(o, ps);
	eg_fire_begin(l);
	drain(rd);
	if (*created > 0)
		usdt_list_release(*created);
	while (!interrupted && !r.have_exit) {
		if (eg_reader_poll(rd, 50) < 0) {
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

int dt_engine_run(struct dt_consumer_opts *o, struct dt_program *prog, struct dt_probes *ps,
		  int created, struct usdt_diag *diag)
{
	struct dt_tables t;
	struct eg_prog p;
	int rc = 1;

	memset(&t, 0, sizeof(t));
	if (eg_codegen(prog, ps, &t, &p, diag) || diag->errors)
		goto out;
	if (o->show_program) {
		fwrite(p.c.s, 1, p.c.n, stdout);
		rc = 0;
		goto out;
	}
	if (o->compile_only) {
		struct eg_loaded *l = eg_check(&p, diag);

		if (!l)
			goto out;
		eg_unload(l);
		dt_notices(o, ps);
		rc = 0;
		goto out;
	}
	rc = trace(o, ps, &p, &t, &created, diag);
out:
	if (created > 0)
		usdt_list_destroy(created, diag);
	return rc;
}
