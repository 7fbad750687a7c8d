/* SPDX-License-Identifier: MIT */
/* Registration of a runtime provider's object with usdtkit-helperd (register.c). */
#ifndef USDT_RT_REGISTER_H
#define USDT_RT_REGISTER_H

/*
 * REGISTER of the mapped object holding `addr`, as a compiled provider's
 * constructor does it (same socket, timeout, silence and environment).
 * 1 when the daemon took it (an UNREGISTER is then owed), 0 otherwise:
 * no daemon, registration turned off, a refusal, the timeout.
 */
int usdt_rt_register(const void *addr);
void usdt_rt_unregister(const void *addr);

#endif /* USDT_RT_REGISTER_H */
