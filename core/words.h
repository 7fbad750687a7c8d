/* SPDX-License-Identifier: MIT */
/* Command lines as words, with no shell: for `dtrace -c CMD` and $CPP. */
#ifndef USDTKIT_WORDS_H
#define USDTKIT_WORDS_H

#include <stddef.h>

/*
 * A command line split at white space, with no quoting and no shell, as
 * DTrace splits `-c CMD` and as $CPP is split: a NULL-terminated argv with
 * room for `extra` more entries (and their NULL) after the words, which live
 * in *buf. Free both argv and *buf. NULL (and *buf NULL) when out of memory.
 */
char **usdt_split_words(const char *cmd, size_t extra, char **buf);

#endif
