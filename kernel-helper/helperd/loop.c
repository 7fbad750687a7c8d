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
