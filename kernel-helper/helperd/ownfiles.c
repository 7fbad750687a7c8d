// SPDX-License-Identifier: MIT
/*
 * The daemon's own files: where they may live, and how they are opened
 * (issue 33, item 3).
 *
 * The state file, its journal, the board and the socket live in the state
 * directory and the socket directory (the same one unless --state says
 * otherwise). Whoever can write to such a directory can put anything at
 * those names: a FIFO, whose open for writing waits for a reader that
 * never comes, a regular file of their own that receives the journal (and
 * that the next start then refuses to read, so a crash's events stay), a
 * symlink to a file of root's. So:
 *
 * - The daemon refuses to start, with one message, when either directory
 *   is writable by anyone but itself: writable by its group or by others,
 *   or owned by a uid that is neither root nor the daemon's (a root
 *   daemon: root's only). Every directory above it is held to the same
 *   rule, except that one writable by others is accepted when it is
 *   sticky (/tmp): there only the owner of the entry below (checked by the
 *   same rule) can rename or remove it. The path is resolved first
 *   (realpath), so a symlink on the way (/var/run) is judged by what it
 *   names. This is a check of the operator's configuration at start, not
 *   a defence against root changing it afterwards.
 * - A file of ours is opened for reading or appending only if it already
 *   is one: O_NOFOLLOW (a symlink is refused), O_NONBLOCK (a FIFO or a
 *   device does not block the open), then fstat on that descriptor: a
 *   regular file, of the daemon's uid, one link, writable by no one else.
 * - A file of ours is created only as a new file: a temporary name
 *   unlinked then created O_CREAT|O_EXCL|O_NOFOLLOW (which follows nothing
 *   and opens nothing that was there), renamed into place. The rename
 *   replaces whatever stood at the name without opening it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "helperd.h"

static int hd_mkdir_parents(const char *path)
{
	char tmp[PATH_MAX];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* The uid may own what we rely on: root, or ourselves. */
static bool owner_ok(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * The directory of the file at path, and every directory above it, can be
 * changed by no one but root and us. Returns 0, or -EPERM with why (the
 * directory and the reason) in msg.
 */
static int dir_check(const char *path, char *msg, size_t msglen)
{
	char dir[PATH_MAX], real[PATH_MAX], *slash;
	struct stat st;
	bool last = true;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (dir[0] != '/' || !slash) {
		snprintf(msg, msglen, "%s: not an absolute path", path);
		return -EINVAL;
	}
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(dir, real)) {
		snprintf(msg, msglen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	for (;;) {
		if (lstat(real, &st) != 0) {
			snprintf(msg, msglen, "%s: %s", real, strerror(errno));
			return -errno;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(msg, msglen, "%s: not a directory", real);
			return -ENOTDIR;
		}
		if (!owner_ok(st.st_uid)) {
			snprintf(msg, msglen, "%s is owned by uid %u", real, (unsigned)st.st_uid);
			return -EPERM;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st.st_mode & S_ISVTX))) {
			snprintf(msg, msglen, "%s is writable by %s (mode %04o)", real,
				 st.st_mode & S_IWOTH ? "others" : "its group",
				 (unsigned)(st.st_mode & 07777));
			return -EPERM;
		}
		if (!strcmp(real, "/"))
			return 0;
		slash = strrchr(real, '/');
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
		last = false;
	}
}

int hd_dirs_prepare(const char *socket_path, const char *state_path)
{
	const char *paths[2] = {socket_path, state_path};
	char msg[PATH_MAX + 128];
	int ret = hd_mkdir_parents(socket_path);

	if (ret) {
		hd_err("cannot create the directory of %s: %s", socket_path, strerror(-ret));
		return ret;
	}
	for (int i = 0; i < 2; i++) {
		ret = paths[i] ? dir_check(paths[i], msg, sizeof(msg)) : 0;
		if (ret) {
			hd_err("refusing to start: the %s directory is not safe: %s (only root%s "
			       "may write to it and to every directory above it, a sticky one "
			       "excepted)",
			       i ? "state" : "socket", msg,
			       geteuid() ? " and the daemon's uid" : "");
			return ret;
		}
	}
	return 0;
}

int hd_open_own_fd(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0) {
		if (errno == ELOOP)
			hd_warn("%s: a symlink: ignored", path);
		return -errno;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		hd_warn("%s: not a regular file of ours writable by us alone: ignored", path);
		close(fd);
		return -EPERM;
	}
	/* A regular file: O_NONBLOCK did its job at the open. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

FILE *hd_open_own(const char *path)
{
	int fd = hd_open_own_fd(path, O_RDONLY);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

int hd_create_own(const char *path, int flags)
{
	char tmp[PATH_MAX];
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	fd = open(tmp, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (rename(tmp, path) != 0) {
		int err = -errno;

		close(fd);
		unlink(tmp);
		return err;
	}
	return fd;
}

int hd_writev_all(int fd, struct iovec *iov, size_t n)
{
	while (n > 0) {
		int cnt = n > IOV_MAX ? IOV_MAX : (int)n;
		ssize_t w = writev(fd, iov, cnt);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		/* A short write: the pieces left, the first one cut. */
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}
