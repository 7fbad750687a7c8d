/*
 * The probed program of tests/drti, built with `dtrace -h`/`-G`. It runs the
 * commands given as arguments and prints what it observes on stdout, in a
 * form that does not depend on pids or addresses, so that a run with drti
 * talking to a (fake or real) helper can be compared byte for byte with a
 * run where drti is disabled.
 *
 *   errno           print errno as main() sees it (drti must preserve it)
 *   fds             print the open descriptors (drti must leave none)
 *   probe           fire the program's probes
 *   dlopen LIB      dlopen LIB (RTLD_NOW) and call its probed function
 *   dlclose         dlclose it
 *   fork CMDS.. ;   fork; the child runs CMDS (up to the matching ";", forks
 *                   nest) and exits with _exit(0); the
 *                   parent waits and prints the child's status. errno is set
 *                   to 4321 before fork() and printed on both sides after.
 *   pid FILE        append "pid N" (this process) to FILE
 *   maps FILE       copy /proc/self/maps to FILE
 *   sleep MS        sleep
 *   mark FILE       append "mark N" with N = CLOCK_REALTIME in ns (as date +%s%N) to FILE
 *   say TEXT        print TEXT
 *   waitfor FILE    wait (up to 60 s) until FILE exists
 *   forkbg CMDS.. ; like fork, but the parent goes on without waiting and
 *                   prints nothing about the child
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "names.h"

static int main_errno;
static void *lib;

static void print_fds(const char *who)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char list[1024] = "";
	int fds[256], n = 0, i, j;

	if (!d) {
		printf("%s fds: cannot list\n", who);
		return;
	}
	while ((e = readdir(d)) && n < 256) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				int t = fds[i];
				fds[i] = fds[j];
				fds[j] = t;
			}
	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), " %d", fds[i]);
	printf("%s fds:%s\n", who, list);
}

static void append(const char *file, const char *what, long long v)
{
	FILE *f = fopen(file, "a");

	if (f) {
		fprintf(f, "%s %lld\n", what, v);
		fclose(f);
	}
}

static int run(int argc, char **argv, int i, const char *who);

static int do_fork(int argc, char **argv, int i, const char *who, int bg)
{
	int end = i, depth = 0, status, saved;
	pid_t pid;

	/* the matching ";": a nested fork has its own */
	for (; end < argc; end++) {
		if (!strcmp(argv[end], "fork") || !strcmp(argv[end], "forkbg"))
			depth++;
		else if (!strcmp(argv[end], ";") && depth-- == 0)
			break;
	}
	fflush(stdout);
	errno = 4321;
	pid = fork();
	saved = errno;
	if (pid == 0) {
		printf("child errno after fork: %d\n", saved);
		run(end, argv, i, "child");
		fflush(stdout);
		_exit(0);
	}
	if (bg)
		return end < argc ? end + 1 : end;
	printf("%s errno after fork: %d\n", who, saved);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		printf("%s fork failed\n", who);
	else
		printf("%s: child exited with %d\n", who,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	(void)argc;
	return end < argc ? end + 1 : end;
}

static int run(int argc, char **argv, int i, const char *who)
{
	while (i < argc) {
		const char *c = argv[i++];
		const char *arg = i < argc ? argv[i] : "";

		if (!strcmp(c, "errno")) {
			printf("%s errno at main: %d\n", who, main_errno);
		} else if (!strcmp(c, "fds")) {
			print_fds(who);
		} else if (!strcmp(c, "probe")) {
			APP_START(1, (char *)"hello");
			APP_TICK(2);
			printf("%s probe fired\n", who);
		} else if (!strcmp(c, "dlopen")) {
			int (*f)(int);

			i++;
			lib = dlopen(arg, RTLD_NOW);
			f = lib ? (int (*)(int))dlsym(lib, "drti_lib_call") : NULL;
			printf("%s dlopen: %s\n", who, f && f(41) == 42 ? "ok" : "failed");
		} else if (!strcmp(c, "dlclose")) {
			printf("%s dlclose: %d\n", who, lib ? dlclose(lib) : -1);
			lib = NULL;
		} else if (!strcmp(c, "fork") || !strcmp(c, "forkbg")) {
			i = do_fork(argc, argv, i, who, c[4] == 'b');
		} else if (!strcmp(c, "waitfor")) {
			struct timespec ts = {0, 10000000L};
			int n;

			i++;
			for (n = 0; n < 6000 && access(arg, F_OK) != 0; n++)
				nanosleep(&ts, NULL);
		} else if (!strcmp(c, "pid")) {
			i++;
			append(arg, "pid", (long long)getpid());
		} else if (!strcmp(c, "maps")) {
			char line[4096];
			FILE *in = fopen("/proc/self/maps", "r"), *out = fopen(arg, "w");

			i++;
			while (in && out && fgets(line, sizeof(line), in))
				fputs(line, out);
			if (in)
				fclose(in);
			if (out)
				fclose(out);
		} else if (!strcmp(c, "sleep")) {
			struct timespec ts;
			long ms = atol(arg);

			i++;
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (ms % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		} else if (!strcmp(c, "mark")) {
			struct timespec ts;

			i++;
			clock_gettime(CLOCK_REALTIME, &ts);
			append(arg, "mark", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
		} else if (!strcmp(c, "say")) {
			i++;
			printf("%s says %s\n", who, arg);
		} else {
			printf("%s: unknown command %s\n", who, c);
			return 2;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	main_errno = errno;
	return run(argc, argv, 1, "main");
}
