// SPDX-License-Identifier: MIT
/*
 * A file's events (the tracefs uprobe layer, tracefs.c): registering
 * its sites under names that do not collide, and removing them, with
 * tracefs.c's writes, tracefs_path.c's names and uprobe_line.c's lines.
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
#include "tracefs_int.h"

#define SUFFIX_TRIES 16

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
		usdt_uprobe_signature(ls[i].args, other, sizeof(other));
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
			usdt_tracefs_msg(s->msg, sizeof(s->msg), "cannot build the definition: %s",
					 strerror(-len));
			continue;
		}
		args = strchr(strchr(s->line, ' ') + 1, ' ');
		usdt_uprobe_signature(args ? args : "", sig, USDT_UPROBE_LINE_MAX + 1);
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
			usdt_tracefs_msg(
			    s->msg, sizeof(s->msg),
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
			usdt_tracefs_msg(s->msg, sizeof(s->msg), "already registered");
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
			usdt_tracefs_msg(s->msg, sizeof(s->msg), "not registered");
		}
	}
	free(done);
	usdt_tracefs_list_free(ls, nls);
	*sites = out;
	return 0;
}
