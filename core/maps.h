/* SPDX-License-Identifier: MIT */
/*
 * One line of /proc/PID/maps, parsed: the one parser of that format, for
 * the daemon (which finds the mapping behind a registering address) and
 * for `dtrace -l -p` (which walks a process's modules).
 *
 * A line is "START-END PERMS OFFSET MAJ:MIN INODE   PATH". The path is
 * everything after the inode and its padding, so it may hold spaces; the
 * kernel escapes a newline in a file name as "\012" and appends
 * " (deleted)" to the path of an unlinked file. Only file-backed lines (an
 * inode and an absolute path) are accepted: anonymous memory, [heap],
 * [vdso] and the like are not files a probe can live in.
 *
 * The path is what the process shows, not a name to open: callers reach
 * the file through /proc/PID/map_files/START-END, or check (dev, ino)
 * against what they opened.
 */
#ifndef USDT_MAPS_H
#define USDT_MAPS_H

#include <stdbool.h>
#include <stdint.h>

struct usdt_mapping {
	uint64_t start, end, offset;
	uint64_t dev, ino; /* as the line says: makedev(MAJ, MIN) and INODE */
	char perms[8];	   /* "r-xp" */
	bool deleted;	   /* the path ends in " (deleted)" (left in place) */
	char *path;	   /* into the line, its newline removed */
};

/*
 * Parses `line` (one line, with or without its newline, which is cut off
 * in place). Returns true and fills *m for a file-backed mapping; false for
 * any other line, which is then not a mapping a probe can be in.
 */
bool usdt_maps_parse_line(char *line, struct usdt_mapping *m);

#endif /* USDT_MAPS_H */
