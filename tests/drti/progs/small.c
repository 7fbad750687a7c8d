/*
 * A minimal probed program for the target matrix of tests/drti (-m32 and
 * clang): only <stdio.h>, which a -m32 compiler without the kernel's
 * <asm/...> headers can still include. Fires its probes, copies
 * /proc/self/maps to argv[1] when given, prints "ok".
 */
#include <stdio.h>

#include "names.h"

int main(int argc, char **argv)
{
	char line[4096];

	APP_START(1, (char *)"hello");
	APP_TICK(2);
	if (argc > 1) {
		FILE *in = fopen("/proc/self/maps", "r"), *out = fopen(argv[1], "w");

		while (in && out && fgets(line, sizeof(line), in))
			fputs(line, out);
		if (in)
			fclose(in);
		if (out)
			fclose(out);
	}
	puts("ok");
	return 0;
}
