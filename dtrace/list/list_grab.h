/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l -p PID` on a process that has only just started (internal to
 * the listing; the theory is in list_grab.c).
 */
#ifndef USDT_LIST_GRAB_H
#define USDT_LIST_GRAB_H

/*
 * Waits while pid, younger than 2 s, has not exec'd since its fork or its
 * dynamic loader has not mapped every library its objects need; returns
 * when that is done or the process is 2 s old. Returns 0, or -ENOMEM.
 * A process that cannot be read is returned at once: its listing says why.
 */
int usdt_list_grab_wait(int pid);

#endif /* USDT_LIST_GRAB_H */
