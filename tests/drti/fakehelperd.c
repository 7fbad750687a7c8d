/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for usdtkit-helperd, for drti's tests: listens on a private
 * SOCK_SEQPACKET socket, writes one line per packet received to a log (with
 * the sender's pid and uid from SO_PEERCRED, never from the message), and
 * answers according to MODE. It decodes only the header fields; the tests
 * check them against core/protocol.h's constants themselves.
 *
 *   fakehelperd SOCKET LOG MODE [NPROBES]
 *
 * MODE:
 *   reply      a well-formed REPLY {status 0, nprobes NPROBES} to each request
 *   refuse     a REPLY with status -EPERM
 *   delay:MS   the REPLY after MS milliseconds (the whole server waits)
 *   noreply    reads and logs, never answers, keeps the connection open
 *   held:MS    a HELD {ms MS} to each request, then never a REPLY (a
 *              squatter making clients wait: tests/security/t-sec-held-squat)
 *   close      accepts and closes at once, reading nothing
 *   closefirst:K  closes the first K connections at once, then as reply
 *   eagainfirst:K  answers the first K requests -EAGAIN (its queue share
 *              full), then as reply
 *   garbage    answers 16 bytes of 0xa5
 *   badmagic   a REPLY with a wrong magic
 *   badseq     a REPLY to another seq, then nothing
 *   big        a 4096-byte packet with a REPLY header
 *   flood      100 LIST_ENTRY-typed packets with the right seq, no REPLY
 *   backlog    listen(0) and never accept (a full backlog after one connect)
 *   stream     a SOCK_STREAM socket instead (wrong type for the client)
 *
 * Modes for tests/fault/process/t-fault-drti-replies (each answers every
 * request the same way):
 *   trunc:N    the first N bytes of a well-formed REPLY (0 <= N < its size)
 *   huge       a 64 KiB packet starting with a well-formed REPLY (size field 24)
 *   hugesize   the same with its size field saying 65536
 *   badversion a REPLY of another protocol version
 *   badtype    a packet of an unknown type (0x99), right seq and size
 *   echo       the request itself sent back (a REGISTER, not a REPLY)
 *   badsize    a REPLY whose size field is one less than the packet
 *   otherseq:N N well-formed REPLYs to other seqs, then the right one
 *   entry      one well-formed LIST_ENTRY (with a path) instead of a REPLY
 *   storm      packets of random sizes (0 to 300 bytes) and bytes, some with
 *              a valid header, until the client's queue is full (at most 20,000)
 *   closemid   reads the request, then closes without answering
 *   shutmid    reads the request, then shutdown(SHUT_RDWR), and keeps it open
 *   exitmid    reads the request, then the whole server exits (a crash)
 *
 * The first line of the log is "listening" once connects can succeed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "protoclient.h"

#define MAXCONN 64

static FILE *logfile;
static const char *mode;
static long closefirst, eagainfirst = -1;
static uint32_t nprobes;

static void send_reply(int fd, uint32_t seq, uint32_t magic, int32_t status)
{
	struct usdt_msg_reply r;

	proto_reply(&r, seq, status, nprobes);
	r.hdr.magic = magic;
	if (send(fd, &r, sizeof(r), MSG_NOSIGNAL) < 0)
		fprintf(logfile, "send-failed errno=%d\n", errno);
}

static void sendlog(int fd, const void *buf, size_t len)
{
	if (send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fprintf(logfile, "send-failed errno=%d\n", errno);
}

/* The fault modes of t-fault-drti-replies; 0 when mode is none of them. */
static int answer_fault(int fd, const struct usdt_msg_hdr *h, const unsigned char *req,
			size_t reqlen)
{
	static unsigned char big[65536];
	struct usdt_msg_reply r;

	/* A REPLY to h as the real daemon would send it, to be spoiled below. */
	proto_reply(&r, h->seq, 0, nprobes);
	if (!strncmp(mode, "trunc:", 6)) {
		size_t n = (size_t)atol(mode + 6);

		sendlog(fd, &r, n < sizeof(r) ? n : sizeof(r) - 1);
	} else if (!strcmp(mode, "huge") || !strcmp(mode, "hugesize")) {
		if (mode[4])
			r.hdr.size = sizeof(big);
		memset(big, 0, sizeof(big));
		memcpy(big, &r, sizeof(r));
		sendlog(fd, big, sizeof(big));
	} else if (!strcmp(mode, "badversion")) {
		r.hdr.version = USDT_PROTO_VERSION + 1;
		sendlog(fd, &r, sizeof(r));
	} else if (!strcmp(mode, "badtype")) {
		r.hdr.type = 0x99;
		sendlog(fd, &r, sizeof(r));
	} else if (!strcmp(mode, "echo")) {
		sendlog(fd, req, reqlen);
	} else if (!strcmp(mode, "badsize")) {
		r.hdr.size = sizeof(r) - 1;
		sendlog(fd, &r, sizeof(r));
	} else if (!strncmp(mode, "otherseq:", 9)) {
		long i, n = atol(mode + 9);

		for (i = 0; i < n; i++) {
			r.hdr.seq = h->seq + 1000 + (uint32_t)i;
			sendlog(fd, &r, sizeof(r));
		}
		r.hdr.seq = h->seq;
		sendlog(fd, &r, sizeof(r));
	} else if (!strcmp(mode, "entry")) {
		struct usdt_msg_list_entry e;
		static const char path[] = "/usr/lib/libnothing.so";

		memset(&e, 0, sizeof(e));
		e.hdr = r.hdr;
		e.hdr.type = USDT_MSG_LIST_ENTRY;
		e.hdr.size = sizeof(e) + sizeof(path);
		e.pid = (int32_t)getpid();
		e.path_len = sizeof(path);
		memcpy(big, &e, sizeof(e));
		memcpy(big + sizeof(e), path, sizeof(path));
		sendlog(fd, big, e.hdr.size);
	} else if (!strcmp(mode, "storm")) {
		int i;

		for (i = 0; i < 20000; i++) {
			size_t n = (size_t)(rand() % 301), k;

			for (k = 0; k < n; k++)
				big[k] = (unsigned char)rand();
			if (i % 3 == 0 && n >= sizeof(r)) {
				r.hdr.seq = h->seq + 1 + (uint32_t)i;
				r.hdr.type =
				    (uint16_t)(i % 2 ? USDT_MSG_REPLY : USDT_MSG_LIST_ENTRY);
				r.hdr.size = (uint32_t)n;
				memcpy(big, &r, sizeof(r));
			}
			if (send(fd, big, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				break;
		}
		fprintf(logfile, "storm sent=%d\n", i);
	} else if (!strcmp(mode, "closemid")) {
		close(fd);
		return 2;
	} else if (!strcmp(mode, "shutmid")) {
		shutdown(fd, SHUT_RDWR);
	} else if (!strcmp(mode, "exitmid")) {
		fprintf(logfile, "exiting\n");
		fflush(logfile);
		_exit(0);
	} else {
		return 0;
	}
	return 1;
}

static void answer(int fd, const struct usdt_msg_hdr *h)
{
	if (eagainfirst > 0) {
		eagainfirst--;
		send_reply(fd, h->seq, USDT_PROTO_MAGIC, -EAGAIN);
	} else if (!strcmp(mode, "reply") || eagainfirst == 0) {
		send_reply(fd, h->seq, USDT_PROTO_MAGIC, 0);
	} else if (!strcmp(mode, "refuse")) {
		send_reply(fd, h->seq, USDT_PROTO_MAGIC, -EPERM);
	} else if (!strncmp(mode, "delay:", 6)) {
		long ms = atol(mode + 6);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
		send_reply(fd, h->seq, USDT_PROTO_MAGIC, 0);
	} else if (!strcmp(mode, "garbage")) {
		char g[16];

		memset(g, 0xa5, sizeof(g));
		(void)!send(fd, g, sizeof(g), MSG_NOSIGNAL);
	} else if (!strcmp(mode, "badmagic")) {
		send_reply(fd, h->seq, USDT_PROTO_MAGIC ^ 1, 0);
	} else if (!strcmp(mode, "badseq")) {
		send_reply(fd, h->seq + 1, USDT_PROTO_MAGIC, 0);
	} else if (!strcmp(mode, "big")) {
		static char big[4096];
		struct usdt_msg_hdr bh = *h;

		bh.type = USDT_MSG_REPLY;
		bh.size = sizeof(big);
		memcpy(big, &bh, sizeof(bh));
		(void)!send(fd, big, sizeof(big), MSG_NOSIGNAL);
	} else if (!strcmp(mode, "flood")) {
		struct usdt_msg_list_entry e;
		int i;

		memset(&e, 0, sizeof(e));
		e.hdr = *h;
		e.hdr.type = USDT_MSG_LIST_ENTRY;
		e.hdr.size = sizeof(e);
		for (i = 0; i < 100; i++)
			if (send(fd, &e, sizeof(e), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				break;
	} else if (!strncmp(mode, "held:", 5)) {
		struct usdt_msg_held m;

		memset(&m, 0, sizeof(m));
		usdt_hdr_fill(&m.hdr, USDT_MSG_HELD, sizeof(m), h->seq);
		m.ms = (uint32_t)atol(mode + 5);
		(void)!send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	}
	/* noreply: nothing */
}

static void log_packet(int fd, const unsigned char *buf, ssize_t n)
{
	struct ucred cr = {0, 0, 0};
	socklen_t len = sizeof(cr);
	struct usdt_msg_module m;

	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len);
	memset(&m, 0, sizeof(m));
	memcpy(&m, buf, (size_t)n < sizeof(m) ? (size_t)n : sizeof(m));
	fprintf(logfile,
		"msg pid=%d uid=%u len=%zd magic=0x%08x version=%u type=%u size=%u seq=%u "
		"addr=0x%llx\n",
		(int)cr.pid, (unsigned)cr.uid, n, m.hdr.magic, m.hdr.version, m.hdr.type,
		m.hdr.size, m.hdr.seq, (unsigned long long)m.addr);
	fflush(logfile);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sun;
	struct pollfd p[MAXCONN + 1];
	int lfd, n = 1, type = SOCK_SEQPACKET;

	if (argc < 4) {
		fprintf(stderr, "usage: fakehelperd SOCKET LOG MODE [NPROBES]\n");
		return 2;
	}
	mode = argv[3];
	nprobes = argc > 4 ? (uint32_t)atoi(argv[4]) : 3;
	logfile = fopen(argv[2], "a");
	if (!logfile)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(mode, "stream"))
		type = SOCK_STREAM;
	if (!strncmp(mode, "eagainfirst:", 12))
		eagainfirst = atol(mode + 12);
	if (!strncmp(mode, "closefirst:", 11)) {
		closefirst = atol(mode + 11);
		mode = "reply";
	}
	lfd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[1]);
	unlink(argv[1]);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(lfd, !strcmp(mode, "backlog") ? 0 : 128) < 0) {
		perror("fakehelperd");
		return 2;
	}
	fprintf(logfile, "listening\n");
	fflush(logfile);
	if (!strcmp(mode, "backlog"))
		for (;;)
			pause();
	p[0].fd = lfd;
	p[0].events = POLLIN;
	for (;;) {
		int i;

		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 2;
		}
		for (i = n - 1; i >= 1; i--) {
			unsigned char buf[8192];
			ssize_t r;

			if (!p[i].revents)
				continue;
			r = recv(p[i].fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
			if (r < 0 && errno == EAGAIN)
				continue;
			if (r <= 0) {
				close(p[i].fd);
				p[i] = p[--n];
				continue;
			}
			log_packet(p[i].fd, buf, r);
			if ((size_t)r < sizeof(struct usdt_msg_hdr))
				continue;
			switch (answer_fault(p[i].fd, (const struct usdt_msg_hdr *)buf, buf,
					     (size_t)r < sizeof(buf) ? (size_t)r : sizeof(buf))) {
			case 0:
				answer(p[i].fd, (const struct usdt_msg_hdr *)buf);
				break;
			case 2: /* closed by the mode */
				p[i] = p[--n];
				break;
			}
			fflush(logfile);
		}
		if (p[0].revents & POLLIN) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				continue;
			if (!strcmp(mode, "close") || n > MAXCONN || closefirst-- > 0) {
				fprintf(logfile, "closed-at-accept\n");
				fflush(logfile);
				close(c);
				continue;
			}
			p[n].fd = c;
			p[n].events = POLLIN;
			p[n].revents = 0;
			n++;
		}
	}
}
