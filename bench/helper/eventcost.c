// SPDX-License-Identifier: MIT
/*
 * The kernel's cost of creating and removing N uprobe events through
 * tracefs (issue 33, item 1): how it grows with N, and whether batching
 * lines per write() or reusing one open descriptor changes it.
 *
 *   eventcost FILE N SHAPE MODE
 *
 * FILE: a file of at least N bytes (never executed: the events are never
 * enabled, so nothing is inserted anywhere). SHAPE: "events" (N events of
 * their own, ev0..evN-1, as N probes with one site each) or "sites" (one
 * event with N sites, as one probe with N sites: the kernel appends each).
 * MODE: "line" (one open, one write per line: what the daemon does),
 * "open" (an open and a close around every line) or "batchK" (one open,
 * lines packed K bytes per write; the kernel takes a write in 4 KiB pieces).
 * Prints "N SHAPE MODE create_ms remove_ms". Group sdt_evcost<pid>; every
 * event made is removed, by the exact string the kernel lists. Root only;
 * never truncates uprobe_events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EVENTS "/sys/kernel/tracing/uprobe_events"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int fd = -1;

static void put(const char *buf, size_t len, int reopen)
{
	if (reopen)
		fd = open(EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		fprintf(stderr, "eventcost: write: %s\n%.*s\n", strerror(errno), (int)len, buf);
		exit(2);
	}
	if (reopen) {
		close(fd);
		fd = -1;
	}
}

/* Runs N lines made by line(i) through the mode's writes. */
static double run(unsigned n, const char *mode, void (*line)(char *, size_t, unsigned))
{
	size_t batch = !strncmp(mode, "batch", 5) ? strtoul(mode + 5, NULL, 10) : 0;
	int reopen = !strcmp(mode, "open");
	char *buf = malloc(batch + 512), l[512];
	size_t used = 0;
	double t0 = now_ms();

	if (!buf)
		exit(2);
	if (!reopen)
		fd = open(EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	for (unsigned i = 0; i < n; i++) {
		size_t len;

		line(l, sizeof(l), i);
		len = strlen(l);
		if (!batch) {
			put(l, len, reopen);
			continue;
		}
		if (used + len > batch) {
			put(buf, used, 0);
			used = 0;
		}
		memcpy(buf + used, l, len);
		used += len;
	}
	if (used)
		put(buf, used, 0);
	if (!reopen) {
		close(fd);
		fd = -1;
	}
	free(buf);
	return now_ms() - t0;
}

static const char *file;
static int sites;
static char group[64];

static void add_line(char *l, size_t len, unsigned i)
{
	if (sites)
		snprintf(l, len, "p:%s/ev %s:0x%x\n", group, file, i);
	else
		snprintf(l, len, "p:%s/ev%u %s:0x%x\n", group, i, file, i);
}

static void del_line(char *l, size_t len, unsigned i)
{
	if (sites)
		snprintf(l, len, "-:%s/ev %s:0x%016x\n", group, file, i);
	else
		snprintf(l, len, "-:%s/ev%u\n", group, i);
}

int main(int argc, char **argv)
{
	unsigned n;
	double c, r;

	if (argc != 5) {
		fprintf(stderr, "usage: eventcost FILE N events|sites line|open|batchK\n");
		return 2;
	}
	file = argv[1];
	n = (unsigned)strtoul(argv[2], NULL, 10);
	sites = !strcmp(argv[3], "sites");
	snprintf(group, sizeof(group), "sdt_evcost%d", (int)getpid());
	c = run(n, argv[4], add_line);
	r = run(n, argv[4], del_line);
	printf("%u %s %s %.0f %.0f\n", n, argv[3], argv[4], c, r);
	return 0;
}
