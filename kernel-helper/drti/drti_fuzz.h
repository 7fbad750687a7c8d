/* SPDX-License-Identifier: MIT */
/*
 * drti.c built for the protocol fuzz target (-DUSDT_DRTI_LIBRARY
 * -DUSDT_DRTI_FUZZ_ENTRY, tests/fuzz/meson.build): never in a -G object nor
 * in libusdtkit-runtime.
 */
#ifndef USDT_DRTI_FUZZ_H
#define USDT_DRTI_FUZZ_H

#include <stdint.h>

#define USDT_DRTI_FUZZ_ANSWERED 1 /* a valid REPLY came back */
#define USDT_DRTI_FUZZ_FAILED 2	  /* the request failed (a reason was given) */
#define USDT_DRTI_FUZZ_OVERFLOW 4 /* the debug line outgrew its buffer */
/*
 * drti reads the daemon's answer to request `seq` from fd (within
 * timeout_ms), as a request does, then builds its debug line from the
 * result. Returns the USDT_DRTI_FUZZ_ bits that hold.
 */
int usdt_drti_fuzz_read(int fd, uint32_t seq, int timeout_ms);

#endif /* USDT_DRTI_FUZZ_H */
