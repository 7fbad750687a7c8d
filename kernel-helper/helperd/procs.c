// SPDX-License-Identifier: MIT
/*
 * The processes that use modules: the model's process table (the modules
 * are registry.c's), with each process's references, its pidfd in the
 * loop's epoll set, its exit.
 *
 * A process holds a reference count per module (two -G objects in one
 * module register it twice; an UNREGISTER drops one). Its exit is seen on
 * its pidfd, which is in our epoll set: the pidfd is the one the kernel gave
 * for the socket's peer (SO_PEERPIDFD), so it is the very process that
 * connected, not whoever has its pid now. When a module's last user goes,
 * the registry tells the layer above (hd_model_hooks.idle: it lingers or is
 * retired, retire.c).
 *
 * Exec: a process that execs keeps its pid and pidfd but loses its modules
 * without running a destructor. When a known pid registers again, its other
 * modules are checked against its maps and dropped if gone (hd_add_known);
 * and a sweep (scan.c) checks every registered process's maps once per
 * --sweep seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helperd.h"

struct hd_proc *hd_procs[HD_PROC_BUCKETS];
size_t hd_nprocs_total;

struct hd_proc *hd_proc_find(pid_t pid)
{
	for (struct hd_proc *p = hd_procs[(unsigned)pid % HD_PROC_BUCKETS]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* --- processes --- */

struct hd_proc *hd_proc_get(pid_t pid, uid_t uid, int pidfd)
{
	struct hd_proc *p = hd_proc_find(pid);
	struct epoll_event ev = {.events = EPOLLIN};
	int fd;

	if (p)
		return p;
	if (hd_uid_hold(uid, 1, 1) != 0) {
		errno = EDQUOT;
		return NULL;
	}
	fd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : (int)pidfd_open(pid, 0);
	p = fd >= 0 ? calloc(1, sizeof(*p)) : NULL;
	if (!p) {
		if (fd >= 0)
			close(fd);
		else if (!errno)
			errno = ENOMEM;
		hd_uid_release(uid, 1, 1);
		return NULL;
	}
	p->tag = HD_TAG_PROC;
	p->pid = pid;
	p->uid = uid;
	p->pidfd = fd;
	ev.data.ptr = p;
	if (epoll_ctl(hd_epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		free(p);
		hd_uid_release(uid, 1, 1);
		errno = ENOMEM;
		return NULL;
	}
	p->hnext = hd_procs[(unsigned)pid % HD_PROC_BUCKETS];
	hd_procs[(unsigned)pid % HD_PROC_BUCKETS] = p;
	hd_nprocs_total++;
	return p;
}

void hd_proc_free(struct hd_proc *p)
{
	struct hd_proc **pp = &hd_procs[(unsigned)p->pid % HD_PROC_BUCKETS];

	while (*pp && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = p->hnext;
	hd_forget(p);
	epoll_ctl(hd_epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
	close(p->pidfd);
	hd_uid_release(p->uid, 1, 1);
	free(p->mods);
	free(p);
	hd_nprocs_total--;
}

/* Whether pid still maps module m at start (maps' dev:ino, else map_files + fstat). */
/* Whether mp, a mapping of pid, is of module m (maps' dev:ino, else map_files + fstat). */
static bool mapping_is(pid_t pid, const struct hd_mapping *mp, const struct hd_module *m)
{
	struct stat st;
	bool same;
	int fd;

	if (mp->dev == m->dev && mp->ino == m->ino)
		return true;
	/* maps prints the superblock's device: not st_dev on btrfs subvolumes. */
	fd = hd_open_mapping(pid, mp);
	if (fd < 0)
		return false;
	same =
	    fstat(fd, &st) == 0 && (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->ino;
	close(fd);
	return same;
}

bool hd_still_mapped(pid_t pid, uint64_t start, const struct hd_module *m, struct hd_mapping *mp)
{
	return hd_find_mapping(pid, start, mp) == 0 && mapping_is(pid, mp, m);
}

int hd_proc_attach(struct hd_proc *p, struct hd_module *m, const struct hd_mapping *mp)
{
	struct hd_pmod *pm;

	for (uint32_t i = 0; i < p->nmods; i++) {
		struct hd_mapping *was;
		bool moved;

		pm = &p->mods[i];
		if (pm->m != m)
			continue;
		if (pm->start == mp->start) {
			pm->count++;
			return 0;
		}
		/*
		 * Registered again at another address: either a second mapping
		 * of the file (the old one still there: one more reference), or
		 * the process exec'ed and its new image mapped the file anew,
		 * when the old image's references died with it. The mapping
		 * must then follow, or the sweep would look at the old address,
		 * find nothing and remove events the process uses.
		 */
		was = malloc(sizeof(*was));
		if (!was)
			return -ENOMEM;
		moved = !hd_still_mapped(p->pid, pm->start, m, was);
		free(was);
		if (!moved) {
			pm->count++;
			return 0;
		}
		hd_dbg("pid %d maps %s anew at 0x%" PRIx64 " (exec)", (int)p->pid, m->mapped_path,
		       mp->start);
		free(pm->path);
		pm->count = 1;
		pm->start = mp->start;
		pm->end = mp->end;
		pm->bias = mp->start - mp->offset - m->delta;
		pm->path = strcmp(mp->path, m->mapped_path) != 0 ? strdup(mp->path) : NULL;
		return 0;
	}
	pm = realloc(p->mods, (p->nmods + 1) * sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	p->mods = pm;
	pm = &p->mods[p->nmods++];
	pm->m = m;
	pm->count = 1;
	pm->start = mp->start;
	pm->end = mp->end;
	pm->bias = mp->start - mp->offset - m->delta;
	/* Another mount namespace may name it otherwise: LIST answers with the process's name. */
	pm->path = strcmp(mp->path, m->mapped_path) != 0 ? strdup(mp->path) : NULL;
	m->nusers++;
	hd_mod_unidle(m);
	return 0;
}

/* `unloading`: the process says it unmaps the file (UNREGISTER at dlclose). */
void hd_proc_detach(struct hd_proc *p, uint32_t i, bool unloading)
{
	struct hd_module *m = p->mods[i].m;

	free(p->mods[i].path);
	p->mods[i] = p->mods[--p->nmods];
	hd_mod_put(m, unloading ? p->pid : 0);
}

/*
 * After an exec the pid's old modules may be gone: drop those no longer
 * mapped, all looked up in one reading of its maps (a process of many
 * modules registers each: a reading per module made that quadratic).
 */
static void proc_check_maps(struct hd_proc *p, const struct hd_module *keep)
{
	uint32_t n = p->nmods;
	uint64_t *starts;
	struct hd_mapping *mps;
	bool *found;

	if (n == 0 || (n == 1 && p->mods[0].m == keep))
		return;
	starts = malloc(n * sizeof(*starts));
	mps = malloc(n * sizeof(*mps));
	found = malloc(n * sizeof(*found));
	if (!starts || !mps || !found)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		starts[i] = p->mods[i].start;
	hd_find_mappings(p->pid, starts, n, mps, found);
	/* From the end: a detach moves the last module into the place it frees. */
	for (uint32_t i = n; i-- > 0;) {
		if (p->mods[i].m == keep || (found[i] && mapping_is(p->pid, &mps[i], p->mods[i].m)))
			continue;
		hd_dbg("pid %d no longer maps %s", (int)p->pid, p->mods[i].m->mapped_path);
		hd_proc_detach(p, i, false);
	}
out:
	free(starts);
	free(mps);
	free(found);
}

void hd_process_exited(void *arg)
{
	struct hd_proc *p = arg;

	hd_dbg("pid %d exited", (int)p->pid);
	while (p->nmods)
		hd_proc_detach(p, p->nmods - 1, true);
	hd_proc_free(p);
}

bool hd_peer_alive(int pidfd)
{
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};

	/* A pidfd polls readable once its process has exited. */
	return pidfd < 0 || poll(&pf, 1, 0) == 0;
}

int hd_add_known(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, struct hd_module *m)
{
	bool known_pid = hd_proc_find(pid) != NULL;
	struct hd_proc *p = hd_proc_get(pid, uid, pidfd);
	int ret;

	if (!p) /* (out of descriptors for its pidfd: -EMFILE, as at accept) */
		return errno == EDQUOT			    ? -EDQUOT
		       : errno == EMFILE || errno == ENFILE ? -EMFILE
							    : -ENOMEM;
	ret = hd_proc_attach(p, m, mp);
	if (ret == 0 && known_pid)
		proc_check_maps(p, m);
	return ret;
}

/* SIGTERM: every process forgotten, its references dropped without a removal (main.c). */
void hd_procs_drop_all(void)
{
	for (size_t b = 0; b < HD_PROC_BUCKETS; b++)
		while (hd_procs[b]) {
			struct hd_proc *p = hd_procs[b];

			/* Detach without removal: the registry removes everything in one pass. */
			for (uint32_t i = 0; i < p->nmods; i++) {
				p->mods[i].m->nusers--;
				free(p->mods[i].path);
			}
			p->nmods = 0;
			hd_proc_free(p);
		}
}
