/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear whole or not at all.
 *
 * Build systems judge `dtrace` by whether its output exists, and several
 * `dtrace` runs may share a directory. So output is written to an unnamed file
 * (O_TMPFILE) in the destination directory, given a unique hidden name only
 * once it is complete, and renamed over the destination. Nothing named ever
 * holds partial output; an aborted write leaves nothing behind. Where the
 * filesystem lacks O_TMPFILE a unique mkstemp() name is used and removed on
 * abort. A destination that exists and is not a regular file (/dev/null, a
 * FIFO, a terminal) is written in place, as a compiler's -o does: renamed
 * over, /dev/null would become a regular file for every program on the
 * machine.
 */
#ifndef USDT_ATOMIC_FILE_H
#define USDT_ATOMIC_FILE_H

#include <stdio.h>

struct usdt_atomic_file {
	char *path; /* the destination */
	int fd;
	FILE *fp;      /* stdio stream on fd, for writers that want one */
	char *tmpname; /* non-NULL only on the mkstemp() fallback */
	int direct;    /* the destination itself is open: not a regular file */
};

/* Returns 0, or -errno (nothing created). */
int usdt_atomic_open(struct usdt_atomic_file *f, const char *path);
/* Flushes, names and renames into place. Returns 0 or -errno (then aborted). */
int usdt_atomic_commit(struct usdt_atomic_file *f);
/* Discards everything written. Safe to call after a failed commit. */
void usdt_atomic_abort(struct usdt_atomic_file *f);

#endif
