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
#include <dirent.h>
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

#include "clock.h"
#include "d.h"
#include "list_create.h"

/*
 * 1: interrupted (end the run, with the exit dump); 2: interrupted again,
 * at least DT_IMPATIENT_MS later (end now: bpftrace is killed, as DTrace's
 * second Ctrl-C skips its dump). One kill of a wrapper reaches dtrace twice:
 * timeout(1) signals its child and then its child's process group, a
 * terminal's Ctrl-C reaches sudo, which relays it. Counted as two, that
 * killed bpftrace in the middle of its END: the run lost its exit dump.
 */
#define DT_IMPATIENT_MS 1000
static volatile sig_atomic_t interrupted;
static long long first_signal_ms; /* only on_signal touches it (sa_mask) */

static void on_signal(int sig)
{
	long long t = usdt_now_ms(); /* async-signal-safe (clock.h) */

	(void)sig;
	if (!interrupted) {
		first_signal_ms = t;
		interrupted = 1;
	} else if (t - first_signal_ms >= DT_IMPATIENT_MS) {
		interrupted = 2;
	}
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
static void bpftrace_failed(const char *err, int status, const char *what)
{
	const char *p = err, *best = NULL, *other = NULL;
	char for_what[4200] = "";

	if (what)
		snprintf(for_what, sizeof(for_what), " of %s", what);
	while (p && *p && !best) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		/*
		 * bpftrace 0.17 as root says "ERROR: ... couldn't set
		 * RLIMIT_MEMLOCK" at every start, harmless on this kernel; LLVM's
		 * own errors (the BPF stack's 512 bytes exceeded) are "error:".
		 */
		bool memlock = memmem(p, n, "RLIMIT_MEMLOCK", 14) != NULL;
		const char *m = memlock ? NULL : memmem(p, n, "ERROR", 5);

		if (!m && !memlock && n > 7 && !strncmp(p, "error: ", 7))
			m = p;
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

		if (!strncmp(best, "ERROR: ", 7) || !strncmp(best, "error: ", 7))
			best += 7, n -= 7;
		fprintf(stderr,
			"dtrace: could not enable tracing%s: bpftrace: %.*s (see the program with "
			"-x bpftrace)\n",
			for_what, (int)n, best);
	} else if (status >= 0) {
		fprintf(stderr,
			"dtrace: could not enable tracing%s: bpftrace exited with status %d\n",
			for_what, status);
	} else {
		fprintf(stderr, "dtrace: could not enable tracing%s: bpftrace was killed\n",
			for_what);
	}
}

static const char *bpftrace_path(void)
{
	const char *b = getenv("BPFTRACE");

	return b && *b ? b : "bpftrace";
}

/*
 * bpftrace's version, asked once (`bpftrace --version`: "bpftrace v0.17.0"):
 * major * 10000 + minor * 100 + patch; 0 when it runs but says something
 * else (a build of its own: trusted); -1 when it cannot be run. The
 * question costs 0.15 s of CPU (bpftrace loads LLVM to print a line), half
 * a second on a loaded machine, so run() asks it only once the tracing
 * bpftrace has compiled its program ("attached_probes", printed before it
 * attaches; asked beside its start, the question took a core from its
 * compile) or has ended, and looks at the answer in its loop. A
 * bpftrace too old for the program is then stopped once its answer comes:
 * one that attached at all has rendered at most its first records.
 */
static int bt_version = -2;
static int ver_pid = -1, ver_fd = -1;
static char ver_buf[256];
static size_t ver_len;

static void version_start(void)
{
	int p[2];

	if (ver_pid >= 0 || bt_version != -2 || pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return;
	ver_pid = fork();
	if (ver_pid < 0) {
		close(p[0]);
		close(p[1]);
		bt_version = -1;
		return;
	}
	if (ver_pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (null >= 0)
			dup2(null, 2), dup2(null, 0);
		execlp(bpftrace_path(), bpftrace_path(), "--version", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	ver_fd = p[0];
}

/* Reads the answer (waiting for it with `block`); true once it is known. */
static bool version_poll(bool block)
{
	int status;
	const char *v;
	unsigned a = 0, b = 0, c = 0;

	if (bt_version != -2)
		return true;
	if (ver_fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(ver_fd, ver_buf + ver_len, sizeof(ver_buf) - 1 - ver_len);

		if (n > 0 && ver_len + (size_t)n < sizeof(ver_buf) - 1) {
			ver_len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = {ver_fd, POLLIN, 0};

			if (!block)
				return false;
			poll(&pfd, 1, 100);
			continue;
		}
		break; /* EOF, an error, or more than a version line */
	}
	close(ver_fd);
	ver_fd = -1;
	ver_buf[ver_len] = '\0';
	while (waitpid(ver_pid, &status, 0) < 0 && errno == EINTR)
		;
	ver_pid = -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return bt_version = -1, true;
	v = strstr(ver_buf, " v");
	if (v && sscanf(v + 2, "%u.%u.%u", &a, &b, &c) >= 2)
		bt_version = (int)(a * 10000 + b * 100 + c);
	else
		bt_version = 0;
	return true;
}

int dt_bpftrace_version(void)
{
	version_start();
	version_poll(true);
	return bt_version;
}

/* bpftrace is there and new enough, as far as is known yet; else one line. */
static int check_bpftrace(struct usdt_diag *diag, bool block)
{
	int v;

	if (block)
		version_start();
	if (!version_poll(block))
		return 0;
	v = bt_version;
	if (v < 0) {
		usdt_error(diag, "bpftrace was not found: install it (Debian: apt-get install "
				 "bpftrace) or name it in $BPFTRACE");
		return -1;
	}
	if (v > 0 && v < DT_BPFTRACE_MIN) {
		usdt_error(
		    diag,
		    "bpftrace %d.%d.%d is too old: this dtrace needs %d.%d or later (install "
		    "a newer one, or name it in $BPFTRACE)",
		    v / 10000, v / 100 % 100, v % 100, DT_BPFTRACE_MIN / 10000,
		    DT_BPFTRACE_MIN / 100 % 100);
		return -1;
	}
	return 0;
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
			snprintf(env, sizeof(env), "%ld", dt_bt_strlen(o));
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

/* Every -p process is gone (a -c one is ours and held until tracing begins). */
static bool pids_gone(const struct dt_consumer_opts *o)
{
	size_t i;

	for (i = 0; i < o->npids; i++)
		if (!kill(o->pids[i], 0) || errno != ESRCH)
			return false;
	return true;
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

bool dt_pid_gone(int pid, bool child, bool quiet)
{
	struct watched w = {pid, child, false};

	return all_gone(&w, 1, quiet);
}

void dt_notices(const struct dt_consumer_opts *o, const struct dt_probes *ps)
{
	notices(o, ps);
}

/*
 * One bpftrace: the first runs the program on the probes matched at the
 * start; each later one (retain.c) on the probes of files that appeared
 * since, its aggregations handed to the first at its end (render.c).
 */
/* Later instances at most (retained enablings): the rest is refused, one line each. */
#define DT_RETAIN_MAX 64

struct inst {
	int pid;
	int outfd, errfd;
	bool out_open, err_open;
	bool stopped, reaped;
	long long stop_sent;
	int fds_at_stop; /* its probes' descriptors when it was stopped */
	int status;
	struct dt_buf line, errtext;
	struct dt_render r;
	char *what;	/* retained: its first probe, for a failure */
	unsigned batch; /* retained: dt_retain_poll's number for it */
};

static int start_inst(const struct dt_consumer_opts *o, const struct dt_buf *prog, struct inst *in,
		      struct usdt_diag *diag)
{
	int progfd = memfd_create("dtrace-program.bt", 0);

	if (progfd < 0 || write(progfd, prog->s, prog->n) != (ssize_t)prog->n) {
		usdt_error(diag, "cannot hold the bpftrace program: %s", strerror(errno));
		if (progfd >= 0)
			close(progfd);
		return -1;
	}
	in->pid = spawn_bpftrace(o, progfd, &in->outfd, &in->errfd);
	close(progfd);
	if (in->pid < 0) {
		usdt_error(diag, "cannot run bpftrace: %s", strerror(errno));
		return -1;
	}
	in->out_open = in->err_open = true;
	return 0;
}

/*
 * The perf event and BPF link descriptors bpftrace holds: its perf buffers
 * and one per attached probe (-1: unknown). They are closed together when it
 * leaves its main loop, before its END.
 */
static int probe_fds(int pid)
{
	char path[64], link[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);

		if (len <= 0)
			continue;
		link[len] = '\0';
		n += !strcmp(link, "anon_inode:[perf_event]") ||
		     !strcmp(link, "anon_inode:bpf_link");
	}
	closedir(d);
	return n;
}

/*
 * bpftrace 0.17 ends at SIGINT: its handler sets a flag, its main loop
 * (epoll_wait, 100 ms) returns when the signal interrupts it or when the
 * next event comes; it detaches every probe, clears the flag, runs END and
 * reads END's output until its buffers are empty. An instance that ran
 * exit() is ending by itself: never signalled.
 */
static void stop_inst(struct inst *in)
{
	if (!in->stopped && !in->reaped) {
		in->stopped = true;
		if (in->r.have_exit)
			return;
		in->fds_at_stop = probe_fds(in->pid);
		kill(in->pid, SIGINT);
		in->stop_sent = usdt_now_ms();
	}
}

/*
 * A SIGINT that comes while bpftrace is between two epoll_wait()s (writing
 * the events it read: right after its BEGIN) sets the flag and wakes
 * nothing: with no event after it, bpftrace waits forever. So a stopped
 * instance gets SIGINT again every second, but only while it still holds
 * every probe it held when stopped (still in its main loop): a SIGINT
 * during its END makes 0.17 stop reading END's output (epoll_wait returns
 * EINTR with the flag set, or its event callback drops every event) and
 * the exit dump is lost. That was one cause of lost ends: a shutdown that
 * took over a second (detaching many probes under load) got the SIGINT
 * again in its END.
 */
static void restop_inst(struct inst *in, bool kill_it)
{
	int fds;

	if (!in->stopped || in->reaped || (!in->out_open && !in->err_open))
		return;
	if (kill_it) {
		kill(in->pid, SIGKILL);
		return;
	}
	if (in->r.have_exit || in->fds_at_stop <= 0 || usdt_now_ms() - in->stop_sent <= 1000)
		return;
	in->stop_sent = usdt_now_ms();
	fds = probe_fds(in->pid);
	if (fds >= in->fds_at_stop)
		kill(in->pid, SIGINT);
}

struct runstate {
	struct dt_consumer_opts *o;
	struct dt_probes *ps;
	struct inst *v;
	size_t n;
	int created;
	bool released;
	struct usdt_diag *diag;
	bool exit_req; /* a retained instance ran exit() */
	int exit_status;
	struct dt_retain *rt;
};

static void drain_retained(struct runstate *rs);

/* Reads what is there on one of in's descriptors (fd 0: stdout, 1: stderr). */
static void read_inst(struct runstate *rs, size_t k, int which)
{
	struct inst *in = &rs->v[k];
	char buf[65536];
	ssize_t n;
	char *nl, *s;

	if (which == 1) {
		n = read(in->errfd, buf, sizeof(buf));
		if (n > 0)
			dt_buf_add(&in->errtext, buf, (size_t)n);
		else if (n == 0 || errno != EINTR)
			in->err_open = false;
		return;
	}
	n = read(in->outfd, buf, sizeof(buf));
	if (n <= 0) {
		if (n == 0 || errno != EINTR)
			in->out_open = false;
		return;
	}
	dt_buf_add(&in->line, buf, (size_t)n);
	s = in->line.s;
	while ((nl = memchr(s, '\n', in->line.n - (size_t)(s - in->line.s)))) {
		bool was_started = in->r.started, was_dumping = in->r.dumping;

		*nl = '\0';
		/* one header for every instance's records */
		in->r.header_done |= rs->v[0].r.header_done;
		if (*s)
			dt_render_line(&in->r, s, rs->diag);
		rs->v[0].r.header_done |= in->r.header_done;
		s = nl + 1;
		if (k == 0 && !was_started && in->r.started) {
			notices(rs->o, rs->ps);
			if (rs->created > 0 && !rs->released) {
				usdt_list_release(rs->created);
				rs->released = true;
			}
		}
		/* the exit dump: the retained instances' aggregations first */
		if (k == 0 && !was_dumping && in->r.dumping)
			drain_retained(rs);
		/* attached (BEGIN ran): the programs held for it go on */
		if (k > 0 && !was_started && in->r.started)
			dt_retain_started(rs->rt, in->batch);
		if (k > 0 && in->r.have_exit && !rs->exit_req) {
			rs->exit_req = true;
			rs->exit_status = in->r.exit_status;
		}
	}
	memmove(in->line.s, s, in->line.n - (size_t)(s - in->line.s));
	in->line.n -= (size_t)(s - in->line.s);
}

/* An instance whose output ended: reaped, its failure said in one line. */
static void reap_inst(struct inst *in, bool report)
{
	if (in->reaped)
		return;
	while (waitpid(in->pid, &in->status, 0) < 0 && errno == EINTR)
		;
	in->reaped = true;
	if (report && !in->r.attached_seen && !in->stopped)
		bpftrace_failed(in->errtext.s, WIFEXITED(in->status) ? WEXITSTATUS(in->status) : -1,
				in->what);
}

static bool retained_running(const struct runstate *rs)
{
	size_t k;

	for (k = 1; k < rs->n; k++)
		if (rs->v[k].out_open || rs->v[k].err_open)
			return true;
	return false;
}

/*
 * Ends the retained instances and reads them to their end (their exit dumps
 * into the merge), at most 3 s: their END prints nothing of its own.
 */
static void drain_retained(struct runstate *rs)
{
	long long until = usdt_now_ms() + 3000;
	size_t k;

	for (k = 1; k < rs->n; k++)
		stop_inst(&rs->v[k]);
	while (retained_running(rs) && usdt_now_ms() < until) {
		struct pollfd *pfd = dt_xmalloc(2 * rs->n * sizeof(*pfd));
		size_t np = 0;

		for (k = 1; k < rs->n; k++) {
			restop_inst(&rs->v[k], false);
			pfd[np++] =
			    (struct pollfd){rs->v[k].out_open ? rs->v[k].outfd : -1, POLLIN, 0};
			pfd[np++] =
			    (struct pollfd){rs->v[k].err_open ? rs->v[k].errfd : -1, POLLIN, 0};
		}
		if (poll(pfd, np, 50) >= 0)
			for (k = 1; k < rs->n; k++) {
				if (pfd[2 * (k - 1)].revents)
					read_inst(rs, k, 0);
				if (pfd[2 * (k - 1) + 1].revents)
					read_inst(rs, k, 1);
			}
		dt_free(pfd);
	}
	for (k = 1; k < rs->n; k++)
		if (!rs->v[k].out_open && !rs->v[k].err_open)
			reap_inst(&rs->v[k], true);
}

/* A bpftrace for the probes of files that appeared (retain.c). */
static void add_retained(struct runstate *rs, struct dt_tables *t, const struct dt_buf *prog,
			 char *what, struct dt_merged *merged, unsigned batch)
{
	struct inst x;

	if (rs->n > DT_RETAIN_MAX) {
		/* each bpftrace holds tens of MB: bounded */
		fprintf(stderr,
			"dtrace: %d bpftrace instances run already: %s is not traced (restart "
			"dtrace to trace it from the start)\n",
			DT_RETAIN_MAX, what);
		dt_retain_started(rs->rt, batch); /* nothing to wait for */
		return;
	}
	memset(&x, 0, sizeof(x));
	x.what = what;
	x.batch = batch;
	if (start_inst(rs->o, prog, &x, rs->diag)) {
		dt_retain_started(rs->rt, batch);
		return;
	}
	dt_render_init(&x.r, rs->o, t, stdout);
	x.r.retained = true;
	x.r.merged = merged;
	DT_PUSH(rs->v, rs->n, x);
}

static int run(struct dt_consumer_opts *o, struct dt_program *prog, struct dt_probes *ps,
	       struct dt_tables *t, const struct dt_buf *bt_prog, int created,
	       struct usdt_diag *diag)
{
	struct runstate rs = {.o = o, .ps = ps, .created = created, .diag = diag};
	struct dt_retain *rt = NULL;
	struct dt_merged *merged = dt_merged_new();
	struct watched *w = NULL;
	size_t nw = 0, i, k;
	int rc = 1;
	bool ending_retained = false, early = false, version_ok = false;
	long long gone_at = 0, retained_stop = 0;
	struct sigaction sa;
	struct inst first;

	rs.released = created < 0;
	if (geteuid() != 0) {
		usdt_error(diag, "tracing needs root (bpftrace loads BPF programs): run dtrace as "
				 "root, e.g. with sudo");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	memset(&first, 0, sizeof(first));
	if (start_inst(o, bt_prog, &first, diag))
		return 1;
	dt_render_init(&first.r, o, t, stdout);
	first.r.merged = merged;
	DT_PUSH(rs.v, rs.n, first);
	rt = dt_retain_start(prog);
	rs.rt = rt;
	if (created > 0) {
		struct watched x = {created, true, false};

		DT_PUSH(w, nw, x);
	}
	for (i = 0; i < o->npids; i++) {
		struct watched x = {o->pids[i], false, false};

		DT_PUSH(w, nw, x);
	}
	while (rs.v[0].out_open || rs.v[0].err_open) {
		struct pollfd *pfd = dt_xmalloc((2 * rs.n + 1) * sizeof(*pfd));
		struct inst *m = &rs.v[0];
		bool want_stop;

		for (k = 0; k < rs.n; k++) {
			pfd[2 * k] =
			    (struct pollfd){rs.v[k].out_open ? rs.v[k].outfd : -1, POLLIN, 0};
			pfd[2 * k + 1] =
			    (struct pollfd){rs.v[k].err_open ? rs.v[k].errfd : -1, POLLIN, 0};
		}
		/* the daemon's NOTICEs: a program is held until we answer */
		pfd[2 * rs.n] = (struct pollfd){dt_retain_fd(rt), POLLIN, 0};
		if (poll(pfd, 2 * rs.n + 1, rt ? 10 : 50) < 0 && errno != EINTR) {
			dt_free(pfd);
			break;
		}
		/*
		 * What came is read before any instance is signalled: an
		 * instance that ran exit() (its record is written before its
		 * END, 100 ms or more) must not get SIGINT in its END.
		 */
		for (k = 0; k < rs.n; k++) {
			if (pfd[2 * k + 1].revents)
				read_inst(&rs, k, 1);
			if (pfd[2 * k].revents)
				read_inst(&rs, k, 0);
			if (k > 0 && !rs.v[k].out_open && !rs.v[k].err_open) {
				reap_inst(&rs.v[k], true);
				/* (one that failed to attach holds nobody any more) */
				dt_retain_started(rt, rs.v[k].batch);
			}
		}
		dt_free(pfd);
		if (!m->stopped && !version_ok && m->r.attached_seen)
			version_start();
		if (!m->stopped && !version_ok && version_poll(false)) {
			version_ok = true;
			if (check_bpftrace(diag, false)) {
				kill(m->pid, SIGKILL);
				m->stopped = early = true;
			}
		}
		if (!m->stopped && !m->r.started && o->npids && pids_gone(o)) {
			/* before tracing began: nothing could be traced */
			kill(m->pid, SIGKILL);
			m->stopped = early = true;
			usdt_error(
			    diag,
			    "process %d exited before tracing began (bpftrace takes a second "
			    "or more to attach): run it with -c CMD to trace it from its start",
			    o->pids[0]);
		}
		if (!m->stopped && !gone_at && rs.released && all_gone(w, nw, o->quiet))
			gone_at = usdt_now_ms();
		/*
		 * The processes are gone: what they fired last may still be in
		 * bpftrace's buffers, which it reads every 100 ms or so; give it
		 * that time (DTrace too drains its buffers first). The retained
		 * instances end first, so that the first one's END sees their
		 * aggregations.
		 */
		want_stop =
		    interrupted || rs.exit_req || (gone_at && usdt_now_ms() - gone_at > 250);
		if (want_stop)
			dt_retain_unwatch(rt); /* no new instance now: hold nobody */
		if (!m->stopped && want_stop) {
			if (!ending_retained && retained_running(&rs)) {
				for (k = 1; k < rs.n; k++)
					stop_inst(&rs.v[k]);
				ending_retained = true;
				retained_stop = usdt_now_ms();
			} else if (!retained_running(&rs) || usdt_now_ms() - retained_stop > 3000) {
				stop_inst(m);
			}
		}
		for (k = 0; k < rs.n; k++)
			restop_inst(&rs.v[k], interrupted > 1);
		if (rt && !m->stopped && !want_stop && !rs.v[0].r.dumping) {
			struct dt_tables *nt;
			struct dt_buf nprog = {0};
			char *what;

			int b = dt_retain_poll(rt, &nt, &nprog, &what);

			if (b > 0)
				add_retained(&rs, nt, &nprog, what, merged, (unsigned)b);
			dt_free(nprog.s);
		}
	}
	reap_inst(&rs.v[0], false);
	/* a first instance that ended by itself: the others end now */
	drain_retained(&rs);
	for (k = 1; k < rs.n; k++)
		if (!rs.v[k].reaped) {
			kill(rs.v[k].pid, SIGKILL);
			reap_inst(&rs.v[k], false);
		}
	dt_render_finish(&rs.v[0].r);
	if (early) {
		rc = 1;
	} else if (!version_ok && check_bpftrace(diag, true)) {
		rc = 1; /* bpftrace ended before its version was known: too old, or not there */
	} else if (!rs.v[0].r.attached_seen ||
		   (!rs.v[0].r.started && !rs.exit_req &&
		    !(WIFEXITED(rs.v[0].status) && WEXITSTATUS(rs.v[0].status) == 0))) {
		/*
		 * Not attached, or attached but ended in failure before its
		 * BEGIN ran (a program the kernel's verifier refused after
		 * bpftrace had attached its probes): never a silent exit 0.
		 */
		int status = rs.v[0].status;

		if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !rs.v[0].errtext.n)
			usdt_error(diag,
				   "bpftrace was not found: install it (Debian: apt-get install "
				   "bpftrace) or name it in $BPFTRACE");
		else
			bpftrace_failed(rs.v[0].errtext.s,
					WIFEXITED(status) ? WEXITSTATUS(status) : -1, NULL);
		rc = 1;
	} else if (rs.v[0].r.have_exit) {
		rc = rs.v[0].r.exit_status;
	} else if (rs.exit_req) {
		rc = rs.exit_status;
	} else {
		rc = 0;
	}
	/* A -c process still running when tracing ends dies, as with DTrace. */
	if (created > 0 && (!rs.released || !w[0].gone))
		usdt_list_destroy(created, diag);
	for (k = 0; k < rs.n; k++) {
		dt_free(rs.v[k].line.s);
		dt_free(rs.v[k].errtext.s);
	}
	dt_free(rs.v);
	dt_free(w);
	return rc;
}

/*
 * The engine of a program that names none: $USDTKIT_ENGINE ("bpf" or
 * "bpftrace": how the test suites run on either), else ours, -Z too (its
 * retained enablings attach new files' sites to the loaded programs),
 * except what the engine declines (DT_ENGINE_UNSET here: dt_engine_run
 * may decline, and the bpftrace backend runs it).
 */
static enum dt_engine default_engine(const struct dt_consumer_opts *o)
{
	const char *e = getenv("USDTKIT_ENGINE");

	if (e && !strcmp(e, "bpftrace"))
		return DT_ENGINE_BPFTRACE;
	if (e && !strcmp(e, "bpf"))
		return DT_ENGINE_BPF;
	return DT_ENGINE_UNSET;
}

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
	struct dt_tables tables = {0};
	struct dt_buf out = {0};
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
	if (diag->errors || dt_check(&prog, diag) || macros_unused(o, first, diag))
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
	if (o->engine == DT_ENGINE_UNSET)
		o->engine = default_engine(o);
	if (o->engine != DT_ENGINE_BPFTRACE) {
		rc = dt_engine_run(o, &prog, &probes, created, o->engine == DT_ENGINE_UNSET, diag);
		if (rc != DT_ENGINE_DECLINED) {
			created = -1; /* the engine let it go, or destroyed it */
			goto out;
		}
		rc = 1;
		if (o->opt_error[0]) { /* a refusal of the engine's that no backend may overrule */
			usdt_error(diag, "%s", o->opt_error);
			goto out;
		}
	}
	for (size_t pi = 0; pi < probes.n; pi++)
		if (probes.v[pi].kind == P_ERROR) {
			/* (run-time errors are the BPF engine's) */
			usdt_error(diag, "the ERROR probe needs -x engine=bpf");
			goto out;
		}
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
	rc = run(o, &prog, &probes, &tables, &out, created, diag);
	created = -1; /* run() let it go, or destroyed it */
out:
	if (created > 0)
		usdt_list_destroy(created, diag);
	dt_free(out.s);
	dt_arena_release();
	return rc;
}
