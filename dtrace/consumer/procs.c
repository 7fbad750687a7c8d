/* SPDX-License-Identifier: MIT */
/*
 * The run's processes as DTrace speaks of them: the `matched N probes`
 * notices once tracing begins, and a -c or -p process gone (`dtrace: pid N
 * has exited`, with its status when it was ours). Below the engine, which
 * prints them, and the driver.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "d.h"

/* "-n 'a:::b /x/ { ... }'": the description as DTrace quotes it (cut at { / ;). */
void dt_notices(const struct dt_consumer_opts *o, const struct dt_probes *ps)
{
	size_t i;

	if (o->quiet)
		return;
	for (i = 0; i < o->nsources; i++) {
		const struct dt_source *s = &o->sources[i];
		size_t n = ps->matched[i];

		if (s->kind == 'n')
			fprintf(stderr, "dtrace: description '%.*s' matched %zu probe%s\n",
				(int)strcspn(s->name, "{/;"), s->name, n, n == 1 ? "" : "s");
		else
			fprintf(stderr, "dtrace: script '%s' matched %zu probe%s\n", s->name, n,
				n == 1 ? "" : "s");
	}
}

bool dt_pid_gone(int pid, bool child, bool quiet)
{
	int status;

	if (!child) {
		if (!kill(pid, 0) || errno != ESRCH)
			return false;
		if (!quiet)
			fprintf(stderr, "dtrace: pid %d has exited\n", pid);
		return true;
	}
	if (waitpid(pid, &status, WNOHANG) != pid)
		return false;
	if (quiet)
		;
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "dtrace: pid %d exited with status %d\n", pid, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "dtrace: pid %d terminated by %s\n", pid,
			sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
						       : "a signal");
	else
		fprintf(stderr, "dtrace: pid %d has exited\n", pid);
	return true;
}
