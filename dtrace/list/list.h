/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l`: list the USDT probes of live processes, as DTrace lists them.
 * list.c is the driver (see its head comment); this is what the command
 * calls. The other list_*.h headers are internal to the listing.
 */
#ifndef USDT_LIST_H
#define USDT_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "model.h"

/* A probe description as given on the command line: -n, -P, -m or -f. */
struct usdt_list_desc {
	char kind; /* 'n', 'P', 'm' or 'f' */
	const char *spec;
};

struct usdt_list_opts {
	bool verbose;	 /* -v: argument types and stability */
	const int *pids; /* -p PID (repeatable); none: every process the daemon knows */
	size_t npids;
	const char *const *cmds; /* -c CMD (repeatable): run, listed at main, killed */
	size_t ncmds;
	const struct usdt_list_desc *descs; /* none: every probe */
	size_t ndescs;
};

/*
 * Prints the listing on `out`, reports problems through diag. Returns the
 * exit status: 0 something listed (or nothing asked and nothing there),
 * 1 an error or no probe matched a description, 2 a malformed description.
 * The processes of -c are listed first, then those of -p; $target in a
 * description is the first of them.
 */
int usdt_list(const struct usdt_list_opts *o, FILE *out, struct usdt_diag *diag);

/*
 * One probe as the listing names it, for a consumer (`dtrace -n`): one per
 * (process, file, provider, probe, function), as -l prints lines.
 */
struct usdt_list_probe {
	int pid;
	const char *path; /* the file as the process mapped it */
	uint64_t dev, ino;
	const char *module;   /* its basename */
	const char *provider; /* as in the note, without the pid */
	const char *name;     /* as in the note (`request__start`) */
	const char *dname;    /* DTrace's spelling (`request-start`) */
	const char *func;     /* "" when unknown */
	size_t nfuncs;	      /* functions this probe has sites in, in this file */
	unsigned nargs;	      /* the site's arguments */
	unsigned ntypes;      /* args[N] types known from the metadata note */
	const char *types[USDT_MAX_ARGS];
	const struct usdt_site *site; /* its first site in that function */
};

/*
 * Calls fn for each probe of the processes `pids` (read directly, as -p),
 * or with npids 0 of every process the helper daemon knows, until fn
 * returns non-zero, which is then returned. Returns 0, or -1 after
 * reporting (a process that cannot be read: "failed to grab pid", no
 * daemon).
 */
int usdt_list_each(const int *pids, size_t npids,
		   int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg,
		   struct usdt_diag *diag);

/*
 * Whether the helper daemon listens (nothing at its socket, or a socket
 * nobody listens on: false); *path is the socket's path.
 */
/*
 * The same, without reading the files `skip` says were seen (a consumer's
 * retained enablings list only what is new: their notes and symbols are
 * most of a listing's time).
 */
int usdt_list_each_new(const int *pids, size_t npids, bool (*skip)(uint64_t dev, uint64_t ino),
		       int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg,
		       struct usdt_diag *diag);

/*
 * The same for one file of one process (device and inode as its maps show
 * them): a file the daemon just announced, its registrant held. Only that
 * mapping is opened (no wait for the loader: the registrant is past it).
 * 0, fn's value, or -1 (the process maps no such file now: nothing said).
 */
int usdt_list_each_file(int pid, uint64_t dev, uint64_t ino,
			int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg,
			struct usdt_diag *diag);

bool usdt_list_daemon_running(const char **path);

#endif /* USDT_LIST_H */
