/* SPDX-License-Identifier: MIT */
/* Arrays, traced as pointers: a local buffer, a member array, a static table, one not yet set. */
#include <string.h>
#include "probes.h"

struct wp_name {
	char text[16];
	int counts[4];
};
extern void wp_fill(char *text, int *hist);

void wp_buffer(struct wp_name *n, const char *src)
{
	char local[32];
	int hist[4];
	static const char table[] = "abc";

	strncpy(local, src, sizeof local - 1);
	local[sizeof local - 1] = '\0';
	WARNPAT_BUFFER(local, n->counts, table);
	WARNPAT_BUFFER(n->text, hist, n->text);
	wp_fill(local, hist);
}
