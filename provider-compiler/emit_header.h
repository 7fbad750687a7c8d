/* SPDX-License-Identifier: MIT */
/* The header emitter (`dtrace -h`): see emit_header.c for its theory. */
#ifndef USDT_EMIT_HEADER_H
#define USDT_EMIT_HEADER_H

#include <stdio.h>

#include "diag.h"
#include "usdt_provider.h"

/*
 * Write the C/C++ header for every provider of prog to out. `output_name` is
 * the -o file name the include guard is derived from ("probes.h.tmp" ->
 * _PROBES_H_TMP). Returns 0, or -1 after reporting to diag.
 */
int usdt_emit_header(const struct usdt_program *prog, const char *output_name, FILE *out,
		     struct usdt_diag *diag);

#endif
