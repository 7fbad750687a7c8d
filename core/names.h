/* SPDX-License-Identifier: MIT */
/*
 * Name checks shared by the note reader (notes.c, names.c) and the tracefs
 * layer (kernel-helper/lib/tracefs.c).
 */
#ifndef USDT_NAMES_H
#define USDT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A C identifier of at most `max` characters. */
bool usdt_is_identifier(const char *s, size_t max);

#endif
