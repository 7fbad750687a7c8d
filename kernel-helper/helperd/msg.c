// SPDX-License-Identifier: MIT
/*
 * msg.c: the one check every packet from a client passes before the daemon
 * acts on it. Pure (no I/O, no state), so the socket-protocol fuzz target
 * (tests/fuzz/fuzz-protocol.c) runs exactly the code the daemon runs.
 */
#include <errno.h>
#include <string.h>

#include "helperd.h"
#include "protocol.h"

int hd_msg_decode(const void *pkt, size_t len, struct hd_request *req)
{
	struct usdt_msg_hdr h;
	size_t want = 0;

	memset(req, 0, sizeof(*req));
	if (len < sizeof(h))
		return -EMSGSIZE;
	memcpy(&h, pkt, sizeof(h));
	req->seq = h.seq;
	switch (h.type) {
	case USDT_MSG_REGISTER:
	case USDT_MSG_UNREGISTER:
		want = sizeof(struct usdt_msg_module);
		break;
	case USDT_MSG_LIST:
		want = sizeof(struct usdt_msg_list);
		break;
	case USDT_MSG_WATCH:
		want = sizeof(struct usdt_msg_watch);
		break;
	case USDT_MSG_READY:
		want = sizeof(struct usdt_msg_ready);
		break;
	default:
		break;
	}
	if (h.magic != USDT_PROTO_MAGIC || h.version != USDT_PROTO_VERSION || !want ||
	    len != want || h.size != want)
		return -EPROTO;
	req->type = h.type;
	if (h.type == USDT_MSG_LIST) {
		struct usdt_msg_list l;

		memcpy(&l, pkt, sizeof(l));
		if (l.pid < 0)
			return -EINVAL;
		req->pid = l.pid;
	} else if (h.type == USDT_MSG_WATCH) {
		struct usdt_msg_watch w;

		/* flags: room for later modes; today's daemon knows none */
		memcpy(&w, pkt, sizeof(w));
		if (w.flags || w.pad)
			return -EINVAL;
	} else if (h.type == USDT_MSG_READY) {
		struct usdt_msg_ready r;

		memcpy(&r, pkt, sizeof(r));
		if (!r.notice || r.pad)
			return -EINVAL;
		req->notice = r.notice;
	} else {
		struct usdt_msg_module m;

		memcpy(&m, pkt, sizeof(m));
		req->addr = m.addr;
	}
	return 0;
}
