/* SPDX-License-Identifier: MIT */
/*
 * Generating the provider object: C source (semaphores, metadata note,
 * drti) compiled with the target's compiler into a private temporary
 * directory. See link.c for why the object is made this way.
 */
#ifndef USDT_GEN_OBJECT_H
#define USDT_GEN_OBJECT_H

#include <stdio.h>

#include "diag.h"
#include "model.h"

/* Writes the whole C source of the provider object to out. Returns 0 or -errno. */
int usdt_gen_source(const struct usdt_program *prog, FILE *out);

/* A private directory under $TMPDIR (or /tmp) that holds the source and the object. */
struct usdt_workdir {
	char *dir;
	char *src; /* dir/provider.c */
	char *obj; /* dir/provider.o */
};

/* Returns 0 or -errno. */
int usdt_workdir_create(struct usdt_workdir *w);
/* Removes the directory and everything in it (unless keep), frees the names. */
void usdt_workdir_remove(struct usdt_workdir *w, int keep);

/*
 * Runs `$CC $CFLAGS <extra> -fPIC -w -fno-lto -c -o OBJ -x c - <SRC` through
 * /bin/sh, so CC and CFLAGS are split and quoted as make would. `extra` may
 * be NULL. The compiler's diagnostics go to our stderr. Returns 0, or -1
 * after reporting to diag.
 */
int usdt_run_cc(const char *cc, const char *cflags, const char *extra, const struct usdt_workdir *w,
		struct usdt_diag *diag);

#endif
