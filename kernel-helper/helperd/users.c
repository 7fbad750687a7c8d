// SPDX-License-Identifier: MIT
/*
 * The processes that use modules, and the requests that make and unmake
 * users: REGISTER, UNREGISTER, a process's exit.
 *
 * A process holds a reference count per module (two -G objects in one
 * module register it twice; an UNREGISTER drops one). Its exit is seen on
 * its pidfd, which is in our epoll set: the pidfd is the one the kernel gave
 * for the socket's peer (SO_PEERPIDFD), so it is the very process that
 * connected, not whoever has its pid now. When a module's last user goes,
 * the module lingers or is retired (retire.c).
 *
 * REGISTER takes the cheap path for a file already registered (the maps
 * line's dev:ino and path: no open), else opens the mapping through
 * map_files; a file not registered yet joins the parse queue (queue.c) and
 * the answer waits for its parse.
 *
 * Exec: a process that execs keeps its pid and pidfd but loses its modules
 * without running a destructor. When a known pid registers again, its other
 * modules are checked against its maps and dropped if gone; and a sweep
 * (scan.c) checks every registered process's maps once per --sweep seconds.
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
bool hd_still_mapped(pid_t pid, uint64_t start, const struct hd_module *m, struct hd_mapping *mp)
{
	struct stat st;
	bool same;
	int fd;

	if (hd_find_mapping(pid, start, mp) != 0)
		return false;
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

/* After an exec the pid's old modules may be gone: drop those no longer mapped. */
static void proc_check_maps(struct hd_proc *p, const struct hd_module *keep)
{
	for (uint32_t i = 0; i < p->nmods;) {
		struct hd_mapping *mp = malloc(sizeof(*mp));
		bool still;

		if (!mp)
			return;
		still = p->mods[i].m == keep ||
			hd_still_mapped(p->pid, p->mods[i].start, p->mods[i].m, mp);
		free(mp);
		if (still) {
			i++;
			continue;
		}
		hd_dbg("pid %d no longer maps %s", (int)p->pid, p->mods[i].m->mapped_path);
		hd_proc_detach(p, i, false);
	}
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

/*
 * The file of the mapping holding addr: (mapping, fd, dev, ino). With
 * `found`, mp is that mapping already (resolve_known read the maps).
 */
static int resolve(pid_t pid, int pidfd, uint64_t addr, bool found, struct hd_mapping *mp, int *fd,
		   uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	int ret = found ? 0 : hd_find_mapping(pid, addr, mp);

	if (ret == -ENOENT)
		return -EFAULT; /* no mapping at that address */
	if (ret)
		return ret;
	*fd = hd_open_mapping(pid, mp);
	if (*fd < 0)
		return *fd == -ENOENT ? -ESRCH : *fd;
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(*fd);
		return -ENXIO;
	}
	/* What we read was that process's maps only if it is still alive now. */
	if (!hd_peer_alive(pidfd)) {
		close(*fd);
		return -ESRCH;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int hd_add_user(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, int fd, uint64_t dev,
		uint64_t ino, struct hd_module **mout)
{
	struct hd_module *m = hd_mod_find(dev, ino);
	struct hd_proc *p;
	bool known_pid = hd_proc_find(pid) != NULL;
	int ret;

	if (!m || !hd_mod_usable(m)) {
		struct hd_parse *pending = hd_parse_find(dev, ino);

		/*
		 * The --all rescan, which runs while clients are served, parses
		 * new files as a REGISTER does (no connection to answer); the
		 * start-up scan, before serving, parses in line.
		 */
		if (pending)
			return hd_scan_async ? hd_parse_wait(pending, NULL, pid, uid, pidfd, mp)
					     : -EINPROGRESS;
		if (hd_scan_async)
			return hd_parse_begin(NULL, pid, uid, pidfd, mp, fd, dev, ino);
		ret = hd_mod_create(mp, fd, dev, ino, uid, m, &m);
		if (ret)
			return ret;
	}
	p = hd_proc_get(pid, uid, pidfd);
	if (!p) {
		ret = errno == EDQUOT ? -EDQUOT : -ENOMEM;
		if (m->nusers == 0)
			hd_mod_remove(m, true);
		return ret;
	}
	ret = hd_proc_attach(p, m, mp);
	if (ret == 0 && known_pid)
		proc_check_maps(p, m);
	if (mout)
		*mout = m;
	return ret;
}

/*
 * The cheap path, for a file already registered: the (dev, ino) that
 * /proc/PID/maps prints for the mapping is the kernel's word for the mapped
 * file (the client cannot forge it), so a hit needs no open of map_files.
 * The slow path is taken for anything else, the first process of a file and
 * the one after an EBUSY included.
 * Returns 0 and the module, -EAGAIN when the slow path must decide (not
 * known, draining, or anything unusual), or an error for the client.
 */
static int resolve_known(pid_t pid, int pidfd, uint64_t addr, struct hd_mapping *mp,
			 struct hd_module **m, bool *found)
{
	int ret = hd_find_mapping(pid, addr, mp);

	*found = ret == 0;
	/* A zombie's maps are empty: a dead caller is -ESRCH, not a liar. */
	if (ret && !hd_peer_alive(pidfd))
		return -ESRCH;
	if (ret == -ENOENT)
		return -EFAULT;
	if (ret)
		return ret == -ENXIO ? -ENXIO : -EAGAIN;
	*m = hd_mod_find(mp->dev, mp->ino);
	/*
	 * maps prints the superblock's device, which is st_dev except on btrfs
	 * subvolumes (whose inode numbers overlap): the same path too, or the
	 * slow path decides.
	 */
	if (!*m || !hd_mod_usable(*m) || strcmp((*m)->mapped_path, mp->path) != 0)
		return -EAGAIN;
	return hd_peer_alive(pidfd) ? 0 : -ESRCH;
}

int hd_add_known(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, struct hd_module *m)
{
	bool known_pid = hd_proc_find(pid) != NULL;
	struct hd_proc *p = hd_proc_get(pid, uid, pidfd);
	int ret;

	if (!p)
		return errno == EDQUOT ? -EDQUOT : -ENOMEM;
	ret = hd_proc_attach(p, m, mp);
	if (ret == 0 && known_pid)
		proc_check_maps(p, m);
	return ret;
}

int hd_register(pid_t pid, uid_t uid, int pidfd, uint64_t addr, uint32_t *nprobes, void *cookie)
{
	struct hd_mapping *mp;
	struct hd_module *m = NULL;
	struct hd_parse *pa;
	uint64_t dev, ino;
	bool found, lingered = false;
	int fd = -1, ret = hd_tracefs_ready();

	*nprobes = 0;
	if (ret)
		return ret;
	/*
	 * A process its uid's caps leave no room for is refused before any
	 * work (a new file's parse and events would be for nothing).
	 */
	if (!hd_proc_find(pid) && !hd_uid_room(uid, 1, 1)) {
		hd_uid_hold(uid, 1, 1); /* logs the refusal (rate-limited) */
		hd_dbg("REGISTER pid %d uid %u: over its uid's caps", (int)pid, (unsigned)uid);
		return -EDQUOT;
	}
	mp = malloc(sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	ret = resolve_known(pid, pidfd, addr, mp, &m, &found);
	if (ret == -EAGAIN) {
		ret = resolve(pid, pidfd, addr, found, mp, &fd, &dev, &ino);
		m = ret ? NULL : hd_mod_find(dev, ino);
		if (!ret && m && hd_mod_usable(m)) {
			lingered = m->nusers == 0;
			ret = hd_add_known(pid, uid, pidfd, mp, m);
		} else if (!ret && (pa = hd_parse_find(dev, ino)))
			ret = hd_parse_wait(pa, cookie, pid, uid, pidfd, mp);
		else if (!ret)
			ret = hd_parse_begin(cookie, pid, uid, pidfd, mp, fd, dev, ino);
	} else if (!ret) {
		lingered = m->nusers == 0;
		ret = hd_add_known(pid, uid, pidfd, mp, m);
	}
	if (!ret)
		*nprobes = m->nprobes;
	/*
	 * A known file nobody was known to map (a program restarted, its file
	 * lingering), registered while a watcher is there: held as a new
	 * file's, so that a watcher that never listed it traces it from its
	 * first firing (protocol.h, WATCH). Answered through
	 * hd_register_done, as a parse is.
	 */
	if (!ret && cookie && lingered) {
		uint32_t hold = hd_hold_begin(pid, m->mdev, m->mino);

		if (hold) {
			hd_register_done(cookie, 0, m->nprobes, hold);
			ret = -EINPROGRESS;
		}
	}
	hd_dbg("REGISTER pid %d uid %u addr 0x%" PRIx64 ": %s", (int)pid, (unsigned)uid, addr,
	       ret == -EINPROGRESS ? "waits for the parse"
	       : ret		   ? strerror(-ret)
				   : mp->path);
	if (fd >= 0)
		close(fd);
	free(mp);
	return ret;
}

int hd_unregister(pid_t pid, uid_t uid, int pidfd, uint64_t addr)
{
	struct hd_mapping *mp = malloc(sizeof(*mp));
	struct hd_proc *p = hd_proc_find(pid);
	uint64_t dev, ino;
	int fd = -1, ret;

	if (!mp)
		return -ENOMEM;
	ret = resolve(pid, pidfd, addr, false, mp, &fd, &dev, &ino);
	free(mp);
	if (fd >= 0)
		close(fd);
	hd_dbg("UNREGISTER pid %d uid %u addr 0x%" PRIx64 ": %s", (int)pid, (unsigned)uid, addr,
	       ret ? strerror(-ret) : "ok");
	if (ret)
		return ret;
	if (!p)
		return -ENOENT;
	for (uint32_t i = 0; i < p->nmods; i++) {
		if (p->mods[i].m->dev != dev || p->mods[i].m->ino != ino)
			continue;
		if (--p->mods[i].count == 0)
			hd_proc_detach(p, i, true);
		if (p->nmods == 0)
			hd_proc_free(p);
		return 0;
	}
	return -ENOENT;
}
