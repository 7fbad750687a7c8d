#include <stdio.h>
#include <stdlib.h>

#include "miniglib.h"

static int count_chars(void *data)
{
	int n = 0;

	for (const char *s = data; *s; s++)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	char *buf;

	printf("enabled=%d\n", g_trace_dispatch_enabled());
	for (int i = 1; i < argc; i++) {
		unsigned int q = g_quark_from_string(argv[i]);

		buf = g_malloc(16u * q);
		g_main_dispatch(argv[i], count_chars, argv[i]);
		g_free(buf);
	}
	return 0;
}
