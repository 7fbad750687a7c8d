/* SPDX-License-Identifier: MIT */
/*
 * drti.c built as a library (-DUSDT_DRTI_LIBRARY): the registration a
 * compiled provider's constructor does, offered to libusdtkit-runtime for
 * the objects it maps (runtime/register.c). Same protocol, timeout, silence
 * and environment as drti; only the note's address comes from the caller.
 * The caller serialises the calls (drti keeps one sequence counter).
 */
#ifndef USDT_DRTI_LIB_H
#define USDT_DRTI_LIB_H

/* Reads the environment (drti's variables); 0 when registration is off. Call once, first. */
int usdt_drti_lib_configure(void);
/*
 * REGISTER of the module holding `note` (when the daemon's socket exists
 * and its board does not know the file), waiting for the answer within
 * the timeout. 1 when the daemon took it: the module then owes an
 * UNREGISTER at unload.
 */
int usdt_drti_lib_register(const void *note);
/* UNREGISTER of that module, waiting for the answer within the timeout. */
void usdt_drti_lib_unregister(const void *note);

#endif /* USDT_DRTI_LIB_H */
