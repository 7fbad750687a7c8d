// SPDX-License-Identifier: MIT
/*
 * A user flooding usdtkit-helperd's parse queue (t-sec-queue-flood.sh):
 *
 *   flood SECONDS FILE...
 *
 * maps every FILE read-only and REGISTERs its first byte, up to BATCH at a
 * time, each on a connection of its own that is closed when no answer came
 * within 300 ms: the daemon then parses the file for this process as long as
 * it lives. A file answered -EAGAIN (a rate, the queue full) is sent again
 * in the next round, until every file is in the daemon's hands or SECONDS
 * pass. Prints "queued Q done D refused R" (R: still refused at the end),
 * then holds every mapping until EOF on stdin.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "protoclient.h"

#define BATCH 32 /* below the daemon's 64 connections per uid */

enum { PENDING, QUEUED, DONE };

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int nfiles = argc - 2, queued = 0, done = 0, refused;
	double end = argc > 1 ? now_s() + atof(argv[1]) : 0;
	uint64_t *addr;
	char *state, c;

	if (argc < 3) {
		fprintf(stderr, "usage: flood SECONDS FILE...\n");
		return 2;
	}
	addr = calloc((size_t)nfiles, sizeof(*addr));
	state = calloc((size_t)nfiles, 1);
	if (!addr || !state)
		return 2;
	for (int i = 0; i < nfiles; i++) {
		int fd = open(argv[i + 2], O_RDONLY | O_CLOEXEC);
		off_t len = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
		void *p =
		    len > 0 ? mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;

		if (p == MAP_FAILED) {
			fprintf(stderr, "flood: %s: cannot map it\n", argv[i + 2]);
			return 2;
		}
		close(fd);
		addr[i] = (uint64_t)(uintptr_t)p;
	}
	while (queued + done < nfiles && now_s() < end) {
		int fds[BATCH], idx[BATCH], n = 0;

		for (int i = 0; i < nfiles && n < BATCH; i++) {
			struct usdt_msg_module m;
			int fd;

			if (state[i] != PENDING)
				continue;
			fd = proto_connect();
			if (fd < 0)
				break;
			proto_module(&m, USDT_MSG_REGISTER, addr[i], (uint32_t)i + 1);
			if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m)) {
				close(fd);
				continue;
			}
			fds[n] = fd;
			idx[n++] = i;
		}
		/* The refusals come at once; a parse of ours answers in 600 s. */
		for (double until = now_s() + 0.3; now_s() < until;) {
			struct pollfd pf[BATCH];
			int ready = 0;

			for (int k = 0; k < n; k++)
				pf[k] = (struct pollfd){.fd = fds[k], .events = POLLIN};
			poll(pf, (nfds_t)n, 20);
			for (int k = 0; k < n; k++)
				ready += pf[k].revents != 0;
			if (ready == n)
				break;
		}
		for (int k = 0; k < n; k++) {
			struct usdt_msg_reply r;
			ssize_t got = recv(fds[k], &r, sizeof(r), MSG_DONTWAIT);

			if (got < 0 && errno == EAGAIN) {
				state[idx[k]] = QUEUED; /* no answer yet: being parsed for us */
				queued++;
			} else if (proto_is_reply(&r, got, (uint32_t)idx[k] + 1) &&
				   r.status != -EAGAIN) {
				state[idx[k]] = DONE;
				done++;
			}
			close(fds[k]);
		}
	}
	refused = nfiles - queued - done;
	printf("queued %d done %d refused %d\n", queued, done, refused);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	free(addr);
	free(state);
	return 0;
}
