/* SPDX-License-Identifier: MIT */
/*
 * Compiled objects, kept so that a program's second start skips clang.
 *
 * Theory. clang's start costs a D program's start more than anything else
 * (README.md, "Costs"); the same script run again generates the same C, so
 * its object is kept, keyed by everything the object depends on: the
 * generated source, the clang that compiles it (its `--version` text) and
 * the kernel it is for (uname's release and version: the kernel's layout of
 * `pt_regs` and its helpers are what the C assumes). An entry holds its
 * whole key beside the object and is used only when the key is equal, byte
 * for byte: its file name (a 64-bit hash of the key) only finds it, a
 * collision is a miss.
 *
 * Asking clang its version costs a process (100 ms on a loaded machine, more
 * than the target of a cached start): the answer is kept too, in the cache,
 * under the identity of the clang file found on PATH (its path, device,
 * inode, size and modification time, symbolic links followed): a new clang
 * is a new file, asked again.
 *
 * The cache is the user's and nobody else's: an object in it is loaded into
 * the kernel as this user (root, for tracing), so anyone who can write it
 * runs code as root. The directory ($USDTKIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/usdtkit/dtrace, else ~/.cache/usdtkit/dtrace, each only
 * where that directory is this user's: under sudo, HOME may be the
 * caller's, and root's cache is not made in it) is made 0700; it is used
 * only if it is a directory (not a symbolic link) that this user owns and
 * that neither its group nor others may write, checked on the open
 * directory itself, and every file in it is opened relative to that
 * descriptor and checked the same way (a regular file, this user's,
 * writable by nobody else). A directory that fails the check is not used
 * (one warning: the start compiles as if there were no cache). An entry is
 * written under a unique name and renamed into place, so a reader sees a
 * whole entry or none; the least recently used are removed past
 * EG_CACHE_MAX entries.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"

#define EG_CACHE_MAX 256
#define EG_CACHE_MAGIC "usdtkit-dtrace-cache 1\n"

static uint64_t fnv64(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return h;
}

/* mkdir -p, 0700 for what it makes. */
static int make_dirs(const char *path)
{
	char *p = dt_xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s && !rc; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (!rc && mkdir(p, 0700) && errno != EEXIST)
		rc = -1;
	dt_free(p);
	return rc;
}

/* A directory of this user's: sudo may leave HOME (or XDG_CACHE_HOME) the caller's. */
static bool own_dir(const char *path)
{
	struct stat st;

	return path && *path == '/' && !stat(path, &st) && st.st_uid == geteuid();
}

static void default_dir(char *out, size_t n)
{
	const char *env = getenv("USDTKIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw;

	*out = '\0';
	if (env && *env) {
		snprintf(out, n, "%s", env);
		return;
	}
	if (own_dir(xdg)) {
		snprintf(out, n, "%s/usdtkit/dtrace", xdg);
		return;
	}
	if (!own_dir(home) && (pw = getpwuid(geteuid())))
		home = pw->pw_dir;
	if (home && *home == '/')
		snprintf(out, n, "%s/.cache/usdtkit/dtrace", home);
}

/* Why a directory or file with this status may not be trusted, or NULL. */
static const char *untrusted(const struct stat *st, bool dir)
{
	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return dir ? "it is not a directory" : "an entry is not a regular file";
	if (st->st_uid != geteuid())
		return "another user owns it";
	if (st->st_mode & 022)
		return "its group or other users may write it";
	return NULL;
}

static void open_dir(struct eg_cache *c)
{
	char path[4096];
	struct stat st;
	const char *why;

	default_dir(path, sizeof(path));
	if (!*path) {
		snprintf(c->why, sizeof(c->why), "no home directory");
		return;
	}
	if (make_dirs(path)) {
		snprintf(c->why, sizeof(c->why), "cannot make %s: %s", path, strerror(errno));
		return;
	}
	/* lstat first: a directory this user cannot open is still worth naming */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		snprintf(c->why, sizeof(c->why), "%s: it is a symbolic link", path);
		c->warn = true;
		return;
	}
	c->dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if ((c->dfd >= 0 && fstat(c->dfd, &st)) || (c->dfd < 0 && lstat(path, &st))) {
		snprintf(c->why, sizeof(c->why), "%s: %s", path, strerror(errno));
	} else if ((why = untrusted(&st, true))) {
		snprintf(c->why, sizeof(c->why), "%s: %s (mode %03o, owner %u)", path, why,
			 (unsigned)(st.st_mode & 0777), (unsigned)st.st_uid);
		c->warn = true;
	} else if (c->dfd < 0) {
		snprintf(c->why, sizeof(c->why), "%s: %s", path, strerror(errno));
	} else {
		return;
	}
	if (c->dfd >= 0)
		close(c->dfd);
	c->dfd = -1;
}

/* A whole trusted file of the cache, or -1. */
static int read_entry(struct eg_cache *c, const char *name, struct dt_buf *out)
{
	int fd = openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	const char *why;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (why = untrusted(&st, false))) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		dt_buf_add(out, buf, (size_t)n);
	if (n == 0)
		futimens(fd, NULL); /* used: the last to be removed */
	close(fd);
	return n == 0 ? 0 : -1;
}

/* Writes a file of the cache under a unique name, then renames it into place. */
static void write_entry(struct eg_cache *c, const char *name, const struct dt_buf *parts,
			size_t nparts)
{
	static unsigned seq;
	char tmp[64];
	size_t i;
	int fd, ok = 1;

	snprintf(tmp, sizeof(tmp), ".tmp-%d-%u", (int)getpid(), seq++);
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	for (i = 0; i < nparts && ok; i++)
		ok = parts[i].n == 0 || write(fd, parts[i].s, parts[i].n) == (ssize_t)parts[i].n;
	if (close(fd) || !ok || renameat(c->dfd, tmp, c->dfd, name))
		unlinkat(c->dfd, tmp, 0);
}

/* Finds clang as execvp would: an absolute or relative name, else on PATH. */
int eg_cache_find_clang(const char *name, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *e;

	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		return access(out, X_OK);
	}
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p; p = e ? e + 1 : NULL) {
		e = strchr(p, ':');
		snprintf(out, n, "%.*s/%s", e ? (int)(e - p) : (int)strlen(p), p, name);
		if (*out != '/' || access(out, X_OK))
			continue;
		return 0;
	}
	return -1;
}

/* clang's `--version` text: kept in the cache by the file's identity. */
static int clang_version(struct eg_cache *c, const char *clang, struct dt_buf *out)
{
	struct stat st;
	struct dt_buf id = {0}, ver = {0};
	char name[64], buf[4096];
	int p[2], status = 0;
	pid_t pid;
	ssize_t n;

	if (stat(clang, &st))
		return -1;
	dt_buf_printf(&id, "%s %" PRIu64 " %" PRIu64 " %lld %lld.%09ld", clang, (uint64_t)st.st_dev,
		      (uint64_t)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		      st.st_mtim.tv_nsec);
	snprintf(name, sizeof(name), "clang-%016" PRIx64, fnv64(id.s, id.n, 0xcbf29ce484222325ull));
	if (!read_entry(c, name, &ver) && ver.n > id.n + 1 && !memcmp(ver.s, id.s, id.n) &&
	    ver.s[id.n] == '\n') {
		dt_buf_add(out, ver.s + id.n + 1, ver.n - id.n - 1);
		dt_free(ver.s);
		dt_free(id.s);
		return 0;
	}
	dt_free(ver.s);
	memset(&ver, 0, sizeof(ver));
	if (pipe2(p, O_CLOEXEC) || (pid = fork()) < 0) {
		dt_free(id.s);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		execl(clang, clang, "--version", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			dt_buf_add(&ver, buf, (size_t)n);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !ver.n) {
		dt_free(ver.s);
		dt_free(id.s);
		return -1;
	}
	{
		struct dt_buf parts[3] = {id, {(char *)"\n", 1, 0}, ver};

		write_entry(c, name, parts, 3);
	}
	dt_buf_add(out, ver.s, ver.n);
	dt_free(ver.s);
	dt_free(id.s);
	return 0;
}

void eg_cache_open(struct eg_cache *c, const char *clang, const char *src, size_t n)
{
	struct utsname u;
	char len[32];

	memset(c, 0, sizeof(*c));
	c->dfd = -1;
	open_dir(c);
	if (c->dfd < 0)
		return;
	dt_buf_printf(&c->key, "%s", EG_CACHE_MAGIC);
	if (clang_version(c, clang, &c->key) || uname(&u)) {
		snprintf(c->why, sizeof(c->why), "clang's version is unknown");
		eg_cache_close(c);
		return;
	}
	dt_buf_printf(&c->key, "kernel %s %s %s\n", u.release, u.version, u.machine);
	snprintf(len, sizeof(len), "source %zu\n", n);
	dt_buf_add(&c->key, len, strlen(len));
	dt_buf_add(&c->key, src, n);
	snprintf(c->name, sizeof(c->name), "%016" PRIx64 ".bpfo",
		 fnv64(c->key.s, c->key.n, 0xcbf29ce484222325ull));
}

int eg_cache_get(struct eg_cache *c, struct dt_buf *obj)
{
	struct dt_buf e = {0};
	char len[32];
	int n;

	if (c->dfd < 0 || read_entry(c, c->name, &e))
		return -1;
	n = snprintf(len, sizeof(len), "object ");
	if (e.n > c->key.n + (size_t)n && !memcmp(e.s, c->key.s, c->key.n) &&
	    !memcmp(e.s + c->key.n, len, (size_t)n)) {
		dt_buf_add(obj, e.s + c->key.n + n, e.n - c->key.n - (size_t)n);
		dt_free(e.s);
		c->hit = true;
		return 0;
	}
	dt_free(e.s);
	return -1;
}

/* Removes the least recently used entries past EG_CACHE_MAX. */
struct entry_age {
	struct timespec t;
	char name[24];
};

static int by_age(const void *a, const void *b)
{
	const struct timespec *x = &((const struct entry_age *)a)->t;
	const struct timespec *y = &((const struct entry_age *)b)->t;

	return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1)
				      : (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

static void prune(struct eg_cache *c)
{
	int fd = dup(c->dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry_age *v = NULL;
	size_t n = 0, i;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		struct entry_age a;
		struct stat st;

		if (strlen(e->d_name) != 21 || strcmp(e->d_name + 16, ".bpfo") ||
		    fstatat(c->dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		a.t = st.st_mtim;
		memcpy(a.name, e->d_name, 22);
		DT_PUSH(v, n, a);
	}
	closedir(d);
	if (n > EG_CACHE_MAX) {
		qsort(v, n, sizeof(*v), by_age);
		for (i = 0; i < n - EG_CACHE_MAX; i++)
			unlinkat(c->dfd, v[i].name, 0);
	}
	dt_free(v);
}

void eg_cache_put(struct eg_cache *c, const struct dt_buf *obj)
{
	struct dt_buf parts[3] = {c->key, {(char *)"object ", 7, 0}, *obj};

	if (c->dfd < 0)
		return;
	write_entry(c, c->name, parts, 3);
	prune(c);
}

void eg_cache_close(struct eg_cache *c)
{
	if (c->dfd >= 0)
		close(c->dfd);
	c->dfd = -1;
	dt_free(c->key.s);
	memset(&c->key, 0, sizeof(c->key));
}
