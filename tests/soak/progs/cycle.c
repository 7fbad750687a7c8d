// SPDX-License-Identifier: MIT
/*
 * The soak's long-lived program: `cycle LIB N` dlopen()s LIB (a `dtrace -G`
 * shared library: its drti registers it at load and unregisters it at
 * dlclose), calls its soak_lib_call() (which fires the probe), and
 * dlclose()s it, N times. After each dlclose it checks that the library is
 * really gone (RTLD_NOLOAD), otherwise no destructor would have run and the
 * cycle would exercise nothing. Prints "cycle K" every 100 cycles and
 * "done N" at the end; any failure is printed and makes the exit status 1.
 * The program itself has no probes: between cycles the daemon should hold
 * nothing for it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n, k;

	if (argc != 3) {
		fprintf(stderr, "usage: cycle LIB N\n");
		return 2;
	}
	n = atol(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (k = 1; k <= n; k++) {
		void (*call)(int);
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			printf("cycle %ld: dlopen: %s\n", k, dlerror());
			return 1;
		}
		call = (void (*)(int))dlsym(h, "soak_lib_call");
		if (!call) {
			printf("cycle %ld: dlsym: %s\n", k, dlerror());
			return 1;
		}
		call((int)k);
		if (dlclose(h) != 0) {
			printf("cycle %ld: dlclose: %s\n", k, dlerror());
			return 1;
		}
		h = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			printf("cycle %ld: still loaded after dlclose\n", k);
			return 1;
		}
		if (k % 100 == 0)
			printf("cycle %ld\n", k);
	}
	printf("done %ld\n", n);
	return 0;
}
