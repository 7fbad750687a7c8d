/* SPDX-License-Identifier: MIT */
/* The link-time provider object builder (`dtrace -G`): see link.c for its theory. */
#ifndef USDT_LINK_H
#define USDT_LINK_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "model.h"

struct usdt_link_opts {
	const char *output;   /* the .o to write (already defaulted by the command) */
	const char *cc;	      /* $CC, or NULL for "cc" */
	const char *cflags;   /* $CFLAGS, or NULL */
	int bits;	      /* 32 or 64 from -32/-64, 0 when not given */
	char *const *objects; /* input objects and archives, never modified */
	size_t nobjects;
	bool keep; /* -k: keep the generated source (reported on stderr) */
	/*
	 * -x unusedprobes (or USDTKIT_WARN_UNUSED=1): warn about each declared
	 * probe with no site in the given objects. Off by default, as
	 * DTrace's and SystemTap's -G are silent about them: a configure test
	 * or a build with optional probes would otherwise fill its logs.
	 */
	bool warn_unused;
};

/* Returns 0, or -1 after reporting to diag (and then no output exists). */
int usdt_link_object(const struct usdt_program *prog, const struct usdt_link_opts *opts,
		     struct usdt_diag *diag);

#endif
