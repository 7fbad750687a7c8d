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
#include <stdio.h>

#include "diag.h"

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

#endif /* USDT_LIST_H */
