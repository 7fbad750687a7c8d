// SPDX-License-Identifier: MIT
/*
 * The names a definition writes (the tracefs uprobe layer, tracefs.c): a
 * path literally when the kernel can parse it and only root can change
 * what it means, else a bind-mount alias of the file.
 *
 * Paths. The kernel splits the line on white space and knows no quoting
 * (measured: a quoted or backslash-escaped path with a space is EINVAL; a ':'
 * in the path works, the offset follows the last one). So a path is written
 * literally only when made of [A-Za-z0-9/._+,:@=~-]. Any other file gets a
 * bind mount of itself at /run/usdtkit/files/<dev>-<ino> and is registered
 * under that name (measured: events bind to the inode at creation and fire
 * in every process mapping the file, by whatever name it mapped it). The
 * alias keeps the listing meaningful, unlike /proc/self/fd/N, which also
 * works at creation but lists as a name that means nothing afterwards.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "tracefs.h"

bool usdt_tracefs_path_ok(const char *path)
{
	size_t n = 0;

	if (path[0] != '/')
		return false;
	for (; *path; path++, n++) {
		unsigned char c = (unsigned char)*path;

		if (n >= 1024)
			return false;
		if (!isalnum(c) && !strchr("/._+,:@=~-", c))
			return false;
	}
	return true;
}

/*
 * Trusted paths. The kernel resolves a definition's PATH again for every
 * line written, following symlinks, in the writer's mount namespace; what it
 * binds is whatever the name means at that instant. A name is only as
 * stable as the directories on it: whoever can write one of them can rename
 * or symlink something else onto the name between our check and the write.
 * So a path is trusted when, walked from / one component at a time
 * (openat O_PATH|O_NOFOLLOW: no symlink is ever followed, each step is the
 * directory we checked, not a name looked up again), every directory is
 * owned by root and writable by neither group nor others (OpenSSH's and
 * sudo's rule for their own files; a POSIX ACL granting write shows in the
 * group bits), none is on FUSE (whose server, possibly a user, answers
 * owners and lookups as it likes), no component is a symlink, "." or "..",
 * and the last one is a regular file with the (st_dev, st_ino) wanted.
 * Sticky world-writable directories (/tmp, /var/tmp) are not trusted:
 * nobody can rename root's entry in them, but the rule stays one that needs
 * no reasoning about who created which entry. After a successful walk only
 * root can change what the name means.
 */
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

static int trusted_step(int fd, bool last, const struct stat *want)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st) != 0 || fstatfs(fd, &sfs) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if ((unsigned long)sfs.f_type == FUSE_SUPER_MAGIC)
		return -EPERM;
	if (last && want) {
		if (!S_ISREG(st.st_mode))
			return -EPERM;
		return st.st_dev == want->st_dev && st.st_ino == want->st_ino ? 0 : -ESTALE;
	}
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)) ? 0 : -EPERM;
}

/* The walk: want NULL for a directory path, else the file it must name. */
static int trusted_walk(const char *path, const struct stat *want)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	unsigned ncomp = 0;
	int fd, ret;

	if (path[0] != '/')
		return -EINVAL;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = trusted_step(fd, false, NULL);
	while (!ret) {
		size_t n;
		int next;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			ret = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			ret = -EINVAL;
			break;
		}
		next = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			ret = -errno;
			break;
		}
		close(fd);
		fd = next;
		ncomp++;
		while (*p == '/')
			p++;
		ret = trusted_step(fd, !*p, want);
	}
	close(fd);
	/* A path that ends in a directory when a file is wanted ("/", "/usr/"). */
	if (!ret && want && ncomp == 0)
		ret = -EISDIR;
	return ret;
}

int usdt_path_trusted(const char *path, int fd)
{
	struct stat want;

	if (fstat(fd, &want) != 0)
		return -errno;
	if (!S_ISREG(want.st_mode))
		return -EPERM;
	return trusted_walk(path, &want);
}

int usdt_tracefs_event_path(int fd, const char *path, bool make_alias, char *out, size_t outlen,
			    int *kind)
{
	struct stat st;

	if (path && usdt_tracefs_path_ok(path) && strlen(path) < outlen &&
	    usdt_path_trusted(path, fd) == 0) {
		strcpy(out, path);
		*kind = USDT_PATH_LITERAL;
		return 0;
	}
	*kind = USDT_PATH_ALIAS;
	if (make_alias)
		return usdt_tracefs_alias(fd, out, outlen);
	if (fstat(fd, &st) != 0)
		return -errno;
	usdt_tracefs_alias_path((uint64_t)st.st_dev, (uint64_t)st.st_ino, out, outlen);
	return 0;
}

void usdt_tracefs_alias_path(uint64_t dev, uint64_t ino, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%" PRIu64 "-%" PRIu64, USDT_ALIAS_DIR, dev, ino);
}

static int mkdir_p(const char *dir)
{
	char tmp[256];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int usdt_tracefs_alias(int fd, char *out, size_t outlen)
{
	struct stat want, have;
	char src[64];
	int ret, afd;

	if (fstat(fd, &want) != 0)
		return -errno;
	usdt_tracefs_alias_path((uint64_t)want.st_dev, (uint64_t)want.st_ino, out, outlen);
	if (stat(out, &have) == 0 && have.st_dev == want.st_dev && have.st_ino == want.st_ino)
		return 0; /* already bound */
	ret = mkdir_p(USDT_ALIAS_DIR);
	if (ret)
		return ret;
	/* The alias is a name the kernel resolves too: only root may change its directories. */
	ret = trusted_walk(USDT_ALIAS_DIR, NULL);
	if (ret)
		return ret == -EPERM || ret == -ELOOP ? -EPERM : ret;
	/*
	 * The mount point: an empty root-owned file in a root-only directory,
	 * new (O_EXCL), or one left by an earlier caller: then a regular file
	 * of ours, opened without following or blocking (never a FIFO's wait).
	 */
	afd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (afd < 0 && errno == EEXIST) {
		afd = open(out, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (afd >= 0 && (fstat(afd, &have) != 0 || !S_ISREG(have.st_mode) ||
				 have.st_uid != geteuid())) {
			close(afd);
			return -EPERM;
		}
	}
	if (afd < 0)
		return -errno;
	close(afd);
	/* Bind what fd is, not what its name now points to. */
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	/* ("none": the type is ignored for MS_BIND, but valgrind checks the pointer) */
	if (mount(src, out, "none", MS_BIND, NULL) != 0) {
		ret = -errno;
		unlink(out);
		return ret;
	}
	if (stat(out, &have) != 0 || have.st_dev != want.st_dev || have.st_ino != want.st_ino) {
		umount2(out, MNT_DETACH);
		unlink(out);
		return -EIO;
	}
	return 0;
}

int usdt_tracefs_alias_release(const char *alias)
{
	const char *p = alias + sizeof(USDT_ALIAS_DIR);

	/* Exactly USDT_ALIAS_DIR/<dev>-<ino>: a name from a state file is never a way out of it. */
	if (strncmp(alias, USDT_ALIAS_DIR "/", sizeof(USDT_ALIAS_DIR)) != 0 ||
	    strspn(p, "0123456789") == 0 || p[strspn(p, "0123456789")] != '-')
		return -EINVAL;
	p += strspn(p, "0123456789") + 1;
	if (strspn(p, "0123456789") == 0 || p[strspn(p, "0123456789")] != '\0')
		return -EINVAL;
	while (umount2(alias, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		; /* stacked binds from concurrent callers */
	if (unlink(alias) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* One argument's "name=fetch:type", or nothing (returns 0) for an unsupported one. */
