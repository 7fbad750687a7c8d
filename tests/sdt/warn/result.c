/* SPDX-License-Identifier: MIT */
/*
 * Results only the probe uses: a call marked warn_unused_result as an argument, a variable
 * set only to be traced, a parameter only traced.
 */
#include "probes.h"

__attribute__((warn_unused_result)) extern long wp_write(int fd, const void *buf, unsigned long n);
extern int wp_close(int fd);

void wp_flush(int fd, const char *buf, unsigned long n, int traced_only)
{
	int rc;

	rc = wp_close(fd);
	WARNPAT_RESULT(wp_write(fd, buf, n), rc, traced_only);
}
