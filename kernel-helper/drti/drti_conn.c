/* SPDX-License-Identifier: MIT */
/*
 * drti's conversation with the daemon: one request (REGISTER or
 * UNREGISTER) over a non-blocking SOCK_SEQPACKET connection against one
 * deadline, the HELD that may move it (trusted only from a peer of uid 0
 * or our own), the retries with backoff, and the request's debug line.
 *
 * Not a translation unit of its own: drti.c #includes it at one place,
 * after the definitions it uses, so that embed.py pastes drti as one
 * source (`dtrace -G` compiles that with the user's compiler, which has
 * no include path to ours) and every name stays static. The rules of
 * drti.c's opening comment hold here too (C89, no malloc, no stdio).
 */

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
