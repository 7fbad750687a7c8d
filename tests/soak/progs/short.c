// SPDX-License-Identifier: MIT
/*
 * The soak's short-lived program: its `dtrace -G` object registers it with
 * the daemon (drti, before main), main fires its one probe and returns. Built
 * twice, for providers ${P}a and ${P}b (soak.h names the probe), so that two
 * modules come and go. With "hold" it waits for EOF on stdin first: a
 * process that keeps its module registered while a consumer counts firings.
 */
#include <stdio.h>
#include <string.h>

#include "soak.h"

int main(int argc, char **argv)
{
	int c;

	SOAK_TICK(argc);
	if (argc > 1 && !strcmp(argv[1], "hold")) {
		printf("ready\n");
		fflush(stdout);
		do
			c = getchar();
		while (c != EOF);
	}
	return 0;
}
