// SPDX-License-Identifier: MIT
/*
 * Counts the sites of a tracefs group that the kernel bound to FILE's inode.
 *
 *   planted FILE GROUP    prints "planted N of M"; exit 2 on an error
 *
 * uprobe_events lists the path string a definition was written with, not
 * the inode the kernel bound it to, so the listing cannot tell. The kernel
 * can: it refuses a definition that repeats a probe of the same event at
 * the same inode and offset with the same arguments ("There is already the
 * exact same probe event", EEXIST), whatever the path string. So each site
 * of GROUP is written again naming FILE: EEXIST means that site is on
 * FILE; a success means it is not (the probe just made is removed at once,
 * by the exact string the kernel lists). Root only; never truncates.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EVENTS "/sys/kernel/tracing/uprobe_events"

static int put(int fd, const char *line)
{
	ssize_t n = write(fd, line, strlen(line));

	return n == (ssize_t)strlen(line) ? 0 : -errno;
}

int main(int argc, char **argv)
{
	char line[8192], def[16384], loc[4400];
	unsigned planted = 0, sites = 0;
	size_t glen;
	FILE *f;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: planted FILE GROUP\n");
		return 2;
	}
	glen = strlen(argv[2]);
	f = fopen(EVENTS, "re");
	fd = open(EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (!f || fd < 0) {
		perror(EVENTS);
		return 2;
	}
	/* p:GROUP/EVENT PATH:0xOFF[(0xREF)] ARGS... */
	while (fgets(line, sizeof(line), f)) {
		char *ev, *sp, *colon, *rest, *ref_end;
		unsigned long long off;
		int ret;

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "p:", 2) || strncmp(line + 2, argv[2], glen) ||
		    line[2 + glen] != '/')
			continue;
		ev = line + 2;
		sp = strchr(ev, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		rest = sp + 1 + strcspn(sp + 1, " ");
		colon = NULL;
		for (char *c = sp + 1; c < rest; c++)
			if (c[0] == ':' && c[1] == '0' && c[2] == 'x')
				colon = c;
		if (!colon)
			continue;
		off = strtoull(colon + 3, &ref_end, 16);
		snprintf(loc, sizeof(loc), "%s:0x%016llx%.*s", argv[1], off, (int)(rest - ref_end),
			 ref_end);
		sites++;
		snprintf(def, sizeof(def), "p:%s %s%s\n", ev, loc, rest);
		ret = put(fd, def);
		if (ret == -EEXIST) {
			planted++;
			continue;
		}
		if (ret) {
			fprintf(stderr, "planted: %s: %s\n", def, strerror(-ret));
			return 2;
		}
		snprintf(def, sizeof(def), "-:%s %s\n", ev, loc);
		ret = put(fd, def);
		if (ret) {
			fprintf(stderr, "planted: %s: %s\n", def, strerror(-ret));
			return 2;
		}
	}
	printf("planted %u of %u\n", planted, sites);
	return 0;
}
