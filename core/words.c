/* SPDX-License-Identifier: MIT */
/* Splitting a command line into words, as DTrace does for -c and $CPP (words.h). */
#include "words.h"

#include <stdlib.h>
#include <string.h>

char **usdt_split_words(const char *cmd, size_t extra, char **buf)
{
	static const char ws[] = "\f\n\r\t\v ";
	char **argv, *p, *save = NULL;
	size_t n = 0;

	/* A string of length len holds at most (len + 1) / 2 words. */
	*buf = strdup(cmd);
	argv = calloc(strlen(cmd) / 2 + 2 + extra, sizeof(*argv));
	if (!*buf || !argv) {
		free(*buf);
		free(argv);
		*buf = NULL;
		return NULL;
	}
	for (p = strtok_r(*buf, ws, &save); p; p = strtok_r(NULL, ws, &save))
		argv[n++] = p;
	return argv;
}
