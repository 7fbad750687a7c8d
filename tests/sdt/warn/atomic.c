/* SPDX-License-Identifier: MIT */
/* Atomic counters: C11 _Atomic objects; in C++, std::atomic loaded explicitly. */
#include "probes.h"

#ifdef __cplusplus
#include <atomic>
static std::atomic<int> wp_refs;
static std::atomic<long> wp_total;
static std::atomic<void *> wp_last;

void wp_atomic(void *p, long n)
{
	wp_refs++;
	wp_total += n;
	wp_last.store(p);
	WARNPAT_ATOMIC(wp_refs.load(), wp_total.load(), wp_last.load());
}
#else
static _Atomic int wp_refs;
static _Atomic long wp_total;
static void *_Atomic wp_last;

void wp_atomic(void *p, long n)
{
	wp_refs++;
	wp_total += n;
	wp_last = p;
	WARNPAT_ATOMIC(wp_refs, wp_total, wp_last);
}
#endif
