// SPDX-License-Identifier: MIT
/* /proc/PID/maps lines (maps.h). */
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "maps.h"

#define DELETED_SUFFIX " (deleted)"

bool usdt_maps_parse_line(char *line, struct usdt_mapping *m)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	size_t len, sl = sizeof(DELETED_SUFFIX) - 1;
	int n = 0;

	/* The trailing " %n" skips the padding before the path. */
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, m->perms, &off, &maj,
		   &min, &ino, &n) < 7 ||
	    n == 0 || ino == 0 || line[n] != '/')
		return false;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->dev = (uint64_t)makedev(maj, min);
	m->ino = ino;
	m->path = line + n;
	len = strlen(m->path);
	if (len && m->path[len - 1] == '\n')
		m->path[--len] = '\0';
	m->deleted = len > sl && strcmp(m->path + len - sl, DELETED_SUFFIX) == 0;
	return true;
}
