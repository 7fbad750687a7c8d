/* SPDX-License-Identifier: MIT */
/* Output files that appear whole or not at all (atomic_file.h: the design). */
#include "clock.h"
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static char *hidden_sibling(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
	const char *base = path + dirlen;
	size_t len = dirlen + strlen(base) + 16;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
	return s;
}

static void reset(struct usdt_atomic_file *f)
{
	free(f->path);
	free(f->tmpname);
	f->path = NULL;
	f->tmpname = NULL;
	f->fp = NULL;
	f->fd = -1;
	f->direct = 0;
}

int usdt_atomic_open(struct usdt_atomic_file *f, const char *path)
{
	struct stat st;
	char *dir;
	int err;

	f->fd = -1;
	f->fp = NULL;
	f->tmpname = NULL;
	f->direct = 0;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a device or a FIFO: written in place, never replaced */
		f->path = strdup(path);
		f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (!f->path || f->fd < 0 || !(f->fp = fdopen(f->fd, "w"))) {
			err = f->path ? -errno : -ENOMEM;
			usdt_atomic_abort(f);
			return err;
		}
		f->direct = 1;
		return 0;
	}
	f->path = strdup(path);
	dir = dir_of(path);
	if (!f->path || !dir) {
		free(dir);
		reset(f);
		return -ENOMEM;
	}

	f->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	free(dir);
	if (f->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		f->tmpname = hidden_sibling(path);
		if (!f->tmpname) {
			reset(f);
			return -ENOMEM;
		}
		f->fd = mkostemp(f->tmpname, O_CLOEXEC);
	}
	if (f->fd < 0) {
		err = -errno;
		reset(f);
		return err;
	}
	/*
	 * mkostemp() creates mode 0600; give the fallback file the mode an
	 * ordinary create would (O_TMPFILE already has 0666 & ~umask).
	 */
	if (f->tmpname) {
		mode_t um = umask(0);

		umask(um);
		fchmod(f->fd, 0666 & ~um);
	}
	f->fp = fdopen(f->fd, "w");
	if (!f->fp) {
		err = -errno;
		usdt_atomic_abort(f);
		return err;
	}
	return 0;
}

/* Give the unnamed O_TMPFILE a unique hidden name beside the destination. */
static int link_tmpfile(struct usdt_atomic_file *f)
{
	char proc[64];
	unsigned tries;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
	for (tries = 0; tries < 100; tries++) {
		char *name = hidden_sibling(f->path);
		uint64_t r;
		char *x;
		int i;

		if (!name)
			return -ENOMEM;
		r = (uint64_t)usdt_clock_ns(CLOCK_MONOTONIC) * 2654435761u ^
		    (uint64_t)getpid() << 20 ^ tries;
		x = name + strlen(name) - 6;
		for (i = 0; i < 6; i++, r /= 36)
			x[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r % 36];
		if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) {
			f->tmpname = name;
			return 0;
		}
		free(name);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int usdt_atomic_commit(struct usdt_atomic_file *f)
{
	int err = 0;

	if (fflush(f->fp) != 0 || ferror(f->fp))
		err = -(errno ? errno : EIO);
	if (f->direct) {
		if (fclose(f->fp) != 0 && !err)
			err = -errno;
		reset(f);
		return err;
	}
	if (!err && !f->tmpname)
		err = link_tmpfile(f);
	if (!err && rename(f->tmpname, f->path) != 0)
		err = -errno;
	if (err) {
		usdt_atomic_abort(f);
		return err;
	}
	if (fclose(f->fp) != 0)
		err = -errno; /* already renamed: data was flushed, report only */
	reset(f);
	return err;
}

void usdt_atomic_abort(struct usdt_atomic_file *f)
{
	if (f->tmpname)
		unlink(f->tmpname);
	if (f->fp)
		fclose(f->fp);
	else if (f->fd >= 0)
		close(f->fd);
	reset(f);
}
