/* SPDX-License-Identifier: MIT */
/*
 * Where `dtrace -l` finds the modules to read (internal to the listing):
 * one process's mappings read directly (-p), or every registered
 * (process, module) pair as the helper daemon knows them.
 */
#ifndef USDT_LIST_SOURCE_H
#define USDT_LIST_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "maps.h"

/* One file mapped by one process, opened for reading. */
struct usdt_list_module {
	int pid;
	int fd;		   /* open on the file itself (through /proc/PID/map_files) */
	uint64_t dev, ino; /* of the open file */
	uint64_t start;	   /* of the mapping it was reached through: the listing's order */
	char *path;	   /* as the process mapped it, " (deleted)" removed */
	char *module;	   /* its basename: DTrace's MODULE column */
};

struct usdt_list_modules {
	struct usdt_list_module *v;
	size_t n, cap;
};

/*
 * Calls fn for each file-backed mapping of pid (a path and an inode), in
 * address order, until fn returns non-zero, which is then returned. Returns
 * 0, or a negative errno when the maps cannot be read (-ESRCH: no such
 * process).
 */
int usdt_list_proc_maps(int pid, int (*fn)(const struct usdt_mapping *m, void *arg), void *arg);

/*
 * Opens the file behind a mapping of pid, read-only: through map_files, or
 * without the privilege for that through its path if that is still the
 * mapped file. Returns the fd or a negative errno.
 */
int usdt_list_open_mapping(int pid, const struct usdt_mapping *m);

/* Reads a /proc file whole (NUL-terminated; *len without it). Caller frees. */
int usdt_list_read_proc(const char *path, char **text, size_t *len);

/*
 * Appends every distinct file-backed mapping of `pid` (one per device and
 * inode). Returns 0, or a negative errno when the process cannot be read
 * (-ESRCH: no such process); nothing is reported through diag then, the
 * caller says "failed to grab pid".
 */
int usdt_list_proc_modules(int pid, struct usdt_list_modules *mods, struct usdt_diag *diag);

/*
 * Appends one file of process pid (device and inode as its maps show them),
 * through its first mapping, checked to be that file once opened: 0, or a
 * negative errno (-ENOENT: pid maps no such file; -ESTALE: another file is
 * there now). Nothing is reported.
 */
int usdt_list_proc_file(int pid, uint64_t dev, uint64_t ino, struct usdt_list_modules *mods);

/*
 * Appends every (process, module) the helper daemon has registered, asking
 * it over its socket (USDTKIT_HELPER_SOCKET, default /run/usdtkit/helper.sock).
 * Returns 0, or -1 after reporting (no daemon: the message says so and
 * suggests -p).
 */
int usdt_list_daemon_modules(struct usdt_list_modules *mods, struct usdt_diag *diag);

void usdt_list_modules_free(struct usdt_list_modules *mods);

#endif /* USDT_LIST_SOURCE_H */
