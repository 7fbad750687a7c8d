/*
 * The host program: loads a plugin library with dlopen, hands it the words
 * of its command line, unloads it. It has no probes of its own.
 * Usage: host ./libplugin.so [rounds] [delay-ms] [words...]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	static const char *const dflt[] = {"alpha", "beta", "gamma"};
	const char *const *items = dflt;
	int nitems = 3, rounds, delay_ms, r;
	struct timespec pause;
	int (*init)(void);
	unsigned long (*process)(const char *const *, int);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBRARY [rounds] [delay-ms] [words...]\n", argv[0]);
		return 2;
	}
	rounds = argc > 2 ? atoi(argv[2]) : 3;
	delay_ms = argc > 3 ? atoi(argv[3]) : 200;
	if (argc > 4) {
		items = (const char *const *)argv + 4;
		nitems = argc - 4;
	}
	pause.tv_sec = delay_ms / 1000;
	pause.tv_nsec = (delay_ms % 1000) * 1000000L;

	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "host: %s\n", dlerror());
		return 1;
	}
	*(void **)&init = dlsym(lib, "plugin_init");
	*(void **)&process = dlsym(lib, "plugin_process");
	if (!init || !process) {
		fprintf(stderr, "host: %s is not a plugin\n", argv[1]);
		return 1;
	}
	printf("plugin version %d\n", init());
	for (r = 0; r < rounds; r++) {
		printf("round %d: total cost %lu\n", r + 1, process(items, nitems));
		fflush(stdout);
		nanosleep(&pause, NULL);
	}
	dlclose(lib);
	return 0;
}
