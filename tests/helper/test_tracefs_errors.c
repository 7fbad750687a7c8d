// SPDX-License-Identifier: MIT
/*
 * usdt_tracefs_write() against the real kernel: a refused definition returns
 * the errno and the kernel's own explanation from error_log; a duplicate is
 * EEXIST; removing an unknown event is ENOENT; a created event is listed back
 * by usdt_tracefs_list() with the fields we wrote. Skips (77) without root
 * or uprobe events. Every event it creates is in its own group and removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracefs.h"
#include "../lib/check.h"

/* A register as this machine's uprobe definitions name it (the kernel refuses another's). */
#if defined(__aarch64__)
#define REG "x0"
#else
#define REG "di"
#endif

int main(void)
{
	struct usdt_tracefs t = {.fd = -1};
	struct usdt_uprobe_entry *ls;
	char err[256], msg[256], line[512], group[64], rm[256];
	const char *target = "/bin/true";
	size_t n;
	int ret, found = 0;

	if (geteuid() != 0) {
		printf("SKIP: needs root for tracefs\n");
		return 77;
	}
	ret = usdt_tracefs_open(&t, USDT_TRACEFS_MOUNT, err, sizeof(err));
	if (ret) {
		printf("SKIP: %s\n", err);
		return 77;
	}
	snprintf(group, sizeof(group), "usdtkit_errtest_%d", (int)getpid());
	snprintf(rm, sizeof(rm), "-:%s/", group);

	/* A register name the kernel does not know: EINVAL and error_log's words. */
	snprintf(line, sizeof(line), "p:%s/bad %s:0x0 a=%%nosuchreg:u8", group, target);
	ret = usdt_tracefs_write(&t, line, msg, sizeof(msg));
	CHECKF(ret == -EINVAL, "bad register: %d", ret);
	CHECKF(strstr(msg, "Invalid") && strstr(msg, "at 'a=%nosuchreg:u8'"),
	       "error_log explanation with the offending word: '%s'", msg);

	/* Created, then the same again: EEXIST. */
	snprintf(line, sizeof(line), "p:%s/ok %s:0x10 arg1=%%" REG ":s32", group, target);
	ret = usdt_tracefs_write(&t, line, msg, sizeof(msg));
	CHECKF(ret == 0, "create: %d %s", ret, msg);
	ret = usdt_tracefs_write(&t, line, msg, sizeof(msg));
	CHECKF(ret == -EEXIST, "duplicate: %d", ret);
	CHECKF(msg[0] != '\0', "duplicate explained");

	/* Listed back as written. */
	CHECKF(usdt_tracefs_list(&t, &ls, &n) == 0, "list");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ls[i].group, group) != 0)
			continue;
		found++;
		CHECKF(!strcmp(ls[i].event, "ok") && !strcmp(ls[i].path, target) &&
			   ls[i].off == 0x10 && !ls[i].has_ref &&
			   !strcmp(ls[i].args, "arg1=%" REG ":s32"),
		       "listed entry %s/%s %s 0x%llx '%s'", ls[i].group, ls[i].event, ls[i].path,
		       (unsigned long long)ls[i].off, ls[i].args);
	}
	CHECKF(found == 1, "found %d entries of %s", found, group);
	usdt_tracefs_list_free(ls, n);

	/* Removal of what does not exist: ENOENT; of what does: 0. */
	snprintf(line, sizeof(line), "-:%s/nosuch", group);
	CHECKF(usdt_tracefs_write(&t, line, msg, sizeof(msg)) == -ENOENT, "remove unknown");
	snprintf(line, sizeof(line), "-:%s/ok %s:0x%016x", group, target, 0x10);
	CHECKF(usdt_tracefs_write(&t, line, msg, sizeof(msg)) == 0, "remove one site: %s", msg);

	/* Only one line per write. */
	CHECKF(usdt_tracefs_write(&t, "p:x/y /bin/true:0x0\n-:x/y", msg, sizeof(msg)) == -EINVAL,
	       "two lines refused");

	usdt_tracefs_write(&t, rm, msg, sizeof(msg)); /* whatever is left of our group */
	usdt_tracefs_close(&t);
	if (!check_failures)
		printf("tracefs error paths behave\n");
	return check_result();
}
