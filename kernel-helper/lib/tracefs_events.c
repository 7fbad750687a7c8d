// SPDX-License-Identifier: MIT
/*
 * Removing a file's events by its notes (the tracefs uprobe layer,
 * tracefs.c; registering them is tracefs_register.c's), with tracefs.c's
 * writes and uprobe_line.c's lines.
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
			s->line = malloc(USDT_UPROBE_LINE_MAX + 1);
			if (!s->line) {
				s->err = -ENOMEM;
				continue;
			}
			/* The kernel matches the location as it lists it: 16 digits, (ref). */
			if (ls[j].has_ref)
				snprintf(s->line, USDT_UPROBE_LINE_MAX + 1,
					 "-:%s/%s %s:0x%016" PRIx64 "(0x%" PRIx64 ")", ls[j].group,
					 ls[j].event, path, p->pc_off, ls[j].ref);
			else
				snprintf(s->line, USDT_UPROBE_LINE_MAX + 1,
					 "-:%s/%s %s:0x%016" PRIx64, ls[j].group, ls[j].event, path,
					 p->pc_off);
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
