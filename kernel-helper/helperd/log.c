// SPDX-License-Identifier: MIT
/*
 * The daemon's one way of saying things: stderr in the foreground (tests,
 * containers, systemd's journal reading stderr), syslog otherwise.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "helperd.h"

bool hd_debug;
static bool to_stderr;

void hd_log_init(bool foreground)
{
	to_stderr = foreground;
	if (!foreground)
		openlog("usdtkit-helperd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void hd_log(int prio, const char *fmt, ...)
{
	static const char *const level[] = {"emerg",   "alert",	 "crit", "error",
					    "warning", "notice", "info", "debug"};
	va_list ap;

	va_start(ap, fmt);
	if (to_stderr) {
		char msg[1024];

		vsnprintf(msg, sizeof(msg), fmt, ap);
		fprintf(stderr, "usdtkit-helperd: %s: %s\n", level[prio & 7], msg);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}
