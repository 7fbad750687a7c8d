/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l -c CMD` (internal to the listing; the theory is in
 * list_create.c): the process a command runs in, stopped at main.
 */
#ifndef USDT_LIST_CREATE_H
#define USDT_LIST_CREATE_H

#include "diag.h"

/*
 * Runs CMD (its words split at white space, no shell; PATH searched) under
 * ptrace until the first instruction of main, where it is left stopped.
 * Returns its pid, or -1 after reporting (the process is then gone). A
 * process returned must be passed to usdt_list_destroy().
 */
int usdt_list_create(const char *cmd, struct usdt_diag *diag);

/* SIGKILLs a process usdt_list_create() returned and reaps it (bounded). */
void usdt_list_destroy(int pid, struct usdt_diag *diag);

/*
 * Lets such a process run on from main, no longer traced (the consumer's
 * -c). Returns 0 or a negative errno.
 */
int usdt_list_release(int pid);

#endif /* USDT_LIST_CREATE_H */
