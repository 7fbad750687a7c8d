// SPDX-License-Identifier: MIT
/*
 * Lingering and retiring (issue 13: registration off the hot path): what
 * becomes of a module whose last known user is gone, and the background
 * steps the loop takes when idle (hd_registry_background).
 *
 * The daemon does not know every process that maps a registered file: a
 * process that found it on the board, or a fork child, never asked. So a
 * module whose last known user goes is not removed at once: it lingers
 * (--linger seconds, default 60) still published, so that a command run
 * over and over keeps its events; a file that is deleted or replaced
 * (nothing can map it by its name again, and its events would pin it) does
 * not linger. When it has lingered long enough, or at once with --linger 0,
 * or when more than --linger-max modules linger (the oldest first), it is
 * retired: withdrawn from the board, then /proc is read, and every process
 * still mapping it becomes a known user (adopted: its pidfd watched as if it
 * had asked); only a module nobody maps loses its events. A process that read
 * the board before the withdrawal had mapped the file before (the barrier in
 * hd_board_withdraw), so the scan sees it; one that reads it after asks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helperd.h"

static bool file_gone(const struct hd_module *m)
{
	struct stat st;

	if (m->hold_fd >= 0)
		return hd_mod_deleted(m);
	/* The name the events use: the file itself, or our bind-mounted alias of it. */
	return stat(m->path, &st) != 0 || (uint64_t)st.st_dev != m->dev ||
	       (uint64_t)st.st_ino != m->ino || st.st_nlink == 0;
}

/*
 * The retirement runs in steps (hd_registry_background): a module is
 * withdrawn from the board at once and queued; a pass over /proc reads a
 * few processes' maps per step, so a registration that arrives meanwhile
 * waits for one step, never for a whole scan (a millisecond and more per
 * hundred processes). A pass checks the modules that were queued before it
 * began; modules queued meanwhile wait for the next pass. Until its pass
 * ends a module keeps its events, and a process that asks for it meanwhile
 * is a user like any other.
 */
enum { RT_NONE, RT_QUEUED, RT_SCANNING };
#define RETIRE_STEP_PIDS 8
/* A file mapped by a process the daemon could not adopt is looked at again this much later. */
#define UNADOPTED_RETRY_S 10

struct modlist {
	struct hd_module **v;
	size_t n, cap;
};

static struct {
	struct modlist queued, scanning;
	DIR *proc; /* the pass under way, else NULL */
	unsigned adopted;
} rt;

static bool modlist_add(struct modlist *l, struct hd_module *m)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct hd_module **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = m;
	return true;
}

static void modlist_del(struct modlist *l, struct hd_module *m)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == m) {
			l->v[i] = l->v[--l->n];
			return;
		}
}

void hd_retire_forget(struct hd_module *m)
{
	if (m->retiring == RT_QUEUED)
		modlist_del(&rt.queued, m);
	else if (m->retiring == RT_SCANNING)
		modlist_del(&rt.scanning, m);
	m->retiring = RT_NONE;
}

static int retire_mapping(pid_t pid, const struct hd_mapping *mp, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < rt.scanning.n; i++) {
		struct hd_module *m = rt.scanning.v[i];
		struct hd_proc *p;

		if (mp->dev != m->mdev || mp->ino != m->mino || pid == m->leaving)
			continue;
		p = hd_proc_find(pid);
		/* A known pid whose process exited: the pid is someone else's now. */
		if (p && !hd_peer_alive(p->pidfd))
			return 0;
		if (!p) {
			uid_t uid = hd_pid_uid(pid);

			if (uid == (uid_t)-1)
				return 0;
			p = hd_proc_get(pid, uid, -1);
			if (!p) {
				/*
				 * It maps the file but cannot be watched (its uid's
				 * caps, no descriptor left): the file keeps its
				 * events, and is looked at again later.
				 */
				if (errno != ESRCH)
					m->unadopted = true;
				continue;
			}
		}
		if (hd_proc_attach(p, m, mp) == 0) {
			rt.adopted++;
			hd_dbg("pid %d maps %s: adopted", (int)pid, m->mapped_path);
		}
		if (p->nmods == 0)
			hd_proc_free(p);
	}
	return 0;
}

/* Only the lines of a file being retired are read whole. */
static bool retire_wants(uint64_t dev, uint64_t ino, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < rt.scanning.n; i++)
		if (rt.scanning.v[i]->mdev == dev && rt.scanning.v[i]->mino == ino)
			return true;
	return false;
}

/* Withdrawn now; its /proc pass comes in steps. */
void hd_retire(struct hd_module *m, pid_t leaving)
{
	hd_mod_withdraw(m);
	if (m->retiring) {
		if (m->leaving != leaving)
			m->leaving = 0;
		return;
	}
	if (!modlist_add(&rt.queued, m)) {
		/* No memory for the queue: its users are unknown, so it keeps its events. */
		hd_mod_publish(m);
		return;
	}
	m->retiring = RT_QUEUED;
	m->leaving = leaving;
}

/* The end of a pass: who nobody maps loses its events. */
static void retire_pass_end(void)
{
	size_t n = rt.scanning.n;

	if (rt.proc)
		closedir(rt.proc);
	rt.proc = NULL;
	if (rt.adopted)
		hd_dbg("retire: %zu files checked, %u processes still map them", n, rt.adopted);
	rt.adopted = 0;
	while (rt.scanning.n) {
		struct hd_module *m = rt.scanning.v[--rt.scanning.n];
		bool unadopted = m->unadopted;

		m->retiring = RT_NONE;
		m->unadopted = false;
		if (m->nusers == 0 && unadopted) {
			hd_dbg("retire: %s is mapped by a process that could not be adopted: kept, "
			       "checked again in %u s",
			       m->mapped_path, UNADOPTED_RETRY_S);
			hd_mod_unidle(m);
			m->idle = true;
			m->idle_until = hd_now_ms() + UNADOPTED_RETRY_S * 1000ull;
			hd_nidle++;
			hd_mod_publish(m);
		} else if (m->nusers == 0) {
			hd_mod_remove(m, true); /* EBUSY: draining, retried by hd_tick */
		} else {
			hd_mod_publish(m);
		}
	}
}

/* One step of the retirement: returns whether more remain. */
static bool retire_step(void)
{
	pid_t self = getpid();
	unsigned read = 0;
	struct dirent *de;

	if (!rt.proc) {
		struct modlist t;

		if (rt.queued.n == 0)
			return false;
		t = rt.scanning;
		rt.scanning = rt.queued;
		rt.queued = t;
		rt.queued.n = 0;
		for (size_t i = 0; i < rt.scanning.n; i++)
			rt.scanning.v[i]->retiring = RT_SCANNING;
		rt.proc = opendir("/proc");
		if (!rt.proc) {
			retire_pass_end();
			return rt.queued.n > 0;
		}
	}
	while (read < RETIRE_STEP_PIDS && (de = readdir(rt.proc))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		hd_each_mapping((pid_t)pid, retire_wants, retire_mapping, NULL);
		read++;
	}
	if (read < RETIRE_STEP_PIDS || rt.scanning.n == 0)
		retire_pass_end();
	return rt.proc || rt.queued.n > 0;
}

/* SIGTERM: the pass under way and the queues dropped. */
void hd_retire_stop(void)
{
	if (rt.proc)
		closedir(rt.proc);
	rt.proc = NULL;
	free(rt.queued.v);
	free(rt.scanning.v);
	memset(&rt, 0, sizeof(rt));
}

void hd_mod_idle(struct hd_module *m, pid_t leaving)
{
	struct hd_module *oldest = NULL;

	if (hd_cfg.linger_s == 0 || m->draining || file_gone(m)) {
		hd_retire(m, leaving);
		return;
	}
	m->idle = true;
	m->idle_until = hd_now_ms() + hd_cfg.linger_s * 1000ull;
	hd_nidle++;
	if (hd_nidle <= hd_cfg.linger_max)
		return;
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *x = hd_modules[b]; x; x = x->hnext)
			if (x->idle && !x->retiring &&
			    (!oldest || x->idle_until < oldest->idle_until))
				oldest = x;
	if (oldest)
		hd_retire(oldest, 0);
}

/* Others' work under way: a parse, the writer (the state file then waits, hd_state_due). */
static bool busy(void)
{
	return hd_parses_running() > 0 || hd_writer_queued() > 0;
}

bool hd_registry_background_pending(void)
{
	return rt.proc || rt.queued.n || hd_state_due(busy());
}

bool hd_registry_background(void)
{
	bool retiring = (rt.proc || rt.queued.n) && retire_step();

	/* The state file after the retirements, unless they have kept it waiting a second. */
	if (hd_state_due(busy()) && (!retiring || hd_now_ms() - hd_state_dirty_since >= 1000))
		hd_registry_flush();
	return hd_registry_background_pending();
}
