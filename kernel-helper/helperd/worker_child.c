// SPDX-License-Identifier: MIT
/*
 * The parser worker's own program (worker.c starts it; this is what runs in
 * it). The daemon forks and the child at once executes the daemon's own
 * binary again, with HD_WORKER_ARG as its first argument: hd_worker_main,
 * called first thing by main() (and by any program that starts workers: the
 * fuzz targets' seed generator), takes over from there and never returns.
 *
 * Why an exec and not the forked copy. The daemon has threads (writer.c's
 * writer, checker and lister), and a fork copies only the thread that
 * called it: any lock another thread held at that moment stays held in the
 * child for good. glibc's malloc is reset across fork, but nothing else is
 * promised (POSIX allows only async-signal-safe calls in such a child), and
 * a sanitizer's allocator is not reset at all: under clang 14's ASan a
 * worker forked while a writer thread allocated waited on that lock, a
 * futex(2) its seccomp filter refused, and died of SIGSYS (CI's sanitizer
 * run of t-sec-load-fair; the kernel's audit line named syscall 202 in
 * __sanitizer::FutexWait). After the exec the worker is a fresh, one-thread
 * process: nothing of the daemon's memory, locks or address layout (its own
 * ASLR) carries over, only its descriptors 0-4 (below) and the environment.
 *
 * What it is given: fd 3, its end of the socketpair; fd 4, the sealed memfd
 * holding the seccomp program the daemon prepared (sandbox.c), when there is
 * one; 0-2 on /dev/null; its limits as arguments. It names itself, confines
 * itself (hd_sandbox: resource limits and the filter that allows reading,
 * seeking and stat on any fd it has, receiving and writing on the socket
 * only, naming itself, anonymous non-executable memory, and exit; anything
 * else kills it), and only then receives the file, a descriptor passed on
 * the socket (SCM_RIGHTS). It reads the notes (core/notes.c, which checks
 * every offset itself), applies the metadata note's argument names and
 * `char *` hints, and writes the accepted probes to the socket as the flat
 * record stream worker.c describes, its length first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helperd.h"
#include "metadata.h"
#include "strbuf.h"

static void put(struct usdt_sbuf *b, const void *data, size_t len)
{
	if (len) /* (an empty buffer's data may be NULL, which memcpy may not take) */
		usdt_sb_putn(b, data, len);
}

static void put32(struct usdt_sbuf *b, uint32_t v)
{
	put(b, &v, sizeof(v));
}

static void put64(struct usdt_sbuf *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

static void put_str(struct usdt_sbuf *b, const char *s)
{
	size_t len;

	if (!s) {
		put32(b, HD_WORKER_NO_STR);
		return;
	}
	len = strlen(s);
	if (len > HD_WORKER_STR_MAX)
		len = HD_WORKER_STR_MAX;
	put32(b, (uint32_t)len);
	put(b, s, len);
}

static void put_probe(struct usdt_sbuf *b, const struct usdt_site *p)
{
	put32(b, p->flags);
	put32(b, p->nargs);
	put64(b, p->pc);
	put64(b, p->pc_off);
	put64(b, p->sema);
	put64(b, p->sema_off);
	put64(b, p->note_base);
	put_str(b, p->provider);
	put_str(b, p->name);
	put_str(b, p->args);
	put_str(b, p->group);
	put_str(b, p->event);
	for (unsigned i = 0; i < p->nargs && i < USDT_SDT_MAX_ARGS; i++) {
		const struct usdt_argspec *a = &p->arg[i];

		put32(b, (uint32_t)a->kind);
		put32(b, a->size);
		put32(b, (uint32_t)a->is_signed | (uint32_t)a->is_string << 1);
		put64(b, (uint64_t)a->value);
		put_str(b, a->reg);
		put_str(b, a->name);
	}
}

/* Names and string hints from every valid metadata note of the file. */
static void apply_metadata(struct usdt_notes *n, struct usdt_sbuf *log, unsigned *nlog)
{
	for (size_t m = 0; m < n->nmeta; m++) {
		const char *why = "invalid";

		if (usdt_meta_apply_hints(n, m, &why) != 0 && *nlog < HD_WORKER_LOG_MAX) {
			char line[256];

			snprintf(line, sizeof(line), "metadata note %zu ignored: %s", m, why);
			put_str(log, line);
			(*nlog)++;
		}
	}
}

static void write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3);
		p += w;
		len -= (size_t)w;
	}
}

/* The answer, its length first: the daemon takes it as soon as it is all there. */
static __attribute__((noreturn)) void send_answer(const struct usdt_sbuf *out)
{
	uint64_t len = out->len;

	if (out->oom)
		_exit(5);
	write_all(3, (const unsigned char *)&len, sizeof(len));
	write_all(3, (const unsigned char *)out->s, out->len);
	_exit(0);
}

/* The one descriptor the daemon sends (SCM_RIGHTS, with one byte), or -1. */
static int receive_file(int sock)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	char byte;
	struct iovec iov = {&byte, 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof(c.b)};
	struct cmsghdr *h;
	int fd;

	memset(&c, 0, sizeof(c));
	while (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) < 0)
		if (errno != EINTR)
			return -1;
	h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
	    h->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1; /* (EOF too: the daemon is gone) */
	memcpy(&fd, CMSG_DATA(h), sizeof(fd));
	return fd;
}

/*
 * A worker: sandboxed first, then it waits on fd 3 for the one file it
 * will read. A spare (see hd_parse_spare) waits there until it is needed.
 */
static __attribute__((noreturn)) void child(const struct hd_worker_limits *lim, int filter_fd)
{
	struct usdt_notes *n = NULL;
	struct usdt_sbuf out = {0}, log = {0};
	unsigned nlog = 0;
	char err[256];
	int ret, file;

	prctl(PR_SET_NAME, "usdtkit-spare", 0, 0, 0);
	if (lim->test_delay_ms) {
		struct timespec ts = {lim->test_delay_ms / 1000,
				      (lim->test_delay_ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
	if (hd_sandbox(lim, filter_fd) != 0)
		_exit(4);
	file = receive_file(3);
	if (file < 0)
		_exit(6);
	prctl(PR_SET_NAME, "usdtkit-parse", 0, 0, 0);
	ret = usdt_notes_read(file, NULL, &n, err, sizeof(err));
	put(&out, "HDW1", 4);
	if (ret) {
		/* A whole-file error: the stream says so with arch 0xffffffff and the message. */
		put32(&out, 0xffffffffu);
		put32(&out, (uint32_t)-ret);
		put_str(&out, err);
		send_answer(&out);
	}
	apply_metadata(n, &log, &nlog);
	for (size_t i = 0; i < n->nsites && nlog < HD_WORKER_LOG_MAX; i++) {
		const struct usdt_site *p = &n->sites[i];
		char line[512];

		if (!p->reject)
			continue;
		snprintf(line, sizeof(line), "probe %s:%s rejected: %s: %s", p->provider, p->name,
			 p->reject, p->detail);
		put_str(&log, line);
		nlog++;
	}
	put32(&out, (uint32_t)n->arch);
	put32(&out, n->elf_class);
	put32(&out, n->e_type);
	put32(&out, n->flags);
	put64(&out, n->nsites);
	put32(&out, nlog);
	put(&out, log.s, log.len);
	put32(&out, (uint32_t)n->naccepted);
	for (size_t i = 0; i < n->nsites; i++)
		if (!n->sites[i].reject)
			put_probe(&out, &n->sites[i]);
	put(&out, "END!", 4);
	send_answer(&out);
}

/* A decimal argument, whole, below max; else the worker refuses to start. */
static uint64_t arg_u64(const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		_exit(HD_WORKER_EXIT_ARGS);
	return v;
}

void hd_worker_main(int argc, char **argv)
{
	struct hd_worker_limits lim = {0};
	int filter_fd = -1;

	if (argc < 2 || strcmp(argv[1], HD_WORKER_ARG) != 0)
		return;
	/* usdtkit-spare --usdtkit-parse-worker CPU_S AS_BYTES DELAY_MS fd4|build|none */
	if (argc != 6)
		_exit(HD_WORKER_EXIT_ARGS);
	lim.cpu_seconds = (unsigned)arg_u64(argv[2], 1u << 20);
	lim.address_space = arg_u64(argv[3], UINT64_MAX);
	lim.test_delay_ms = (unsigned)arg_u64(argv[4], 1u << 30);
	if (strcmp(argv[5], "fd4") == 0)
		filter_fd = 4;
	else if (strcmp(argv[5], "none") == 0)
		lim.test_no_seccomp = true;
	else if (strcmp(argv[5], "build") != 0)
		_exit(HD_WORKER_EXIT_ARGS);
	child(&lim, filter_fd);
}
