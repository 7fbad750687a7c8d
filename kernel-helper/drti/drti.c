/* SPDX-License-Identifier: MIT */
/*
 * drti: the registration constructor compiled into every `dtrace -G` object.
 *
 * `dtrace -G` pastes this file (with core/protocol.h inlined in place of its
 * #include, see kernel-helper/embed.py) at the end of the C source it
 * generates for the provider object and compiles it with the target's
 * compiler and the user's CFLAGS, so one copy lives in each executable or
 * shared library that links a -G object. Before this file the generated
 * source defines
 *
 *   USDT_DRTI_NOTE   the address of this module's own metadata note
 *                    (.note.usdtkit, see core/METADATA-NOTE.md).
 *
 * That address is all the helper daemon (usdtkit-helperd) needs from us: it
 * takes the caller's identity from the socket (SO_PEERCRED), finds the module
 * by looking the address up in the caller's /proc/PID/maps, and reads the
 * notes from the file that is really mapped there. Nothing the process says
 * is trusted beyond it. The conversation is core/protocol.h: one
 * SOCK_SEQPACKET connection per request, REGISTER or UNREGISTER carrying the
 * address, one REPLY back.
 *
 * When it talks (the cost model is in kernel-helper/README.md, "Registration
 * off the hot path"):
 *   - load (constructor: program start, or dlopen). No socket file (no
 *     daemon installed): one access(), nothing else. Else, if the daemon's
 *     board (protocol.h) lists the file mapped at our note's address, as
 *     PROCMAP_QUERY names it (device, inode, path), its events exist
 *     already: nothing is sent, no round trip (about 4 system calls).
 *     A board whose daemon is gone (no liveness lock: a crashed daemon's,
 *     its socket left behind) sends nothing either: the connection would be
 *     refused, and the next daemon finds us by its start-up scan.
 *     Else REGISTER, and wait for the REPLY so that the probes exist before
 *     the program goes on (a first-seen file);
 *   - fork child: nothing. The child maps the same file, whose events the
 *     kernel applies to it already; the daemon finds such processes by
 *     reading /proc when it needs to know them (a LIST, or before it would
 *     remove the file's events), so a fork costs no message;
 *   - unload (destructor), only when this module sent a REGISTER: at
 *     dlclose UNREGISTER and wait for the REPLY, so that an immediate
 *     dlopen of the same library cannot overtake it; at exit nothing: an
 *     exiting process must not be delayed, and the daemon sees the exit on
 *     its pidfd. Which of the two it is: an atexit handler registered by
 *     the constructor runs before the destructors at exit (exit handlers
 *     run in reverse order of registration, and the one that runs the
 *     destructors, ld.so's _dl_fini or a static program's call_fini, was
 *     registered before main), but after them at dlclose (__cxa_finalize
 *     runs after the module's fini array), so it sets a flag the destructor
 *     reads. exec runs no destructor; the daemon sees that too.
 *
 * The rules it keeps, because it runs inside every traced program
 * (docs/ARCHITECTURE.md, invariant 2: it must not crash, hang, or change the
 * program's behaviour):
 *   - bounded: every wait is a poll() against one deadline per request,
 *     USDTKIT_HELPER_TIMEOUT_MS (default 100, at most 5000, 0 = send and do
 *     not wait). One thing moves it: when root runs a tracer with retained
 *     enablings (dtrace -Z) and this registration needs the daemon's parse,
 *     the daemon says HELD (core/protocol.h) and the deadline moves to the
 *     HELD's `ms` from then, at most USDTKIT_HELPER_HOLD_MS (default 2000,
 *     at most 5000, 0 = never), once per request: the program's first
 *     firings then reach the tracer, as DTrace's would. A HELD counts
 *     only from a peer whose SO_PEERCRED uid (the listening socket's
 *     creator) is 0 or this program's effective uid; from anyone else the
 *     request ends at once, as with no daemon. Root: a squatter on the
 *     socket path (a USDTKIT_HELPER_SOCKET in a directory others can write,
 *     a container's bind mount) must not delay every probed program's
 *     start (issue 33, item 4). Our own uid: such a peer can stop or slow
 *     this program anyway (same uid: signals, ptrace), so trusting it gives
 *     nothing away, and a daemon a user runs for its own programs (tests,
 *     a developer's non-root daemon) keeps its holds. The effective uid,
 *     not the real one: a set-user-ID program does not trust its caller.
 *     The check costs one getsockopt, made only when a HELD arrives.
 *     The socket is non-blocking from socket() on, so a daemon whose
 *     listen backlog is full (or that is SIGSTOPped) costs at most the
 *     deadline, never a blocked connect() or send(). A connection the
 *     daemon sheds (full backlog, closed unread), and a request it refuses
 *     for now (-EAGAIN: the user's share of the parse queue, or a rate,
 *     full), is retried with backoff within the same deadline;
 *   - silent: any failure (no socket, refused, timeout, garbage) just leaves
 *     the module unregistered. With USDTKIT_DEBUG=1 (or DTrace's
 *     DTRACE_DOF_INIT_DEBUG) each action prints one line to stderr with a
 *     single write(2); otherwise nothing is ever printed;
 *   - harmless: errno is preserved; every descriptor is SOCK_CLOEXEC and
 *     closed before returning; sends use MSG_NOSIGNAL (never SIGPIPE);
 *     EINTR is retried against the same deadline;
 *   - small: no malloc, no stdio, no locks, no libc beyond system call
 *     wrappers; the destructor uses only async-signal-safe calls (access,
 *     socket, connect, send, recv, poll, close, clock_gettime, write). With
 *     no daemon (no socket file) a load costs one access() and no socket at
 *     all. After a REGISTER the constructor also calls atexit, once, from
 *     the ordinary loader context;
 *   - off switch: USDTKIT_DISABLE (set, non-empty, not "0") or
 *     DTRACE_DOF_INIT_DISABLE (set at all) turns everything off. The
 *     environment is read in the constructor only (DTrace's tst.corruptenv:
 *     a program may clobber environ later).
 *     A set-user-ID program (AT_SECURE) ignores the socket, timeout and
 *     debug variables: they would leak its addresses to its caller;
 *   - every name here is static: several -G objects in one program, or in
 *     one link, each carry their own copy without colliding (each then
 *     registers the same module: the daemon keeps one registration per file).
 *
 * It is written in plain C89 plus GNU attributes because it is compiled with
 * the user's CFLAGS (which may ask for -std=c89 -pedantic -Werror, -m32, or
 * another target). _GNU_SOURCE is defined, before the first #include of the
 * generated source, so that a strict -std= still declares the POSIX calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../core/protocol.h"

#ifdef USDT_DRTI_LIBRARY
/*
 * Built once more, into libusdtkit-runtime (drti_lib.h, runtime/README.md):
 * there the module is a runtime provider's object, one of many, and its
 * note's address is an argument of each call instead of a constant.
 */
#include <drti_lib.h>
static const void *usdt_drti_lib_note;
#define USDT_DRTI_NOTE usdt_drti_lib_note
#endif

/* environ: declared by <unistd.h> under _GNU_SOURCE. */

/* What the constructor found in the environment (read once, see above). */
static int usdt_drti_enabled;
static int usdt_drti_debug_on;
static int usdt_drti_timeout_ms = USDT_HELPER_TIMEOUT_DEFAULT_MS;
static int usdt_drti_hold_ms = USDT_HELPER_HOLD_DEFAULT_MS;
static struct sockaddr_un usdt_drti_sun;
static socklen_t usdt_drti_sun_len;
/* The daemon's board: the socket path + USDT_BOARD_SUFFIX. */
static char usdt_drti_board[sizeof(usdt_drti_sun.sun_path) + sizeof(USDT_BOARD_SUFFIX)];

/* REGISTER reached the daemon, so the destructor owes it an UNREGISTER. */
static int usdt_drti_registered;
#ifndef USDT_DRTI_LIBRARY
/* Set by the atexit handler: the destructor runs at exit, not dlclose. */
static int usdt_drti_exiting;
#endif
static uint32_t usdt_drti_seq;

/* The value of environment variable `name`, or 0; scans environ directly. */
static const char *usdt_drti_getenv(const char *name)
{
	char **e;

	if (!environ)
		return 0;
	for (e = environ; *e; e++) {
		const char *s = *e, *n = name;

		while (*n && *s == *n) {
			s++;
			n++;
		}
		if (!*n && *s == '=')
			return s + 1;
	}
	return 0;
}

static int usdt_drti_flag(const char *name)
{
	const char *v = usdt_drti_getenv(name);

	return v && v[0] && !(v[0] == '0' && v[1] == '\0');
}

/* A debug line under construction: fixed buffer, silently truncated. */
struct usdt_drti_line {
	char buf[320];
	unsigned len;
};

static void usdt_drti_put(struct usdt_drti_line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void usdt_drti_put_num(struct usdt_drti_line *l, unsigned long v)
{
	char d[24];
	unsigned n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = d[--n];
}

static void usdt_drti_put_errno(struct usdt_drti_line *l, int e)
{
	/* strerror() is neither async-signal-safe nor stable: names of the likely ones. */
	/* clang-format off */
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{ ENOENT, "ENOENT" }, { ECONNREFUSED, "ECONNREFUSED" }, { EACCES, "EACCES" },
		{ EAGAIN, "EAGAIN" }, { EPERM, "EPERM" }, { EPROTO, "EPROTO" },
		{ EPROTOTYPE, "EPROTOTYPE" }, { ENOTSOCK, "ENOTSOCK" }, { EPIPE, "EPIPE" },
		{ ECONNRESET, "ECONNRESET" }, { EINVAL, "EINVAL" }, { ENOTDIR, "ENOTDIR" },
		{ EMFILE, "EMFILE" }, { ENOMEM, "ENOMEM" }, { ESRCH, "ESRCH" },
	};
	/* clang-format on */
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].e == e) {
			usdt_drti_put(l, names[i].name);
			return;
		}
	}
	usdt_drti_put(l, "errno ");
	usdt_drti_put_num(l, (unsigned long)(e < 0 ? -e : e));
}

static void usdt_drti_put_hex(struct usdt_drti_line *l, unsigned long a)
{
	unsigned k;

	usdt_drti_put(l, "0x");
	for (k = sizeof(a) * 2; k-- > 0 && l->len < sizeof(l->buf) - 1;)
		l->buf[l->len++] = "0123456789abcdef"[(a >> (k * 4)) & 0xf];
}

static void usdt_drti_emit(struct usdt_drti_line *l)
{
	ssize_t ignored;

	l->buf[l->len++] = '\n';
	ignored = write(2, l->buf, l->len);
	(void)ignored;
}

/* "usdtkit drti: <what>[ PID], metadata note at 0x...: " */
static void usdt_drti_begin(struct usdt_drti_line *l, const char *what, int with_pid)
{
	l->len = 0;
	usdt_drti_put(l, "usdtkit drti: ");
	usdt_drti_put(l, what);
	if (with_pid) {
		usdt_drti_put(l, " ");
		usdt_drti_put_num(l, (unsigned long)getpid());
	}
	usdt_drti_put(l, ", metadata note at ");
	usdt_drti_put_hex(l, (unsigned long)USDT_DRTI_NOTE);
	usdt_drti_put(l, ": ");
}

/*
 * The outcome of one request, for the debug line: what failed (a constant
 * string), the errno if any, and the daemon's answer.
 */
struct usdt_drti_result {
	const char *fail;	     /* 0: the request was sent */
	int err;		     /* errno of the failing call, or 0 */
	int at_connect;		     /* it failed reaching the socket: name it */
	int busy;		     /* the daemon shed the connection: worth retrying */
	unsigned attempts;	     /* connections tried */
	int answered;		     /* a valid REPLY came back */
	int held;		     /* a HELD moved the deadline */
	unsigned long untrusted_uid; /* 1 + the uid of a peer whose HELD was refused */
	int32_t status;		     /* its status */
	uint32_t nprobes;	     /* its probe count */
};

/* The longest wait between two retries of a shed connection. */
#define USDT_DRTI_BACKOFF_MAX_MS 16

static int usdt_drti_clock(struct timespec *t)
{
	return clock_gettime(CLOCK_MONOTONIC, t);
}

/* Milliseconds left before `deadline`, rounded up; 0 when it has passed. */
static int usdt_drti_left_ms(const struct timespec *deadline)
{
	struct timespec now;
	long ms;

	if (usdt_drti_clock(&now) != 0)
		return 0;
	ms = (long)(deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec + 999999) / 1000000;
	return ms <= 0 ? 0 : (int)ms;
}

/* poll() one event on fd until the deadline, through EINTR: 1 ready, 0 timeout, -1 error. */
static int usdt_drti_wait(int fd, short events, const struct timespec *deadline)
{
	struct pollfd p;
	int r;

	for (;;) {
		p.fd = fd;
		p.events = events;
		p.revents = 0;
		r = poll(&p, 1, usdt_drti_left_ms(deadline));
		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/*
 * A HELD: the deadline moves to `ms` from now, at most the hold the
 * environment allows, and never earlier. Once per request (res->held).
 */
static void usdt_drti_hold(uint32_t ms, struct timespec *deadline, struct usdt_drti_result *res)
{
	struct timespec until;

	if (res->held || usdt_drti_hold_ms == 0 || usdt_drti_clock(&until) != 0)
		return;
	res->held = 1;
	if (ms > (uint32_t)usdt_drti_hold_ms)
		ms = (uint32_t)usdt_drti_hold_ms;
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	if (until.tv_sec > deadline->tv_sec ||
	    (until.tv_sec == deadline->tv_sec && until.tv_nsec > deadline->tv_nsec))
		*deadline = until;
}

/*
 * Whether the peer may make us wait past the plain timeout (a HELD): the
 * uid that created the listening socket (SO_PEERCRED) is root's or ours.
 * Anyone else is no daemon: the request ends here (res->fail says why).
 */
static int usdt_drti_peer_trusted(int fd, struct usdt_drti_result *res)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) {
		res->fail = "a HELD from a peer of unknown uid: not a daemon";
		res->err = errno;
		return 0;
	}
	if (cred.uid != 0 && cred.uid != geteuid()) {
		res->fail = "a HELD from a peer neither root nor ours: not a daemon";
		res->untrusted_uid = (unsigned long)cred.uid + 1;
		return 0;
	}
	return 1;
}

/* Reads packets until the REPLY to `seq` comes; fills res. */
static void usdt_drti_read_reply(int fd, uint32_t seq, struct timespec *deadline,
				 struct usdt_drti_result *res)
{
	union {
		struct usdt_msg_reply reply;
		struct usdt_msg_held held;
		char bytes[sizeof(struct usdt_msg_list_entry) + 64];
	} in;
	unsigned others = 0;
	enum usdt_answer kind;
	ssize_t n;
	int r;

	for (;;) {
		r = usdt_drti_wait(fd, POLLIN, deadline);
		if (r == 0) {
			res->fail = "no answer before the timeout";
			return;
		}
		if (r < 0) {
			res->fail = "poll";
			res->err = errno;
			return;
		}
		/* MSG_TRUNC: n is the packet's real length, so an oversized one is seen as such. */
		n = recv(fd, &in, sizeof(in), MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			res->fail = "recv";
			res->err = errno;
			res->busy = errno == ECONNRESET;
			return;
		}
		if (n == 0) {
			res->fail = "the helper closed the connection without answering";
			res->busy = 1;
			return;
		}
		kind = (size_t)n > sizeof(in) ? USDT_ANSWER_MALFORMED
					      : usdt_answer_check(&in, (unsigned long)n, seq);
		if (kind == USDT_ANSWER_MALFORMED) {
			res->fail = "malformed answer";
			return;
		}
		if (kind == USDT_ANSWER_REPLY) {
			res->answered = 1;
			res->status = in.reply.status;
			res->nprobes = in.reply.nprobes;
			/* Refused for now (its queue share, a rate): worth retrying. */
			res->busy = in.reply.status == -EAGAIN;
			return;
		}
		if (kind == USDT_ANSWER_HELD) {
			if (!usdt_drti_peer_trusted(fd, res))
				return;
			usdt_drti_hold(in.held.ms, deadline, res);
			continue;
		}
		/* A well-formed packet that is not our answer: skip a few, no more. */
		if (++others > 8) {
			res->fail = "no answer among the helper's packets";
			return;
		}
	}
}

/*
 * One connection: connect, send `msg`, and when `wait`, read the REPLY; all
 * before the deadline. Returns 1 when the message was sent.
 */
static int usdt_drti_attempt(const struct usdt_msg_module *msg, int wait, struct timespec *deadline,
			     struct usdt_drti_result *res)
{
	int fd, r, sent = 0;
	ssize_t n;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		res->fail = "socket";
		res->err = errno;
		return 0;
	}
	/*
	 * Non-blocking: a full backlog gives EAGAIN at once instead of blocking;
	 * AF_UNIX connects complete immediately otherwise, but EINPROGRESS is
	 * handled as for any socket.
	 */
	r = connect(fd, (const struct sockaddr *)&usdt_drti_sun, usdt_drti_sun_len);
	if (r < 0 && (errno == EINPROGRESS || errno == EINTR)) {
		int soerr = 0;
		socklen_t len = sizeof(soerr);

		r = usdt_drti_wait(fd, POLLOUT, deadline);
		if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0)
			r = 0;
		else {
			errno = r == 0 ? ETIMEDOUT : soerr ? soerr : errno;
			r = -1;
		}
	}
	if (r < 0) {
		res->fail = "connect";
		res->err = errno;
		res->at_connect = 1;
		res->busy = errno == EAGAIN;
		goto out;
	}
	for (;;) {
		n = send(fd, msg, sizeof(*msg), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(*msg)) {
			sent = 1;
			break;
		}
		if (n >= 0) {
			res->fail = "short send";
			goto out;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && usdt_drti_wait(fd, POLLOUT, deadline) > 0)
			continue;
		res->fail = "send";
		res->err = errno;
		res->busy = errno == EPIPE || errno == ECONNRESET;
		goto out;
	}
	if (wait)
		usdt_drti_read_reply(fd, msg->hdr.seq, deadline, res);
out:
	close(fd);
	return sent;
}

/*
 * One request: {type, USDT_DRTI_NOTE}, with the answer when `wait` (and a
 * timeout above 0). Returns 1 when the message was sent at least once.
 *
 * A daemon that is overloaded sheds connections: a full listen backlog
 * (EAGAIN at connect) or a connection closed unread (it caps connections per
 * user), or answers -EAGAIN (the user's share of the parse queue, or its
 * rate, is full for now). Those are retried, when we wait, after 1, 2, 4... ms, at most
 * USDT_DRTI_BACKOFF_MAX_MS apart, until the deadline: a burst of process
 * starts still gets registered, and the whole timeout is used (doubling
 * without a cap gave up after half of it, while a flood of other
 * connections kept the backlog full).
 * Nothing else is retried: a stale socket (ECONNREFUSED, the daemon is gone)
 * costs one attempt, and the exit path never waits.
 */
static int usdt_drti_request(uint16_t type, int wait, struct usdt_drti_result *res)
{
	struct usdt_msg_module msg;
	struct timespec deadline;
	int sent = 0, backoff_ms;
	unsigned i;

	if (usdt_drti_timeout_ms == 0)
		wait = 0;
	res->fail = 0;
	res->err = 0;
	res->at_connect = 0;
	res->attempts = 0;
	res->held = 0;
	res->untrusted_uid = 0;
	if (usdt_drti_sun_len == 0) {
		res->fail = "the socket path is too long";
		return 0;
	}
	/*
	 * No daemon installed is the common case: one access() (about 1 us
	 * cold) instead of socket + connect + close (about 11 us cold).
	 */
	if (access(usdt_drti_sun.sun_path, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
		res->fail = "no helper socket";
		res->err = errno;
		res->at_connect = 1;
		return 0;
	}
	for (i = 0; i < sizeof(msg); i++)
		((unsigned char *)&msg)[i] = 0;
	usdt_hdr_fill(&msg.hdr, type, (uint32_t)sizeof(msg), ++usdt_drti_seq);
	msg.addr = (uint64_t)(unsigned long)USDT_DRTI_NOTE;
	/* One deadline bounds every connect, send, answer and retry of the request. */
	if (usdt_drti_clock(&deadline) != 0) {
		res->fail = "clock_gettime";
		res->err = errno;
		return 0;
	}
	deadline.tv_sec += usdt_drti_timeout_ms / 1000;
	deadline.tv_nsec += (long)(usdt_drti_timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	for (backoff_ms = 1;;) {
		int left;

		res->fail = 0;
		res->err = 0;
		res->at_connect = 0;
		res->busy = 0;
		res->answered = 0;
		res->status = 0;
		res->nprobes = 0;
		res->attempts++;
		sent |= usdt_drti_attempt(&msg, wait, &deadline, res);
		left = usdt_drti_left_ms(&deadline);
		if (!wait || !res->busy || left <= 1)
			return sent;
		/* poll() on nothing: an async-signal-safe sleep (EINTR ends it early) */
		(void)poll(0, 0, backoff_ms < left - 1 ? backoff_ms : left - 1);
		if (backoff_ms < USDT_DRTI_BACKOFF_MAX_MS)
			backoff_ms *= 2;
	}
}

/* The debug line for one request, after `what` and the note address. */
static void usdt_drti_report(struct usdt_drti_line *l, const struct usdt_drti_result *res, int wait)
{
	if (res->fail) {
		usdt_drti_put(l, res->fail);
		if (res->err) {
			usdt_drti_put(l, ": ");
			usdt_drti_put_errno(l, res->err);
		}
		if (res->at_connect) {
			usdt_drti_put(l, " (");
			usdt_drti_put(l, usdt_drti_sun.sun_path);
			usdt_drti_put(l, ")");
		}
	} else if (!wait || usdt_drti_timeout_ms == 0) {
		usdt_drti_put(l, "sent, not waiting for the answer");
	} else if (res->status < 0) {
		usdt_drti_put(l, "refused by the helper: ");
		usdt_drti_put_errno(l, -res->status);
	} else {
		usdt_drti_put(l, "done, ");
		usdt_drti_put_num(l, res->nprobes);
		usdt_drti_put(l, " probes");
	}
	if (res->untrusted_uid) {
		usdt_drti_put(l, " (uid ");
		usdt_drti_put_num(l, res->untrusted_uid - 1);
		usdt_drti_put(l, ")");
	}
	if (res->held)
		usdt_drti_put(l, " (held for a tracer)");
	if (res->attempts > 1) {
		usdt_drti_put(l, " (after ");
		usdt_drti_put_num(l, res->attempts);
		usdt_drti_put(l, " attempts)");
	}
}

/*
 * PROCMAP_QUERY (Linux 6.11): what /proc/self/maps says of the mapping
 * holding one address, as one ioctl. Declared here because the user's
 * <linux/fs.h> may predate it; the layout is the kernel's ABI (104 bytes,
 * all fields fixed-width, the same for -m32).
 */
struct usdt_drti_pmq {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define USDT_DRTI_PROCMAP_QUERY 0xc0686611u /* _IOWR('f', 17, struct usdt_drti_pmq) */
#define USDT_DRTI_PMQ_FILE_BACKED 0x20u

/*
 * Whether the daemon's board says this module's file is registered already
 * (core/protocol.h, "The board"): its events exist, so there is
 * nothing to ask. The file is the one the kernel maps at our note's address
 * (PROCMAP_QUERY gives its device, inode and path exactly as the daemon
 * reads them from maps); the board is read with pread only, and only if it
 * is root's and writable by no one else. Any doubt (an older kernel, a
 * deleted file, a long path, a torn slot) answers 0: ask, as before.
 * Returns 1 (known: nothing to ask), 0 (ask), or -1: the board has no
 * daemon, its liveness lock is gone, so the socket beside it is a crashed
 * daemon's and would refuse the connection: nothing to ask either.
 */
static int usdt_drti_known(void)
{
	struct flock lk;
	struct usdt_drti_pmq q;
	struct usdt_board_hdr h;
	struct usdt_board_slot s[USDT_BOARD_WINDOW];
	struct stat st;
	char name[512];
	uint64_t dev, hash, off;
	unsigned i;
	long r;
	int fd, bfd;

	/*
	 * The board first: where there is none (a daemon run with --no-board,
	 * a socket left without its daemon) the cheap failing open() spares
	 * the maps query, the dearer half.
	 */
	bfd = open(usdt_drti_board, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (bfd < 0)
		return 0;
	/*
	 * Then the liveness lock (core/protocol.h): a crashed daemon's board
	 * costs a pread and an fcntl, and spares the maps query and the
	 * refused connect. Only a version-2 board has the lock (an older
	 * daemon's never does: then ask). Nothing else of the file is used for
	 * it, so who owns it does not matter yet: the worst a board not to
	 * trust can do here is what a missing daemon does, leave this module
	 * unregistered.
	 */
	r = 0;
	if (pread(bfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != USDT_BOARD_MAGIC ||
	    h.version != USDT_BOARD_VERSION)
		goto out;
	for (i = 0; i < sizeof(lk); i++)
		((unsigned char *)&lk)[i] = 0;
	lk.l_type = F_WRLCK;
	lk.l_whence = SEEK_SET;
	if (fcntl(bfd, F_OFD_GETLK, &lk) == 0 && lk.l_type == F_UNLCK) {
		r = -1;
		goto out;
	}
	if (fstat(bfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0 || h.hdr_size != sizeof(h) || h.slot_size != sizeof(s[0]) ||
	    h.nslots == 0 || h.nslots > USDT_BOARD_SLOTS_MAX)
		goto out;
	/*
	 * The name buffer too, not only the query: the kernel fills it, but
	 * checkers that do not know this ioctl (valgrind 3.19, MemorySanitizer
	 * decoding it from its number) see only the 104-byte query written and
	 * would report the name's bytes as uninitialised when we hash them, in
	 * the user's program, at every start where a socket file exists.
	 */
	for (i = 0; i < sizeof(q); i++)
		((unsigned char *)&q)[i] = 0;
	for (i = 0; i < sizeof(name); i++)
		name[i] = 0;
	q.size = sizeof(q);
	q.query_flags = USDT_DRTI_PMQ_FILE_BACKED;
	q.query_addr = (uint64_t)(unsigned long)USDT_DRTI_NOTE;
	q.vma_name_size = sizeof(name);
	q.vma_name_addr = (uint64_t)(unsigned long)name;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	r = ioctl(fd, USDT_DRTI_PROCMAP_QUERY, &q);
	close(fd);
	if (r != 0 || q.inode == 0 || q.vma_name_size == 0 || q.vma_name_size > sizeof(name)) {
		r = 0;
		goto out;
	}
	name[q.vma_name_size - 1] = '\0';
	dev = ((uint64_t)q.dev_major << 32) | q.dev_minor;
	hash = usdt_board_path_hash(name);
	off = sizeof(h) + (uint64_t)usdt_board_index(dev, q.inode, h.nslots) * sizeof(s[0]);
	if ((uint64_t)st.st_size < off + sizeof(s) ||
	    pread(bfd, s, sizeof(s), (off_t)off) != (ssize_t)sizeof(s))
		goto out;
	for (i = 0; i < USDT_BOARD_WINDOW && !r; i++)
		r = s[i].dev == dev && s[i].ino == q.inode && s[i].path_hash == hash &&
		    s[i].check == usdt_board_check(dev, q.inode, hash);
out:
	close(bfd);
	return r < 0 ? -1 : r != 0;
}

static void usdt_drti_register(const char *what, int with_pid)
{
	struct usdt_drti_result res;
	struct usdt_drti_line l;

	usdt_drti_registered = usdt_drti_request(USDT_MSG_REGISTER, 1, &res);
	if (usdt_drti_debug_on) {
		usdt_drti_begin(&l, what, with_pid);
		usdt_drti_report(&l, &res, 1);
		usdt_drti_emit(&l);
	}
}

/* UNREGISTER, waiting for the answer (the module is about to go). */
static void usdt_drti_unregister(const char *what)
{
	struct usdt_drti_result res;
	struct usdt_drti_line l;

	(void)usdt_drti_request(USDT_MSG_UNREGISTER, 1, &res);
	if (usdt_drti_debug_on) {
		usdt_drti_begin(&l, what, 0);
		usdt_drti_report(&l, &res, 1);
		usdt_drti_emit(&l);
	}
}

#ifndef USDT_DRTI_LIBRARY
static void usdt_drti_at_exit(void)
{
	usdt_drti_exiting = 1;
}
#endif

/* Decimal milliseconds, capped at max, into *ms; anything else keeps *ms. */
static void usdt_drti_ms(const char *t, int *ms, long max)
{
	unsigned i;
	long v = 0;

	if (!t || !t[0])
		return;
	for (i = 0; t[i] >= '0' && t[i] <= '9'; i++)
		if (v <= max)
			v = v * 10 + (t[i] - '0');
	if (!t[i])
		*ms = (int)(v > max ? max : v);
}

/* Reads the environment; 0 when registration is off. */
static int usdt_drti_configure(void)
{
	const char *path = usdt_drti_getenv(USDT_HELPER_SOCKET_ENV);
	const char *t = usdt_drti_getenv(USDT_HELPER_TIMEOUT_ENV);
	const char *h = usdt_drti_getenv(USDT_HELPER_HOLD_ENV);
	unsigned i;

	/*
	 * A set-user-ID (or otherwise secure-execution) program takes only
	 * the off switch from its caller's environment: another socket would
	 * hand the caller the module's load address (defeating ASLR) and the
	 * debug line prints it; the timeout could hold the program up.
	 */
	int secure = getauxval(AT_SECURE) != 0;

	usdt_drti_debug_on =
	    !secure && (usdt_drti_flag("USDTKIT_DEBUG") || usdt_drti_flag("DTRACE_DOF_INIT_DEBUG"));
	if (usdt_drti_flag("USDTKIT_DISABLE") || usdt_drti_getenv("DTRACE_DOF_INIT_DISABLE"))
		return 0;
	if (secure)
		path = t = h = 0;
	if (!path || !path[0])
		path = USDT_HELPER_SOCKET_PATH;
	usdt_drti_sun.sun_family = AF_UNIX;
	for (i = 0; path[i] && i < sizeof(usdt_drti_sun.sun_path) - 1; i++)
		usdt_drti_sun.sun_path[i] = path[i];
	usdt_drti_sun.sun_path[i] = '\0';
	/* A path that does not fit is not silently shortened into another one. */
	usdt_drti_sun_len = path[i] ? 0 : (socklen_t)(sizeof(usdt_drti_sun.sun_family) + i + 1);
	if (usdt_drti_sun_len) {
		unsigned k;

		for (k = 0; k < i; k++)
			usdt_drti_board[k] = path[k];
		for (k = 0; k < sizeof(USDT_BOARD_SUFFIX); k++)
			usdt_drti_board[i + k] = USDT_BOARD_SUFFIX[k];
	}
	usdt_drti_ms(t, &usdt_drti_timeout_ms, USDT_HELPER_TIMEOUT_MAX_MS);
	usdt_drti_ms(h, &usdt_drti_hold_ms, USDT_HOLD_MAX_MS);
	return 1;
}

/*
 * A module load, once the environment is read: nothing without a socket
 * file, nothing for a file on the board, else REGISTER and its answer.
 */
static void usdt_drti_load(void)
{
	struct usdt_drti_line l;
	int known;

	/* No daemon installed (no socket file): one access(), nothing else. */
	if (usdt_drti_sun_len && access(usdt_drti_sun.sun_path, F_OK) != 0 &&
	    (errno == ENOENT || errno == ENOTDIR)) {
		if (usdt_drti_debug_on) {
			int e = errno;

			usdt_drti_begin(&l, "register module", 0);
			usdt_drti_put(&l, "no helper socket: ");
			usdt_drti_put_errno(&l, e);
			usdt_drti_put(&l, " (");
			usdt_drti_put(&l, usdt_drti_sun.sun_path);
			usdt_drti_put(&l, ")");
			usdt_drti_emit(&l);
		}
		return;
	}
	/*
	 * A file the daemon registered already: its events exist, nothing to
	 * ask. A board whose daemon is gone: nobody to ask.
	 */
	known = usdt_drti_sun_len ? usdt_drti_known() : 0;
	if (known) {
		if (usdt_drti_debug_on) {
			usdt_drti_begin(&l, "register module", 0);
			usdt_drti_put(&l, known > 0
					      ? "known to the helper (its board): nothing to ask"
					      : "the helper's board has no daemon (it crashed): "
						"nothing to ask; its next start scans for us");
			usdt_drti_emit(&l);
		}
		return;
	}
	usdt_drti_register("register module", 0);
}

#ifndef USDT_DRTI_LIBRARY
__attribute__((constructor)) static void usdt_drti_init(void)
{
	int saved = errno;
	struct usdt_drti_line l;

	usdt_drti_enabled = usdt_drti_configure();
	if (!usdt_drti_enabled) {
		if (usdt_drti_debug_on) {
			l.len = 0;
			usdt_drti_put(&l, "usdtkit drti: registration disabled by the environment");
			usdt_drti_emit(&l);
		}
		errno = saved;
		return;
	}
	usdt_drti_load();
	/* Failing to install it only costs a dlclose its wait for the answer. */
	if (usdt_drti_registered)
		(void)atexit(usdt_drti_at_exit);
	errno = saved;
}

__attribute__((destructor)) static void usdt_drti_fini(void)
{
	int saved = errno, wait = !usdt_drti_exiting;

	usdt_drti_enabled = 0;
	/* At exit, nothing: the daemon sees the exit on its pidfd of the process. */
	if (usdt_drti_registered && wait) {
		usdt_drti_registered = 0;
		usdt_drti_unregister("unregister at dlclose");
	}
	errno = saved;
}
#else  /* USDT_DRTI_LIBRARY */

int usdt_drti_lib_configure(void)
{
	int saved = errno;

	usdt_drti_enabled = usdt_drti_configure();
	errno = saved;
	return usdt_drti_enabled;
}

int usdt_drti_lib_register(const void *note)
{
	int saved = errno, r;

	if (!usdt_drti_enabled)
		return 0;
	usdt_drti_lib_note = note;
	usdt_drti_registered = 0;
	usdt_drti_load();
	r = usdt_drti_registered;
	usdt_drti_registered = 0;
	errno = saved;
	return r;
}

void usdt_drti_lib_unregister(const void *note)
{
	int saved = errno;

	if (!usdt_drti_enabled)
		return;
	usdt_drti_lib_note = note;
	usdt_drti_unregister("unregister at unload");
	errno = saved;
}
#endif /* USDT_DRTI_LIBRARY */
