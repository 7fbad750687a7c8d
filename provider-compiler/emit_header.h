/* SPDX-License-Identifier: MIT */
/* The header emitter (`dtrace -h`): see emit_header.c for its theory. */
#ifndef USDT_EMIT_HEADER_H
#define USDT_EMIT_HEADER_H

#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "usdt_provider.h"

struct usdt_sbuf;

/*
 * Write the C/C++ header for every provider of prog to out. `output_name` is
 * the -o file name the include guard is derived from ("probes.h.tmp" ->
 * _PROBES_H_TMP). `type_checks`: the argument types are checked unless the
 * program defines USDTKIT_NO_TYPE_CHECKS (`dtrace -h -x typecheck`); without
 * it, only if it defines USDTKIT_TYPE_CHECKS. Returns 0, or -1 after
 * reporting to diag.
 */
int usdt_emit_header(const struct usdt_program *prog, const char *output_name, bool type_checks,
		     FILE *out, struct usdt_diag *diag);

/* The emitter's own: the type-check helper macros (emit_checks.c). */
void usdt_put_type_checks(struct usdt_sbuf *out);

#endif
