// SPDX-License-Identifier: MIT
/*
 * usdtkit-helperd's connections, the transport under the protocol (serve.c;
 * the whole design is main.c's opening comment and kernel-helper/README.md):
 * accepting a client with who the kernel says it is (SO_PEERCRED, and
 * SO_PEERPIDFD), within the caps (1024 open, 64 per uid, an idle one of
 * the process holding the most closed for a newcomer: victim()); the idle list, in deadline order,
 * whose connections close after 1 s; each connection's queue of packets to
 * send without ever blocking; shedding a client when out of descriptors
 * (shed()). It calls nothing above it: when a connection closes, serve.c
 * learns it through the callback given to conns_init.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "conn.h"
#include "protocol.h"

bool conn_timing;

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define CONN_IDLE_MS 1000
#define CONN_MAX 1024
#define CONN_PER_UID_MAX 64
#define OUT_MAX (16u << 20)

static int epfd;
static struct conn *conns_head, *conns_tail; /* in deadline order */
static unsigned nconns;
static uint64_t loop_iter;
static struct tagged listen_tag = {HD_TAG_LISTEN};
/* serve.c's: what a closing connection was to the protocol. */
static void (*conn_closing)(struct conn *c);

void conn_unlink(struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		conns_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		conns_tail = c->prev;
	c->prev = c->next = NULL;
	c->linked = false;
}

static void conn_append(struct conn *c)
{
	c->prev = conns_tail;
	c->next = NULL;
	if (conns_tail)
		conns_tail->next = c;
	else
		conns_head = c;
	conns_tail = c;
	c->linked = true;
}

void conn_touch(struct conn *c)
{
	c->deadline = hd_now_ms() + CONN_IDLE_MS;
	if (c->linked)
		conn_unlink(c);
	conn_append(c);
}

void conn_close(struct conn *c)
{
	hd_forget(c);
	if (conn_closing)
		conn_closing(c);
	if (c->listing)
		hd_list_cancel(c);
	else if (c->waiting)
		hd_register_cancel(c);
	if (c->linked)
		conn_unlink(c);
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c->out);
	free(c);
	nconns--;
}

static unsigned conns_of(uid_t uid)
{
	unsigned n = 0;

	for (struct conn *c = conns_head; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/*
 * At a cap the newcomer wins: an idle connection is closed instead (of the
 * newcomer's uid for the per-uid cap, of anyone for the global one). Idle
 * means: in the idle list (not waiting for a parse), no packet queued to
 * read. The one closed is the oldest idle connection of the process that
 * holds the most of them, so a process holding connections only ever loses
 * its own, even to the other processes of its uid: a client that has just
 * connected and not yet sent its request (preempted between connect() and
 * send(), as the daemon's raised priority makes likely) is never closed for
 * a holder's newcomers. Among processes with one connection each (nobody
 * holds more than its share), the oldest is closed, and only one accepted
 * in an earlier loop iteration, so it has had its turn to be read (accepts
 * are done after the batch's reads). NULL: nobody to close (the newcomer
 * is). One pass to count per process, one to choose: O(connections), with
 * an ioctl only for the candidates.
 */
#define PID_SLOTS (2 * CONN_MAX) /* open addressing, at most half full */

struct pid_count {
	pid_t pid; /* 0: empty */
	unsigned n;
};

static unsigned *pid_slot(struct pid_count *t, pid_t pid)
{
	size_t i = ((unsigned)pid * 2654435761u) % PID_SLOTS;

	while (t[i].pid && t[i].pid != pid)
		i = (i + 1) % PID_SLOTS;
	t[i].pid = pid;
	return &t[i].n;
}

static bool idle_now(const struct conn *c, bool lone)
{
	int queued = 0;

	if (lone && c->born >= loop_iter)
		return false;
	return !(ioctl(c->fd, FIONREAD, &queued) == 0 && queued > 0);
}

static struct conn *victim(bool any_uid, uid_t uid)
{
	static struct pid_count counts[PID_SLOTS];
	unsigned most = 0;

	memset(counts, 0, sizeof(counts));
	for (struct conn *c = conns_head; c; c = c->next)
		if (any_uid || c->uid == uid) {
			unsigned *n = pid_slot(counts, c->pid);

			if (++*n > most)
				most = *n;
		}
	if (most > 1)
		for (struct conn *c = conns_head; c; c = c->next)
			if ((any_uid || c->uid == uid) && *pid_slot(counts, c->pid) == most &&
			    idle_now(c, false))
				return c;
	for (struct conn *c = conns_head; c; c = c->next)
		if ((any_uid || c->uid == uid) && idle_now(c, true))
			return c;
	return NULL;
}

/*
 * Out of descriptors (EMFILE, ENFILE), accept() fails and leaves the
 * connection queued, so the listening socket stays readable: a loop that
 * only retried would spin at full CPU while nothing can be served. Instead
 * the reserve descriptor (/dev/null, opened at start) is closed, the
 * connection taken with it and refused at once (its request, if already
 * there, answered -EMFILE, which drti takes silently: the program goes on
 * as without a daemon), and the reserve opened again. If even that fails,
 * the listening socket leaves the epoll set for LISTEN_PAUSE_MS. Either way
 * the loop sleeps until a client, an exit or a timer wakes it, and each
 * wake-up costs a few system calls: measured by tests/crash/t-crash-caps.
 */
#define LISTEN_PAUSE_MS 100
static int reserve_fd = -1;
static int listen_fd = -1;
static uint64_t listen_paused_until; /* 0: the listening socket is watched */
static uint64_t nshed;		     /* connections refused for lack of descriptors */

static void listen_pause(void)
{
	struct epoll_event ev = {.events = 0, .data.ptr = &listen_tag};

	if (listen_paused_until)
		return;
	epoll_ctl(epfd, EPOLL_CTL_MOD, listen_fd, &ev);
	listen_paused_until = hd_now_ms() + LISTEN_PAUSE_MS;
}

void conns_listen_resume(uint64_t now)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};

	if (!listen_paused_until || now < listen_paused_until)
		return;
	epoll_ctl(epfd, EPOLL_CTL_MOD, listen_fd, &ev);
	listen_paused_until = 0;
}

static void refuse(int fd, int status);

/* accept() said EMFILE/ENFILE: take the connection with the reserve and refuse it. */
static bool shed(int lfd)
{
	int fd;

	if (reserve_fd >= 0) {
		close(reserve_fd);
		reserve_fd = -1;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		refuse(fd, -EMFILE);
		close(fd);
		/* Once per 1,000: the log must not cost what the shedding saves. */
		if (nshed++ % 1000 == 0)
			hd_warn(
			    "out of descriptors: connections refused (%" PRIu64 " so far); "
			    "raise the descriptor limit (LimitNOFILE=) or lower the per-uid caps "
			    "(--max-procs-per-uid, --max-fds-per-uid)",
			    nshed);
	}
	reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || reserve_fd < 0) {
		listen_pause();
		return false;
	}
	return true;
}

/* Accepts one connection; false when there is none left to accept (or none can be). */
bool conn_accept_one(int lfd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			return shed(lfd);
		if (errno == ECONNABORTED || errno == EINTR || errno == EPROTO)
			return true;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			listen_pause(); /* ENOMEM, ENOBUFS...: not in a loop */
		return false;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
		close(fd);
		return true;
	}
	if (conns_of(cred.uid) >= CONN_PER_UID_MAX || nconns >= CONN_MAX) {
		bool global = conns_of(cred.uid) < CONN_PER_UID_MAX;
		struct conn *v = victim(global, cred.uid);

		if (!v) {
			hd_dbg("connection from pid %d uid %u refused: too many open, none idle",
			       (int)cred.pid, (unsigned)cred.uid);
			close(fd);
			return true;
		}
		hd_dbg("at the %s connection cap: the oldest idle one (pid %d uid %u) closed for "
		       "pid %d",
		       global ? "global" : "per-uid", (int)v->pid, (unsigned)v->uid, (int)cred.pid);
		conn_close(v);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return true;
	}
	c->tag = HD_TAG_CONN;
	c->fd = fd;
	if (conn_timing)
		c->accepted_ns = usdt_clock_ns(CLOCK_MONOTONIC);
	c->pid = cred.pid;
	c->uid = cred.uid;
	len = sizeof(c->pidfd);
	/* The peer itself (Linux 6.5+); else a pidfd opened now, racy but the best there is. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &c->pidfd, &len) != 0)
		c->pidfd = (int)pidfd_open(cred.pid, 0);
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		if (c->pidfd >= 0)
			close(c->pidfd);
		close(fd);
		free(c);
		return true;
	}
	nconns++;
	c->born = loop_iter;
	c->deadline = hd_now_ms() + CONN_IDLE_MS;
	conn_append(c);
	return true;
}

bool conn_queue(struct conn *c, const void *pkt, size_t len)
{
	uint32_t l = (uint32_t)len;
	unsigned char *n;

	if (c->outlen + len + 4 > OUT_MAX)
		return false;
	n = realloc(c->out, c->outlen + len + 4);
	if (!n)
		return false;
	c->out = n;
	memcpy(c->out + c->outlen, &l, 4);
	memcpy(c->out + c->outlen + 4, pkt, len);
	c->outlen += len + 4;
	return true;
}

/* Sends what is queued; false when the connection is to be closed. */
bool conn_flush(struct conn *c)
{
	struct epoll_event ev = {.data.ptr = c};

	while (c->outpos < c->outlen) {
		uint32_t l;
		ssize_t w;

		memcpy(&l, c->out + c->outpos, 4);
		w = send(c->fd, c->out + c->outpos + 4, l, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev.events = EPOLLIN | EPOLLOUT;
			epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return true;
		}
		if (w != (ssize_t)l)
			return false;
		c->outpos += 4 + l;
	}
	free(c->out);
	c->out = NULL;
	c->outlen = c->outpos = 0;
	ev.events = EPOLLIN;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
	return !c->closing;
}

bool conn_reply(struct conn *c, uint32_t seq, int status, uint32_t nprobes)
{
	struct usdt_msg_reply r;

	memset(&r, 0, sizeof(r));
	usdt_hdr_fill(&r.hdr, USDT_MSG_REPLY, sizeof(r), seq);
	r.status = status;
	r.nprobes = nprobes;
	return conn_queue(c, &r, sizeof(r));
}

/*
 * Refuses a connection accepted only to be closed: its request, when it is
 * already there (drti sends it as it connects), is answered `status`, so
 * the client stops at once instead of retrying until its timeout.
 */
static void refuse(int fd, int status)
{
	unsigned char raw[128];
	ssize_t len = recv(fd, raw, sizeof(raw), MSG_TRUNC | MSG_DONTWAIT);
	struct hd_request rq;
	struct usdt_msg_reply r;

	if (len <= 0 || hd_msg_decode(raw, (size_t)len, &rq) != 0)
		return;
	memset(&r, 0, sizeof(r));
	usdt_hdr_fill(&r.hdr, USDT_MSG_REPLY, sizeof(r), rq.seq);
	r.status = status;
	send(fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void conns_expire(uint64_t now)
{
	while (conns_head && conns_head->deadline <= now) {
		hd_dbg("pid %d: connection idle for %d ms: closed", (int)conns_head->pid,
		       CONN_IDLE_MS);
		conn_close(conns_head);
	}
}

void conns_reserve_open(void)
{
	reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void conns_init(int ep, int lfd, void (*closing)(struct conn *c))
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};

	epfd = ep;
	conn_closing = closing;
	epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
	listen_fd = lfd;
}

void conns_turn_end(void)
{
	loop_iter++;
}

uint64_t conns_next_wake(void)
{
	uint64_t wake = UINT64_MAX;

	if (conns_head)
		wake = conns_head->deadline;
	if (listen_paused_until && listen_paused_until < wake)
		wake = listen_paused_until;
	return wake;
}

void conns_close_all(void)
{
	while (conns_head)
		conn_close(conns_head);
}

void conn_await(struct conn *c)
{
	struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = c};

	conn_unlink(c);
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}
