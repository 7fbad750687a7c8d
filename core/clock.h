/* SPDX-License-Identifier: MIT */
/*
 * The tree's one clock function (issue 33, item 6): every time the daemon,
 * the dtrace command and the core read is usdt_clock_ns() of one of the
 * kernel's clocks. CLOCK_MONOTONIC for every deadline, timeout and elapsed
 * time (it never jumps); CLOCK_REALTIME only to turn a monotonic timestamp
 * into a wall-clock one (usdt_wall_offset_ns); CLOCK_BOOTTIME only where the
 * kernel counts in it (a process's start time in /proc/PID/stat).
 * Async-signal-safe (clock_gettime is). drti cannot link it (it is compiled
 * into programs from source) and keeps its own call.
 */
#ifndef USDT_CLOCK_H
#define USDT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of `clock`; 0 if the kernel refuses it. */
int64_t usdt_clock_ns(clockid_t clock);

/* Milliseconds of CLOCK_MONOTONIC: deadlines and elapsed times. */
static inline int64_t usdt_now_ms(void)
{
	return usdt_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

/* CLOCK_REALTIME minus CLOCK_MONOTONIC, now: a monotonic time plus it is wall time. */
static inline int64_t usdt_wall_offset_ns(void)
{
	int64_t rt = usdt_clock_ns(CLOCK_REALTIME);

	return rt - usdt_clock_ns(CLOCK_MONOTONIC);
}

#endif
