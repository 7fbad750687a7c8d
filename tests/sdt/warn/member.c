/* SPDX-License-Identifier: MIT */
/*
 * Struct members, nested, through a pointer and a copy; and the same members read after the
 * struct is freed, a bug both headers report at the caller's line.
 */
#include <stdlib.h>
#include "probes.h"

struct wp_conn {
	int fd;
	const char *peer;
	struct {
		long sent;
		unsigned short port;
	} stats;
};

void wp_conn_done(const struct wp_conn *c)
{
	WARNPAT_MEMBER(c->fd, c->peer, c->stats.sent, c->stats.port);
}

void wp_conn_copy(struct wp_conn c)
{
	WARNPAT_MEMBER(c.fd, c.peer, c.stats.sent, c.stats.port);
}

void wp_conn_free(struct wp_conn *c)
{
	free(c);
	WARNPAT_MEMBER(c->fd, c->peer, c->stats.sent, c->stats.port);
}
