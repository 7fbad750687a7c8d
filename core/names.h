/* SPDX-License-Identifier: MIT */
/* Internal to kernel-helper/lib: name checks shared by notes.c and tracefs.c. */
#ifndef USDT_NAMES_H
#define USDT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A C identifier of at most `max` characters. */
bool usdt_is_identifier(const char *s, size_t max);

#endif
