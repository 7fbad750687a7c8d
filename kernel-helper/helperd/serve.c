// SPDX-License-Identifier: MIT
/*
 * usdtkit-helperd's protocol (core/protocol.h), on conn.c's connections:
 * a request read and checked exactly as protocol.h defines it (anything
 * else -EPROTO, and the connection closed), the per-uid rate, then
 * REGISTER and UNREGISTER handed to the registration logic (users.c),
 * LIST read on the lister lane (list.c) and answered here one LIST_ENTRY
 * at a time, and WATCH: the watchers
 * and holds below. A REGISTER whose file needs a parse is answered later,
 * by serve_register_done. The loop (main.c) calls serve_conn_event when a
 * connection's socket is ready.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>

#include "clock.h"
#include "conn.h"
#include "protocol.h"

/*
 * Watchers and holds (protocol.h, WATCH): a REGISTER that created a file's
 * events is answered only once every watcher (a `dtrace` with retained
 * enablings) said READY for its NOTICE, or USDT_HOLD_MAX_MS passed, or the
 * watcher went. Nothing waits in the loop: a held answer is a connection in
 * the held list, a hold a bit per watcher still to answer. A few watchers
 * (one per dtrace -Z run), a bounded number of holds (beyond: not held).
 */
#define WATCHERS_MAX 8
#define HOLDS_MAX 256

struct hold {
	struct hold *next;
	uint32_t notice;
	uint32_t pending; /* bit w: watchers[w] has not answered */
	uint64_t deadline;
};

static struct conn *watchers[WATCHERS_MAX];
static unsigned nwatchers;
static struct hold *holds; /* in creation order */
static unsigned nholds;
static uint32_t last_notice;
static struct conn *held;			/* answers waiting for a hold, by hnext */
static unsigned hold_max_ms = USDT_HOLD_MAX_MS; /* --test-hold-ms */

static struct hold *hold_find(uint32_t notice)
{
	for (struct hold *h = holds; h; h = h->next)
		if (h->notice == notice)
			return h;
	return NULL;
}

struct list_ctx {
	struct conn *c;
	uint32_t seq;
	bool failed;
};

static void list_one(const struct hd_list_entry *e, void *arg)
{
	struct list_ctx *l = arg;
	size_t plen = strlen(e->path) + 1, size;
	unsigned char buf[sizeof(struct usdt_msg_list_entry) + USDT_PROTO_PATH_MAX];
	struct usdt_msg_list_entry le;

	if (plen > USDT_PROTO_PATH_MAX)
		plen = USDT_PROTO_PATH_MAX;
	size = sizeof(le) + plen;
	memset(&le, 0, sizeof(le));
	usdt_hdr_fill(&le.hdr, USDT_MSG_LIST_ENTRY, (uint32_t)size, l->seq);
	le.pid = e->pid;
	le.nprobes = e->nprobes;
	le.dev = e->dev;
	le.ino = e->ino;
	le.start = e->start;
	le.end = e->end;
	le.load_bias = e->load_bias;
	le.path_len = (uint32_t)plen;
	memcpy(buf, &le, sizeof(le));
	memcpy(buf + sizeof(le), e->path, plen - 1);
	buf[size - 1] = '\0';
	if (!l->failed && !conn_queue(l->c, buf, size))
		l->failed = true;
}

/*
 * HELD (protocol.h): a REGISTER that needs a parse while a watcher is
 * there may be held, so its registrant is told how long the answer may
 * take (the parse, then the hold's bound) and waits that long if its
 * environment allows. Sent directly and not queued: nothing else is
 * pending on a connection whose request was just read, and a registrant
 * that cannot take it only goes on at its own timeout, as without it.
 */
static void held_tell(struct conn *c)
{
	struct usdt_msg_held m;

	memset(&m, 0, sizeof(m));
	usdt_hdr_fill(&m.hdr, USDT_MSG_HELD, sizeof(m), c->wait_seq);
	m.ms = hold_max_ms < USDT_HOLD_MAX_MS ? hold_max_ms : USDT_HOLD_MAX_MS;
	if (!c->out)
		(void)send(c->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* WATCH: c becomes a watcher (status 0), or is refused. */
static int watch(struct conn *c, uint32_t seq)
{
	unsigned w;

	if (c->uid != 0)
		return -EPERM; /* it would hold every user's programs */
	for (w = 0; w < WATCHERS_MAX && watchers[w]; w++)
		;
	if (w == WATCHERS_MAX)
		return -EBUSY;
	watchers[w] = c;
	if (nwatchers++ == 0)
		hd_board_watched(true);
	c->watcher = true;
	c->wait_seq = seq;
	c->watch_from = last_notice + 1 ? last_notice + 1 : 1;
	c->nsent = 0;
	/* its connection stays: never idle, read by watcher_read */
	if (c->linked)
		conn_unlink(c);
	hd_dbg("pid %d watches new files", (int)c->pid);
	return 0;
}

/*
 * --test-timing (bench/helper/loadtest.sh): each successful answer's time
 * in the daemon by kind, from the connection's accept and from its
 * request's reading to the answer queued. Accept to reading is the
 * client's own send after its connect (its scheduling, on a busy machine);
 * reading to answer is the loop's; the client's round trip minus accept to
 * answer is the wait before the accept (the listen queue: the loop busy,
 * or not scheduled) and the client's wake-up. Printed at exit.
 */
enum { TM_KNOWN, TM_NEW, TM_LIST, TM_KINDS };
static struct {
	uint32_t *us;
	size_t n, cap;
} tm[2][TM_KINDS]; /* [0] from the accept, [1] from the reading */

static void tm_put(int from, int kind, int64_t ns)
{
	int64_t us = (usdt_clock_ns(CLOCK_MONOTONIC) - ns) / 1000;

	if (tm[from][kind].n == tm[from][kind].cap) {
		size_t cap = tm[from][kind].cap ? 2 * tm[from][kind].cap : 1024;
		uint32_t *v =
		    cap <= (1u << 20) ? realloc(tm[from][kind].us, cap * sizeof(*v)) : NULL;

		if (!v)
			return;
		tm[from][kind].us = v;
		tm[from][kind].cap = cap;
	}
	tm[from][kind].us[tm[from][kind].n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static void timing_add(int kind, const struct conn *c, int status)
{
	if (!conn_timing || status < 0 || !c->accepted_ns || !c->read_ns)
		return;
	tm_put(0, kind, c->accepted_ns);
	tm_put(1, kind, c->read_ns);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

void serve_timing_report(void)
{
	static const char *const name[TM_KINDS] = {"REGISTER of a known file",
						   "REGISTER of a new file", "LIST"};
	static const char *const from[2] = {"accept", "request read"};

	for (int f = 0; conn_timing && f < 2; f++)
		for (int k = 0; k < TM_KINDS; k++) {
			uint32_t *v = tm[f][k].us;
			size_t n = tm[f][k].n;

			if (!n)
				continue;
			qsort(v, n, sizeof(*v), cmp_u32);
			hd_info("timing: %s, %s to answer (us): n=%zu p50=%u p90=%u p99=%u max=%u",
				name[k], from[f], n, v[n / 2], v[n * 9 / 10], v[n * 99 / 100],
				v[n - 1]);
			free(v);
			tm[f][k].us = NULL;
			tm[f][k].n = tm[f][k].cap = 0;
		}
}

/* One packet from c: false when the connection is to be closed. */
static bool handle(struct conn *c)
{
	/* Larger than any request, so an oversized one is seen whole enough to refuse. */
	unsigned char raw[128];
	ssize_t len = recv(c->fd, raw, sizeof(raw), MSG_TRUNC | MSG_DONTWAIT);
	struct hd_request rq;
	uint32_t nprobes = 0;
	int status;

	if (len < 0)
		return errno == EAGAIN || errno == EINTR;
	if (len == 0)
		return false; /* the peer closed */
	if (conn_timing)
		c->read_ns = usdt_clock_ns(CLOCK_MONOTONIC);
	conn_touch(c);
	status = hd_msg_decode(raw, (size_t)len, &rq);
	if (status == -EMSGSIZE) {
		hd_dbg("pid %d: a %zd-byte packet: dropped", (int)c->pid, len);
		return false;
	}
	if (status == -EPROTO) {
		struct usdt_msg_hdr h;

		memcpy(&h, raw, sizeof(h));
		hd_dbg("pid %d uid %u: malformed message (%zd bytes, magic 0x%x, version %u, "
		       "type %u, size %u): refused",
		       (int)c->pid, (unsigned)c->uid, len, h.magic, h.version, h.type, h.size);
		c->closing = true;
		conn_reply(c, rq.seq, -EPROTO, 0);
		return conn_flush(c);
	}
	if (!status)
		status = hd_rate_ok(c->uid, c->pid);
	switch (status ? 0 : rq.type) {
	case 0:
		break;
	case USDT_MSG_WATCH:
		status = watch(c, rq.seq);
		break;
	case USDT_MSG_READY:
		/* only a watcher's (watcher_read): a misbehaving client */
		c->closing = true;
		status = -EPROTO;
		break;
	case USDT_MSG_REGISTER:
		status = hd_register(c->pid, c->uid, c->pidfd, rq.addr, &nprobes, c);
		if (status == -EINPROGRESS) {
			/*
			 * A new file is parsed: the answer waits, the connection is
			 * neither idle (no deadline) nor read (its next request would
			 * come before this answer); only its hang-up is watched.
			 */
			c->waiting = true;
			c->wait_seq = rq.seq;
			conn_await(c);
			if (nwatchers)
				held_tell(c);
			return true;
		}
		break;
	case USDT_MSG_UNREGISTER:
		status = hd_unregister(c->pid, c->uid, c->pidfd, rq.addr);
		break;
	default: {
		struct list_ctx l = {c, rq.seq, false};

		if (hd_list_begin(rq.pid, c->uid, c) == -EINPROGRESS) {
			/* Read on the lister lane (list.c): the connection waits as a parse's does.
			 */
			c->waiting = c->listing = true;
			c->wait_seq = rq.seq;
			conn_await(c);
			return true;
		}
		nprobes = (uint32_t)hd_list(rq.pid, c->uid, list_one, &l);
		status = l.failed ? -EFBIG : 0;
		break;
	}
	}
	if (rq.type == USDT_MSG_REGISTER || rq.type == USDT_MSG_LIST)
		timing_add(rq.type == USDT_MSG_LIST ? TM_LIST : TM_KNOWN, c, status);
	if (!conn_reply(c, rq.seq, status, nprobes))
		return false;
	return conn_flush(c);
}

static void answer_registrant(struct conn *c, int status, uint32_t nprobes)
{
	timing_add(TM_NEW, c, status);
	c->waiting = false;
	conn_touch(c);
	/* (flush re-arms EPOLLIN) */
	if (!conn_reply(c, c->wait_seq, status, nprobes) || !conn_flush(c))
		conn_close(c);
}

void serve_list_done(void *cookie, const struct hd_list_entry *e, size_t n, int status)
{
	struct conn *c = cookie;
	struct list_ctx l = {c, c->wait_seq, false};

	for (size_t i = 0; i < n && !status; i++)
		list_one(&e[i], &l);
	if (!status && l.failed)
		status = -EFBIG;
	timing_add(TM_LIST, c, status);
	c->waiting = c->listing = false;
	conn_touch(c);
	/* (flush re-arms EPOLLIN) */
	if (!conn_reply(c, c->wait_seq, status, status ? 0 : (uint32_t)n) || !conn_flush(c))
		conn_close(c);
}

void serve_register_done(void *cookie, int status, uint32_t nprobes, uint32_t hold)
{
	struct conn *c = cookie;

	if (hold && hold_find(hold)) {
		/* still waiting (only its hang-up watched), now for the watchers */
		c->hold = hold;
		c->held_status = status;
		c->held_nprobes = nprobes;
		c->hnext = held;
		held = c;
		return;
	}
	answer_registrant(c, status, nprobes);
}

/* The hold is over (every watcher ready, or gone, or the time is up): its answers go. */
static void hold_end(struct hold *h)
{
	struct hold **hp = &holds;
	struct conn **pp = &held;
	uint32_t n = h->notice;

	while (*hp != h)
		hp = &(*hp)->next;
	*hp = h->next;
	nholds--;
	free(h);
	while (*pp) {
		struct conn *c = *pp;

		if (c->hold != n) {
			pp = &c->hnext;
			continue;
		}
		*pp = c->hnext;
		c->hold = 0;
		answer_registrant(c, c->held_status, c->held_nprobes);
	}
}

/* Watcher w's turn on every hold is over: its bit is cleared, the holds it alone held end. */
static void holds_release(unsigned w)
{
	for (struct hold *h = holds, *next; h; h = next) {
		next = h->next;
		h->pending &= ~(1u << w);
		if (!h->pending)
			hold_end(h);
	}
}

static void watcher_gone(struct conn *c)
{
	unsigned w;

	for (w = 0; w < WATCHERS_MAX && watchers[w] != c; w++)
		;
	c->watcher = false;
	if (w == WATCHERS_MAX)
		return;
	hd_dbg("watcher pid %d gone: never waited on again", (int)c->pid);
	watchers[w] = NULL;
	if (--nwatchers == 0)
		hd_board_watched(false);
	holds_release(w);
}

/* A registrant that went away while held (drti's own timeout passed). */
static void held_unlink(struct conn *c)
{
	struct conn **pp = &held;

	while (*pp && *pp != c)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = c->hnext;
	c->hold = 0;
}

uint32_t serve_hold_begin(pid_t pid, uint64_t maps_dev, uint64_t ino)
{
	struct usdt_msg_notice no;
	struct hold *h;

	if (!nwatchers || nholds >= HOLDS_MAX || !(h = calloc(1, sizeof(*h))))
		return 0;
	if (++last_notice == 0)
		last_notice = 1;
	h->notice = last_notice;
	h->deadline = hd_now_ms() + hold_max_ms;
	memset(&no, 0, sizeof(no));
	no.notice = h->notice;
	no.pid = (int32_t)pid;
	no.dev = (uint64_t)major((dev_t)maps_dev) << 32 | minor((dev_t)maps_dev);
	no.ino = ino;
	for (unsigned w = 0; w < WATCHERS_MAX; w++) {
		struct conn *c = watchers[w];

		if (!c)
			continue;
		usdt_hdr_fill(&no.hdr, USDT_MSG_NOTICE, sizeof(no), c->wait_seq);
		/*
		 * A watcher that does not read its socket is not waited for,
		 * nor is its queue grown: a NOTICE that does not go at once
		 * (its socket is full) drops it.
		 */
		if (!conn_queue(c, &no, sizeof(no)) || !conn_flush(c) || c->outlen) {
			hd_warn("watcher pid %d does not read its notices: dropped", (int)c->pid);
			conn_close(c);
			continue;
		}
		h->pending |= 1u << w;
		c->nsent++;
	}
	if (!h->pending) {
		free(h);
		return 0;
	}
	h->next = NULL;
	{
		struct hold **hp = &holds;

		while (*hp)
			hp = &(*hp)->next;
		*hp = h;
	}
	nholds++;
	hd_dbg("notice %u: pid %d's new file (dev %u:%u ino %" PRIu64 "): held", h->notice,
	       (int)pid, major((dev_t)maps_dev), minor((dev_t)maps_dev), ino);
	return h->notice;
}

/* Holds past their bound end (their watchers stay); returns the next deadline. */
uint64_t serve_holds_expire(uint64_t now)
{
	/* in creation order, all of one length: the first ends first */
	while (holds && holds->deadline <= now) {
		hd_dbg("notice %u: watchers not ready in %u ms: released", holds->notice,
		       hold_max_ms);
		hold_end(holds);
	}
	return holds ? holds->deadline : UINT64_MAX;
}

/*
 * A watcher's packets: READY for a NOTICE it was sent, nothing else. Any
 * other packet, or its hang-up, drops it (false).
 */
static bool watcher_read(struct conn *c)
{
	unsigned w;

	for (w = 0; w < WATCHERS_MAX && watchers[w] != c; w++)
		;
	/* a few at a time: the rest at the next turn (its socket stays readable) */
	for (int k = 0; k < 64; k++) {
		unsigned char raw[128];
		ssize_t len = recv(c->fd, raw, sizeof(raw), MSG_TRUNC | MSG_DONTWAIT);
		struct hd_request rq;

		if (len < 0)
			return errno == EAGAIN || errno == EINTR;
		if (len == 0 || w == WATCHERS_MAX)
			return false;
		if (hd_msg_decode(raw, (size_t)len, &rq) != 0 || rq.type != USDT_MSG_READY ||
		    rq.seq != c->wait_seq || rq.notice - c->watch_from >= c->nsent) {
			hd_warn("watcher pid %d: not a READY for a notice it was sent: dropped",
				(int)c->pid);
			return false;
		}
		for (struct hold *h = holds; h; h = h->next)
			if (h->notice == rq.notice) {
				h->pending &= ~(1u << w);
				if (!h->pending)
					hold_end(h);
				break;
			}
		/* (a hold that is over already: late, and harmless) */
	}
	return true;
}

void serve_conn_closing(struct conn *c)
{
	if (c->watcher)
		watcher_gone(c);
	if (c->hold)
		held_unlink(c);
}

void serve_hold_bound(unsigned ms)
{
	hold_max_ms = ms == 0 || ms > USDT_HOLD_MAX_MS ? USDT_HOLD_MAX_MS : ms;
}

/*
 * Turns shared between uids (issue 33, item 1): a turn of the loop reads
 * at most TURN_PER_UID requests of one uid other than root; its other
 * ready connections keep their packets (epoll reports them again at once,
 * level-triggered) until the next turn. So one user's flood of
 * connections, whose requests cost the most (a process mapping 300 files
 * has 300 lines of maps to read), adds a few requests to another user's
 * wait, not its whole batch of 64.
 */
#define TURN_PER_UID 4
#define TURN_SLOTS 64

static struct {
	uid_t uid;
	uint64_t turn;
	unsigned n;
} served[TURN_SLOTS];
static uint64_t turn_no = 1;

void serve_turn_end(void)
{
	turn_no++;
}

/* Whether uid may have one more request read in this turn (counted). */
static bool turn_take(uid_t uid)
{
	for (unsigned i = 0, h = (unsigned)uid % TURN_SLOTS; i < TURN_SLOTS; i++) {
		unsigned k = (h + i) % TURN_SLOTS;

		if (served[k].turn != turn_no) {
			served[k].uid = uid;
			served[k].turn = turn_no;
			served[k].n = 1;
			return true;
		}
		if (served[k].uid == uid)
			return served[k].n++ < TURN_PER_UID;
	}
	return true; /* (64 uids in one turn: no room to count) */
}

void serve_conn_event(struct conn *c, uint32_t events)
{
	bool keep = true;

	if (c->watcher) {
		if (events & EPOLLOUT)
			keep = conn_flush(c);
		if (keep && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			keep = watcher_read(c);
		if (!keep)
			conn_close(c);
		return;
	}
	if (c->waiting) {
		/* Only a hang-up is watched: the client went away. */
		if (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))
			conn_close(c);
		return;
	}
	if (events & EPOLLOUT)
		keep = conn_flush(c);
	/* (A hang-up without a request is not a request: it is taken whatever the turn.) */
	if (keep && (events & EPOLLIN) && c->uid != 0 && !turn_take(c->uid))
		return;
	if (keep && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		keep = handle(c);
	if (!keep)
		conn_close(c);
}
