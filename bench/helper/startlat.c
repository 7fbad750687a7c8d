/* SPDX-License-Identifier: MIT */
/*
 * The measuring side of bench/helper/run.sh.
 *
 *   startlat lat ROUNDS SPEC...   start-up latency of programs
 *   startlat reqs SECONDS SOCKET  REGISTER requests per second, this process
 *   startlat spawn COUNT PROG     COUNT runs of PROG, one after another
 *
 * lat: SPEC is "LABEL|ENV=V ENV=V|PROGRAM" (ENV part may be empty; a
 * PROGRAM written +PATH is copied to a new file before each run, so that
 * every start is of a file no daemon has seen, and removed after). Each
 * round runs every SPEC once, in a random order, with posix_spawn; the
 * program (target.c) writes CLOCK_MONOTONIC at the top of main() to its
 * stdout, a pipe. exec->main is that minus the time just before
 * posix_spawn; spawn->exit is the time until waitpid returns. For each SPEC
 * it prints one line:
 *   LABEL median_main p10_main p90_main median_exit dmain dexit p99_main dmain99
 * in microseconds, where dmain/dexit are medians of the per-round
 * differences with the FIRST spec (paired, so drift cancels out), and
 * dmain99 their 99th percentile (bench/helper/loadtest.sh: what a known
 * file's registration adds to a start while others load the daemon).
 *
 * reqs: sends REGISTER for this program's own .note.usdtkit (found with
 * dl_iterate_phdr: the program is linked with a -G object) over a new
 * connection each time, waiting for each REPLY, for SECONDS; prints
 * "requests N seconds S failed F".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol.h"

/*
 * A probe site of the -G provider (run.sh passes its name): the daemon
 * refuses a module without probes (-ENODATA), and reqs must measure real
 * registrations.
 */
#ifdef BENCH_PROVIDER
#include <sys/sdt.h>
#define BENCH_SITE(x) STAP_PROBE1(BENCH_PROVIDER, tick, x)
#else
#define BENCH_SITE(x) ((void)(x))
#endif

#define MAXSPEC 12

struct spec {
	char *label, *prog;
	int fresh; /* PROGRAM given as +PATH: a new copy (new inode) every run */
	char **envp;
	double *main_us, *exit_us;
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th quantile of v[0..n), which stays in its order (the rounds are paired by index). */
static double pct(const double *v, int n, double p)
{
	double *c = malloc((size_t)n * sizeof(*c)), q;

	if (!c)
		return 0;
	memcpy(c, v, (size_t)n * sizeof(*c));
	qsort(c, (size_t)n, sizeof(*c), cmp_double);
	q = c[(int)(p * (n - 1) + 0.5)];
	free(c);
	return q;
}

/* envp: ours minus drti's variables, plus the spec's. */
static char **make_env(char *extra)
{
	extern char **environ;
	char **envp = calloc(512, sizeof(*envp));
	int n = 0;
	char *tok, *save;

	for (char **e = environ; *e && n < 400; e++)
		if (strncmp(*e, "USDTKIT_", 8) && strncmp(*e, "DTRACE_DOF_INIT_", 16))
			envp[n++] = *e;
	for (tok = strtok_r(extra, " ", &save); tok && n < 510; tok = strtok_r(NULL, " ", &save))
		envp[n++] = tok;
	return envp;
}

/* Copies `from` to `to` (mode 0755): a file no daemon has seen. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		n = -1;
	return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

static int run_one(struct spec *s, int round)
{
	posix_spawn_file_actions_t fa;
	char fresh[4200];
	char *argv[] = {s->prog, NULL};
	int p[2], status;
	struct timespec tm;
	double t0, t1;
	pid_t pid;

	if (s->fresh) {
		snprintf(fresh, sizeof(fresh), "%s.fresh%d", s->prog, round);
		if (copy_file(s->prog, fresh) < 0)
			return -1;
		argv[0] = fresh;
	}

	if (pipe(p) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	t0 = now_us();
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, s->envp) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (read(p[0], &tm, sizeof(tm)) != (ssize_t)sizeof(tm))
		return -1;
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	t1 = now_us();
	if (s->fresh)
		unlink(fresh);
	s->main_us[round] = tm.tv_sec * 1e6 + tm.tv_nsec / 1e3 - t0;
	s->exit_us[round] = t1 - t0;
	return 0;
}

static int lat(int rounds, int nspec, char **specs)
{
	struct spec s[MAXSPEC];
	double *d = malloc(sizeof(double) * (size_t)rounds);
	int i, r;

	if (nspec > MAXSPEC || !d)
		return 2;
	for (i = 0; i < nspec; i++) {
		char *a = strchr(specs[i], '|'), *b = a ? strchr(a + 1, '|') : NULL;

		if (!b) {
			fprintf(stderr, "startlat: SPEC is LABEL|ENV|PROGRAM: %s\n", specs[i]);
			return 2;
		}
		*a = *b = '\0';
		s[i].label = specs[i];
		s[i].envp = make_env(a + 1);
		s[i].prog = b + 1;
		s[i].fresh = s[i].prog[0] == '+';
		s[i].prog += s[i].fresh;
		s[i].main_us = malloc(sizeof(double) * (size_t)rounds);
		s[i].exit_us = malloc(sizeof(double) * (size_t)rounds);
	}
	/* one warm-up round: page cache, the daemon's first parse */
	for (i = 0; i < nspec; i++)
		if (run_one(&s[i], 0) < 0) {
			fprintf(stderr, "startlat: %s failed\n", s[i].label);
			return 1;
		}
	srand(12345);
	for (r = 0; r < rounds; r++) {
		int order[MAXSPEC];

		/*
		 * A fresh random order each round: with a fixed rotation the
		 * same variant would always follow the one whose exit makes
		 * the daemon work, and pay for it.
		 */
		for (i = 0; i < nspec; i++)
			order[i] = i;
		for (i = nspec - 1; i > 0; i--) {
			int j = rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < nspec; i++) {
			struct spec *x = &s[order[i]];

			if (run_one(x, r) < 0) {
				fprintf(stderr, "startlat: %s failed\n", x->label);
				return 1;
			}
		}
	}
	for (i = 0; i < nspec; i++) {
		double dm, dm99, de;

		for (r = 0; r < rounds; r++)
			d[r] = s[i].main_us[r] - s[0].main_us[r];
		dm = pct(d, rounds, 0.5);
		dm99 = pct(d, rounds, 0.99);
		for (r = 0; r < rounds; r++)
			d[r] = s[i].exit_us[r] - s[0].exit_us[r];
		de = pct(d, rounds, 0.5);
		printf("%s %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", s[i].label,
		       pct(s[i].main_us, rounds, 0.5), pct(s[i].main_us, rounds, 0.1),
		       pct(s[i].main_us, rounds, 0.9), pct(s[i].exit_us, rounds, 0.5), dm, de,
		       pct(s[i].main_us, rounds, 0.99), dm99);
	}
	return 0;
}

static uint64_t note_addr;

static int find_note(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program only */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + 12 <= end) {
			const uint32_t *h = (const uint32_t *)p;
			size_t nsz = (h[0] + 3) & ~3u, dsz = (h[1] + 3) & ~3u;

			if (h[0] == 8 && h[2] == 1 && !memcmp(p + 12, "usdtkit", 8)) {
				note_addr = (uint64_t)(uintptr_t)p;
				return 1;
			}
			p += 12 + nsz + dsz;
		}
	}
	return 0;
}

static int reqs(double seconds, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct usdt_msg_module m;
	struct usdt_msg_reply rep;
	double t0 = now_us(), t;
	long n = 0, failed = 0;

	dl_iterate_phdr(find_note, NULL);
	if (!note_addr) {
		fprintf(stderr, "startlat: no .note.usdtkit in this program\n");
		return 1;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	memset(&m, 0, sizeof(m));
	m.hdr.magic = USDT_PROTO_MAGIC;
	m.hdr.version = USDT_PROTO_VERSION;
	m.hdr.type = USDT_MSG_REGISTER;
	m.hdr.size = sizeof(m);
	m.addr = note_addr;
	do {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		struct pollfd p = {.fd = fd, .events = POLLIN};

		m.hdr.seq = (uint32_t)++n;
		if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
		    send(fd, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m) || poll(&p, 1, 1000) != 1 ||
		    recv(fd, &rep, sizeof(rep), 0) != sizeof(rep) || rep.status < 0)
			failed++;
		if (fd >= 0)
			close(fd);
		t = now_us();
	} while (t - t0 < seconds * 1e6);
	printf("requests %ld seconds %.3f failed %ld\n", n - failed, (t - t0) / 1e6, failed);
	return 0;
}

static int spawn(long count, char *prog)
{
	extern char **environ;
	char *argv[] = {prog, NULL};
	long i;

	for (i = 0; i < count; i++) {
		pid_t pid;
		int st;

		if (posix_spawn(&pid, prog, NULL, NULL, argv, environ) != 0 ||
		    waitpid(pid, &st, 0) != pid)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	BENCH_SITE(argc);
	if (argc >= 4 && !strcmp(argv[1], "lat"))
		return lat(atoi(argv[2]), argc - 3, argv + 3);
	if (argc == 4 && !strcmp(argv[1], "reqs"))
		return reqs(atof(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "spawn"))
		return spawn(atol(argv[2]), argv[3]);
	fprintf(stderr,
		"usage: startlat lat ROUNDS SPEC... | reqs SECONDS SOCKET | spawn N PROG\n");
	return 2;
}
