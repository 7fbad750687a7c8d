// SPDX-License-Identifier: MIT
/*
 * The bottom of the daemon, beside the logging, /proc and the sandboxed
 * parser: what every layer shares with the event loop. The configuration
 * (set once by main.c before the loop runs), the loop's epoll set and the
 * tracefs instance, the one clock (core/clock.c), and the callbacks by which
 * the layers below the protocol reach up into it (struct hd_upcalls,
 * installed by main.c; unset, each does nothing). Nothing here calls
 * another file of the daemon: kernel-helper/README.md, "The layers".
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "helperd.h"

struct hd_config hd_cfg;
bool hd_stopping;
struct usdt_tracefs *hd_tracefs;
int hd_epfd = -1;
struct hd_upcalls hd_upcalls;

uint64_t hd_now_ms(void)
{
	return (uint64_t)usdt_now_ms();
}

void hd_loop_init(struct usdt_tracefs *t, int epfd)
{
	hd_tracefs = t;
	hd_epfd = epfd;
}

/*
 * Scheduling of the threads that answer (issue 33, item 5). The loop and
 * the lister answer every client; on a machine whose CPUs are busy, a
 * client's round trip was mostly their wait for a CPU: a known file's
 * REGISTER took 0.1 ms from its reading to its answer but 20 to 60 ms
 * (p99) from its accept, and more before it (bench/helper/README.md). So
 * at start each of them asks for:
 *
 * - a short slice (EEVDF's custom slice, Linux 6.12+: sched_attr's
 *   sched_runtime for SCHED_OTHER): an earlier deadline, so a wake-up
 *   preempts a task with a longer slice. It is a latency hint, not a
 *   share: the thread gets no more CPU time than at its nice value, and
 *   any process may ask it for itself, so it gives no client anything.
 * - nice HD_ANSWER_NICE (-5): three times the weight of a nice 0 task
 *   when the CPUs are contended. Any client can make the daemon work, so
 *   what a client can obtain at that weight is bounded: the loop is one
 *   thread doing bounded work per request (10,000 requests a second per
 *   uid, a few dozen µs each), the lister one, and nothing that grows
 *   with a file runs there: the writer and the checker stay at nice 0,
 *   one user's bulk work at +10 (writer.c), and the parse workers, which
 *   read hostile files, are forked at nice 0 with the default slice
 *   (SCHED_FLAG_RESET_ON_FORK, so no child keeps the raised priority).
 *   Not a real-time policy: a spinning bug in the loop would then own a
 *   CPU, and tracefs' writes are not ours to bound.
 *
 * A nice below 0 needs CAP_SYS_NICE or RLIMIT_NICE (the unit's
 * LimitNICE=-5); without either the thread keeps its nice value and only
 * the slice is set. A kernel without custom slices (EINVAL for the
 * runtime) gets the nice value alone. --test-sched none|slice|nice|both
 * chooses for bench/helper/loadtest.sh's comparisons (default both).
 */
#define HD_ANSWER_SLICE_NS 100000u /* the kernel's least */
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

unsigned hd_sched_mode = HD_SCHED_SLICE | HD_SCHED_NICE;

struct hd_sched_attr { /* the kernel's struct sched_attr (glibc has no wrapper) */
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static int sched_set(int nice, uint64_t slice_ns)
{
	struct hd_sched_attr a = {.size = sizeof(a),
				  .policy = 0 /* SCHED_OTHER */,
				  .flags = SCHED_FLAG_RESET_ON_FORK,
				  .nice = nice,
				  .runtime = slice_ns};

	return syscall(SYS_sched_setattr, 0, &a, 0) == 0 ? 0 : -errno;
}

int hd_sched_self(bool answers)
{
	int nice = answers && (hd_sched_mode & HD_SCHED_NICE) ? HD_ANSWER_NICE : 0;
	uint64_t slice = answers && (hd_sched_mode & HD_SCHED_SLICE) ? HD_ANSWER_SLICE_NS : 0;
	int ret = sched_set(nice, slice);

	if (ret == -EINVAL && slice) /* a kernel without custom slices */
		ret = sched_set(nice, 0);
	if (ret == -EPERM && nice < 0) /* no CAP_SYS_NICE, no RLIMIT_NICE */
		ret = sched_set(0, slice) == 0 ? -EPERM : ret;
	return ret;
}
