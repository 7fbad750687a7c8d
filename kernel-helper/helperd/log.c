// SPDX-License-Identifier: MIT
/*
 * The daemon's one way of saying things: stderr in the foreground (tests,
 * containers, systemd's journal reading stderr), syslog otherwise.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
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

/* --test-timing's stages (helperd.h): samples in µs, from any thread. */
bool hd_timing;
static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
#define ST_UIDS 8 /* uids timed apart; the others together in the last */
static struct {
	uint32_t *us;
	size_t n, cap;
} st[ST_UIDS][HD_STAGES];
static uid_t st_uid[ST_UIDS];
static unsigned st_nuids;

uint64_t hd_timing_now(void)
{
	struct timespec ts;

	if (!hd_timing)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(enum hd_stage s, uid_t uid, uint64_t us);

void hd_timing_put(enum hd_stage s, uid_t uid, uint64_t from_ns, uint64_t to_ns)
{
	if (hd_timing && from_ns && to_ns)
		put(s, uid, to_ns > from_ns ? (to_ns - from_ns) / 1000 : 0);
}

void hd_timing_count(enum hd_stage s, uid_t uid, unsigned long n)
{
	if (hd_timing)
		put(s, uid, n);
}

static void put(enum hd_stage s, uid_t uid, uint64_t us)
{
	unsigned u = 0;

	if (s >= HD_STAGES)
		return;
	pthread_mutex_lock(&st_lock);
	while (u < st_nuids && st_uid[u] != uid && u < ST_UIDS - 1)
		u++;
	if (u == st_nuids && st_nuids < ST_UIDS)
		st_uid[st_nuids++] = uid;
	if (st[u][s].n == st[u][s].cap && st[u][s].cap < (1u << 20)) {
		size_t cap = st[u][s].cap ? 2 * st[u][s].cap : 256;
		uint32_t *v = realloc(st[u][s].us, cap * sizeof(*v));

		if (v) {
			st[u][s].us = v;
			st[u][s].cap = cap;
		}
	}
	if (st[u][s].n < st[u][s].cap)
		st[u][s].us[st[u][s].n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	pthread_mutex_unlock(&st_lock);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

void hd_timing_report(void)
{
	static const char *const name[HD_STAGES] = {
	    "a parse queued (REGISTER read to its worker started)",
	    "a parse (worker started to answer read)",
	    "a parse's answer read to its writer job queued",
	    "a small writer job, first of its uid's, queued to its first slice",
	    "a small writer job, first slice to last",
	    "a small writer job, last slice to its end on the loop",
	    "a LIST's job queued to its reading",
	    "a LIST's reading of /proc",
	    "a small writer job, first of its uid's: slices run before its first (count)",
	    "a bulk writer job's slice while another uid's job waited"};

	pthread_mutex_lock(&st_lock);
	for (unsigned u = 0; u < st_nuids; u++)
		for (int s = 0; s < HD_STAGES; s++) {
			uint32_t *v = st[u][s].us;
			size_t n = st[u][s].n;

			if (!n)
				continue;
			qsort(v, n, sizeof(*v), cmp_u32);
			hd_info("timing: stage, uid %u%s: %s%s: n=%zu p50=%u p90=%u p99=%u "
				"max=%u",
				(unsigned)st_uid[u], u == ST_UIDS - 1 ? " and others" : "", name[s],
				s == HD_ST_WRITER_SLICES ? "" : " (us)", n, v[n / 2], v[n * 9 / 10],
				v[n * 99 / 100], v[n - 1]);
			free(v);
			st[u][s].us = NULL;
			st[u][s].n = st[u][s].cap = 0;
		}
	pthread_mutex_unlock(&st_lock);
}
