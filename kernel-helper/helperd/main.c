// SPDX-License-Identifier: MIT
/*
 * usdtkit-helperd: registers the USDT probes of every process that loads a
 * `dtrace -G` module as tracefs uprobe events `sdt_<provider>/<probe>`, and
 * removes them when the last process mapping the module is gone.
 *
 *   usdtkit-helperd [-f] [--all [--only GLOB]] [--socket PATH] [--state PATH] [--debug]
 *                   [--rescan S] [--sweep S] [--rate N] [--parse-timeout MS]
 *                   [--linger S] [--linger-max N] [--no-board]
 *
 * How it works (the daemon's theory statement, with the whole design, is
 * kernel-helper/README.md, "The daemon"; this is main.c's part):
 *
 * - One single-threaded epoll loop over: the listening SOCK_SEQPACKET socket
 *   (ours, or systemd's through LISTEN_FDS), a signalfd (SIGTERM/SIGINT: clean
 *   stop), the connections, one pidfd per registered process (readable
 *   when it exits), and the socket of each parser worker at work. No locks,
 *   no threads: the per-process path is a /proc read, an open and an fstat,
 *   and a hash lookup; nothing in the loop waits for a worker.
 * - Work no client waits for is done in the background, a step at a time,
 *   when nothing else is ready and no parse runs (or after 10 ms under a
 *   steady stream of clients): forking the spare worker (worker.c), the
 *   /proc passes that retire files (retire.c; a few processes' maps per
 *   step), and writing the state file. So an answer waits for one step at
 *   most, never for a whole scan of /proc.
 * - A connection's caller is who the kernel says it is: SO_PEERCRED (pid,
 *   uid) and SO_PEERPIDFD (a pidfd on that very process, so a pid recycled
 *   between connect and our reading /proc is detected: after reading its
 *   maps we check the pidfd has not exited). Messages are taken only when
 *   exactly as protocol.h defines them (size = packet length = the type's
 *   size, magic, version, known type); anything else gets -EPROTO and the
 *   connection is closed. Connections idle for more than 1 s are closed; at
 *   most 1024 are open, at most 64 per uid. At a cap the newcomer wins: the
 *   oldest idle connection (of its uid, for the per-uid cap) is closed for
 *   it (victim()), so a process holding connections locks out neither other
 *   users nor the other processes of its own uid, and exhausts neither fds
 *   nor memory.
 * - REGISTER resolves the address in the caller's own maps (users.c,
 *   proc.c); a known file only gains a user, answered at once. A new file is
 *   parsed in a sandboxed worker (worker.c: the spare, forked ahead, when
 *   there is one) whose socket joins the epoll set:
 *   the answer is deferred until the parse ends (hd_register_done), the
 *   connection meanwhile neither read nor expired, only its hang-up watched
 *   (hd_register_cancel). At most 16 workers run at once, 4 per uid; more
 *   new files wait in a queue (queue.c). UNREGISTER drops one
 *   reference. LIST reads /proc and answers one LIST_ENTRY per (process,
 *   registered file it maps) the caller may see (root: all; others: their
 *   own uid's), then the REPLY.
 * - Off the hot path (kernel-helper/README.md, "Registration off the hot
 *   path"): every registered file is published on the board (board.c,
 *   SOCKET.known), so a process of a known file sends nothing; fork
 *   children and exits send nothing either. The daemon therefore knows only
 *   the processes that asked: when a file's last known user goes, its
 *   events linger (--linger, default 60 s; at most --linger-max, 256, files
 *   at once), then the file is withdrawn from the board, /proc is read (in
 *   background steps), and the processes still mapping it are adopted; only
 *   a file nobody maps loses its events. --linger 0 does that at once. --no-board publishes
 *   nothing: every process asks, as before the board (debugging, and the
 *   tests whose subject is the REGISTER path itself).
 * - Holds (protocol.h, WATCH): a root client may watch new files (at most
 *   WATCHERS_MAX at once). When a REGISTER's parse creates a file's events,
 *   each watcher gets a NOTICE and the registrants' answers wait, in the
 *   held list, until every watcher answered READY, or USDT_HOLD_MAX_MS
 *   passed, or the watcher went; a watcher is never waited on otherwise: it
 *   is sent to without blocking and dropped when its socket is full or it
 *   says anything but a READY for a notice it was sent. A registration of
 *   a known file, answered at once, is never held.
 * - Per-uid limits (root is exempt from the quotas, not from validation):
 *   request rate, all types (token bucket, --rate, default 10000/s, burst 2x), new
 *   modules (parses) per second (default 20/s), modules (256) and probe
 *   sites (65536) per uid, processes watched (--max-procs-per-uid, 4096)
 *   and descriptors held for its registrations (--max-fds-per-uid, a
 *   quarter of the descriptor limit): over those, REGISTER is -EDQUOT.
 *   Out of descriptors altogether, accept() is answered with a reserve
 *   descriptor (shed()), never retried in a spin.
 * - Start-up: a previous instance's state file says which events were ours;
 *   /proc is scanned for processes mapping a -G module (a `.note.usdtkit`
 *   section; with --all any `.note.stapsdt`), which are registered again
 *   (their existing events adopted), and our old events nobody maps any more
 *   are removed. Without --all only processes whose environment names our
 *   socket (or none, for the default socket) are taken: they are the ones
 *   whose drti talks to us, so daemons on private sockets (tests) never
 *   share a process. With --all, /proc is rescanned every --rescan seconds
 *   (default 10) for new processes; per (dev, ino) a file is checked once.
 *   --only GLOB narrows what --all adds to files mapped at paths matching
 *   GLOB (fnmatch(3): every file under /opt/app, say): an operator's scope, and what lets
 *   a test exercise --all without touching the rest of the machine. The
 *   start-up scan parses in line (before serving); the --rescan's new files
 *   are parsed as a REGISTER's are, asynchronously.
 * - Without a usable tracefs (not mounted, read-only, no uprobe_events) the
 *   daemon starts and serves: REGISTER is answered with the reason's errno,
 *   the log says once what is wrong, nothing is written, and tracefs is
 *   tried again on demand (state.c, hd_tracefs_ready).
 * - exec: a pidfd does not fire when its process execs; once per --sweep
 *   seconds (default 30) every registered process's maps are read again and
 *   modules it no longer maps are dropped (scan.c).
 * - SIGTERM/SIGINT: every event we created is removed (EBUSY ones are left
 *   and stay in the state file for the next start); SIGKILL leaves them for
 *   the next start to adopt or remove.
 * - Test-only options (not in --help; kernel-helper/README.md):
 *   --test-worker-delay MS[:GLOB] makes the worker sleep first (a hung
 *   parser), for files mapped at paths matching GLOB if given;
 *   --test-no-seccomp runs the worker without its seccomp filter and
 *   address-space limit, which valgrind cannot run under;
 *   --test-hold-ms MS bounds a hold (WATCH) at MS instead of
 *   USDT_HOLD_MAX_MS, so that a test sees the bound in a second;
 *   --test-crash-after N makes the daemon SIGKILL itself right after its
 *   N-th write to uprobe_events (tests/crash/: a crash at a chosen point of
 *   a registration or a removal). Only the command line sets them, that is
 *   whoever starts the daemon (root); nothing a client sends can.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "helperd.h"
#include "protocol.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define CONN_IDLE_MS 1000
#define CONN_MAX 1024
#define CONN_PER_UID_MAX 64
#define OUT_MAX (16u << 20)

struct conn {
	enum hd_tag tag; /* HD_TAG_CONN */
	struct conn *prev, *next;
	int fd, pidfd;
	pid_t pid;
	uid_t uid;
	uint64_t deadline;
	unsigned char *out; /* queued packets: u32 length + bytes each */
	size_t outlen, outpos;
	bool closing; /* close once the queue is sent */
	bool linked;  /* in the idle list (not while a REGISTER waits for its parse) */
	bool waiting; /* a REGISTER waits for its parse: answered by hd_register_done */
	uint32_t wait_seq;
	/* the parse is done, the answer waits for the watchers (see "holds") */
	uint32_t hold; /* the NOTICE's number; 0: not held */
	int held_status;
	uint32_t held_nprobes;
	struct conn *hnext;  /* in the held list */
	bool watcher;	     /* sent WATCH: in watchers[], never idle */
	uint32_t watch_from; /* the first NOTICE it was sent */
	uint32_t nsent;	     /* NOTICEs sent: watch_from .. watch_from + nsent - 1 */
	uint64_t born;	     /* the loop iteration that accepted it */
};

struct tagged {
	enum hd_tag tag;
};

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

static int epfd;
/* The epoll batch being dispatched: objects freed meanwhile are struck out of it. */
static struct epoll_event *batch;
static int batch_n, batch_i;
static struct conn *conns_head, *conns_tail; /* in deadline order */
static unsigned nconns;
static uint64_t loop_iter;

/* Under a steady stream of clients, background work still gets a step this often. */
#define BACKGROUND_STARVE_MS 10

/* Whether there is work no client waits for: the spare worker, retirements, the state file. */
static bool background_pending(void)
{
	return hd_parse_spare_missing(&hd_cfg.worker) || hd_registry_background_pending();
}

/* One step: the spare first (the next new file's parse waits for it), then the rest. */
static void background_step(void)
{
	if (hd_parse_spare_missing(&hd_cfg.worker))
		hd_parse_spare(&hd_cfg.worker);
	else
		hd_registry_background();
}
/* --test-crash-after: writes to uprobe_events left before the daemon kills itself. */
static unsigned long crash_after;

static void crash_hook(void)
{
	if (--crash_after == 0)
		raise(SIGKILL);
}

static struct tagged listen_tag = {HD_TAG_LISTEN}, signal_tag = {HD_TAG_SIGNAL},
		     none_tag = {HD_TAG_NONE};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: usdtkit-helperd [-f] [--all [--only GLOB]] [--socket PATH] [--state PATH]\n"
		"                       [--debug]\n"
		"                       [--rescan SECONDS] [--sweep SECONDS] [--rate N]\n"
		"                       [--parse-timeout MS] [--linger SECONDS] [--linger-max N]\n"
		"                       [--no-board]\n"
		"                       [--max-procs-per-uid N] [--max-fds-per-uid N]\n");
}

void hd_forget(void *obj)
{
	for (int k = batch_i + 1; k < batch_n; k++)
		if (batch[k].data.ptr == obj) {
			batch[k].data.ptr = &none_tag;
			batch[k].events = 0;
		}
}

/* --- connections --- */

static void conn_unlink(struct conn *c)
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

static void conn_touch(struct conn *c)
{
	c->deadline = hd_now_ms() + CONN_IDLE_MS;
	if (c->linked)
		conn_unlink(c);
	conn_append(c);
}

static void watcher_gone(struct conn *c);
static void held_unlink(struct conn *c);

static void conn_close(struct conn *c)
{
	hd_forget(c);
	if (c->watcher)
		watcher_gone(c);
	if (c->hold)
		held_unlink(c);
	if (c->waiting)
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
 * At a cap the newcomer wins: the connection closed instead is the oldest
 * idle one (of the newcomer's uid for the per-uid cap, of anyone for the
 * global one). Idle means: in the idle list (not waiting for a parse), no
 * packet queued to read, and accepted in an earlier loop iteration, so it
 * has had its turn to be read (accepts are done after the batch's reads).
 * drti sends its request as soon as it connects, so an honest client is
 * never the oldest idle connection for long; one that holds connections
 * only ever loses its own oldest. NULL: nobody to close (the newcomer is).
 */
static struct conn *victim(bool any_uid, uid_t uid)
{
	for (struct conn *c = conns_head; c; c = c->next) {
		int queued = 0;

		if ((!any_uid && c->uid != uid) || c->born >= loop_iter)
			continue;
		if (ioctl(c->fd, FIONREAD, &queued) == 0 && queued > 0)
			continue;
		return c;
	}
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

static void listen_resume(uint64_t now)
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
static bool accept_one(int lfd)
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

static bool queue(struct conn *c, const void *pkt, size_t len)
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
static bool flush(struct conn *c)
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

static bool reply(struct conn *c, uint32_t seq, int status, uint32_t nprobes)
{
	struct usdt_msg_reply r;

	memset(&r, 0, sizeof(r));
	usdt_hdr_fill(&r.hdr, USDT_MSG_REPLY, sizeof(r), seq);
	r.status = status;
	r.nprobes = nprobes;
	return queue(c, &r, sizeof(r));
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
	if (!l->failed && !queue(l->c, buf, size))
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
	nwatchers++;
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
		reply(c, rq.seq, -EPROTO, 0);
		return flush(c);
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
			struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = c};

			c->waiting = true;
			c->wait_seq = rq.seq;
			conn_unlink(c);
			epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
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

		nprobes = (uint32_t)hd_list(rq.pid, c->uid, list_one, &l);
		status = l.failed ? -EFBIG : 0;
		break;
	}
	}
	if (!reply(c, rq.seq, status, nprobes))
		return false;
	return flush(c);
}

static void answer_registrant(struct conn *c, int status, uint32_t nprobes)
{
	c->waiting = false;
	conn_touch(c);
	/* (flush re-arms EPOLLIN) */
	if (!reply(c, c->wait_seq, status, nprobes) || !flush(c))
		conn_close(c);
}

void hd_register_done(void *cookie, int status, uint32_t nprobes, uint32_t hold)
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
	nwatchers--;
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

uint32_t hd_hold_begin(pid_t pid, uint64_t maps_dev, uint64_t ino)
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
		if (!queue(c, &no, sizeof(no)) || !flush(c) || c->outlen) {
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
static uint64_t holds_expire(uint64_t now)
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

static void expire_conns(uint64_t now)
{
	while (conns_head && conns_head->deadline <= now) {
		hd_dbg("pid %d: connection idle for %d ms: closed", (int)conns_head->pid,
		       CONN_IDLE_MS);
		conn_close(conns_head);
	}
}

/* --- set-up --- */

/*
 * The socket file this daemon bound itself (not one systemd passed: that
 * one is systemd's to keep), by identity: at exit it is removed only if the
 * path still names it, so a stopped daemon leaves no stale socket behind
 * (drti would pay a refused connect for it at every start) and never
 * removes a successor's.
 */
static struct {
	bool ours;
	dev_t dev;
	ino_t ino;
} own_socket;

static void own_socket_remove(const char *path)
{
	struct stat st;

	if (own_socket.ours && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == own_socket.dev && st.st_ino == own_socket.ino)
		unlink(path);
	own_socket.ours = false;
}

static int listen_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *lfds = getenv("LISTEN_FDS"), *lpid = getenv("LISTEN_PID");
	int fd, ret;

	if (lfds && lpid && atoi(lpid) == (int)getpid() && atoi(lfds) >= 1) {
		/* systemd socket activation: our socket is fd 3. */
		fcntl(3, F_SETFD, FD_CLOEXEC);
		fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDNAMES");
		hd_info("listening on the socket systemd passed");
		return 3;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		hd_err("%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		/* A live daemon answers a connect; a stale socket file does not. */
		int probe;
		struct stat st;

		if (errno != EADDRINUSE)
			goto err;
		probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			close(fd);
			hd_err("%s: another daemon is listening there", path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
			/* Not ours to remove: somebody's file, maybe a mistake in --socket. */
			close(fd);
			hd_err("%s exists and is not a socket (%s): refusing to start. Remove or "
			       "rename it if it is a leftover, or give the daemon another path "
			       "(--socket, USDTKIT_HELPER_SOCKET); it is left untouched",
			       path,
			       S_ISREG(st.st_mode)   ? "a regular file"
			       : S_ISDIR(st.st_mode) ? "a directory"
						     : "not a socket");
			return -EADDRINUSE;
		}
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			goto err;
	}
	{
		struct stat st;

		if (lstat(path, &st) == 0) {
			own_socket.ours = true;
			own_socket.dev = st.st_dev;
			own_socket.ino = st.st_ino;
		}
	}
	/* Any user's processes register: the socket is 0666, the checks are ours. */
	if (chmod(path, 0666) != 0 || listen(fd, SOMAXCONN) != 0)
		goto err;
	hd_info("listening on %s", path);
	return fd;
err:
	ret = -errno;
	hd_err("%s: %s", path, strerror(errno));
	close(fd);
	own_socket_remove(path);
	return ret;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"only", required_argument, NULL, 'o'},
	    {"socket", required_argument, NULL, 's'},
	    {"state", required_argument, NULL, 'S'},
	    {"debug", no_argument, NULL, 'd'},
	    {"rescan", required_argument, NULL, 'r'},
	    {"sweep", required_argument, NULL, 'w'},
	    {"rate", required_argument, NULL, 'R'},
	    {"parse-timeout", required_argument, NULL, 'P'},
	    {"linger", required_argument, NULL, 'L'},
	    {"linger-max", required_argument, NULL, 'M'},
	    {"no-board", no_argument, NULL, 'B'},
	    {"max-procs-per-uid", required_argument, NULL, 'U'},
	    {"max-fds-per-uid", required_argument, NULL, 'F'},
	    {"test-worker-delay", required_argument, NULL, 'D'},
	    {"test-no-seccomp", no_argument, NULL, 'V'},
	    {"test-crash-after", required_argument, NULL, 'K'},
	    {"test-hold-ms", required_argument, NULL, 'H'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct usdt_tracefs t = {.fd = -1};
	char state[4200];
	bool foreground = false, stop = false, no_board = false;
	uint64_t next_tick, next_rescan, next_parse = UINT64_MAX, next_hold = UINT64_MAX;
	uint64_t last_background = 0;
	const char *env = getenv(USDT_HELPER_SOCKET_ENV);
	sigset_t mask;
	int opt, lfd, sfd;
	struct epoll_event ev;

	hd_cfg.socket_path = env && env[0] ? env : USDT_HELPER_SOCKET_PATH;
	hd_cfg.rescan_s = 10;
	hd_cfg.sweep_s = 30;
	hd_cfg.linger_s = 60;
	hd_cfg.linger_max = 256;
	hd_cfg.rate_per_s = 10000;
	hd_cfg.new_modules_per_s = 20;
	hd_cfg.max_modules_per_uid = 256;
	hd_cfg.max_probes_per_uid = 65536;
	hd_cfg.max_procs_per_uid = 4096;
	hd_cfg.max_fds_per_uid = 0; /* a quarter of the descriptor limit (below) */
	hd_cfg.worker.timeout_ms = 5000;
	hd_cfg.worker.cpu_seconds = 5;
	hd_cfg.worker.address_space = 2ull << 30;
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			foreground = true;
			break;
		case 'a':
			hd_cfg.all = true;
			break;
		case 'o':
			hd_cfg.only = optarg;
			break;
		case 's':
			hd_cfg.socket_path = optarg;
			break;
		case 'S':
			hd_cfg.state_path = optarg;
			break;
		case 'd':
			hd_debug = true;
			break;
		case 'r':
			hd_cfg.rescan_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			hd_cfg.sweep_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'R':
			hd_cfg.rate_per_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'P':
			hd_cfg.worker.timeout_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'B':
			no_board = true;
			break;
		case 'L':
		case 'M':
		case 'U':
		case 'F': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			const char *name = opt == 'L'	? "linger"
					   : opt == 'M' ? "linger-max"
					   : opt == 'U' ? "max-procs-per-uid"
							: "max-fds-per-uid";

			if (*end || end == optarg || v > 86400ul * 365 ||
			    ((opt == 'U' || opt == 'F') && v == 0)) {
				fprintf(stderr,
					"usdtkit-helperd: --%s wants a number%s, not '%s'\n", name,
					opt == 'U' || opt == 'F' ? " above 0" : "", optarg);
				return 2;
			}
			*(opt == 'L'   ? &hd_cfg.linger_s
			  : opt == 'M' ? &hd_cfg.linger_max
			  : opt == 'U' ? &hd_cfg.max_procs_per_uid
				       : &hd_cfg.max_fds_per_uid) = (unsigned)v;
			break;
		}
		case 'D': { /* tests only: MS[:GLOB], a parser that hangs (on files matching GLOB)
			     */
			char *end;

			hd_cfg.worker.test_delay_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end == ':')
				hd_cfg.worker.test_delay_glob = end + 1;
			break;
		}
		case 'V': /* tests only: the worker without its seccomp filter (valgrind) */
			hd_cfg.worker.test_no_seccomp = true;
			break;
		case 'H': /* tests only: the bound of a hold (at most USDT_HOLD_MAX_MS) */
			hold_max_ms = (unsigned)strtoul(optarg, NULL, 10);
			if (hold_max_ms == 0 || hold_max_ms > USDT_HOLD_MAX_MS)
				hold_max_ms = USDT_HOLD_MAX_MS;
			break;
		case 'K': /* tests only: SIGKILL after the N-th write to uprobe_events */
			crash_after = strtoul(optarg, NULL, 10);
			if (crash_after)
				usdt_tracefs_write_hook = crash_hook;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || hd_cfg.socket_path[0] != '/' || hd_cfg.rate_per_s == 0 ||
	    (hd_cfg.only && !hd_cfg.all) || hd_cfg.worker.timeout_ms == 0) {
		usage(stderr);
		return 2;
	}
	if (!hd_cfg.state_path) {
		/* Beside the socket: daemons on different sockets never share a state file. */
		if (strcmp(hd_cfg.socket_path, USDT_HELPER_SOCKET_PATH) == 0)
			snprintf(state, sizeof(state), "/run/usdtkit/helperd.state");
		else
			snprintf(state, sizeof(state), "%s.state", hd_cfg.socket_path);
		hd_cfg.state_path = state;
	}
	hd_log_init(foreground);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (!hd_cfg.max_fds_per_uid) {
		struct rlimit rl;

		hd_cfg.max_fds_per_uid = 64;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 > 64)
			hd_cfg.max_fds_per_uid =
			    rl.rlim_cur / 4 > 1u << 30 ? 1u << 30 : (unsigned)(rl.rlim_cur / 4);
	}
	/* tracefs is opened by the registry (hd_tracefs_ready): the daemon serves without it. */
	if (hd_dirs_prepare(hd_cfg.socket_path, hd_cfg.state_path) != 0 ||
	    (lfd = listen_socket(hd_cfg.socket_path)) < 0)
		return 1;
	/*
	 * The descriptor accept() takes back when there is none left (see
	 * shed()); after the socket, so that a daemon started by hand has its
	 * socket at descriptor 3, as systemd's is.
	 */
	reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!foreground && daemonize() != 0)
		return 1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || epfd < 0) {
		hd_err("signalfd/epoll: %s", strerror(errno));
		own_socket_remove(hd_cfg.socket_path);
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = &listen_tag;
	epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
	listen_fd = lfd;
	ev.data.ptr = &signal_tag;
	epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);
	hd_registry_init(&t, epfd);
	/*
	 * Before recovery, which publishes what it registers, and before its
	 * /proc scan: a process that found a crashed predecessor's board (no
	 * liveness lock: it asks nothing, core/protocol.h) read it before this
	 * one replaced it, so had mapped its file already, and the scan finds it.
	 */
	if (!no_board && (opt = hd_board_open(hd_cfg.socket_path)) != 0)
		hd_warn("cannot create the board %s%s: %s (going on: every process asks)",
			hd_cfg.socket_path, USDT_BOARD_SUFFIX, strerror(-opt));
	/* Recovery before serving: a restart answers only once it knows its events. */
	hd_recover();
	hd_info("ready%s", hd_cfg.all ? " (--all)" : "");
	next_tick = hd_now_ms() + 1000;
	next_rescan = hd_now_ms() + hd_cfg.rescan_s * 1000ull;
	while (!stop) {
		struct epoll_event evs[64];
		uint64_t now = hd_now_ms(), wake = next_tick;
		bool accept_now = false, background = background_pending();
		/*
		 * Background work is done when nothing else is ready, except while
		 * a parse runs (its answer is awaited): then only once it has
		 * waited BACKGROUND_STARVE_MS, as under a steady stream of clients.
		 */
		bool eager = background && hd_parses_running() == 0;
		int n;

		if (conns_head && conns_head->deadline < wake)
			wake = conns_head->deadline;
		if (next_parse < wake)
			wake = next_parse;
		if (next_hold < wake)
			wake = next_hold;
		if (listen_paused_until && listen_paused_until < wake)
			wake = listen_paused_until;
		if (eager)
			wake = now;
		else if (background && last_background + BACKGROUND_STARVE_MS < wake)
			wake = last_background + BACKGROUND_STARVE_MS;
		n = epoll_wait(epfd, evs, 64, wake > now ? (int)(wake - now) : 0);
		if (n < 0 && errno != EINTR) {
			hd_err("epoll_wait: %s", strerror(errno));
			break;
		}
		batch = evs;
		batch_n = n;
		for (batch_i = 0; batch_i < n; batch_i++) {
			struct tagged *tg = evs[batch_i].data.ptr;
			uint32_t events = evs[batch_i].events;

			switch (tg->tag) {
			case HD_TAG_LISTEN:
				/* After the batch's reads: see victim(). */
				accept_now = true;
				break;
			case HD_TAG_SIGNAL: {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si))
					if (si.ssi_signo != SIGHUP)
						stop = true;
				break;
			}
			case HD_TAG_CONN: {
				struct conn *c = (struct conn *)tg;
				bool keep = true;

				if (c->watcher) {
					if (events & EPOLLOUT)
						keep = flush(c);
					if (keep && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
						keep = watcher_read(c);
					if (!keep)
						conn_close(c);
					break;
				}
				if (c->waiting) {
					/* Only a hang-up is watched: the client went away. */
					if (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))
						conn_close(c);
					break;
				}
				if (events & EPOLLOUT)
					keep = flush(c);
				if (keep && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
					keep = handle(c);
				if (!keep)
					conn_close(c);
				break;
			}
			case HD_TAG_PROC:
				hd_process_exited(tg);
				break;
			case HD_TAG_PARSE:
				hd_parse_event(tg);
				break;
			case HD_TAG_NONE:
				break;
			}
		}
		batch_n = 0;
		if (accept_now)
			for (int k = 0; k < 64 && accept_one(lfd); k++)
				;
		loop_iter++;
		now = hd_now_ms();
		listen_resume(now);
		/* Idle, or held back long enough: one step of what nobody waits for. */
		if (background &&
		    ((eager && n == 0) || now - last_background >= BACKGROUND_STARVE_MS)) {
			last_background = now;
			background_step();
		}
		expire_conns(now);
		next_hold = holds_expire(now);
		next_parse = hd_parses_expire(now);
		if (now >= next_tick) {
			hd_tick(now);
			next_tick = now + 1000;
		}
		if (hd_cfg.all && hd_cfg.rescan_s && now >= next_rescan) {
			hd_rescan();
			next_rescan = now + hd_cfg.rescan_s * 1000ull;
		}
	}
	hd_info("stopping: removing the events this daemon created");
	/*
	 * Before anything else: a process starting from now on finds no socket
	 * and pays one access(), not a connect nobody will answer. (Was
	 * `lfd != 3`, which also kept a socket we bound ourselves whenever the
	 * daemon was started with only 0, 1 and 2 open: by hand.)
	 */
	own_socket_remove(hd_cfg.socket_path);
	while (conns_head)
		conn_close(conns_head);
	/* First: a process starting now must not skip a registration we undo. */
	hd_board_close();
	hd_registry_shutdown();
	hd_registry_flush();
	hd_parse_spare_stop();
	usdt_tracefs_close(&t);
	return 0;
}
