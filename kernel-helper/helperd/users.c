// SPDX-License-Identifier: MIT
/*
 * The requests that make and unmake users: REGISTER and UNREGISTER (the
 * processes themselves, the model's, are procs.c's), and the user a /proc
 * scan finds (hd_add_user).
 *
 * REGISTER takes the cheap path for a file already registered (the maps
 * line's dev:ino and path: no open), else opens the mapping through
 * map_files; a file not registered yet joins the parse queue (queue.c) and
 * the answer waits for its parse.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helperd.h"
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

/*
 * A scan found pid mapping the file (fd, dev, ino) at mp: make it a user.
 * A new file is parsed in line (the start-up scan, before serving), or,
 * `async` (the --all rescan, while clients are served), through the parse
 * queue as a REGISTER's is (no connection to answer: -EINPROGRESS).
 */
int hd_add_user(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, int fd, uint64_t dev,
		uint64_t ino, bool async)
{
	struct hd_module *m = hd_mod_find(dev, ino);
	int ret;

	if (!m || !hd_mod_usable(m)) {
		struct hd_parse *pending = hd_parse_find(dev, ino);

		if (pending)
			return async ? hd_parse_wait(pending, NULL, pid, uid, pidfd, mp)
				     : -EINPROGRESS;
		if (async)
			return hd_parse_begin(NULL, pid, uid, pidfd, mp, fd, dev, ino);
		ret = hd_mod_create(mp, fd, dev, ino, uid, m, hd_parses_of(uid), &m);
		if (ret)
			return ret;
	}
	ret = hd_add_known(pid, uid, pidfd, mp, m);
	/* (not watched: over its uid's caps, or no memory) */
	if (ret && m->nusers == 0)
		hd_mod_remove(m, true);
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
