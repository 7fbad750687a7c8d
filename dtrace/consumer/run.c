/* SPDX-License-Identifier: MIT */
/*
 * Running a D program: process control, bpftrace, the end of the run.
 *
 * Theory. The order is DTrace's: a -c command is created stopped at its
 * main (dtrace/list/list_create.c: every constructor has run, so its -G
 * object has registered and its libraries are mapped) and $target is its
 * pid; the program is parsed, its descriptions matched, translated; bpftrace
 * starts (its own process group: a terminal's Ctrl-C reaches dtrace, which
 * decides) with `-f json`; when bpftrace reports its probes attached the
 * `matched N probes` notices are printed and the -c process is let go. The
 * run ends when bpftrace does: exit() in the program, dtrace interrupted
 * (SIGINT, SIGTERM: bpftrace gets SIGINT, runs END, which prints the exit
 * dump), or every -c/-p process gone (the same, after `dtrace: pid N has
 * exited`). bpftrace's stderr is kept and never shown raw: a failure is one
 * line naming what to do. The exit status is exit()'s, else 0, else 1 for
 * an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "d.h"
#include "list_create.h"

static volatile sig_atomic_t interrupted;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted++;
}

static long parse_size(const char *v)
{
	char *end;
	long n = strtol(v, &end, 10);

	switch (*end) {
	case 'k':
	case 'K':
		n <<= 10;
		break;
	case 'm':
	case 'M':
		n <<= 20;
		break;
	case 'g':
	case 'G':
		n <<= 30;
		break;
	default:
		break;
	}
	return n;
}

int dt_set_option(struct dt_consumer_opts *o, const char *opt, const char *val)
{
	static const char *const ignored[] = {
	    "switchrate",   "aggrate",	     "cleanrate", "statusrate",	 "nspec",
	    "specsize",	    "aggsize",	     "cpu",	  "stackframes", "ustackframes",
	    "jstackframes", "jstackstrsize", "zdefs",	  "evaltime",	 "nolibs",
	    "bufpolicy",    "bufresize",     "grabanon",  "linkmode",	 "rawbytes",
	    "aggpercpu",    "stackindent",   NULL};
	size_t i;

	if (!strcmp(opt, "quiet")) {
		o->quiet = true;
	} else if (!strcmp(opt, "destructive")) {
		o->destructive = true;
	} else if (!strcmp(opt, "defaultargs")) {
		o->defaultargs = true;
	} else if (!strcmp(opt, "bpftrace")) {
		o->show_program = true;
	} else if (!strcmp(opt, "strsize") && val) {
		o->strsize = parse_size(val);
	} else if (!strcmp(opt, "bufsize") && val) {
		o->bufsize = parse_size(val);
	} else if (!strcmp(opt, "dynvarsize") && val) {
		o->dynvarsize = parse_size(val);
	} else if (!strcmp(opt, "zdefs")) {
		o->zero_ok = true;
	} else {
		for (i = 0; ignored[i]; i++)
			if (!strcmp(opt, ignored[i]))
				return 0;
		return -1;
	}
	return 0;
}

/* "-n 'a:::b /x/ { ... }'": the description as DTrace quotes it (cut at { / ;). */
static void notices(const struct dt_consumer_opts *o, const struct dt_probes *ps)
{
	size_t i;

	if (o->quiet)
		return;
	for (i = 0; i < o->nsources; i++) {
		const struct dt_source *s = &o->sources[i];
		size_t n = ps->matched[i];

		if (s->kind == 'n')
			fprintf(stderr, "dtrace: description '%.*s' matched %zu probe%s\n",
				(int)strcspn(s->name, "{/;"), s->name, n, n == 1 ? "" : "s");
		else
			fprintf(stderr, "dtrace: script '%s' matched %zu probe%s\n", s->name, n,
				n == 1 ? "" : "s");
	}
}

/*
 * The one line of bpftrace's stderr worth showing: its first ERROR, else
 * its first line that is not a warning; or a default.
 */
static void bpftrace_failed(const char *err, int status)
{
	const char *p = err, *best = NULL, *other = NULL;

	while (p && *p && !best) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *m = memmem(p, n, "ERROR", 5);

		if (m)
			best = m;
		else if (!other && n && !memmem(p, n, "WARNING", 7) &&
			 !memmem(p, n, "RLIMIT_MEMLOCK", 14))
			other = p;
		p = e ? e + 1 : NULL;
	}
	if (!best)
		best = other;
	if (best) {
		size_t n = strcspn(best, "\n");

		if (!strncmp(best, "ERROR: ", 7))
			best += 7, n -= 7;
		fprintf(stderr,
			"dtrace: could not enable tracing: bpftrace: %.*s (see the program with "
			"-x bpftrace)\n",
			(int)n, best);
	} else {
		fprintf(stderr,
			"dtrace: could not enable tracing: bpftrace exited with status %d\n",
			status);
	}
}

static const char *bpftrace_path(void)
{
	const char *b = getenv("BPFTRACE");

	return b && *b ? b : "bpftrace";
}

static int spawn_bpftrace(const struct dt_consumer_opts *o, int progfd, int *out, int *err)
{
	int po[2], pe[2], pid;
	char path[64], env[64];

	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", progfd);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *argv[6];
		int n = 0;

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (o->strsize) {
			snprintf(env, sizeof(env), "%ld", o->strsize > 200 ? 200 : o->strsize);
			setenv("BPFTRACE_STRLEN", env, 1);
		}
		if (o->bufsize) {
			snprintf(env, sizeof(env), "%ld",
				 o->bufsize / 4096 > 0 ? o->bufsize / 4096 : 1);
			setenv("BPFTRACE_PERF_RB_PAGES", env, 1);
		}
		if (o->dynvarsize) {
			snprintf(env, sizeof(env), "%ld",
				 o->dynvarsize / 64 > 4096 ? o->dynvarsize / 64 : 4096);
			setenv("BPFTRACE_MAP_KEYS_MAX", env, 1);
		}
		argv[n++] = bpftrace_path();
		argv[n++] = "-f";
		argv[n++] = "json";
		if (o->destructive)
			argv[n++] = "--unsafe";
		argv[n++] = path;
		argv[n] = NULL;
		execvp(argv[0], (char **)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	*out = po[0];
	*err = pe[0];
	return pid;
}

struct watched {
	int pid;
	bool child; /* ours (-c): waitpid; else kill(pid, 0) */
	bool gone;
};

static bool all_gone(struct watched *w, size_t n, bool quiet)
{
	size_t i, gone = 0;

	for (i = 0; i < n; i++) {
		if (!w[i].gone) {
			int status;

			if (w[i].child) {
				if (waitpid(w[i].pid, &status, WNOHANG) == w[i].pid) {
					w[i].gone = true;
					if (quiet)
						;
					else if (WIFEXITED(status) && WEXITSTATUS(status))
						fprintf(stderr,
							"dtrace: pid %d exited with status %d\n",
							w[i].pid, WEXITSTATUS(status));
					else if (WIFSIGNALED(status))
						fprintf(stderr, "dtrace: pid %d terminated by %s\n",
							w[i].pid,
							sigabbrev_np(WTERMSIG(status))
							    ? sigabbrev_np(WTERMSIG(status))
							    : "a signal");
					else
						fprintf(stderr, "dtrace: pid %d has exited\n",
							w[i].pid);
				}
			} else if (kill(w[i].pid, 0) && errno == ESRCH) {
				w[i].gone = true;
				if (!quiet)
					fprintf(stderr, "dtrace: pid %d has exited\n", w[i].pid);
			}
		}
		gone += w[i].gone;
	}
	return n && gone == n;
}

static int run(struct dt_consumer_opts *o, struct dt_probes *ps, struct dt_tables *t,
	       const struct dt_buf *prog, int created, struct usdt_diag *diag)
{
	struct dt_render r;
	struct dt_buf line = {0}, errtext = {0};
	struct watched *w = NULL;
	size_t nw = 0, i;
	int progfd, bt, outfd, errfd, status = 0, rc = 1;
	bool out_open = true, err_open = true, stopped = false, released = created < 0;
	long long stop_sent = 0, gone_at = 0;
	struct sigaction sa;

	if (geteuid() != 0) {
		usdt_error(diag, "tracing needs root (bpftrace loads BPF programs): run dtrace as "
				 "root, e.g. with sudo");
		return 1;
	}
	progfd = memfd_create("dtrace-program.bt", 0);
	if (progfd < 0 || write(progfd, prog->s, prog->n) != (ssize_t)prog->n) {
		usdt_error(diag, "cannot hold the bpftrace program: %s", strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	bt = spawn_bpftrace(o, progfd, &outfd, &errfd);
	close(progfd);
	if (bt < 0) {
		usdt_error(diag, "cannot run bpftrace: %s", strerror(errno));
		return 1;
	}
	if (created > 0) {
		struct watched x = {created, true, false};

		DT_PUSH(w, nw, x);
	}
	for (i = 0; i < o->npids; i++) {
		struct watched x = {o->pids[i], false, false};

		DT_PUSH(w, nw, x);
	}
	dt_render_init(&r, o, t, stdout);
	while (out_open || err_open) {
		struct pollfd pfd[2] = {{outfd, POLLIN, 0}, {errfd, POLLIN, 0}};
		char buf[65536];
		ssize_t n;

		if (!out_open)
			pfd[0].fd = -1;
		if (!err_open)
			pfd[1].fd = -1;
		if (poll(pfd, 2, 50) < 0 && errno != EINTR)
			break;
		if (!stopped && !gone_at && released && all_gone(w, nw, o->quiet))
			gone_at = now_ms();
		/*
		 * The processes are gone: what they fired last may still be in
		 * bpftrace's buffers, which it reads every 100 ms or so; give it
		 * that time (DTrace too drains its buffers first).
		 */
		if (!stopped && (interrupted || (gone_at && now_ms() - gone_at > 250))) {
			kill(bt, SIGINT);
			stopped = true;
			stop_sent = now_ms();
		} else if (stopped && interrupted > 1) {
			/* interrupted again while bpftrace ends: no more waiting */
			kill(bt, SIGKILL);
		} else if (stopped && now_ms() - stop_sent > 1000) {
			/*
			 * bpftrace 0.17 can lose a SIGINT that comes just after its
			 * BEGIN (it clears its flag when it starts polling): again,
			 * until it ends. One it has seen only repeats the request.
			 */
			kill(bt, SIGINT);
			stop_sent = now_ms();
		}
		if (pfd[1].revents) {
			n = read(errfd, buf, sizeof(buf));
			if (n > 0)
				dt_buf_add(&errtext, buf, (size_t)n);
			else if (n == 0 || errno != EINTR)
				err_open = false;
		}
		if (pfd[0].revents) {
			char *nl, *s;

			n = read(outfd, buf, sizeof(buf));
			if (n <= 0) {
				if (n == 0 || errno != EINTR)
					out_open = false;
				continue;
			}
			dt_buf_add(&line, buf, (size_t)n);
			s = line.s;
			while ((nl = memchr(s, '\n', line.n - (size_t)(s - line.s)))) {
				bool was_started = r.started;

				*nl = '\0';
				if (*s)
					dt_render_line(&r, s, diag);
				s = nl + 1;
				if (!was_started && r.started) {
					notices(o, ps);
					if (created > 0 && !released) {
						usdt_list_release(created);
						released = true;
					}
				}
			}
			memmove(line.s, s, line.n - (size_t)(s - line.s));
			line.n -= (size_t)(s - line.s);
		}
	}
	while (waitpid(bt, &status, 0) < 0 && errno == EINTR)
		;
	dt_render_finish(&r);
	if (!r.attached_seen) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !errtext.n)
			usdt_error(diag,
				   "bpftrace was not found: install it (Debian: apt-get install "
				   "bpftrace) or name it in $BPFTRACE");
		else
			bpftrace_failed(errtext.s, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		rc = 1;
	} else if (r.have_exit) {
		rc = r.exit_status;
	} else {
		rc = 0;
	}
	/* A -c process still running when tracing ends dies, as with DTrace. */
	if (created > 0 && (!released || !w[0].gone))
		usdt_list_destroy(created, diag);
	dt_free(line.s);
	dt_free(errtext.s);
	dt_free(w);
	return rc;
}

int dt_consume(struct dt_consumer_opts *o, struct usdt_diag *diag)
{
	struct dt_program prog = {.o = o};
	struct dt_probes probes = {0};
	struct dt_tables tables = {0};
	struct dt_buf out = {0};
	int created = -1, rc = 1;
	size_t i;

	if (o->cmd) {
		created = usdt_list_create(o->cmd, diag);
		if (created < 0)
			return 1;
		o->target = created;
	} else if (o->npids) {
		o->target = o->pids[0];
	}
	for (i = 0; i < o->nsources; i++) {
		struct dt_src *src = dt_xmalloc(sizeof(*src));

		/* the sources live until the end: positions point into them */
		src->file = o->sources[i].kind == 's' ? o->sources[i].name : "<command line>";
		src->text = o->sources[i].text;
		dt_parse(&prog, src, i, o->sources[i].kind == 's', diag);
	}
	if (diag->errors)
		goto out;
	if (!prog.nclauses) {
		usdt_error(diag, "%s: no probe description: nothing to trace",
			   o->nsources ? o->sources[0].name : "program");
		goto out;
	}
	if (o->destructive && !o->quiet)
		fprintf(stderr, "dtrace: allowing destructive actions\n");
	if (dt_match(&prog, &probes, diag) || diag->errors)
		goto out;
	if (dt_translate(&prog, &probes, &tables, &out, diag) || diag->errors)
		goto out;
	if (o->show_program) {
		fwrite(out.s, 1, out.n, stdout);
		rc = 0;
		goto out;
	}
	if (o->compile_only) {
		notices(o, &probes);
		rc = 0;
		goto out;
	}
	rc = run(o, &probes, &tables, &out, created, diag);
	created = -1; /* run() let it go, or destroyed it */
out:
	if (created > 0)
		usdt_list_destroy(created, diag);
	dt_free(out.s);
	dt_arena_release();
	return rc;
}
