/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for every parser of a packet that crosses the helper's
 * socket (core/protocol.h), each fed the same packets:
 *
 *   - the daemon's check of a client's packet, hd_msg_decode (helperd/msg.c),
 *     on each packet alone;
 *   - drti's reading of the daemon's answer (drti/drti.c, linked: a build
 *     of it for this target, drti_fuzz.h): usdt_drti_read_reply reads the
 *     packets from a real SOCK_SEQPACKET socketpair, as it reads them from
 *     the daemon, then the debug line is built from the result
 *     (usdt_drti_report), both through usdt_drti_fuzz_read;
 *   - a watcher's test of a NOTICE (usdt_answer_check, as dtrace's
 *     retain.c reads them);
 *   - `dtrace -l`'s client (dtrace/list/list_source.c,
 *     usdt_list_daemon_modules): it connects to a listening socket of ours;
 *     a thread accepts, checks the LIST request with hd_msg_decode and
 *     answers with the packets (LIST_ENTRY..., REPLY), then closes.
 *
 * Input: packets, each a 2-byte little-endian length, a fix-up byte and that
 * many bytes (the last one takes what is left). The fix-up byte lets the
 * fuzzer get past the header checks without guessing them: bit 0 writes the
 * magic and version, bit 1 the size (= the packet's length), bit 2 the
 * sequence number the reader waits for, bit 3 (a LIST_ENTRY's length) the
 * pid, range, device and inode of a real mapping of this process, so that
 * the lister's success path (open through map_files, add the module) runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "drti_fuzz.h"
#include "helperd.h"
#include "list_source.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_PACKETS 64
#define FIX_MAGIC 1u
#define FIX_SIZE 2u
#define FIX_SEQ 4u
#define FIX_MAPPING 8u

struct packet {
	unsigned char *p;
	size_t len;
};

static struct {
	char dir[64], path[108];
	int listen_fd;
	/* A file-backed mapping of this process (the fuzzer's own text). */
	uint64_t start, end, dev, ino;
	FILE *devnull;
} fz;

static volatile size_t sink;
static const char *only; /* FUZZ_ONLY=daemon|drti|watcher|list: that reader alone (reproducers) */

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-protocol: invariant broken: %s\n", what);
		abort();
	}
}

static void find_own_mapping(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		char perms[8];
		int n = 0;
		struct stat st;
		char *path;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj,
			   &min, &ino, &n) < 7 ||
		    !n || ino == 0)
			continue;
		path = line + n;
		path[strcspn(path, "\n")] = '\0';
		if (path[0] != '/' || stat(path, &st) != 0 || (uint64_t)st.st_ino != ino)
			continue;
		fz.start = s;
		fz.end = e;
		fz.dev = (uint64_t)st.st_dev;
		fz.ino = (uint64_t)st.st_ino;
		break;
	}
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	(void)argc;
	(void)argv;
	snprintf(fz.dir, sizeof(fz.dir), "/tmp/usdtkit-fzproto.XXXXXX");
	if (!mkdtemp(fz.dir))
		abort();
	snprintf(fz.path, sizeof(fz.path), "%s/s", fz.dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fz.path);
	fz.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fz.listen_fd < 0 || bind(fz.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fz.listen_fd, 4) != 0)
		abort();
	/* The socket's name is not needed after this: connect works until it is gone. */
	setenv(USDT_HELPER_SOCKET_ENV, fz.path, 1);
	fz.devnull = fopen("/dev/null", "w");
	if (!fz.devnull)
		abort();
	find_own_mapping();
	only = getenv("FUZZ_ONLY");
	return 0;
}

__attribute__((destructor)) static void fz_cleanup(void)
{
	if (fz.path[0]) {
		unlink(fz.path);
		rmdir(fz.dir);
	}
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Splits the input into packets (copies, with the fix-ups applied for `seq`). */
static size_t split(const uint8_t *d, size_t size, uint32_t seq, struct packet *pk)
{
	size_t n = 0, pos = 0;

	while (pos + 3 <= size && n < MAX_PACKETS) {
		size_t len = (size_t)d[pos] | (size_t)d[pos + 1] << 8;
		unsigned fix = d[pos + 2];
		unsigned char *p;

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		p = malloc(len ? len : 1);
		if (!p)
			abort();
		memcpy(p, d + pos, len);
		pos += len;
		if (len >= sizeof(struct usdt_msg_hdr)) {
			if (fix & FIX_MAGIC) {
				uint16_t v = USDT_PROTO_VERSION;

				put32(p + offsetof(struct usdt_msg_hdr, magic), USDT_PROTO_MAGIC);
				memcpy(p + offsetof(struct usdt_msg_hdr, version), &v, 2);
			}
			if (fix & FIX_SIZE)
				put32(p + offsetof(struct usdt_msg_hdr, size), (uint32_t)len);
			if (fix & FIX_SEQ)
				put32(p + offsetof(struct usdt_msg_hdr, seq), seq);
		}
		if ((fix & FIX_MAPPING) && len >= sizeof(struct usdt_msg_list_entry)) {
			int32_t pid = (int32_t)getpid();

			memcpy(p + offsetof(struct usdt_msg_list_entry, pid), &pid, 4);
			put64(p + offsetof(struct usdt_msg_list_entry, dev), fz.dev);
			put64(p + offsetof(struct usdt_msg_list_entry, ino), fz.ino);
			put64(p + offsetof(struct usdt_msg_list_entry, start), fz.start);
			put64(p + offsetof(struct usdt_msg_list_entry, end), fz.end);
		}
		pk[n].p = p;
		pk[n].len = len;
		n++;
	}
	return n;
}

/* The daemon's check, on each packet: what it accepts is exactly a request. */
static void daemon_decode(const struct packet *pk, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct hd_request req;
		struct usdt_msg_hdr h;
		int ret = hd_msg_decode(pk[i].p, pk[i].len, &req);

		if (ret)
			continue;
		memcpy(&h, pk[i].p, sizeof(h));
		check(h.magic == USDT_PROTO_MAGIC && h.version == USDT_PROTO_VERSION &&
			  h.size == pk[i].len && req.seq == h.seq && req.type == h.type,
		      "hd_msg_decode accepted a bad header");
		if (req.type == USDT_MSG_LIST)
			check(pk[i].len == sizeof(struct usdt_msg_list) && req.pid >= 0,
			      "bad LIST accepted");
		else if (req.type == USDT_MSG_WATCH)
			check(pk[i].len == sizeof(struct usdt_msg_watch), "bad WATCH accepted");
		else if (req.type == USDT_MSG_READY)
			check(pk[i].len == sizeof(struct usdt_msg_ready) && req.notice != 0,
			      "bad READY accepted");
		else
			check((req.type == USDT_MSG_REGISTER || req.type == USDT_MSG_UNREGISTER) &&
				  pk[i].len == sizeof(struct usdt_msg_module),
			      "bad REGISTER/UNREGISTER accepted");
	}
}

/*
 * A watcher (dtrace's retain.c) takes a packet as a NOTICE only when the
 * shared validator says so: then every field it uses is sound.
 */
static void watcher_reads(const struct packet *pk, size_t n, uint32_t seq)
{
	for (size_t i = 0; i < n; i++) {
		struct usdt_msg_notice no;

		if (pk[i].len < sizeof(struct usdt_msg_hdr) ||
		    usdt_answer_check(pk[i].p, pk[i].len, seq) != USDT_ANSWER_NOTICE)
			continue;
		check(pk[i].len == sizeof(no), "a NOTICE of the wrong size accepted");
		memcpy(&no, pk[i].p, sizeof(no));
		check(no.notice != 0 && no.pid > 0 && no.hdr.seq == seq &&
			  no.hdr.type == USDT_MSG_NOTICE,
		      "a bad NOTICE accepted");
		sink += (size_t)(no.dev ^ no.ino);
	}
}

/* drti reads the daemon's answer to request `seq` from a socketpair. */
static void drti_reads(const struct packet *pk, size_t n, uint32_t seq)
{
	int sv[2], r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (send(sv[1], pk[i].p, pk[i].len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			break; /* the socket buffer is full: the rest is not sent */
	close(sv[1]);
	r = usdt_drti_fuzz_read(sv[0], seq, 5000);
	close(sv[0]);
	/* Everything was queued before the read: an answer or a reason, never a timeout. */
	check(r & (USDT_DRTI_FUZZ_ANSWERED | USDT_DRTI_FUZZ_FAILED),
	      "drti: neither answered nor failed");
	check((r & (USDT_DRTI_FUZZ_ANSWERED | USDT_DRTI_FUZZ_FAILED)) !=
		  (USDT_DRTI_FUZZ_ANSWERED | USDT_DRTI_FUZZ_FAILED),
	      "drti: answered and failed");
	check(!(r & USDT_DRTI_FUZZ_OVERFLOW), "drti: debug line overflow");
	sink += (size_t)r;
}

/*
 * The daemon's side of the LIST conversations: one thread for the whole run
 * (a thread per input made ASan's memory grow without bound), handed each
 * input's packets under a mutex.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const struct packet *pk;
	size_t n;
	bool go, done, started;
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void serve_one(const struct packet *pk, size_t n)
{
	struct pollfd p = {.fd = fz.listen_fd, .events = POLLIN};
	struct usdt_msg_list req;
	struct hd_request r;
	ssize_t got;
	int fd;

	/* Bounded: a client that never came would otherwise hang the run. */
	if (poll(&p, 1, 5000) != 1)
		return;
	fd = accept4(fz.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	got = recv(fd, &req, sizeof(req), 0);
	check(got == (ssize_t)sizeof(req) && hd_msg_decode(&req, sizeof(req), &r) == 0 &&
		  r.type == USDT_MSG_LIST && r.seq == (uint32_t)getpid(),
	      "dtrace -l sent a request the daemon refuses");
	for (size_t i = 0; i < n; i++)
		if (send(fd, pk[i].p, pk[i].len, MSG_NOSIGNAL) < 0)
			break; /* the client stopped reading */
	close(fd);
}

static void *server(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&srv.mu);
		while (!srv.go)
			pthread_cond_wait(&srv.cv, &srv.mu);
		srv.go = false;
		pthread_mutex_unlock(&srv.mu);
		serve_one(srv.pk, srv.n);
		pthread_mutex_lock(&srv.mu);
		srv.done = true;
		pthread_cond_broadcast(&srv.cv);
		pthread_mutex_unlock(&srv.mu);
	}
	return NULL;
}

static void list_reads(const struct packet *pk, size_t n)
{
	struct usdt_list_modules mods = {0};
	struct usdt_diag diag;
	pthread_t t;
	int rc;

	if (!srv.started) {
		if (pthread_create(&t, NULL, server, NULL) != 0)
			abort();
		pthread_detach(t);
		srv.started = true;
	}
	usdt_diag_init(&diag, fz.devnull, "dtrace");
	pthread_mutex_lock(&srv.mu);
	srv.pk = pk;
	srv.n = n;
	srv.done = false;
	srv.go = true;
	pthread_cond_broadcast(&srv.cv);
	pthread_mutex_unlock(&srv.mu);
	rc = usdt_list_daemon_modules(&mods, &diag);
	pthread_mutex_lock(&srv.mu);
	while (!srv.done)
		pthread_cond_wait(&srv.cv, &srv.mu);
	pthread_mutex_unlock(&srv.mu);
	check(rc == 0 || rc == -1, "usdt_list_daemon_modules result");
	for (size_t i = 0; i < mods.n; i++) {
		check(mods.v[i].fd >= 0 && mods.v[i].path && mods.v[i].module, "module fields");
		check(mods.v[i].pid == (int)getpid() && mods.v[i].ino == fz.ino,
		      "a module nobody mapped");
		sink += strlen(mods.v[i].path) + strlen(mods.v[i].module);
	}
	usdt_list_modules_free(&mods);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct packet pk[MAX_PACKETS];
	uint32_t seq = (uint32_t)getpid();
	size_t n = split(data, size, seq, pk);

	if (!only || strcmp(only, "daemon") == 0)
		daemon_decode(pk, n);
	if (!only || strcmp(only, "drti") == 0)
		drti_reads(pk, n, seq);
	if (!only || strcmp(only, "watcher") == 0)
		watcher_reads(pk, n, seq);
	if (!only || strcmp(only, "list") == 0)
		list_reads(pk, n);
	for (size_t i = 0; i < n; i++)
		free(pk[i].p);
	return 0;
}
