/* SPDX-License-Identifier: MIT */
/* String literals: plain, concatenated, empty, chosen by ?:, __func__. */
#include "probes.h"

void wp_literal(const char *name)
{
	WARNPAT_LITERAL("open", name ? name : "(null)", __func__);
	WARNPAT_LITERAL("",
			"a"
			"b",
			(const char *)"x");
}
