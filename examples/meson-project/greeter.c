/*
 * Greets each name on its command line, firing a probe per greeting; the
 * lengths are counted by libcounter.
 * Usage: greeter NAME...
 */
#include <stdio.h>

#include "greeter_probes.h"

unsigned long counter_add(const char *name);

int main(int argc, char **argv)
{
	unsigned long total = 0;
	int i;

	for (i = 1; i < argc; i++) {
		GREETER_GREET(argv[i], i);
		printf("hello, %s\n", argv[i]);
		total = counter_add(argv[i]);
	}
	GREETER_DONE(argc - 1, total);
	return 0;
}
