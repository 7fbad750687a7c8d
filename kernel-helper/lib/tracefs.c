// SPDX-License-Identifier: MIT
/*
 * The tracefs uprobe layer (the kernel behaviour it relies on is checked by
 * tests/helper/).
 *
 * Writing. uprobe_events is opened O_WRONLY|O_APPEND and never truncated:
 * O_TRUNC deletes every uprobe event on the system. Each definition or
 * removal is one write() of one line, so the kernel's result is that line's
 * result; on failure the kernel's own words are taken from error_log (the
 * entry whose Command: is our line), else the errno is described.
 *
 * Definitions are built only from fields the note reader validated:
 *   p:sdt_<provider>/<probe> PATH:0xOFF(0xREF) arg1=%di:s32 arg2=-8(%bp):u64 arg3=\42:s32
 * - OFF is the file offset of the site, REF the file offset of the semaphore:
 *   the same one bpftrace, perf and libbpf derive, since the kernel allows one
 *   ref_ctr per (inode, offset) and refuses a second, different one.
 * - Registers by their pt_regs names (%di, %r12, %ip; %x0 on arm64); a 32-bit
 *   alias (edi) fetches the full register and the note's size gives the type
 *   (s32), which keeps the low bytes: the kernel stores `size` bytes.
 * - Immediates as \VALUE, memory as +DISP(%reg)/-DISP(%reg); a string
 *   (known from metadata) as +0(%reg):ustring or +0(+DISP(%reg)):ustring,
 *   since the kernel fetches strings from memory operands only.
 * - Argument names: argN, N the position in the note, so a skipped
 *   unsupported argument does not renumber the others.
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
 *
 * Events. The kernel appends a site to an existing event of the same name when
 * the argument NAMES AND TYPES are the same (measured: the fetch registers may
 * differ), which is what the sites of one probe need. Sites of one probe
 * whose sizes or signs differ cannot share an event: the first signature in
 * note order gets <probe>, the next <probe>_2, and so on; an event of the name
 * that someone else made with another signature is skipped the same way.
 *
 * Removal is per site, `-:GROUP/EVENT PATH:0x%016lx(0xREF)`, exactly the
 * location as the kernel lists it (measured: `PATH:0x1077` or a missing
 * `(0xREF)` is ENOENT), for entries matching one
 * of the file's sites: an event shared with another file keeps that file's
 * sites. Removing an enabled event fails with EBUSY; reported, for retry.
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

#include "names.h"
#include "tracefs.h"

#define SUFFIX_TRIES 16
#define ERROR_LOG_MAX (64 * 1024)
#define LISTING_MAX (64u << 20)

static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

static void set_msg(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_msg(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

static bool has_uprobe_events(const char *root)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/uprobe_events", root);
	return access(p, F_OK) == 0;
}

/* Whether dir is a mount point: its device differs from its parent's. */
static bool is_mount_point(const char *dir)
{
	char parent[128];
	struct stat a, b;

	snprintf(parent, sizeof(parent), "%s/..", dir);
	return stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/*
 * Errors say what is wrong in the errno: -ENODEV tracefs is not mounted (and
 * could not be), -EOPNOTSUPP something is mounted but offers no uprobe_events
 * (a kernel without CONFIG_UPROBE_EVENTS, or another file system there),
 * -EROFS mounted read-only, -EACCES/-EPERM not root.
 */
int usdt_tracefs_open(struct usdt_tracefs *t, unsigned flags, char *err, size_t errlen)
{
	const char *root = NULL;
	char p[128];

	t->fd = -1;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !root; i++)
		if (has_uprobe_events(roots[i]))
			root = roots[i];
	if (!root && is_mount_point(roots[0])) {
		/* Never mount over what is there: it is someone's, or tracefs without uprobes. */
		set_msg(err, errlen,
			"%s is mounted but has no uprobe_events: a kernel without "
			"CONFIG_UPROBE_EVENTS, or not tracefs",
			roots[0]);
		return -EOPNOTSUPP;
	}
	if (!root && (flags & USDT_TRACEFS_MOUNT)) {
		if (mount("nodev", roots[0], "tracefs", 0, NULL) != 0 && errno != EBUSY) {
			int e = errno;

			set_msg(err, errlen,
				"tracefs is not mounted at %s and mounting it failed: %s%s",
				roots[0], strerror(e), e == EPERM ? " (needs root)" : "");
			return e == EPERM ? -EPERM : -ENODEV;
		}
		if (has_uprobe_events(roots[0]))
			root = roots[0];
		else {
			set_msg(err, errlen,
				"tracefs mounted at %s has no uprobe_events: a kernel without "
				"CONFIG_UPROBE_EVENTS",
				roots[0]);
			return -EOPNOTSUPP;
		}
	}
	if (!root) {
		set_msg(err, errlen,
			"no %s/uprobe_events: tracefs not mounted%s, or a kernel without "
			"CONFIG_UPROBE_EVENTS",
			roots[0],
			flags & USDT_TRACEFS_MOUNT ? "" : " (mount it or pass the mount flag)");
		return -ENODEV;
	}
	snprintf(t->root, sizeof(t->root), "%s", root);
	snprintf(p, sizeof(p), "%s/uprobe_events", root);
	/* Never O_TRUNC: truncating deletes every uprobe event on the system. */
	t->fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (t->fd < 0) {
		int e = errno;

		set_msg(err, errlen, "%s: %s%s", p, strerror(e),
			e == EACCES  ? " (needs root)"
			: e == EROFS ? " (tracefs is mounted read-only)"
				     : "");
		return -e;
	}
	return 0;
}

void usdt_tracefs_close(struct usdt_tracefs *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static char *read_small_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t r;

		if (n == cap) {
			char *nb = cap < max ? realloc(buf, cap * 2 + 1) : NULL;

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/*
 * The kernel's explanation of our command from error_log, whose entries read
 *   [  393.182381] trace_uprobe: error: Argument type or name is different ...
 *     Command: p:grp/ev /path:0x1077 a1=\-3:s8
 *                                    ^
 * The last entry whose command is ours wins; the caret becomes "at 'word'".
 */
static bool explain_from_log(struct usdt_tracefs *t, const char *cmd, char *msg, size_t msglen)
{
	char path[128], *log, *line, *save = NULL, *errtext = NULL;
	const char *found_err = NULL;
	size_t len, found_col = 0, cmdlen = strlen(cmd);
	bool want_caret = false, ok = false;

	snprintf(path, sizeof(path), "%s/error_log", t->root);
	log = read_small_file(path, ERROR_LOG_MAX, &len);
	if (!log)
		return false;
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *c;

		if (line[0] == '[') {
			c = strstr(line, "error: ");
			errtext = c ? (char *)c + 7 : NULL;
			want_caret = false;
		} else if ((c = strstr(line, "Command: ")) && errtext) {
			size_t l = strlen(c + 9);

			/* The kernel may cut long commands: compare what it kept. */
			if (l > 0 && strncmp(c + 9, cmd, l < cmdlen ? l : cmdlen) == 0) {
				found_err = errtext;
				found_col = (size_t)(c + 9 - line);
				want_caret = true;
				ok = true;
			}
		} else if (want_caret && found_err && strchr(line, '^')) {
			size_t col = (size_t)(strchr(line, '^') - line);
			size_t at = col >= found_col ? col - found_col : 0, e = at;

			while (at > 0 && cmd[at - 1] != ' ')
				at--;
			while (e < cmdlen && cmd[e] != ' ')
				e++;
			if (at < cmdlen)
				set_msg(msg, msglen, "%s (at '%.*s')", found_err, (int)(e - at),
					cmd + at);
			else
				set_msg(msg, msglen, "%s", found_err);
			want_caret = false;
		}
	}
	if (ok && found_err && (!msg[0]))
		set_msg(msg, msglen, "%s", found_err);
	free(log);
	return ok;
}

static const char *errno_text(int e)
{
	switch (e) {
	case EEXIST:
		return "an event of that name already exists with other argument names or types, "
		       "or the exact same probe exists";
	case EBUSY:
		return "the event is enabled or in use; disable it and retry";
	case ENOENT:
		return "no such file or no such event";
	case E2BIG:
		return "too many arguments";
	case EINVAL:
		return "the kernel refused the definition (a reference counter offset that another "
		       "user of this site registered differently logs only in dmesg)";
	default:
		return strerror(e);
	}
}

void (*usdt_tracefs_write_hook)(void);

int usdt_tracefs_write(struct usdt_tracefs *t, const char *line, char *msg, size_t msglen)
{
	size_t len = strlen(line);
	char buf[USDT_UPROBE_LINE_MAX + 2], local[8];
	ssize_t w;
	int e;

	if (!msg || !msglen) {
		msg = local;
		msglen = sizeof(local);
	}
	msg[0] = '\0';
	if (len > USDT_UPROBE_LINE_MAX || strchr(line, '\n')) {
		set_msg(msg, msglen, "line too long or not one line");
		return -EINVAL;
	}
	memcpy(buf, line, len);
	buf[len] = '\n';
	do
		w = write(t->fd, buf, len + 1);
	while (w < 0 && errno == EINTR);
	e = w < 0 ? errno : EIO;
	if (usdt_tracefs_write_hook)
		usdt_tracefs_write_hook();
	if (w == (ssize_t)(len + 1))
		return 0;
	if (!explain_from_log(t, line, msg, msglen))
		set_msg(msg, msglen, "%s", errno_text(e));
	else if (!msg[0])
		set_msg(msg, msglen, "%s", errno_text(e));
	return -e;
}

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
static int format_arg(char *buf, size_t len, unsigned pos, const struct usdt_argspec *a,
		      enum usdt_arch arch)
{
	char name[USDT_TRACEFS_NAME_MAX + 1], fetch[64], type[8];
	const char *reg = NULL;
	unsigned width;

	if (a->kind == USDT_ARG_UNSUPPORTED)
		return 0;
	if (a->kind != USDT_ARG_IMM) {
		reg = usdt_reg_fetch_name(arch, a->reg, &width);
		if (!reg)
			return 0; /* the parser guarantees a name; be safe anyway */
	}
	if (a->name)
		snprintf(name, sizeof(name), "%s", a->name);
	else
		snprintf(name, sizeof(name), "arg%u", pos);
	snprintf(type, sizeof(type), "%c%u", a->is_signed ? 's' : 'u', a->size * 8);
	switch (a->kind) {
	case USDT_ARG_REG:
		if (a->is_string)
			snprintf(fetch, sizeof(fetch), "+0(%s)", reg);
		else
			snprintf(fetch, sizeof(fetch), "%s", reg);
		break;
	case USDT_ARG_MEM:
		if (a->is_string)
			snprintf(fetch, sizeof(fetch), "+0(%s%" PRId64 "(%s))",
				 a->value < 0 ? "" : "+", a->value, reg);
		else
			snprintf(fetch, sizeof(fetch), "%s%" PRId64 "(%s)", a->value < 0 ? "" : "+",
				 a->value, reg);
		break;
	case USDT_ARG_IMM:
		snprintf(fetch, sizeof(fetch), "\\%" PRId64, a->value);
		break;
	case USDT_ARG_UNSUPPORTED:
		return 0;
	}
	return snprintf(buf, len, " %s=%s:%s", name, fetch, a->is_string ? "ustring" : type);
}

int usdt_uprobe_def(char *buf, size_t len, const char *group, const char *event, const char *path,
		    const struct usdt_site *p)
{
	size_t n;
	int w;

	if (p->reject || !usdt_tracefs_path_ok(path) ||
	    !usdt_is_identifier(group, USDT_TRACEFS_NAME_MAX) ||
	    !usdt_is_identifier(event, USDT_TRACEFS_NAME_MAX))
		return -EINVAL;
	if (p->sema_off)
		w = snprintf(buf, len, "p:%s/%s %s:0x%" PRIx64 "(0x%" PRIx64 ")", group, event,
			     path, p->pc_off, p->sema_off);
	else
		w = snprintf(buf, len, "p:%s/%s %s:0x%" PRIx64, group, event, path, p->pc_off);
	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	n = (size_t)w;
	for (unsigned i = 0; i < p->nargs; i++) {
		w = format_arg(buf + n, len - n, i + 1, &p->arg[i], p->arch);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	return n > USDT_UPROBE_LINE_MAX ? -ENAMETOOLONG : (int)n;
}

/*
 * The kernel's notion of an event's signature: argument names and types, in
 * order ("arg1:s32 arg3:ustring"), from the argument part of a line.
 */
static void signature(const char *args, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	while (*args) {
		const char *e, *eq, *colon = NULL;

		while (*args == ' ')
			args++;
		if (!*args)
			break;
		for (e = args; *e && *e != ' '; e++)
			if (*e == ':')
				colon = e;
		eq = memchr(args, '=', (size_t)(e - args));
		if (eq && n < len) {
			int w = snprintf(out + n, len - n, "%s%.*s:%.*s", n ? " " : "",
					 (int)(eq - args), args, colon ? (int)(e - colon - 1) : 3,
					 colon ? colon + 1 : "x64");
			n += w > 0 ? (size_t)w : 0;
		}
		args = e;
	}
}

int usdt_uprobe_parse_line(const char *line, struct usdt_uprobe_entry *e)
{
	const char *slash, *sp, *loc, *loc_end, *colon, *p;
	char *end;

	memset(e, 0, sizeof(*e));
	if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':')
		return -EINVAL;
	e->type = line[0];
	slash = strchr(line + 2, '/');
	sp = strchr(line + 2, ' ');
	if (!slash || !sp || slash > sp || (size_t)(slash - line - 2) > USDT_TRACEFS_NAME_MAX ||
	    (size_t)(sp - slash - 1) > USDT_TRACEFS_NAME_MAX)
		return -EINVAL;
	memcpy(e->group, line + 2, (size_t)(slash - line - 2));
	memcpy(e->event, slash + 1, (size_t)(sp - slash - 1));
	loc = sp + 1;
	loc_end = strchr(loc, ' ');
	if (!loc_end)
		loc_end = loc + strlen(loc);
	for (colon = NULL, p = loc; p < loc_end; p++)
		if (*p == ':')
			colon = p;
	if (!colon || colon == loc)
		return -EINVAL;
	errno = 0;
	e->off = strtoull(colon + 1, &end, 16);
	if (errno || end == colon + 1)
		return -EINVAL;
	if (*end == '(') {
		e->has_ref = true;
		e->ref = strtoull(end + 1, &end, 16);
		if (*end != ')')
			return -EINVAL;
		end++;
	}
	e->path = strndup(loc, (size_t)(colon - loc));
	e->args = strdup(*loc_end ? loc_end + 1 : "");
	if (!e->path || !e->args) {
		usdt_uprobe_entry_clear(e);
		return -ENOMEM;
	}
	return 0;
}

void usdt_uprobe_entry_clear(struct usdt_uprobe_entry *e)
{
	free(e->path);
	free(e->args);
	e->path = e->args = NULL;
}

int usdt_tracefs_list(struct usdt_tracefs *t, struct usdt_uprobe_entry **out, size_t *n)
{
	char path[128], *text, *line, *save = NULL;
	size_t len, cap = 0;
	struct usdt_uprobe_entry *v = NULL;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/uprobe_events", t->root);
	text = read_small_file(path, LISTING_MAX, &len);
	if (!text)
		return -errno ? -errno : -ENOMEM;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct usdt_uprobe_entry e;

		if (usdt_uprobe_parse_line(line, &e) != 0)
			continue;
		if (*n == cap) {
			struct usdt_uprobe_entry *nv;

			cap = cap ? cap * 2 : 32;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				usdt_uprobe_entry_clear(&e);
				usdt_tracefs_list_free(v, *n);
				free(text);
				*n = 0;
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = e;
	}
	free(text);
	*out = v;
	return 0;
}

void usdt_tracefs_list_free(struct usdt_uprobe_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		usdt_uprobe_entry_clear(&e[i]);
	free(e);
}

/* "<event>" for k == 1, else "<event>_<k>", cut so it stays within 63 characters. */
static void suffixed(char *out, const char *event, unsigned k)
{
	char sfx[16];
	size_t ls, le = strlen(event);

	if (k == 1) {
		strcpy(out, event);
		return;
	}
	ls = (size_t)snprintf(sfx, sizeof(sfx), "_%u", k);
	if (le + ls > USDT_TRACEFS_NAME_MAX)
		le = USDT_TRACEFS_NAME_MAX - ls;
	memcpy(out, event, le);
	strcpy(out + le, sfx);
}

/* A name chosen in this run: (group, event) -> signature. */
struct choice {
	const char *group;
	char event[USDT_TRACEFS_NAME_MAX + 1];
	char sig[USDT_UPROBE_LINE_MAX + 1];
};

/*
 * Is `event` free for `sig`: unused in this run by another signature, and not
 * taken outside with another one? (No signature equals "\x01": asking with it
 * tells whether the name is unused in this run.)
 */
static bool name_fits(const struct choice *ch, size_t nch, const struct usdt_uprobe_entry *ls,
		      size_t nls, const char *group, const char *event, const char *sig)
{
	char other[USDT_UPROBE_LINE_MAX + 1];

	for (size_t i = 0; i < nch; i++)
		if (strcmp(ch[i].group, group) == 0 && strcmp(ch[i].event, event) == 0)
			return strcmp(ch[i].sig, sig) == 0;
	for (size_t i = 0; i < nls; i++) {
		if (strcmp(ls[i].group, group) != 0 || strcmp(ls[i].event, event) != 0)
			continue;
		signature(ls[i].args, other, sizeof(other));
		if (ls[i].type != 'p' || strcmp(other, sig) != 0)
			return false;
	}
	return true;
}

static bool site_listed(const struct usdt_uprobe_entry *ls, size_t nls, const char *group,
			const char *event, const char *path, uint64_t off)
{
	for (size_t i = 0; i < nls; i++)
		if (strcmp(ls[i].group, group) == 0 && strcmp(ls[i].event, event) == 0 &&
		    strcmp(ls[i].path, path) == 0 && ls[i].off == off)
			return true;
	return false;
}

#if defined(__x86_64__)
static bool host_can_probe(enum usdt_arch a)
{
	return a == USDT_ARCH_X86_64 || a == USDT_ARCH_I386;
}
#elif defined(__aarch64__)
static bool host_can_probe(enum usdt_arch a)
{
	return a == USDT_ARCH_AARCH64;
}
#else
static bool host_can_probe(enum usdt_arch a)
{
	return false;
}
#endif

int usdt_tracefs_register(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			  struct usdt_site_result **sites, size_t *nsites)
{
	struct usdt_uprobe_entry *ls = NULL;
	struct choice *ch = NULL;
	struct usdt_site_result *out;
	size_t nls = 0, nch = 0;
	bool listed = false;
	char *sig;
	int ret = 0;

	*sites = NULL;
	*nsites = 0;
	if (!usdt_tracefs_path_ok(path))
		return -EINVAL;
	if (!host_can_probe(n->arch))
		return -ENOEXEC;
	out = calloc(n->naccepted ? n->naccepted : 1, sizeof(*out));
	ch = calloc(n->naccepted ? n->naccepted : 1, sizeof(*ch));
	sig = malloc(USDT_UPROBE_LINE_MAX + 1);
	if (!out || !ch || !sig) {
		ret = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < n->nsites; i++) {
		const struct usdt_site *p = &n->sites[i];
		struct usdt_site_result *s;
		const char *args;
		int len;

		if (p->reject)
			continue;
		s = &out[(*nsites)++];
		s->probe = p;
		/* The signature, from the definition built under the plain name. */
		len = usdt_uprobe_def(s->line, sizeof(s->line), p->group, p->event, path, p);
		if (len < 0) {
			s->err = len;
			set_msg(s->msg, sizeof(s->msg), "cannot build the definition: %s",
				strerror(-len));
			continue;
		}
		args = strchr(strchr(s->line, ' ') + 1, ' ');
		signature(args ? args : "", sig, USDT_UPROBE_LINE_MAX + 1);
	choose:
		s->event[0] = '\0';
		for (unsigned k = 1; k <= SUFFIX_TRIES && !s->event[0]; k++) {
			char name[USDT_TRACEFS_NAME_MAX + 1];

			suffixed(name, p->event, k);
			if (name_fits(ch, nch, ls, nls, p->group, name, sig))
				strcpy(s->event, name);
		}
		if (!s->event[0]) {
			s->err = -EEXIST;
			set_msg(s->msg, sizeof(s->msg),
				"%s/%s and %d suffixed names are taken with other argument types",
				p->group, p->event, SUFFIX_TRIES - 1);
			continue;
		}
		len = usdt_uprobe_def(s->line, sizeof(s->line), p->group, s->event, path, p);
		if (len < 0) {
			s->err = len;
			continue;
		}
		s->err = usdt_tracefs_write(t, s->line, s->msg, sizeof(s->msg));
		if (s->err == -EEXIST && !listed) {
			/*
			 * The name is taken with other arguments, or this very
			 * site exists: now read what is there, once, and choose
			 * again knowing it.
			 */
			listed = true;
			ret = usdt_tracefs_list(t, &ls, &nls);
			if (ret)
				goto done;
			goto choose;
		}
		if (s->err == -EEXIST &&
		    site_listed(ls, nls, p->group, s->event, path, p->pc_off)) {
			s->err = 0;
			s->existed = true;
			set_msg(s->msg, sizeof(s->msg), "already registered");
		}
		if (name_fits(ch, nch, NULL, 0, p->group, s->event, "\x01")) {
			/* First use of this name in this file: remember its signature. */
			ch[nch].group = p->group;
			strcpy(ch[nch].event, s->event);
			strcpy(ch[nch].sig, sig);
			nch++;
		}
	}
done:
	free(sig);
	free(ch);
	usdt_tracefs_list_free(ls, nls);
	if (ret) {
		free(out);
		*nsites = 0;
		return ret;
	}
	*sites = out;
	return 0;
}

/* event is base, or base_N with N a number of up to 3 digits. */
static bool is_our_event(const char *event, const char *base)
{
	size_t lb = strlen(base);
	const char *d;

	if (strcmp(event, base) == 0)
		return true;
	if (strncmp(event, base, lb) != 0 || event[lb] != '_' || !event[lb + 1])
		return false;
	for (d = event + lb + 1; *d; d++)
		if (*d < '0' || *d > '9' || d - (event + lb + 1) >= 3)
			return false;
	return true;
}

int usdt_tracefs_unregister(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			    struct usdt_site_result **sites, size_t *nsites)
{
	struct usdt_uprobe_entry *ls = NULL;
	struct usdt_site_result *out;
	bool *done;
	size_t nls = 0;
	int ret;

	*sites = NULL;
	*nsites = 0;
	ret = usdt_tracefs_list(t, &ls, &nls);
	if (ret)
		return ret;
	out = calloc(nls + n->naccepted + 1, sizeof(*out));
	done = calloc(nls + 1, sizeof(*done));
	if (!out || !done) {
		free(out);
		free(done);
		usdt_tracefs_list_free(ls, nls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n->nsites; i++) {
		const struct usdt_site *p = &n->sites[i];
		bool any = false;

		if (p->reject)
			continue;
		for (size_t j = 0; j < nls; j++) {
			struct usdt_site_result *s;

			if (done[j] || ls[j].off != p->pc_off ||
			    strcmp(ls[j].group, p->group) != 0 || strcmp(ls[j].path, path) != 0 ||
			    !is_our_event(ls[j].event, p->event))
				continue;
			done[j] = true;
			any = true;
			s = &out[(*nsites)++];
			s->probe = p;
			strcpy(s->event, ls[j].event);
			/* The kernel matches the location as it lists it: 16 digits, (ref). */
			if (ls[j].has_ref)
				snprintf(s->line, sizeof(s->line),
					 "-:%s/%s %s:0x%016" PRIx64 "(0x%" PRIx64 ")", ls[j].group,
					 ls[j].event, path, p->pc_off, ls[j].ref);
			else
				snprintf(s->line, sizeof(s->line), "-:%s/%s %s:0x%016" PRIx64,
					 ls[j].group, ls[j].event, path, p->pc_off);
			s->err = usdt_tracefs_write(t, s->line, s->msg, sizeof(s->msg));
		}
		if (!any) {
			struct usdt_site_result *s = &out[(*nsites)++];

			s->probe = p;
			strcpy(s->event, p->event);
			s->existed = true;
			set_msg(s->msg, sizeof(s->msg), "not registered");
		}
	}
	free(done);
	usdt_tracefs_list_free(ls, nls);
	*sites = out;
	return 0;
}
