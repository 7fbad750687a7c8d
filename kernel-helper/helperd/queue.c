// SPDX-License-Identifier: MIT
/*
 * The parse queue: the asynchronous parse of a REGISTER's new file (and of
 * the --all rescan's), by the sandboxed worker of worker.c.
 *
 * The worker's pipe is in the epoll set (HD_TAG_PARSE): the REGISTER's
 * answer waits for the parse while the loop serves everyone else. Every
 * REGISTER of the same (dev, ino) meanwhile joins the same parse as one more
 * waiter: a process (its own pidfd) and the connection to answer (serve.c's
 * cookie). A connection that closes meanwhile (drti gave up after its
 * 100 ms; hd_register_cancel) leaves the waiter without an answer to send
 * but still to be registered, as the synchronous parse did; once every
 * waiter's process has exited (checked at cancel and on each loop) the
 * worker is killed. When the parse ends, the file is registered only if a
 * waiter is still alive, so no event is created for processes that are
 * gone; each live waiter is attached as a user and answered. At its
 * deadline (--parse-timeout) the worker is killed and every waiter
 * answered -ETIMEDOUT. At most PARSES_MAX workers run, PARSES_PER_UID per
 * uid: other parses are queued and started by hd_parses_expire, which the
 * loop calls after every batch.
 *
 * Fair shares (issue 33, item 2): one user flooding the queue with slow
 * hostile files must not keep root's or anyone else's new files from being
 * parsed. So a uid other than root holds at most PARSES_QUEUED_PER_UID
 * parses, running or queued (an eighth of the PARSES_QUEUED_MAX all such
 * uids share), and is refused -EAGAIN beyond (drti retries that within its
 * deadline); root has PARSES_QUEUED_ROOT of its own beside them, so a full
 * queue never refuses root. Of the workers one uid runs at most
 * PARSES_PER_UID of the PARSES_MAX; a free worker goes to the queued parse
 * of the uid that runs the fewest (root first), in arrival order among
 * equals, so a uid with work queued behind a flood waits for one worker to
 * finish, not for the flood.
 *
 * The worker's answer is checked off the loop (issue 33, item 5): the loop
 * reads it and reaps the worker; an answer of up to CHECK_INLINE_BYTES (a
 * few dozen sites, tens of µs) is checked there and then, a larger one by
 * the checker thread (writer.c, in its uid's turn), which hands the loop
 * the verified notes (PH_CHECKING, check_done): a 12,000-site answer cost
 * the loop 21 million instructions.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "helperd.h"

#define PARSES_MAX 16		      /* running, all uids: each is a forked worker */
#define PARSES_PER_UID 4	      /* running per uid other than root */
#define PARSES_QUEUED_MAX 256	      /* running or queued, all uids but root (beyond: -EAGAIN) */
#define PARSES_QUEUED_PER_UID 32      /* running or queued, per uid other than root */
#define PARSES_QUEUED_ROOT 64	      /* running or queued, root's, beside the others' */
#define CHECK_INLINE_BYTES 8192u      /* an answer up to this is checked on the loop */
#define CHECK_BULK_BYTES (128u << 10) /* beyond: thousands of sites, bulk work (writer.c) */

struct waiter {
	struct waiter *next;
	void *cookie; /* serve.c's connection; NULL once it closed */
	pid_t pid;
	uid_t uid;
	int pidfd; /* a dup of the connection's, or -1 */
	bool held; /* its pidfd counted in its uid's descriptors */
	struct hd_mapping *mp;
	int status; /* parse_end: the answer */
};

/* A parse's phases: its worker (running or queued), then its events. */
enum phase {
	PH_PARSE,	  /* the worker runs, or waits for a free one */
	PH_CHECKING,	  /* its answer is checked by the checker thread */
	PH_AFTER_REMOVAL, /* parsed; the file's previous module is being removed */
	PH_WRITING	  /* the writer writes its events (writer.c) */
};

struct hd_parse {
	enum hd_tag tag; /* HD_TAG_PARSE: epoll data points here */
	struct hd_parse *next;
	enum phase phase;
	struct usdt_notes *notes; /* PH_AFTER_REMOVAL: what the parse found */
	struct hd_wjob *wjob;	  /* PH_WRITING: the writer's job; PH_CHECKING: the checker's */
	uint64_t dev, ino;
	uid_t uid; /* the first requester: the module's owner, whose quota it counts in */
	int fd;	   /* the file (a dup of the first requester's map_files open) */
	struct hd_mapping *mp; /* the first requester's mapping: the path for the events */
	struct hd_parse_job job;
	struct waiter *waiters;
	uint64_t t_begin, t_run, t_read; /* --test-timing: admitted, its worker, its answer read */
};

static struct hd_parse *parses;
static unsigned nparses;

unsigned hd_parses_of(uid_t uid)
{
	unsigned n = 0;

	for (struct hd_parse *p = parses; p; p = p->next)
		n += p->uid == uid;
	return n;
}

/* Workers running, of uid or (any) all. */
static unsigned running(bool any, uid_t uid)
{
	unsigned n = 0;

	for (struct hd_parse *p = parses; p; p = p->next)
		n += p->job.pid > 0 && (any || p->uid == uid);
	return n;
}

unsigned hd_parses_running(void)
{
	return running(true, 0);
}

static bool may_run(uid_t uid)
{
	return running(true, 0) < PARSES_MAX && (uid == 0 || running(false, uid) < PARSES_PER_UID);
}

/* Forks p's worker and watches its pipe. */
static int parse_run(struct hd_parse *p)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	struct hd_worker_limits lim = hd_limits_for(p->mp);
	char err[256];
	int ret = hd_parse_start(p->fd, &lim, &p->job, err, sizeof(err));

	if (ret) {
		hd_warn("%s: %s", p->mp->path, err);
		return ret;
	}
	if (epoll_ctl(hd_epfd, EPOLL_CTL_ADD, p->job.rfd, &ev) != 0) {
		ret = -errno;
		hd_parse_finish(&p->job, p->fd, -ECANCELED, NULL, err, sizeof(err));
		return ret;
	}
	hd_timing_put(HD_ST_PARSE_QUEUED, p->uid, p->t_begin, p->t_run = hd_timing_now());
	hd_dbg("%s: parse started (worker %d%s)", p->mp->path, (int)p->job.pid,
	       p->job.spare ? ", the spare" : "");
	return 0;
}

struct hd_parse *hd_parse_find(uint64_t dev, uint64_t ino)
{
	for (struct hd_parse *p = parses; p; p = p->next)
		if (p->dev == dev && p->ino == ino)
			return p;
	return NULL;
}

static void parse_unlink_free(struct hd_parse *p)
{
	struct hd_parse **pp = &parses;

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	nparses--;
	hd_forget(p);
	if (p->job.rfd >= 0)
		epoll_ctl(hd_epfd, EPOLL_CTL_DEL, p->job.rfd, NULL);
	close(p->fd);
	hd_uid_release(p->uid, 2, 0);
	free(p->mp);
	free(p);
}

int hd_parse_wait(struct hd_parse *p, void *cookie, pid_t pid, uid_t uid, int pidfd,
		  const struct hd_mapping *mp)
{
	struct waiter *w;
	int ret = pidfd >= 0 ? hd_uid_hold(uid, 1, 0) : 0;

	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->mp = malloc(sizeof(*w->mp)))) {
		free(w);
		if (pidfd >= 0)
			hd_uid_release(uid, 1, 0);
		return -ENOMEM;
	}
	*w->mp = *mp;
	w->cookie = cookie;
	w->pid = pid;
	w->uid = uid;
	w->pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : -1;
	w->held = w->pidfd >= 0;
	if (pidfd >= 0 && w->pidfd < 0) {
		hd_uid_release(uid, 1, 0);
		free(w->mp);
		free(w);
		return -ENOMEM;
	}
	w->next = p->waiters;
	p->waiters = w;
	return -EINPROGRESS;
}

/* A new file: admitted, a worker started, the requester its first waiter. */
int hd_parse_begin(void *cookie, pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp,
		   int fd, uint64_t dev, uint64_t ino)
{
	struct hd_parse *p, **tail = &parses;
	int ret;

	unsigned mine = hd_parses_of(uid), roots = uid == 0 ? mine : hd_parses_of(0);

	if (uid != 0 && mine >= PARSES_QUEUED_PER_UID) {
		/* (debug only: a user's flood must not flood the log either) */
		hd_dbg("uid %u: %u parses running or queued, its share: %s refused", (unsigned)uid,
		       mine, mp->path);
		return -EAGAIN;
	}
	if (uid == 0 ? mine >= PARSES_QUEUED_ROOT : nparses - roots >= PARSES_QUEUED_MAX) {
		hd_warn("%u parses running or queued: %s refused", nparses, mp->path);
		return -EAGAIN;
	}
	ret = hd_mod_admit(mp, fd, uid, mine);
	/* The file's descriptor and the worker's socket, held for uid. */
	if (!ret)
		ret = hd_uid_hold(uid, 2, 0);
	if (ret)
		return ret;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->mp = malloc(sizeof(*p->mp)))) {
		free(p);
		hd_uid_release(uid, 2, 0);
		return -ENOMEM;
	}
	*p->mp = *mp;
	p->tag = HD_TAG_PARSE;
	p->dev = dev;
	p->ino = ino;
	p->uid = uid;
	p->job.pid = -1;
	p->job.rfd = -1;
	p->job.deadline = UINT64_MAX;
	p->t_begin = hd_timing_now();
	p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	ret = p->fd < 0 ? -errno : may_run(uid) ? parse_run(p) : 0;
	if (ret) {
		if (p->fd >= 0)
			close(p->fd);
		hd_uid_release(uid, 2, 0);
		free(p->mp);
		free(p);
		return ret;
	}
	if (p->job.pid <= 0)
		hd_dbg("%s: parse queued (%u workers running)", mp->path, running(true, 0));
	/* In arrival order: the queued ones start first come, first served. */
	while (*tail)
		tail = &(*tail)->next;
	*tail = p;
	nparses++;
	return hd_parse_wait(p, cookie, pid, uid, pidfd, mp);
}

static void waiter_free(struct waiter *w)
{
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->held)
		hd_uid_release(w->uid, 1, 0);
	free(w->mp);
	free(w);
}

/* Whether anyone still waits: a connection to answer, or a live process to register. */
static bool parse_wanted(const struct hd_parse *p)
{
	for (const struct waiter *w = p->waiters; w; w = w->next)
		if (w->cookie || hd_peer_alive(w->pidfd))
			return true;
	return false;
}

/* The end: every waiter attached to m (unless ret) and answered; p freed. */
static void parse_answer(struct hd_parse *p, int ret, struct hd_module *m, bool created)
{
	struct waiter *w = p->waiters, *next;
	pid_t held_pid = 0;
	uint32_t hold = 0;

	p->waiters = NULL; /* answered below: a cancel during an answer finds nothing */
	for (struct waiter *x = w; x; x = x->next) {
		x->status = ret;
		if (!x->status && !hd_peer_alive(x->pidfd))
			x->status = -ESRCH;
		/*
		 * Its wait's descriptor is counted no more before it is attached,
		 * which counts the process's own: else the waiters of one file,
		 * as many as its uid's cap, were all refused -EDQUOT at once.
		 */
		if (x->held) {
			hd_uid_release(x->uid, 1, 0);
			x->held = false;
		}
		if (!x->status)
			x->status = hd_add_known(x->pid, x->uid, x->pidfd, x->mp, m);
		/* (attached, the process has its own: the waiters' do not pile up meanwhile) */
		if (x->pidfd >= 0) {
			close(x->pidfd);
			x->pidfd = -1;
		}
		hd_dbg("REGISTER pid %d uid %u: %s", (int)x->pid, (unsigned)x->uid,
		       x->status ? strerror(-x->status) : x->mp->path);
		if (!x->status && !held_pid)
			held_pid = x->pid;
	}
	/*
	 * The events are new: the watchers (retained enablings) are told once
	 * the registrants are attached, so that a LIST then shows them, and
	 * the answers wait for the watchers (serve.c, hd_hold_begin).
	 */
	if (created && held_pid)
		hold = hd_hold_begin(held_pid, m->mdev, m->mino);
	for (; w; w = next) {
		next = w->next;
		if (w->cookie)
			hd_register_done(w->cookie, w->status, w->status ? 0 : m->nprobes, hold);
		waiter_free(w);
	}
	if (m && m->nusers == 0 && hd_mod_usable(m))
		hd_mod_remove(m, true);
	parse_unlink_free(p);
}

static void parse_register(struct hd_parse *p, struct usdt_notes *n);
static void parse_checked(struct hd_parse *p, int ret, struct usdt_notes *n);

/* The checker's job: a worker's answer checked off the loop (the head comment). */
struct check {
	struct hd_wjob job; /* first: the checker's */
	struct hd_parse *p;
	struct hd_answer ans;
	int fd; /* p's file, open until check_done */
	int ret;
	struct usdt_notes *n;
	char err[256];
};

/* On the checker thread: touches only c's answer, its notes and the file. */
static bool check_step(struct hd_wjob *j, uint64_t budget_ns)
{
	struct check *c = (struct check *)j;

	(void)budget_ns;
	c->ret = hd_parse_check(&c->ans, c->fd, &c->n, c->err, sizeof(c->err));
	return false;
}

/* On the loop: the verified notes (or why not) go on as the parse's end. */
static void check_done(struct hd_wjob *j)
{
	struct check *c = (struct check *)j;
	struct hd_parse *p = c->p;
	int ret = c->ret;

	p->wjob = NULL;
	hd_answer_free(&c->ans); /* (cut before its step: never checked) */
	if (j->cut || hd_stopping) {
		usdt_notes_free(c->n);
		c->n = NULL;
		ret = -ECANCELED;
	} else if (ret) {
		hd_warn("%s: %s", p->mp->path, c->err);
	}
	parse_checked(p, ret, c->n);
	free(c);
}

/* A whole answer: checked here when small, else handed to the checker (then true). */
static bool check_later(struct hd_parse *p, struct hd_answer *ans)
{
	struct check *c;

	if (ans->len <= CHECK_INLINE_BYTES || !(c = calloc(1, sizeof(*c))))
		return false;
	c->p = p;
	c->ans = *ans;
	c->fd = p->fd;
	c->job.uid = p->uid;
	c->job.lane = HD_LANE_CHECK;
	c->job.bulk = ans->len > CHECK_BULK_BYTES;
	c->job.step = check_step;
	c->job.done = check_done;
	c->job.stop_cancels = true;
	p->phase = PH_CHECKING;
	p->wjob = &c->job;
	hd_writer_submit(&c->job); /* (done in line when the thread does not run) */
	return true;
}

/*
 * The writer is done with p's events (writer.c, through hd_mod_start).
 * Cut short because every waiter had gone, while a new one came since:
 * what was written is being removed, and the file is registered anew for
 * it, after that removal.
 */
static void parse_written(void *arg, int ret, struct hd_module *m, struct usdt_notes *back)
{
	struct hd_parse *p = arg;
	bool live = false;

	p->wjob = NULL;
	for (struct waiter *x = p->waiters; back && x; x = x->next)
		live |= hd_peer_alive(x->pidfd);
	if (back && live && !hd_stopping) {
		hd_dbg("%s: a requester came while its cut-short events were removed: registered "
		       "anew",
		       p->mp->path);
		parse_register(p, back);
		return;
	}
	usdt_notes_free(back);
	parse_answer(p, ret, m, !ret);
}

/*
 * What the parse found becomes the file's events: written by the writer
 * (the answers wait for them, the loop does not), after the removal of
 * the file's previous module if one is under way (its sites and ours
 * must not cross), or taken from a module registered meanwhile.
 */
static void parse_register(struct hd_parse *p, struct usdt_notes *n)
{
	struct hd_module *m = hd_mod_find(p->dev, p->ino);
	int ret;

	if (m && hd_mod_usable(m)) {
		usdt_notes_free(n); /* registered meanwhile (a /proc scan) */
		parse_answer(p, 0, m, false);
		return;
	}
	if (m && (m->removing || m->reviving)) {
		hd_dbg("%s: parsed; waits for its previous events' removal", p->mp->path);
		p->phase = PH_AFTER_REMOVAL;
		p->notes = n;
		return;
	}
	p->phase = PH_WRITING;
	hd_timing_put(HD_ST_TO_WRITER, p->uid, p->t_read, hd_timing_now());
	ret = hd_mod_start(p->mp, p->fd, p->dev, p->ino, p->uid, m, n, false, parse_written, p,
			   &p->wjob);
	if (ret)
		parse_answer(p, ret, NULL, false);
}

void hd_parse_resume(uint64_t dev, uint64_t ino)
{
	for (struct hd_parse *p = parses; p; p = p->next) {
		struct usdt_notes *n = p->notes;

		if (p->phase != PH_AFTER_REMOVAL || p->dev != dev || p->ino != ino)
			continue;
		p->notes = NULL;
		parse_register(p, n);
		return;
	}
}

/*
 * The parse is over (or abandoned: why): its events written, then every
 * waiter attached and answered. Abandoning one whose events are being
 * written cuts the writing short at its next slice (its answer follows).
 */
static void parse_end(struct hd_parse *p, int why)
{
	struct usdt_notes *n = NULL;
	struct hd_answer ans;
	char err[256];
	int ret;

	if (p->phase == PH_WRITING || p->phase == PH_CHECKING) {
		hd_writer_cancel(p->wjob);
		return;
	}
	if (p->phase == PH_AFTER_REMOVAL) {
		usdt_notes_free(p->notes);
		p->notes = NULL;
		parse_answer(p, why ? why : -ECANCELED, NULL, false);
		return;
	}
	if (p->job.rfd >= 0)
		epoll_ctl(hd_epfd, EPOLL_CTL_DEL, p->job.rfd, NULL);
	p->t_read = hd_timing_now();
	hd_timing_put(HD_ST_PARSE, p->uid, p->t_run, p->t_read);
	ret = hd_parse_collect(&p->job, why, &ans, err, sizeof(err));
	if (!ret && check_later(p, &ans))
		return;
	if (!ret)
		ret = hd_parse_check(&ans, p->fd, &n, err, sizeof(err));
	if (ret && ret != -ECANCELED)
		hd_warn("%s: %s", p->mp->path, err);
	parse_checked(p, ret, n);
}

/* The parse's answer checked (n, or ret): the file's events, or every waiter answered. */
static void parse_checked(struct hd_parse *p, int ret, struct usdt_notes *n)
{
	bool live = false;

	if (!ret && n->naccepted == 0) {
		/* Nothing for us in it: the /proc scans need not parse it again. */
		hd_neg_add(p->mp->dev, p->mp->ino);
	}
	for (struct waiter *x = p->waiters; x; x = x->next)
		live |= hd_peer_alive(x->pidfd);
	if (!ret && !live) {
		hd_dbg("%s: every requester is gone: not registered", p->mp->path);
		usdt_notes_free(n);
		ret = -ESRCH;
	}
	if (!ret)
		parse_register(p, n);
	else
		parse_answer(p, ret, NULL, false);
}

void hd_parse_event(void *arg)
{
	struct hd_parse *p = arg;
	struct hd_worker_limits lim = hd_limits_for(p->mp);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	int ret;

	if (!hd_parse_read(&p->job))
		return;
	ret = hd_parse_respawn(&p->job, p->fd, &lim);
	if (ret == 1) {
		/* (The old socket left the epoll set when it was closed.) */
		hd_dbg("%s: the spare died before its parse: worker %d forked for it", p->mp->path,
		       (int)p->job.pid);
		if (epoll_ctl(hd_epfd, EPOLL_CTL_ADD, p->job.rfd, &ev) == 0)
			return;
		ret = -errno;
	}
	parse_end(p, ret < 0 ? ret : 0);
}

uint64_t hd_parses_expire(uint64_t now)
{
	uint64_t next = UINT64_MAX;

	hd_parse_reap(false);
	/*
	 * Queued parses start as workers finish (parse_end answers only its
	 * own waiters), the least served uid's first (the head comment).
	 */
	while (running(true, 0) < PARSES_MAX) {
		struct hd_parse *best = NULL;
		unsigned best_n = UINT_MAX;
		int ret;

		for (struct hd_parse *p = parses; p; p = p->next) {
			unsigned n;

			if (p->phase != PH_PARSE || p->job.pid > 0 || !may_run(p->uid))
				continue;
			n = p->uid == 0 ? 0 : running(false, p->uid) + 1;
			if (n < best_n && parse_wanted(p)) {
				best = p;
				best_n = n;
			}
		}
		if (!best)
			break;
		ret = parse_run(best);
		if (ret)
			parse_end(best, ret);
	}
	for (struct hd_parse *p = parses, *pn; p; p = pn) {
		pn = p->next;
		if (p->phase == PH_PARSE && now >= p->job.deadline) {
			parse_end(p, -ETIMEDOUT);
		} else if (!parse_wanted(p)) {
			bool job = p->phase == PH_WRITING || p->phase == PH_CHECKING;

			if (!job || !atomic_load(&p->wjob->cancel))
				hd_dbg("%s: nobody waits for its parse any more: %s", p->mp->path,
				       p->phase == PH_WRITING	 ? "its writing cut short"
				       : p->phase == PH_CHECKING ? "its check cut short"
								 : "worker killed");
			parse_end(p, -ECANCELED);
		} else if (p->phase == PH_PARSE && p->job.deadline < next)
			next = p->job.deadline;
	}
	return next;
}

void hd_register_cancel(void *cookie)
{
	for (struct hd_parse *p = parses; p; p = p->next)
		for (struct waiter *w = p->waiters; w; w = w->next) {
			if (w->cookie != cookie)
				continue;
			w->cookie = NULL; /* still registered at the end if its process lives */
			if (!parse_wanted(p)) {
				hd_dbg("%s: nobody waits for its parse any more: worker killed",
				       p->mp->path);
				parse_end(p, -ECANCELED);
			}
			return;
		}
}

/* SIGTERM (the writer stopped first: no events are being written): every parse abandoned. */
void hd_parses_cancel(void)
{
	for (;;) {
		struct hd_parse *p = parses;

		while (p && (p->phase == PH_WRITING || p->phase == PH_CHECKING))
			p = p->next;
		if (!p)
			break;
		parse_end(p, -ECANCELED);
	}
}
