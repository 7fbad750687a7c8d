// SPDX-License-Identifier: MIT
/*
 * What the files of the tracefs uprobe layer share among themselves and
 * nobody else uses: the one message formatter and the event signature.
 * tracefs_events.c (a file's events) sits on tracefs.c (the kernel's
 * files), tracefs_path.c (the names written) and uprobe_line.c (the text of
 * a line); none of those three calls another's internals but these.
 */
#ifndef USDTKIT_TRACEFS_INT_H
#define USDTKIT_TRACEFS_INT_H

#include <stddef.h>

/* vsnprintf into msg, when msg is given. */
void usdt_tracefs_msg(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The kernel's notion of an event's signature: argument names and types, in
 * order ("arg1:s32 arg3:ustring"), from the argument part of a line.
 */
void usdt_uprobe_signature(const char *args, char *out, size_t len);

#endif
