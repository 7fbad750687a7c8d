// SPDX-License-Identifier: MIT
/*
 * LIST: every process (or the one asked for) whose maps hold a
 * registered, non-draining file, as maps names it; root sees all, another
 * uid only its own processes. The daemon does not track every process that
 * maps a registered file (README, "lingering and retiring"), so a LIST
 * reads /proc: every process's maps, which on a loaded machine was tens of
 * milliseconds of the kernel printing maps (bench/helper/README.md). (Asking
 * the kernel for executable file mappings only, with PROCMAP_QUERY, was
 * measured faster and taken back: bench/helper/README.md says why.)
 *
 * Off the loop (issue 33). The reading runs on a third lane of writer.c,
 * HD_LANE_LIST, beside the writer and the checker, with their per-uid
 * turns and slices: a job's step reads /proc for about a slice, then
 * another uid's LIST (or the same uid's next) takes its turn. The step
 * touches only the job: a snapshot of the model taken on the loop when
 * the request was read (each usable module's maps key, its registry key,
 * its site count and its text segment's link-time delta, sorted by maps
 * key), the /proc directory it reads, and the entries it collects, paths
 * copied. The job's done runs on the loop (writer.c's eventfd) and hands
 * the entries to serve.c (hd_upcalls.list_done), which sends them. So the
 * loop answers accepts and REGISTERs while a LIST reads /proc, and no
 * model state is read off the loop's thread.
 *
 * The answer is thus the model as it was when the request was read,
 * matched against maps as read a little later: a file registered
 * meanwhile is not listed, one removed meanwhile may be. Both were
 * possible before (the processes change while /proc is read, whatever the
 * thread); a tracer lists again (dtrace does) when it needs a later state.
 *
 * LISTs of every process by one uid share a reading (the loop is
 * never slower than the kernel printing maps, so under a flood of LISTs
 * they queue up): a LIST joins a job of the same uid that has not begun
 * reading (`state`, an atomic the thread claims at its first step and the
 * loop holds while it joins) and whose snapshot equals its own, so its
 * answer is a reading begun after its request, against the model as it
 * was then, exactly as its own job's would be.
 *
 * A connection that closes while its LIST runs is forgotten (its cookie
 * cleared; the job, once no cookie is left, cancelled at its next slice); without the
 * thread (before it starts, or if it could not) hd_list reads /proc in
 * line, as it always did.
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "helperd.h"
#include "protocol.h"

/* A module as LIST needs it, copied from the model on the loop's thread. */
struct snap_mod {
	uint64_t mdev, mino; /* as maps names it: the sort key */
	uint64_t dev, ino;   /* the registry's (and the answer's) key */
	uint64_t delta;	     /* the text segment's link-time vaddr - offset */
	uint64_t nprobes;    /* (64 bits: no padding, snapshots compare with memcmp) */
};

struct listjob {
	struct hd_wjob j; /* first: the lane's job */
	struct listjob *next;
	void **cookies; /* serve.c's connections; NULL once one closed */
	size_t ncookies, cookies_cap;
	atomic_int state; /* JOB_OPEN, JOB_JOINING (the loop), JOB_READING (the thread) */
	pid_t pid, self;
	uid_t uid;
	struct snap_mod *mods;
	size_t nmods;
	DIR *d;
	struct hd_list_entry *ents;
	size_t n, cap, bytes;
	int status; /* -ENOMEM, -EFBIG (more than a connection may queue) */
};

enum { JOB_OPEN, JOB_JOINING, JOB_READING };

static struct listjob *pending; /* queued or running, for hd_list_cancel */

static int snap_cmp(const void *a, const void *b)
{
	const struct snap_mod *x = a, *y = b;

	if (x->mdev != y->mdev)
		return x->mdev < y->mdev ? -1 : 1;
	return x->mino < y->mino ? -1 : x->mino > y->mino;
}

/*
 * The usable modules by maps key. Where a module's maps key is not its
 * registry key (hd_nodd: btrfs, overlayfs) the maps key is what a maps line
 * shows; elsewhere the two are one.
 */
static bool snapshot(struct listjob *l)
{
	size_t k = 0;

	if (!hd_nmodules_total)
		return true;
	l->mods = calloc(hd_nmodules_total, sizeof(*l->mods));
	if (!l->mods)
		return false;
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (const struct hd_module *m = hd_modules[b]; m && k < hd_nmodules_total;
		     m = m->hnext) {
			if (!hd_mod_usable(m) ||
			    (!hd_nodd && (m->mdev != m->dev || m->mino != m->ino)))
				continue;
			l->mods[k++] = (struct snap_mod){
			    .mdev = m->mdev,
			    .mino = m->mino,
			    .dev = m->dev,
			    .ino = m->ino,
			    .delta = m->delta,
			    .nprobes = m->nprobes,
			};
		}
	l->nmods = k;
	qsort(l->mods, k, sizeof(*l->mods), snap_cmp);
	return true;
}

static const struct snap_mod *snap_find(const struct listjob *l, uint64_t dev, uint64_t ino)
{
	struct snap_mod key = {.mdev = dev, .mino = ino};

	return l->nmods ? bsearch(&key, l->mods, l->nmods, sizeof(key), snap_cmp) : NULL;
}

/* Only the lines of a registered file are read whole. */
static bool list_wants(uint64_t dev, uint64_t ino, void *arg)
{
	return snap_find(arg, dev, ino) != NULL;
}

static int list_mapping(pid_t pid, const struct hd_mapping *mp, void *arg)
{
	struct listjob *l = arg;
	const struct snap_mod *m = snap_find(l, mp->dev, mp->ino);
	size_t plen = strlen(mp->path) + 1;

	if (!m)
		return 0;
	if (plen > USDT_PROTO_PATH_MAX)
		plen = USDT_PROTO_PATH_MAX;
	/* What serve.c will queue: past a connection's queue the answer is -EFBIG anyway. */
	l->bytes += sizeof(struct usdt_msg_list_entry) + plen + 4;
	if (l->bytes > HD_LIST_MAX_BYTES) {
		l->status = -EFBIG;
		return 1;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct hd_list_entry *e = realloc(l->ents, cap * sizeof(*e));

		if (!e) {
			l->status = -ENOMEM;
			return 1;
		}
		l->ents = e;
		l->cap = cap;
	}
	l->ents[l->n] = (struct hd_list_entry){
	    .pid = pid,
	    .nprobes = (uint32_t)m->nprobes,
	    .dev = m->dev,
	    .ino = m->ino,
	    .start = mp->start,
	    .end = mp->end,
	    .load_bias = mp->start - mp->offset - m->delta,
	    .path = strndup(mp->path, plen - 1),
	};
	if (!l->ents[l->n].path) {
		l->status = -ENOMEM;
		return 1;
	}
	l->n++;
	return 0;
}

/* On the lane's thread (or in line): about budget_ns of reading /proc; true while more remains. */
static bool list_step(struct hd_wjob *j, uint64_t budget_ns)
{
	struct listjob *l = (struct listjob *)j;
	int64_t until =
	    usdt_clock_ns(CLOCK_MONOTONIC) +
	    (int64_t)(budget_ns < (uint64_t)INT64_MAX / 4 ? budget_ns : (uint64_t)INT64_MAX / 4);
	struct dirent *de;

	if (atomic_load(&l->state) != JOB_READING)
		for (int open = JOB_OPEN;
		     !atomic_compare_exchange_weak(&l->state, &open, JOB_READING); open = JOB_OPEN)
			; /* the loop is adding a cookie: a few instructions */
	if (!l->nmods || l->status)
		return false;
	if (l->pid) {
		if (l->pid != l->self && (l->uid == 0 || hd_pid_uid(l->pid) == l->uid))
			hd_each_mapping(l->pid, list_wants, list_mapping, l);
		return false;
	}
	if (!l->d && !(l->d = opendir("/proc")))
		return false;
	while ((de = readdir(l->d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);

		if (*end || p <= 0 || p == l->self ||
		    (l->uid != 0 && hd_pid_uid((pid_t)p) != l->uid))
			continue;
		hd_each_mapping((pid_t)p, list_wants, list_mapping, l);
		if (l->status)
			return false;
		if (usdt_clock_ns(CLOCK_MONOTONIC) >= until)
			return true;
	}
	return false;
}

static void list_free(struct listjob *l)
{
	if (l->d)
		closedir(l->d);
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->ents[i].path);
	free(l->ents);
	free(l->mods);
	free(l->cookies);
	free(l);
}

/* On the loop's thread: the answer to serve.c, unless its connection went. */
static void list_done(struct hd_wjob *j)
{
	struct listjob *l = (struct listjob *)j, **pp = &pending;
	int status;

	while (*pp && *pp != l)
		pp = &(*pp)->next;
	if (*pp)
		*pp = l->next;
	status = l->status ? l->status : j->cut ? -ECANCELED : 0;
	for (size_t i = 0; i < l->ncookies; i++)
		if (l->cookies[i] && hd_upcalls.list_done)
			hd_upcalls.list_done(l->cookies[i], l->ents, l->n, status);
	list_free(l);
}

static struct listjob *list_new(pid_t pid, uid_t uid)
{
	struct listjob *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->pid = pid;
	l->uid = uid;
	l->self = getpid();
	l->j.uid = uid;
	l->j.lane = HD_LANE_LIST;
	l->j.step = list_step;
	l->j.done = list_done;
	l->j.stop_cancels = true;
	if (!snapshot(l)) {
		free(l);
		return NULL;
	}
	return l;
}

static bool cookie_add(struct listjob *l, void *cookie)
{
	if (l->ncookies == l->cookies_cap) {
		size_t cap = l->cookies_cap ? 2 * l->cookies_cap : 4;
		void **c = realloc(l->cookies, cap * sizeof(*c));

		if (!c)
			return false;
		l->cookies = c;
		l->cookies_cap = cap;
	}
	l->cookies[l->ncookies++] = cookie;
	return true;
}

/* A job of every process for l's uid, not reading yet, with l's snapshot: joined. */
static bool join(const struct listjob *l, void *cookie)
{
	for (struct listjob *o = pending; o; o = o->next) {
		int open = JOB_OPEN;
		bool ok;

		/* (a job cancelled, its connections gone, would answer -ECANCELED) */
		if (o->pid || o->uid != l->uid || atomic_load(&o->j.cancel) ||
		    o->nmods != l->nmods ||
		    (l->nmods && memcmp(o->mods, l->mods, l->nmods * sizeof(*l->mods))))
			continue;
		if (!atomic_compare_exchange_strong(&o->state, &open, JOB_JOINING))
			continue; /* reading already: its answer may predate this request */
		ok = cookie_add(o, cookie);
		atomic_store(&o->state, JOB_OPEN);
		if (ok)
			return true;
	}
	return false;
}

int hd_list_begin(pid_t pid, uid_t uid, void *cookie)
{
	struct listjob *l;

	/* Nothing registered: nothing to read; without the lane: in line (hd_list). */
	if (!hd_nmodules_total || !hd_writer_running(HD_LANE_LIST) || !(l = list_new(pid, uid)))
		return 0;
	if (!pid && join(l, cookie)) {
		list_free(l);
		return -EINPROGRESS;
	}
	if (!cookie_add(l, cookie)) {
		list_free(l);
		return 0;
	}
	l->next = pending;
	pending = l;
	hd_writer_submit(&l->j);
	return -EINPROGRESS;
}

void hd_list_cancel(void *cookie)
{
	for (struct listjob *l = pending; l; l = l->next) {
		bool left = false;

		for (size_t i = 0; i < l->ncookies; i++) {
			if (l->cookies[i] == cookie)
				l->cookies[i] = NULL;
			left |= l->cookies[i] != NULL;
		}
		if (!left)
			hd_writer_cancel(&l->j);
	}
}

size_t hd_list(pid_t pid, uid_t uid, void (*fn)(const struct hd_list_entry *e, void *arg),
	       void *arg)
{
	struct listjob *l;
	size_t n;

	if (!hd_nmodules_total || !(l = list_new(pid, uid)))
		return 0;
	while (list_step(&l->j, UINT64_MAX / 2))
		;
	for (size_t i = 0; i < l->n; i++)
		fn(&l->ents[i], arg);
	n = l->n;
	list_free(l);
	return n;
}
