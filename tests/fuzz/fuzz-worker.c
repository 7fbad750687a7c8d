/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the daemon's decoder of its sandboxed worker's answer
 * (helperd/worker.c, hd_worker_decode, from the daemon's library as the
 * daemon links it). The daemon treats that stream as if the worker were
 * compromised; the input is the stream.
 *
 * The decoder reads each accepted probe's site again from the file: the file
 * here is a memfd of NOPs (0x90 for x86, the aarch64 NOP word for aarch64,
 * chosen by the stream's arch word), so sites inside it pass and sites past
 * it do not. A decoded result is walked (strings, counts, sizes), each probe
 * turned into its uprobe_events line (usdt_uprobe_def, lib/tracefs.c, as
 * the daemon does next) and that line parsed back and compared, then freed.
 *
 * Built with -DFZ_SEEDGEN it is instead the seed generator
 * (make-seeds-worker.sh): for each ELF file named, it has the daemon's own
 * parse (hd_parse_start: a worker forked, seccomp sandbox and all) read it
 * and writes the stream the worker answers, so the seeds are real answers.
 */
#ifndef _GNU_SOURCE /* the build may define it already */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "helperd.h"
#include "tracefs.h"

#ifndef FZ_SEEDGEN

#define SITE_FILE_SIZE (256u * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-worker: invariant broken: %s\n", what);
		abort();
	}
}

/* A file of NOPs of one architecture. */
static int nop_file(bool aarch64)
{
	static const unsigned char a64[] = {0x1f, 0x20, 0x03, 0xd5};
	unsigned char *b = malloc(SITE_FILE_SIZE);
	int fd = memfd_create("fuzz-worker-sites", MFD_CLOEXEC);

	if (!b || fd < 0)
		abort();
	for (size_t i = 0; i < SITE_FILE_SIZE; i++)
		b[i] = aarch64 ? a64[i % 4] : 0x90;
	if (pwrite(fd, b, SITE_FILE_SIZE, 0) != (ssize_t)SITE_FILE_SIZE)
		abort();
	free(b);
	return fd;
}

static void walk(const struct usdt_notes *n, int fd)
{
	check(n->naccepted == n->nsites, "decoded probes are all accepted ones");
	for (size_t i = 0; i < n->nsites; i++) {
		const struct usdt_site *p = &n->sites[i];
		struct usdt_uprobe_entry e;
		char line[USDT_UPROBE_LINE_MAX + 1];
		int len;

		check(p->provider && p->name && p->args && !p->reject, "decoded probe fields");
		check(p->nargs <= USDT_SDT_MAX_ARGS, "decoded nargs");
		check(p->pc_off < SITE_FILE_SIZE && p->sema_off % 2 == 0, "site outside the file");
		sink += strlen(p->provider) + strlen(p->name) + strlen(p->args) + strlen(p->group) +
			strlen(p->event);
		for (unsigned a = 0; a < p->nargs; a++) {
			sink +=
			    strlen(p->arg[a].reg) + (p->arg[a].name ? strlen(p->arg[a].name) : 0);
			check(p->arg[a].kind <= USDT_ARG_MEM, "decoded argument kind");
		}
		len = usdt_uprobe_def(line, sizeof(line), p->group, p->event, "/fuzz/module.so", p);
		if (len < 0)
			continue;
		check((size_t)len < sizeof(line) && strlen(line) == (size_t)len, "line length");
		check(usdt_uprobe_parse_line(line, &e) == 0,
		      "the daemon's own line does not parse");
		check(strcmp(e.group, p->group) == 0 && strcmp(e.event, p->event) == 0 &&
			  e.off == p->pc_off && strcmp(e.path, "/fuzz/module.so") == 0,
		      "the line parsed back differs");
		/* tracefs.c writes a reference counter only for a non-zero offset. */
		check(e.has_ref == (p->sema_off != 0) && (!e.has_ref || e.ref == p->sema_off),
		      "the semaphore parsed back differs");
		usdt_uprobe_entry_clear(&e);
	}
	(void)fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int x86 = -1, a64 = -1;
	struct usdt_notes *n = NULL;
	char err[256];
	uint32_t arch = 0;
	int fd, ret;

	if (x86 < 0) {
		x86 = nop_file(false);
		a64 = nop_file(true);
	}
	if (size >= 8)
		memcpy(&arch, data + 4, 4);
	fd = arch == USDT_ARCH_AARCH64 ? a64 : x86;
	ret = hd_worker_decode(data, size, fd, &n, err, sizeof(err));
	sink += strnlen(err, sizeof(err));
	if (ret) {
		check(ret < 0 && n == NULL, "an error with a result");
		return 0;
	}
	check(n != NULL, "no result");
	walk(n, fd);
	usdt_notes_free(n);
	return 0;
}

#else /* FZ_SEEDGEN: seedgen OUTDIR ELF... */

static int one(const char *path, const char *out)
{
	struct hd_worker_limits lim = {
	    .timeout_ms = 5000, .cpu_seconds = 5, .address_space = 1ull << 30};
	struct hd_parse_job j;
	struct usdt_notes *n = NULL;
	char err[256];
	uint64_t want = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), done = 0, ret = -1;
	FILE *f;

	if (fd < 0)
		return -1;
	/* The daemon's own way: a worker forked, the file passed to it, its answer read. */
	if (hd_parse_start(fd, &lim, &j, err, sizeof(err)) != 0) {
		close(fd);
		return -1;
	}
	while (!done) {
		struct pollfd p = {.fd = j.rfd, .events = POLLIN};

		if (poll(&p, 1, (int)lim.timeout_ms) <= 0)
			break;
		done = hd_parse_read(&j);
	}
	/* The stream's length comes first (send_answer); the decoder reads what follows it. */
	if (done && j.complete && j.len >= sizeof(want)) {
		memcpy(&want, j.buf, sizeof(want));
		f = fopen(out, "w");
		ret = f && fwrite(j.buf + sizeof(want), 1, want, f) == want ? 0 : -1;
		if (f && fclose(f) != 0)
			ret = -1;
	}
	/* (and the daemon's decoding of it: an answer it refuses is a seed too) */
	(void)hd_parse_finish(&j, fd, done ? 0 : -ETIMEDOUT, &n, err, sizeof(err));
	usdt_notes_free(n);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	char out[4096];
	int rc = 0;

	/* The parse's workers are this program executed again (worker_child.c). */
	hd_worker_main(argc, argv);
	for (int i = 2; i < argc; i++) {
		const char *b = strrchr(argv[i], '/');

		b = b ? b + 1 : argv[i];
		if (strncmp(b, "seed-", 5) == 0)
			b += 5;
		snprintf(out, sizeof(out), "%s/seed-%s", argv[1], b);
		if (one(argv[i], out) != 0) {
			fprintf(stderr, "seedgen: %s failed\n", argv[i]);
			rc = 1;
		}
	}
	return rc;
}
#endif
