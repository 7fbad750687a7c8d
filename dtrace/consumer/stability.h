/* SPDX-License-Identifier: MIT */
/* `dtrace -v`: DTrace's stability report of a program (stability.c). */
#ifndef DT_STABILITY_H
#define DT_STABILITY_H

#include <stdbool.h>
#include <stdio.h>

struct dt_program;

/* The report of source number `source` (a -s script or a -n description). */
void dt_stability_report(const struct dt_program *prog, size_t source, bool script,
			 const char *name, FILE *out);

struct dt_consumer_opts;
struct usdt_diag;
/*
 * -x amin: each clause's attributes (its probe descriptions', and with
 * statements its statements' too) at least amin's, else D_ATTR_MIN.
 */
int dt_stability_amin(const struct dt_program *prog, const struct dt_consumer_opts *o,
		      bool statements, struct usdt_diag *diag);

#endif
