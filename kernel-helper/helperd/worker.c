// SPDX-License-Identifier: MIT
/*
 * The sandboxed parser, the daemon's side. An ELF file mapped by an
 * unprivileged process is hostile input, and libelf is a large parser: it
 * runs in a worker process that can do nothing but compute.
 *
 * A worker is the daemon's own binary executed again (worker_child.c, its
 * program, says why not the forked copy): it keeps one descriptor, a socket
 * to us (3), and stdin/stdout/stderr on /dev/null, and confines itself
 * (sandbox.c) before it receives the file, as a descriptor passed on the
 * socket (SCM_RIGHTS): so a worker can be started before it is needed. One
 * is: the spare (hd_parse_spare), started after the loop's turn, takes the
 * next new file, and a program registering a file nobody has seen waits
 * for no fork nor exec (with the other first-seen changes of
 * kernel-helper/README.md, 934 -> 651-758 µs exec -> main() in
 * bench/helper). A worker whose limits differ from the spare's (tests), or
 * one needed while the spare is busy, is started on demand, the same way.
 * In ps a worker is "usdtkit-spare" while it waits, "usdtkit-parse" after.
 *
 * The worker answers with a flat record stream, its length first. We wait
 * at most timeout_ms for all of it, then kill it: a crashing or hung
 * worker costs one registration, never the daemon. What comes back is
 * checked again as if the worker were compromised (worker_answer.c).
 *
 * Stream: "HDW1", u32 arch, u32 elf_class, u32 e_type, u32 flags,
 * u64 nprobes (all notes), u32 nlog, nlog strings (rejections, for the log),
 * u32 naccepted, naccepted probe records (worker_child.c, put_probe), "END!".
 * Strings are u32 length + bytes; length 0xffffffff is NULL.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helperd.h"
#include "metadata.h"
#include "strbuf.h"

#define STREAM_MAX (256u << 20)

static int send_file(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	char byte = 'F';
	struct iovec iov = {&byte, 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof(c.b)};
	struct cmsghdr *h;

	memset(&c, 0, sizeof(c));
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(fd));
	while (sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/*
 * The daemon's own binary, opened once: what a worker executes. Opened by
 * descriptor, not by path, so that a package upgrade that replaced the file
 * on disk still starts workers of the running daemon's version.
 */
static int self_exe = -1;

/*
 * Starts a worker: forks, and the child executes the daemon's binary as the
 * worker (worker_child.c says why a fresh program and not the forked copy),
 * which sandboxes itself and waits on its end of a socketpair (its fd 3)
 * for the file; *sock is ours, non-blocking. Between the fork and the exec
 * the child makes only async-signal-safe calls: the daemon's other threads'
 * locks are not its own.
 */
static pid_t worker_fork(const struct hd_worker_limits *lim, int *sock)
{
	char cpu[24], as[24], delay[24];
	char *argv[] = {"usdtkit-spare", HD_WORKER_ARG, cpu, as, delay, NULL, NULL};
	sigset_t none;
	int sv[2], filter_fd = -1;
	pid_t pid;

	if (self_exe < 0) {
		self_exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
		if (self_exe < 0)
			return -errno;
	}
	if (lim->test_no_seccomp) {
		argv[5] = "none";
	} else {
		hd_sandbox_prepare();
		filter_fd = hd_sandbox_filter_fd();
		argv[5] = filter_fd >= 0 ? "fd4" : "build";
	}
	snprintf(cpu, sizeof(cpu), "%u", lim->cpu_seconds);
	snprintf(as, sizeof(as), "%" PRIu64, lim->address_space);
	snprintf(delay, sizeof(delay), "%u", lim->test_delay_ms);
	sigemptyset(&none);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0) {
		pid = -errno;
		close(sv[0]);
		close(sv[1]);
		return pid;
	}
	pid = fork();
	if (pid < 0) {
		pid = -errno;
		close(sv[0]);
		close(sv[1]);
		return pid;
	}
	if (pid == 0) {
		/* fd 3: the socket; fd 4: the filter; 0-2 on /dev/null; nothing else survives. */
		int w = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
		int f = filter_fd >= 0 ? fcntl(filter_fd, F_DUPFD_CLOEXEC, 10) : -1;
		int exe = fcntl(self_exe, F_DUPFD_CLOEXEC, 10);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (w < 0 || exe < 0 || null < 0 || (filter_fd >= 0 && f < 0) || dup2(w, 3) != 3 ||
		    (f >= 0 && dup2(f, 4) != 4) || dup2(null, 0) != 0 || dup2(null, 1) != 1 ||
		    dup2(null, 2) != 2)
			_exit(HD_WORKER_EXIT_EXEC);
		/* Every other descriptor closes at the exec (exe too, once executed). */
		close_range(f >= 0 ? 5 : 4, ~0u, CLOSE_RANGE_CLOEXEC);
		sigprocmask(SIG_SETMASK, &none, NULL);
		fexecve(exe, argv, environ);
		_exit(HD_WORKER_EXIT_EXEC);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

/* What a worker applies to itself before it has a file (the deadline is ours). */
static bool same_limits(const struct hd_worker_limits *a, const struct hd_worker_limits *b)
{
	return a->cpu_seconds == b->cpu_seconds && a->address_space == b->address_space &&
	       a->test_delay_ms == b->test_delay_ms && a->test_no_seccomp == b->test_no_seccomp;
}

/*
 * The spare: one worker forked ahead, sandboxed and waiting, so that a new
 * file's parse does not begin with a fork (the registering program waits
 * for it). hd_parse_spare forks it after the loop's turn, when nobody waits.
 */
static struct {
	pid_t pid;
	int sock;
	struct hd_worker_limits lim;
	uint64_t retry_ms; /* after a failed fork: not before then */
} spare = {-1, -1, {0}, 0};

static void stop_worker(pid_t pid, int sock)
{
	if (sock >= 0)
		close(sock);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void hd_parse_spare(const struct hd_worker_limits *limits)
{
	struct hd_worker_limits l = *limits, *lim = &l;
	pid_t pid;
	int sock;

	/* (A test's delayed worker is always forked on demand: it sleeps when it starts.) */
	l.test_delay_ms = 0;
	if (spare.pid > 0 && same_limits(&spare.lim, lim))
		return;
	if (spare.pid > 0) {
		stop_worker(spare.pid, spare.sock);
		spare.pid = -1;
	}
	if (hd_now_ms() < spare.retry_ms)
		return;
	pid = worker_fork(lim, &sock);
	if (pid < 0) {
		hd_dbg("spare worker: fork: %s", strerror((int)-pid));
		spare.retry_ms = hd_now_ms() + 1000;
		return;
	}
	spare.pid = pid;
	spare.sock = sock;
	spare.lim = *lim;
}

bool hd_parse_spare_missing(const struct hd_worker_limits *limits)
{
	struct hd_worker_limits l = *limits;

	l.test_delay_ms = 0;
	return !(spare.pid > 0 && same_limits(&spare.lim, &l)) && hd_now_ms() >= spare.retry_ms;
}

void hd_parse_spare_stop(void)
{
	if (spare.pid > 0)
		stop_worker(spare.pid, spare.sock);
	spare.pid = -1;
	spare.sock = -1;
}

/*
 * Starts the parse of fd: the spare takes it when its limits are these,
 * else a worker forked now. The answer comes on j->rfd, which becomes
 * readable (the daemon's epoll loop, or hd_parse's poll), and
 * hd_parse_finish ends it: no wait here blocks on the worker.
 */
int hd_parse_start(int fd, const struct hd_worker_limits *lim, struct hd_parse_job *j, char *err,
		   size_t errlen)
{
	pid_t pid = -1;
	int sock = -1, ret;
	bool took_spare = false;

	memset(j, 0, sizeof(*j));
	j->pid = -1;
	j->rfd = -1;
	if (spare.pid > 0 && lim->test_delay_ms == 0 && same_limits(&spare.lim, lim)) {
		pid = spare.pid;
		sock = spare.sock;
		spare.pid = -1;
		spare.sock = -1;
		took_spare = true;
		if (send_file(sock, fd) != 0) {
			/* It died meanwhile (killed from outside): a fresh one. */
			stop_worker(pid, sock);
			pid = -1;
			took_spare = false;
		}
	}
	if (pid < 0) {
		pid = worker_fork(lim, &sock);
		if (pid < 0) {
			snprintf(err, errlen, "fork: %s", strerror((int)-pid));
			return (int)pid;
		}
		ret = send_file(sock, fd);
		if (ret) {
			stop_worker(pid, sock);
			snprintf(err, errlen, "passing the file to the worker: %s", strerror(-ret));
			return ret;
		}
	}
	j->pid = pid;
	j->rfd = sock;
	j->spare = took_spare;
	j->deadline = hd_now_ms() + lim->timeout_ms;
	j->timeout_ms = lim->timeout_ms;
	return 0;
}

int hd_parse_respawn(struct hd_parse_job *j, int fd, const struct hd_worker_limits *lim)
{
	pid_t pid;
	int sock, ret;

	/* The spare killed from outside before it read the file: nothing came. */
	if (!j->spare || j->complete || j->len != 0 || j->pid <= 0)
		return 0;
	close(j->rfd);
	stop_worker(j->pid, -1);
	j->pid = -1;
	j->rfd = -1;
	j->ret = 0;
	j->spare = false;
	pid = worker_fork(lim, &sock);
	if (pid < 0)
		return (int)pid;
	ret = send_file(sock, fd);
	if (ret) {
		stop_worker(pid, sock);
		return ret;
	}
	j->pid = pid;
	j->rfd = sock;
	return 1;
}

/* Workers whose answer was whole, not yet reaped (see hd_parse_finish). */
#define REAP_MAX 64
static pid_t reap_pids[REAP_MAX];
static unsigned nreap;

void hd_parse_reap(bool wait)
{
	for (unsigned i = 0; i < nreap;) {
		pid_t r = waitpid(reap_pids[i], NULL, wait ? 0 : WNOHANG);

		if (r == 0 || (r < 0 && errno == EINTR)) {
			i++;
			continue;
		}
		reap_pids[i] = reap_pids[--nreap];
	}
}

static void reap_later(pid_t pid)
{
	if (nreap == REAP_MAX)
		hd_parse_reap(true);
	reap_pids[nreap++] = pid;
}

int hd_parse_read(struct hd_parse_job *j)
{
	struct usdt_sbuf in = {(char *)j->buf, j->len, j->cap, false};
	int done = 0;

	for (;;) {
		ssize_t r;

		if (in.len >= STREAM_MAX || !usdt_sb_reserve(&in, 65536)) {
			j->ret = -EFBIG;
			done = 1;
			break;
		}
		r = read(j->rfd, in.s + in.len, in.cap - in.len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r < 0)
			j->ret = -errno;
		if (r <= 0) {
			done = 1; /* EOF: the worker exited (it cannot close fd 3 itself) */
			break;
		}
		in.len += (size_t)r;
		/*
		 * The whole answer is here (its length came first): done without
		 * waiting for the worker's exit, which costs a process teardown.
		 */
		if (in.len >= sizeof(uint64_t)) {
			uint64_t want;

			memcpy(&want, in.s, sizeof(want));
			if (want > STREAM_MAX || in.len > sizeof(want) + want) {
				j->ret = -EPROTO;
				done = 1;
				break;
			}
			if (in.len == sizeof(want) + want) {
				j->complete = true;
				done = 1;
				break;
			}
		}
	}
	j->buf = (unsigned char *)in.s;
	j->len = in.len;
	j->cap = in.cap;
	return done;
}

int hd_parse_collect(struct hd_parse_job *j, int why, struct hd_answer *ans, char *err,
		     size_t errlen)
{
	int status = 0, ret = why ? why : j->ret;

	ans->buf = NULL;
	ans->len = 0;
	if (j->rfd >= 0)
		close(j->rfd);
	j->rfd = -1;
	if (j->pid > 0 && !ret && j->complete) {
		/*
		 * The answer is whole: the worker has nothing left to say and is
		 * exiting. It is reaped later (hd_parse_reap) rather than waited
		 * for; should it not be exiting, it is killed: it can change
		 * nothing now.
		 */
		kill(j->pid, SIGKILL);
		reap_later(j->pid);
	} else if (j->pid > 0) {
		if (ret)
			kill(j->pid, SIGKILL);
		while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	j->pid = -1;
	if (ret == -ETIMEDOUT) {
		snprintf(err, errlen, "the parser took more than %u ms: killed", j->timeout_ms);
	} else if (ret == -ECANCELED) {
		snprintf(err, errlen, "the parse was abandoned (nobody waits for it)");
	} else if (ret) {
		snprintf(err, errlen, "reading the parser's answer: %s", strerror(-ret));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		ret = -ECHILD;
		if (WIFSIGNALED(status))
			snprintf(err, errlen, "the parser died of signal %d%s", WTERMSIG(status),
				 WTERMSIG(status) == SIGSYS ? " (sandbox)" : "");
		else if (WEXITSTATUS(status) == HD_WORKER_EXIT_EXEC)
			snprintf(err, errlen,
				 "the parser could not be started (executing the "
				 "daemon's own binary failed)");
		else
			snprintf(err, errlen, "the parser failed (status %d)", WEXITSTATUS(status));
	} else if (!j->complete) {
		ret = -EPROTO;
		snprintf(err, errlen, "the parser's answer is incomplete");
	} else {
		/* The answer after its length, handed over whole. */
		ans->buf = j->buf;
		ans->len = j->len;
		j->buf = NULL;
	}
	j->complete = false;
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
	return ret;
}

int hd_parse_check(struct hd_answer *ans, int fd, struct usdt_notes **out, char *err, size_t errlen)
{
	int ret = hd_worker_decode(ans->buf + sizeof(uint64_t), ans->len - sizeof(uint64_t), fd,
				   out, err, errlen);

	hd_answer_free(ans);
	return ret;
}

void hd_answer_free(struct hd_answer *ans)
{
	free(ans->buf);
	ans->buf = NULL;
	ans->len = 0;
}

int hd_parse_finish(struct hd_parse_job *j, int fd, int why, struct usdt_notes **out, char *err,
		    size_t errlen)
{
	struct hd_answer ans;
	int ret = hd_parse_collect(j, why, &ans, err, errlen);

	if (out)
		*out = NULL;
	if (ret || !out) {
		hd_answer_free(&ans);
		return ret;
	}
	return hd_parse_check(&ans, fd, out, err, errlen);
}

int hd_parse(int fd, const struct hd_worker_limits *lim, struct usdt_notes **out, char *err,
	     size_t errlen)
{
	struct hd_parse_job j;
	int ret = hd_parse_start(fd, lim, &j, err, errlen), why = 0;

	*out = NULL;
	if (ret)
		return ret;
	for (;;) {
		struct pollfd p = {.fd = j.rfd, .events = POLLIN};
		uint64_t now = hd_now_ms();
		int r;

		if (now >= j.deadline) {
			why = -ETIMEDOUT;
			break;
		}
		r = poll(&p, 1, (int)(j.deadline - now));
		if (r < 0 && errno != EINTR) {
			why = -errno;
			break;
		}
		if (r > 0 && hd_parse_read(&j) && hd_parse_respawn(&j, fd, lim) != 1)
			break;
	}
	return hd_parse_finish(&j, fd, why, out, err, errlen);
}
