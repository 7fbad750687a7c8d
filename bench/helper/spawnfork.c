/*
 * The measuring side of bench/helper/throughput.sh: how many probed
 * processes per second a loop starts, or a server forks.
 *
 *   spawnfork spawn N PROG   N runs of PROG in a row (posix_spawn, waitpid)
 *   spawnfork fork N         N fork children of this process, each firing
 *                            the provider's probe and _exit(0), waited for
 *                            one after another
 *
 * Prints the mean microseconds per run. This program is itself linked with
 * a `dtrace -G` object (so its drti is what a forking server carries) and
 * fires BENCHPROV_TICK (bp.h, written by throughput.sh) in each child.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bp.h"

extern char **environ;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	posix_spawn_file_actions_t fa;
	double t0;
	int st;

	if (n <= 0 || !((argc == 4 && !strcmp(argv[1], "spawn")) ||
			(argc == 3 && !strcmp(argv[1], "fork")))) {
		fprintf(stderr, "usage: spawnfork spawn N PROG | spawnfork fork N\n");
		return 2;
	}
	/* The spawned program's output (target.c writes its start time) is not ours. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = now_us();
	for (long i = 0; i < n; i++) {
		pid_t pid;

		if (argv[1][0] == 's') {
			char *args[] = {argv[3], NULL};

			if (posix_spawn(&pid, argv[3], &fa, NULL, args, environ) != 0)
				return 1;
		} else {
			pid = fork();
			if (pid == 0) {
				BENCHPROV_TICK((int)i);
				_exit(0);
			}
			if (pid < 0)
				return 1;
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	printf("%.1f\n", (now_us() - t0) / n);
	return 0;
}
