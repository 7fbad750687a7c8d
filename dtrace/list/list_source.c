/* SPDX-License-Identifier: MIT */
/*
 * The modules `dtrace -l` reads, and how it reaches each file.
 *
 * A module is reached through /proc/PID/map_files/START-END, never through
 * the path the process mapped: that link is the very file the process has
 * mapped, even when it was deleted, replaced, or lives in another mount
 * namespace (a container). The path from /proc/PID/maps is only used for the
 * MODULE column, and as a fallback when map_files cannot be opened (without
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE); the fallback is accepted only
 * when the file at that path has the device and inode the mapping shows.
 *
 * With -p the mappings come from /proc/PID/maps; without it, from the helper
 * daemon (USDT_MSG_LIST, core/protocol.h), which names each
 * registered (pid, module) with its mapping range, device and inode; each is
 * then opened through the process's map_files like a -p module, so a stale
 * answer (the process exited, the range was remapped) is dropped, not
 * misread.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "protocol.h"
#include "list.h"
#include "list_source.h"

#define DAEMON_TIMEOUT_MS 5000
#define DELETED_SUFFIX " (deleted)"

static int push_module(struct usdt_list_modules *mods, const struct usdt_list_module *m)
{
	if (mods->n == mods->cap) {
		size_t cap = mods->cap ? mods->cap * 2 : 16;
		struct usdt_list_module *nv = realloc(mods->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		mods->v = nv;
		mods->cap = cap;
	}
	mods->v[mods->n++] = *m;
	return 0;
}

void usdt_list_modules_free(struct usdt_list_modules *mods)
{
	size_t i;

	for (i = 0; i < mods->n; i++) {
		if (mods->v[i].fd >= 0)
			close(mods->v[i].fd);
		free(mods->v[i].path);
		free(mods->v[i].module);
	}
	free(mods->v);
	mods->v = NULL;
	mods->n = mods->cap = 0;
}

static bool have_module(const struct usdt_list_modules *mods, int pid, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < mods->n; i++)
		if (mods->v[i].pid == pid && mods->v[i].dev == dev && mods->v[i].ino == ino)
			return true;
	return false;
}

/*
 * Opens the file mapped at [start, end) in pid, preferring map_files. The
 * fallback path must show (dev, ino) when they are known (non-zero ino).
 */
static int open_mapping(int pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
			uint64_t ino)
{
	char link[96];
	struct stat st;
	int fd;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	/*
	 * Only regular files are opened: opening a mapped device node (a GPU's,
	 * say) may have effects of its own.
	 */
	if (stat(link, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return -ENOENT;
		fd = open(link, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0)
			return fd;
	}
	if (errno != EPERM && errno != EACCES)
		return -errno;
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (ino && ((uint64_t)st.st_ino != ino || (uint64_t)st.st_dev != dev))) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static char *basename_dup(const char *path)
{
	const char *b = strrchr(path, '/');

	return strdup(b ? b + 1 : path);
}

/*
 * Fills m from an open fd and the mapped path; takes ownership of fd.
 * Returns 1 when the file is a new module, 0 when it was already listed for
 * this pid (fd closed), negative errno on failure (fd closed).
 */
static int add_module(struct usdt_list_modules *mods, int pid, int fd, const char *mapped,
		      uint64_t start)
{
	struct usdt_list_module m = {.pid = pid, .fd = fd, .start = start};
	size_t len = strlen(mapped), sl = strlen(DELETED_SUFFIX);
	struct stat st;
	int err;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	m.dev = (uint64_t)st.st_dev;
	m.ino = (uint64_t)st.st_ino;
	if (have_module(mods, pid, m.dev, m.ino)) {
		close(fd);
		return 0;
	}
	/* The kernel appends " (deleted)" to the path of an unlinked file. */
	if (st.st_nlink == 0 && len > sl && !strcmp(mapped + len - sl, DELETED_SUFFIX))
		len -= sl;
	m.path = strndup(mapped, len);
	m.module = m.path ? basename_dup(m.path) : NULL;
	if (!m.module || (err = push_module(mods, &m)) != 0) {
		free(m.path);
		free(m.module);
		close(fd);
		return -ENOMEM;
	}
	return 1;
}

int usdt_list_read_proc(const char *path, char **text, size_t *len)
{
	size_t cap = 1 << 14, n = 0;
	char *buf = malloc(cap);
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*text = buf;
	if (len)
		*len = n;
	return 0;
}

int usdt_list_proc_maps(int pid, int (*fn)(const struct usdt_mapping *m, void *arg), void *arg)
{
	char path[64], *text = NULL, *line, *next;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = usdt_list_read_proc(path, &text, NULL);
	if (err == -ENOENT)
		return -ESRCH;
	if (err)
		return err;
	for (line = text; *line && !err; line = next) {
		struct usdt_mapping m;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (usdt_maps_parse_line(line, &m))
			err = fn(&m, arg);
	}
	free(text);
	return err;
}

int usdt_list_open_mapping(int pid, const struct usdt_mapping *m)
{
	return open_mapping(pid, m->start, m->end, m->path, m->dev, m->ino);
}

/* A file already looked at, to skip its second and later mappings early. */
struct seen {
	uint64_t dev, ino;
};

/* usdt_list_proc_modules' walk: one module per file, the first mapping of each. */
struct proc_walk {
	int pid;
	struct usdt_list_modules *mods;
	struct usdt_diag *diag;
	struct seen *seen;
	size_t nseen, cap;
};

static int proc_module(const struct usdt_mapping *m, void *arg)
{
	struct proc_walk *w = arg;
	size_t i;
	int fd, err;

	for (i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == m->dev && w->seen[i].ino == m->ino)
			return 0;
	if (w->nseen == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 32;
		struct seen *ns = realloc(w->seen, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		w->seen = ns;
		w->cap = cap;
	}
	w->seen[w->nseen].dev = m->dev;
	w->seen[w->nseen++].ino = m->ino;
	fd = usdt_list_open_mapping(w->pid, m);
	if (fd < 0) {
		/* The process may have unmapped it since: not an error of ours. */
		if (fd != -ENOENT && fd != -ESRCH)
			usdt_warning(w->diag, "pid %d: cannot open %s: %s", w->pid, m->path,
				     strerror(-fd));
		return 0;
	}
	err = add_module(w->mods, w->pid, fd, m->path, m->start);
	return err < 0 ? err : 0;
}

int usdt_list_proc_modules(int pid, struct usdt_list_modules *mods, struct usdt_diag *diag)
{
	struct proc_walk w = {.pid = pid, .mods = mods, .diag = diag};
	int err = usdt_list_proc_maps(pid, proc_module, &w);

	free(w.seen);
	return err;
}

/* usdt_list_proc_file's walk: the first mapping of one file. */
struct file_walk {
	int pid;
	uint64_t dev, ino;
	struct usdt_list_modules *mods;
};

static int file_module(const struct usdt_mapping *m, void *arg)
{
	struct file_walk *w = arg;
	int fd, err;

	if (m->dev != w->dev || m->ino != w->ino)
		return 0;
	fd = usdt_list_open_mapping(w->pid, m);
	if (fd < 0)
		return fd;
	err = add_module(w->mods, w->pid, fd, m->path, m->start);
	if (err < 0)
		return err;
	/* what was opened must be that file (add_module read its device and inode) */
	if (!w->mods->n || w->mods->v[w->mods->n - 1].dev != w->dev ||
	    w->mods->v[w->mods->n - 1].ino != w->ino)
		return -ESTALE;
	return 1; /* found: the walk stops */
}

int usdt_list_proc_file(int pid, uint64_t dev, uint64_t ino, struct usdt_list_modules *mods)
{
	struct file_walk w = {.pid = pid, .dev = dev, .ino = ino, .mods = mods};
	int err = usdt_list_proc_maps(pid, file_module, &w);

	return err == 1 ? 0 : err ? err : -ENOENT;
}

/* ---- the daemon ---- */

static const char *socket_path(void)
{
	const char *p = getenv(USDT_HELPER_SOCKET_ENV);

	return p && *p ? p : USDT_HELPER_SOCKET_PATH;
}

bool usdt_list_daemon_running(const char **path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, e = 0;

	*path = socket_path();
	if (strlen(*path) >= sizeof(sa.sun_path))
		return true; /* usdt_list_daemon_modules() reports it */
	memcpy(sa.sun_path, *path, strlen(*path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		e = errno;
	close(fd);
	return e != ENOENT && e != ECONNREFUSED;
}

/* One packet within the deadline: its length, or a negative errno. */
static ssize_t recv_packet(int fd, void *buf, size_t len, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - usdt_now_ms();
		ssize_t r;
		int pr;

		if (left <= 0)
			return -ETIMEDOUT;
		pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		r = recv(fd, buf, len, MSG_TRUNC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		return r;
	}
}

/* One LIST_ENTRY (valid: usdt_answer_check): open the module through the process and add it. */
static int list_entry(struct usdt_list_modules *mods, const struct usdt_msg_list_entry *e,
		      struct usdt_diag *diag)
{
	const char *path = (const char *)(e + 1);
	struct stat st;
	int fd;

	fd = open_mapping(e->pid, e->start, e->end, path, e->dev, e->ino);
	if (fd < 0)
		return 0; /* the process is gone or remapped since the daemon looked */
	/* Another file at that range now: the answer is stale for this one. */
	if (fstat(fd, &st) || (uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino) {
		close(fd);
		return 0;
	}
	if (add_module(mods, e->pid, fd, path, e->start) < 0) {
		usdt_error(diag, "out of memory");
		return -1;
	}
	return 0;
}

int usdt_list_daemon_modules(struct usdt_list_modules *mods, struct usdt_diag *diag)
{
	const char *path = socket_path();
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct usdt_msg_list req;
	union {
		struct usdt_msg_hdr hdr;
		struct usdt_msg_reply reply;
		struct usdt_msg_list_entry entry;
		unsigned char bytes[sizeof(struct usdt_msg_list_entry) + USDT_PROTO_PATH_MAX];
	} buf;
	uint32_t seq = (uint32_t)getpid();
	enum usdt_answer kind;
	int64_t deadline;
	int fd, rc = -1;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		usdt_error(diag, "helper socket path too long: %s", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		usdt_error(diag, "cannot create a socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		if (e == ENOENT || e == ECONNREFUSED)
			usdt_error(
			    diag,
			    "the usdtkit helper daemon is not running (nothing listens on %s): "
			    "without it only one process can be listed, with -p PID",
			    path);
		else
			usdt_error(diag,
				   "cannot reach the usdtkit helper daemon at %s: %s; "
				   "-p PID lists one process without it",
				   path, strerror(e));
		goto out;
	}
	memset(&req, 0, sizeof(req));
	usdt_hdr_fill(&req.hdr, USDT_MSG_LIST, sizeof(req), seq);
	req.pid = 0;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		usdt_error(diag, "cannot send to the usdtkit helper daemon at %s: %s", path,
			   strerror(errno));
		goto out;
	}
	deadline = usdt_now_ms() + DAEMON_TIMEOUT_MS;
	for (;;) {
		ssize_t n = recv_packet(fd, &buf, sizeof(buf), deadline);

		if (n < 0) {
			usdt_error(diag, "no answer from the usdtkit helper daemon at %s: %s", path,
				   strerror((int)-n));
			goto out;
		}
		if (n == 0) {
			usdt_error(diag, "the usdtkit helper daemon at %s closed the connection",
				   path);
			goto out;
		}
		kind = (size_t)n > sizeof(buf) ? USDT_ANSWER_MALFORMED
					       : usdt_answer_check(&buf, (unsigned long)n, seq);
		if (kind == USDT_ANSWER_ENTRY) {
			if (list_entry(mods, &buf.entry, diag))
				goto out;
			continue;
		}
		/* Only our entries and our REPLY belong here. */
		if (kind != USDT_ANSWER_REPLY)
			goto malformed;
		if (buf.reply.status < 0) {
			usdt_error(diag, "the usdtkit helper daemon refused to list: %s",
				   strerror(-buf.reply.status));
			goto out;
		}
		rc = 0;
		goto out;
	}
malformed:
	usdt_error(diag, "the usdtkit helper daemon at %s sent a malformed answer", path);
out:
	close(fd);
	return rc;
}
