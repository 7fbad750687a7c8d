/*
 * The -G end-to-end program: an executable (provider e2eapp), a linked shared
 * library and a dlopen'd plugin (both provider e2eshared, each with its own
 * -G object). Every 20 ms it writes which `_ENABLED()` tests are true to the
 * state file (atomically), until the stop file appears or 60 s pass.
 *   app STATE_FILE STOP_FILE PLUGIN_PATH
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif
int lib_poll(int i);
#ifdef __cplusplus
}
#endif

static char tickname[] = "tick";

int main(int argc, char **argv)
{
	char tmp[4096];
	void *h;
	int (*plugin_poll)(int);
	int i;

	if (argc != 4)
		return 2;
	h = dlopen(argv[3], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&plugin_poll = dlsym(h, "plugin_poll");
	if (!plugin_poll)
		return 1;
	E2EAPP_START_UP();
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	for (i = 0; i < 3000 && access(argv[2], F_OK) != 0; i++) {
		int a = 0, l, p;
		FILE *f;

		if (E2EAPP_TICK_ENABLED()) {
			E2EAPP_TICK(i, tickname);
			a = 1;
		}
		l = lib_poll(i);
		p = plugin_poll(i);
		f = fopen(tmp, "w");
		if (!f)
			return 1;
		fprintf(f, "app=%d lib=%d plugin=%d\n", a, l, p);
		fclose(f);
		rename(tmp, argv[1]);
		usleep(20000);
	}
	return 0;
}
