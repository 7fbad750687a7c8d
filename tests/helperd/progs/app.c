/*
 * The probed program of tests/helperd, linked with a `dtrace -G` object
 * (provider ${P}app, see ../lib.sh) so drti registers it with the daemon.
 * It reads commands from stdin, one per line, and answers on stdout:
 *
 *   fire N        fire start(i, "str-i") and tick(i) for i = 1..N; prints "fired N"
 *   fork          fork a child that holds (reads nothing, waits for SIGTERM);
 *                 prints "child PID"
 *   dlopen LIB    dlopen LIB and call its lib_call(); prints "dlopen ok"
 *   dlclose       dlclose it; prints "dlclose ok"
 *   exec FILE     replace this process by FILE (no arguments; stdin stays)
 *   exit          exit 0 (so does EOF)
 *
 * It prints "ready PID" first, after its constructor (drti) has run.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"

static void fire(int n)
{
	char s[32];

	for (int i = 1; i <= n; i++) {
		snprintf(s, sizeof(s), "str-%d", i);
		APP_START(i, s);
		APP_TICK(i);
	}
}

int main(void)
{
	char line[4200];
	void *lib = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "fire ", 5)) {
			fire(atoi(line + 5));
			printf("fired %d\n", atoi(line + 5));
		} else if (!strcmp(line, "fork")) {
			pid_t pid = fork();

			if (pid == 0) {
				for (;;)
					pause();
			}
			printf("child %d\n", (int)pid);
		} else if (!strncmp(line, "dlopen ", 7)) {
			void (*call)(int);

			lib = dlopen(line + 7, RTLD_NOW);
			call = lib ? (void (*)(int))dlsym(lib, "lib_call") : NULL;
			if (call)
				call(7);
			printf("dlopen %s\n", call ? "ok" : dlerror());
		} else if (!strcmp(line, "dlclose")) {
			printf("dlclose %s\n", lib && dlclose(lib) == 0 ? "ok" : "failed");
			lib = NULL;
		} else if (!strncmp(line, "exec ", 5)) {
			execl(line + 5, line + 5, (char *)NULL);
			printf("exec failed\n");
		} else if (!strcmp(line, "exit")) {
			break;
		}
	}
	return 0;
}
