// SPDX-License-Identifier: MIT
/*
 * The soak's process source: `spawn N J PROG...` runs N processes, J at a
 * time, taking the PROGs in turn (no arguments, stdin /dev/null, the
 * environment and stdout/stderr inherited), and reaps each. posix_spawn
 * (vfork-like) keeps the spawner's own cost small next to a probed program's
 * start. Prints "spawned N failed F seconds S"; exit status 1 when any
 * process failed to start, died of a signal or exited non-zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reaps one child; counts it as failed unless it exited 0. */
static int reap(long *failed)
{
	int st;
	pid_t pid = waitpid(-1, &st, 0);

	if (pid < 0)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (*failed < 10)
			fprintf(stderr, "spawn: pid %d: status 0x%x\n", (int)pid, st);
		(*failed)++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	long n, j, started = 0, running = 0, failed = 0;
	double t0;

	if (argc < 4) {
		fprintf(stderr, "usage: spawn N J PROG...\n");
		return 2;
	}
	n = atol(argv[1]);
	j = atol(argv[2]);
	if (n < 0 || j < 1)
		return 2;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	t0 = now();
	while (started < n || running > 0) {
		if (started < n && running < j) {
			char *prog = argv[3 + started % (argc - 3)];
			char *args[] = {prog, NULL};
			pid_t pid;
			int err = posix_spawn(&pid, prog, &fa, NULL, args, environ);

			started++;
			if (err) {
				fprintf(stderr, "spawn: %s: %s\n", prog, strerror(err));
				failed++;
				continue;
			}
			running++;
			continue;
		}
		if (reap(&failed) != 0) {
			fprintf(stderr, "spawn: waitpid: %s\n", strerror(errno));
			return 1;
		}
		running--;
	}
	printf("spawned %ld failed %ld seconds %.2f\n", n, failed, now() - t0);
	return failed ? 1 : 0;
}
