/* SPDX-License-Identifier: MIT */
/* Bit-field members: sizeof refuses them in both headers, so real code converts them. */
#include "probes.h"

struct wp_hdr {
	unsigned int type : 4;
	signed int prio : 3;
	unsigned int urgent : 1;
	unsigned int len : 24;
};

void wp_flags(const struct wp_hdr *h, struct wp_hdr copy)
{
	WARNPAT_FLAGS((unsigned int)h->type, h->prio + 0, (unsigned int)h->len);
	WARNPAT_FLAGS(copy.urgent ? 1u : 0u, (int)copy.prio, copy.len + 0u);
}
