// SPDX-License-Identifier: MIT
/*
 * The tracefs uprobe layer (the kernel behaviour it relies on is checked by
 * tests/helper/).
 *
 * This file: finding and opening tracefs, writing one line to
 * uprobe_events with the kernel's reason on failure, and reading the
 * listing. The names written are tracefs_path.c's, the lines
 * uprobe_line.c's, a file's events tracefs_events.c's.
 *
 * Writing. uprobe_events is opened O_WRONLY|O_APPEND and never truncated:
 * O_TRUNC deletes every uprobe event on the system. Each definition or
 * removal is one write() of one line, so the kernel's result is that line's
 * result; on failure the kernel's own words are taken from error_log (the
 * entry whose Command: is our line), else the errno is described.
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
#include "tracefs_int.h"

#define ERROR_LOG_MAX (64 * 1024)
#define LISTING_MAX (64u << 20)

static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

void usdt_tracefs_msg(char *msg, size_t len, const char *fmt, ...)
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
		usdt_tracefs_msg(err, errlen,
				 "%s is mounted but has no uprobe_events: a kernel without "
				 "CONFIG_UPROBE_EVENTS, or not tracefs",
				 roots[0]);
		return -EOPNOTSUPP;
	}
	if (!root && (flags & USDT_TRACEFS_MOUNT)) {
		if (mount("nodev", roots[0], "tracefs", 0, NULL) != 0 && errno != EBUSY) {
			int e = errno;

			usdt_tracefs_msg(
			    err, errlen,
			    "tracefs is not mounted at %s and mounting it failed: %s%s", roots[0],
			    strerror(e), e == EPERM ? " (needs root)" : "");
			return e == EPERM ? -EPERM : -ENODEV;
		}
		if (has_uprobe_events(roots[0]))
			root = roots[0];
		else {
			usdt_tracefs_msg(
			    err, errlen,
			    "tracefs mounted at %s has no uprobe_events: a kernel without "
			    "CONFIG_UPROBE_EVENTS",
			    roots[0]);
			return -EOPNOTSUPP;
		}
	}
	if (!root) {
		usdt_tracefs_msg(err, errlen,
				 "no %s/uprobe_events: tracefs not mounted%s, or a kernel without "
				 "CONFIG_UPROBE_EVENTS",
				 roots[0],
				 flags & USDT_TRACEFS_MOUNT ? ""
							    : " (mount it or pass the mount flag)");
		return -ENODEV;
	}
	snprintf(t->root, sizeof(t->root), "%s", root);
	snprintf(p, sizeof(p), "%s/uprobe_events", root);
	/* Never O_TRUNC: truncating deletes every uprobe event on the system. */
	t->fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (t->fd < 0) {
		int e = errno;

		usdt_tracefs_msg(err, errlen, "%s: %s%s", p, strerror(e),
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
				usdt_tracefs_msg(msg, msglen, "%s (at '%.*s')", found_err,
						 (int)(e - at), cmd + at);
			else
				usdt_tracefs_msg(msg, msglen, "%s", found_err);
			want_caret = false;
		}
	}
	if (ok && found_err && (!msg[0]))
		usdt_tracefs_msg(msg, msglen, "%s", found_err);
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
		usdt_tracefs_msg(msg, msglen, "line too long or not one line");
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
		usdt_tracefs_msg(msg, msglen, "%s", errno_text(e));
	else if (!msg[0])
		usdt_tracefs_msg(msg, msglen, "%s", errno_text(e));
	return -e;
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
	/*
	 * A reading that spans several read() calls while another process
	 * adds or removes events can skip a line (the kernel walks its list
	 * anew at each call): read again until two readings agree (a few
	 * times at most), so a removal never misses an event (usdtkit-probes
	 * unregister once left one while other tests wrote the file).
	 */
	for (int tries = 0; tries < 4; tries++) {
		size_t len2;
		char *again = read_small_file(path, LISTING_MAX, &len2);

		if (!again)
			break;
		if (len2 == len && !memcmp(again, text, len)) {
			free(again);
			break;
		}
		free(text);
		text = again;
		len = len2;
	}
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
