/*
 * A toy request loop with USDT probes, for the README's first command.
 * Usage: quickstart [requests] [delay-ms]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "quickstart_probes.h"

static const char *const paths[] = {"/index.html", "/api/users", "/static/app.js"};

static long elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	int delay_ms = argc > 2 ? atoi(argv[2]) : 200;
	struct timespec pause = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
	int id;

	for (id = 1; id <= n; id++) {
		char path[64];
		struct timespec t0, t1;
		int status = id % 4 ? 200 : 404;

		/* As a server would have it: in a buffer it just wrote. */
		snprintf(path, sizeof(path), "%s?id=%d", paths[id % 3], id);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		QUICKSTART_REQUEST_START(id, path);
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		QUICKSTART_REQUEST_DONE(id, status, elapsed_us(&t0, &t1));

		/* The summary costs a snprintf: pay it only while traced. */
		if (QUICKSTART_REQUEST_SUMMARY_ENABLED()) {
			char text[128];

			snprintf(text, sizeof(text), "request %d %s -> %d", id, path, status);
			QUICKSTART_REQUEST_SUMMARY(text);
		}
	}
	printf("served %d requests\n", n);
	return 0;
}
