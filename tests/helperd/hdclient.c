// SPDX-License-Identifier: MIT
/*
 * A protocol client of usdtkit-helperd for tests/helperd: says what drti
 * says, and what a lying or broken client might, and prints the answers.
 * Socket: $USDTKIT_HELPER_SOCKET.
 *
 *   hdclient register ADDR|anon|self|unmapped
 *       REGISTER that address; prints "status=S nprobes=N"
 *   hdclient unregister ADDR|self
 *       UNREGISTER
 *   hdclient dlreg LIB
 *       dlopen LIB (drti off) and REGISTER its lib_call address
 *   hdclient dlreg-del LIB
 *       the same, but LIB is unlinked first (a deleted file); prints the
 *       status, then "ready", and holds until stdin EOF
 *   hdclient mapreg FILE...
 *       for each FILE: mmap it read-only (any bytes: hostile ELF files) and
 *       REGISTER its first byte; prints "FILE status=S nprobes=N", then unmaps it
 *   hdclient garbage short|long|magic|version|type|size|reply|tiny|empty
 *       a malformed packet; prints "status=S" or "closed"
 *   hdclient list [PID]
 *       LIST; prints "entry PID NPROBES DEV INO PATH" lines, then "status=S count=N";
 *       with $HDCLIENT_SEND_DELAY_MS, that long between connect and send (a
 *       client preempted in between); a send that fails prints
 *       "send: ERROR, MS ms after the connect"
 *   hdclient hold N
 *       opens N connections that never send; prints "held K", waits for stdin EOF
 *   hdclient hold-renew N
 *       N connections kept open: reopened when closed
 *   hdclient idle
 *       connects, sends nothing, waits for the close; prints "closed after MS"
 *   hdclient watch ready|never|bad
 *       WATCH; prints "ready status=S"; then, until killed or stdin EOF, prints
 *       "notice N pid P" for each NOTICE and answers READY N (ready), nothing
 *       (never), or READY N+1000 (bad: a notice it was never sent)
 *   hdclient bench N LIB
 *       dlopen LIB (drti off), then N x (connect, REGISTER, reply) and
 *       N x UNREGISTER; prints registrations per second
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "protoclient.h"

/* A connection to the daemon; exits 2 when there is none. */
static int conn(void)
{
	int fd = proto_connect();

	if (fd < 0) {
		fprintf(stderr, "hdclient: connect %s: %s\n", proto_socket_path(), strerror(errno));
		exit(2);
	}
	return fd;
}

/*
 * Waits up to 3 s ($HDCLIENT_WAIT_MS) for one packet; its length, 0 when the
 * daemon closed, -1 on timeout.
 */
static ssize_t get(int fd, void *buf, size_t len)
{
	const char *w = getenv("HDCLIENT_WAIT_MS");

	return proto_recv(fd, buf, len, w ? atoi(w) : 3000);
}

static int module_msg(uint16_t type, uint64_t addr, uint32_t *nprobes)
{
	struct usdt_msg_module m;
	struct usdt_msg_reply r;
	int fd = conn();
	ssize_t n;

	proto_module(&m, type, addr, 42);
	if (send(fd, &m, sizeof(m), 0) != sizeof(m))
		return -1000;
	/* a HELD (a watcher holds the answer) is skipped, as drti waits on */
	while ((n = get(fd, &r, sizeof(r))) == (ssize_t)sizeof(struct usdt_msg_held) &&
	       usdt_answer_check(&r, (unsigned long)n, 42) == USDT_ANSWER_HELD)
		;
	close(fd);
	if (!proto_is_reply(&r, n, 42))
		return -1001;
	if (nprobes)
		*nprobes = r.nprobes;
	return r.status;
}

static uint64_t parse_addr(const char *s)
{
	if (!strcmp(s, "self"))
		return (uint64_t)(uintptr_t)&parse_addr;
	if (!strcmp(s, "unmapped"))
		return 0x10;
	if (!strcmp(s, "anon")) {
		void *p =
		    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		return (uint64_t)(uintptr_t)p;
	}
	return strtoull(s, NULL, 0);
}

static uint64_t lib_addr(const char *lib)
{
	return proto_lib_addr(lib, "hdclient");
}

static int garbage(const char *kind)
{
	unsigned char buf[256];
	struct usdt_msg_module *m = (struct usdt_msg_module *)buf;
	size_t len = sizeof(*m);
	int fd = conn();
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	proto_module(m, USDT_MSG_REGISTER, (uint64_t)(uintptr_t)&garbage, 7);
	if (!strcmp(kind, "short"))
		len = sizeof(*m) - 4;
	else if (!strcmp(kind, "long"))
		len = sizeof(*m) + 8;
	else if (!strcmp(kind, "magic"))
		m->hdr.magic = 0x12345678;
	else if (!strcmp(kind, "version"))
		m->hdr.version = 99;
	else if (!strcmp(kind, "type"))
		m->hdr.type = 77;
	else if (!strcmp(kind, "size"))
		m->hdr.size = 1000;
	else if (!strcmp(kind, "reply"))
		m->hdr.type = USDT_MSG_REPLY;
	else if (!strcmp(kind, "tiny"))
		len = 3;
	else if (!strcmp(kind, "empty"))
		len = 0;
	if (send(fd, buf, len, 0) != (ssize_t)len)
		return 2;
	n = get(fd, buf, sizeof(buf));
	if (n == 0 || (n < 0 && errno == ECONNRESET)) {
		printf("closed\n");
	} else if (n == sizeof(struct usdt_msg_reply)) {
		struct usdt_msg_reply r;

		memcpy(&r, buf, sizeof(r));
		printf("status=%d\n", r.status);
	} else {
		printf("no answer (%zd)\n", n);
	}
	close(fd);
	return 0;
}

static int list(int pid)
{
	union {
		struct usdt_msg_list_entry e;
		struct usdt_msg_reply r;
		unsigned char raw[sizeof(struct usdt_msg_list_entry) + USDT_PROTO_PATH_MAX + 8];
	} u;
	struct usdt_msg_list m;
	struct timespec t0, t1;
	int fd = conn();
	unsigned count = 0;

	proto_list(&m, pid, 9);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (getenv("HDCLIENT_SEND_DELAY_MS"))
		poll(NULL, 0, atoi(getenv("HDCLIENT_SEND_DELAY_MS")));
	if (send(fd, &m, sizeof(m), 0) != sizeof(m)) {
		int e = errno;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf(
		    "send: %s, %ld ms after the connect\n", strerror(e),
		    (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
		return 2;
	}
	for (;;) {
		ssize_t n = get(fd, &u, sizeof(u));

		if (n < (ssize_t)sizeof(struct usdt_msg_hdr) || u.r.hdr.seq != 9) {
			printf("bad answer (%zd)\n", n);
			return 1;
		}
		if (u.r.hdr.type == USDT_MSG_REPLY) {
			printf("status=%d count=%u entries=%u\n", u.r.status, u.r.nprobes, count);
			return 0;
		}
		if (u.e.hdr.type != USDT_MSG_LIST_ENTRY || (size_t)n != u.e.hdr.size ||
		    u.e.path_len == 0 || sizeof(u.e) + u.e.path_len != (size_t)n ||
		    u.raw[n - 1] != '\0') {
			printf("bad entry\n");
			return 1;
		}
		printf("entry %d %u %" PRIu64 " %" PRIu64 " 0x%" PRIx64 " %s\n", u.e.pid,
		       u.e.nprobes, u.e.dev, u.e.ino, u.e.load_bias, u.raw + sizeof(u.e));
		count++;
	}
}

/*
 * hold-renew N: N connections that never send; each one the daemon closes
 * is opened again (at most 200 per 50 ms round), so the daemon is kept at
 * its connection caps. Prints "held K" once all are open, and at stdin EOF
 * "renewed R closed-by-daemon C".
 */
static int hold_renew(int n)
{
	struct rlimit rl;
	struct pollfd *p = calloc((size_t)n + 1, sizeof(*p));
	long renewed = 0, closed = 0;
	int held = 0;

	if (!p)
		return 2;
	/* 10,000 connections need more than the default 1,024 descriptors. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	p[0].fd = 0;
	p[0].events = POLLIN;
	for (int i = 1; i <= n; i++) {
		p[i].fd = proto_connect();
		p[i].events = POLLIN;
		held += p[i].fd >= 0;
	}
	printf("held %d\n", held);
	fflush(stdout);
	for (;;) {
		int budget = 200;

		if (poll(p, (nfds_t)n + 1, 50) < 0 && errno != EINTR)
			return 2;
		if (p[0].revents) {
			char c;

			if (read(0, &c, 1) <= 0)
				break;
		}
		for (int i = 1; i <= n; i++) {
			char c;

			if (p[i].fd >= 0 && p[i].revents &&
			    recv(p[i].fd, &c, 1, MSG_DONTWAIT) <= 0 && errno != EAGAIN) {
				close(p[i].fd);
				p[i].fd = -1;
				closed++;
			}
			if (p[i].fd < 0 && budget > 0) {
				budget--;
				p[i].fd = proto_connect();
				renewed += p[i].fd >= 0;
			}
		}
	}
	printf("renewed %ld closed-by-daemon %ld\n", renewed, closed);
	for (int i = 1; i <= n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	free(p);
	return 0;
}

static int watch(const char *mode)
{
	struct usdt_msg_watch w;
	union {
		struct usdt_msg_reply r;
		struct usdt_msg_notice no;
		unsigned char raw[256];
	} in;
	int fd = conn();
	ssize_t n;

	memset(&w, 0, sizeof(w));
	proto_hdr(&w.hdr, USDT_MSG_WATCH, sizeof(w), 77);
	if (send(fd, &w, sizeof(w), 0) != sizeof(w))
		return 1;
	n = get(fd, &in, sizeof(in));
	if (!proto_is_reply(&in.r, n, 77)) {
		printf("no reply\n");
		return 1;
	}
	printf("ready status=%d\n", in.r.status);
	fflush(stdout);
	if (in.r.status)
		return 0;
	for (;;) {
		struct pollfd p[2] = {{fd, POLLIN, 0}, {0, POLLIN, 0}};
		struct usdt_msg_ready rd;
		char c;

		if (poll(p, 2, -1) < 0)
			return 1;
		if (p[1].revents && read(0, &c, 1) <= 0)
			return 0;
		if (!p[0].revents)
			continue;
		n = recv(fd, &in, sizeof(in), MSG_TRUNC);
		if (n <= 0) {
			printf("closed\n");
			return 0;
		}
		if (usdt_answer_check(&in, (unsigned long)n, 77) != USDT_ANSWER_NOTICE) {
			printf("not a notice\n");
			return 1;
		}
		printf("notice %u pid %d\n", in.no.notice, in.no.pid);
		fflush(stdout);
		if (!strcmp(mode, "never"))
			continue;
		memset(&rd, 0, sizeof(rd));
		proto_hdr(&rd.hdr, USDT_MSG_READY, sizeof(rd), 77);
		rd.notice = in.no.notice + (!strcmp(mode, "bad") ? 1000 : 0);
		if (send(fd, &rd, sizeof(rd), MSG_NOSIGNAL) != sizeof(rd))
			return 1;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint32_t np = 0;
	int st;

	if (argc >= 3 && !strcmp(argv[1], "register")) {
		st = module_msg(USDT_MSG_REGISTER, parse_addr(argv[2]), &np);
		printf("status=%d nprobes=%u\n", st, np);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "unregister")) {
		printf("status=%d\n", module_msg(USDT_MSG_UNREGISTER, parse_addr(argv[2]), NULL));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "dlreg")) {
		st = module_msg(USDT_MSG_REGISTER, lib_addr(argv[2]), &np);
		printf("status=%d nprobes=%u\n", st, np);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "dlreg-del")) {
		uint64_t a = lib_addr(argv[2]);
		char c;

		if (unlink(argv[2]) != 0)
			return 2;
		st = module_msg(USDT_MSG_REGISTER, a, &np);
		printf("status=%d nprobes=%u\nready\n", st, np);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "mapreg")) {
		for (int i = 2; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
			off_t len = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
			void *p = len > 0 ? mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0)
					  : MAP_FAILED;

			if (p == MAP_FAILED) {
				printf("%s unmappable\n", argv[i]);
				if (fd >= 0)
					close(fd);
				continue;
			}
			st = module_msg(USDT_MSG_REGISTER, (uint64_t)(uintptr_t)p, &np);
			printf("%s status=%d nprobes=%u\n", argv[i], st, np);
			if (st == 0)
				module_msg(USDT_MSG_UNREGISTER, (uint64_t)(uintptr_t)p, NULL);
			munmap(p, (size_t)len);
			close(fd);
		}
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "garbage"))
		return garbage(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "watch"))
		return watch(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "list"))
		return list(argc >= 3 ? atoi(argv[2]) : 0);
	if (argc >= 3 && !strcmp(argv[1], "hold")) {
		int n = atoi(argv[2]), held = 0;
		char c;

		for (int i = 0; i < n; i++)
			held += proto_connect() >= 0; /* kept open until exit */
		printf("held %d\n", held);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "hold-renew"))
		return hold_renew(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "idle")) {
		int fd = conn();
		double t0 = now_s();
		char c;
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, 10000) == 1 && recv(fd, &c, 1, 0) <= 0)
			printf("closed after %.0f ms\n", (now_s() - t0) * 1000);
		else
			printf("still open\n");
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "bench")) {
		int n = atoi(argv[2]), bad = 0;
		uint64_t a = lib_addr(argv[3]);
		double t0 = now_s(), t1;

		for (int i = 0; i < n; i++)
			bad += module_msg(USDT_MSG_REGISTER, a, NULL) != 0;
		t1 = now_s();
		for (int i = 0; i < n; i++)
			bad += module_msg(USDT_MSG_UNREGISTER, a, NULL) != 0;
		printf("register %d in %.3f s: %.0f/s; unregister %.0f/s; failed %d\n", n, t1 - t0,
		       n / (t1 - t0), n / (now_s() - t1), bad);
		return bad != 0;
	}
	fprintf(stderr, "usage: see the head comment of tests/helperd/hdclient.c\n");
	return 2;
}
