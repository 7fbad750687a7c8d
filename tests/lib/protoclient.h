/* SPDX-License-Identifier: MIT */
/*
 * Speaking core/protocol.h in the tests' own clients and servers
 * (tests/helperd/hdclient, tests/fault/process/fclient,
 * tests/drti/fakehelperd): the messages are built here once, the way drti
 * and the daemon build them, and each program spoils them as its test needs.
 * Build with include_directories : proto_inc (tests/meson.build).
 */
#ifndef USDTKIT_TESTS_PROTOCLIENT_H
#define USDTKIT_TESTS_PROTOCLIENT_H

#include <dlfcn.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol.h"

/* $USDTKIT_HELPER_SOCKET, or the default path. */
static inline const char *proto_socket_path(void)
{
	const char *p = getenv(USDT_HELPER_SOCKET_ENV);

	return p && p[0] ? p : USDT_HELPER_SOCKET_PATH;
}

/* A new connection to the daemon's socket, or -1 (errno set). */
static inline int proto_connect(void)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", proto_socket_path());
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static inline void proto_hdr(struct usdt_msg_hdr *h, uint16_t type, uint32_t size, uint32_t seq)
{
	h->magic = USDT_PROTO_MAGIC;
	h->version = USDT_PROTO_VERSION;
	h->type = type;
	h->size = size;
	h->seq = seq;
}

/* A well-formed REGISTER or UNREGISTER of the module containing addr. */
static inline void proto_module(struct usdt_msg_module *m, uint16_t type, uint64_t addr,
				uint32_t seq)
{
	memset(m, 0, sizeof(*m));
	proto_hdr(&m->hdr, type, sizeof(*m), seq);
	m->addr = addr;
}

/* A well-formed LIST of pid's modules (0: every process's). */
static inline void proto_list(struct usdt_msg_list *m, int32_t pid, uint32_t seq)
{
	memset(m, 0, sizeof(*m));
	proto_hdr(&m->hdr, USDT_MSG_LIST, sizeof(*m), seq);
	m->pid = pid;
}

/* A well-formed REPLY, as the daemon answers request seq. */
static inline void proto_reply(struct usdt_msg_reply *r, uint32_t seq, int32_t status,
			       uint32_t nprobes)
{
	memset(r, 0, sizeof(*r));
	proto_hdr(&r->hdr, USDT_MSG_REPLY, sizeof(*r), seq);
	r->status = status;
	r->nprobes = nprobes;
}

/*
 * Waits up to timeout_ms for one packet: its length, 0 when the peer
 * closed, -1 on timeout or error.
 */
static inline ssize_t proto_recv(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd p;

	p.fd = fd;
	p.events = POLLIN;
	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return recv(fd, buf, len, 0);
}

/* Is this packet of n bytes a well-formed REPLY to request seq? */
static inline int proto_is_reply(const struct usdt_msg_reply *r, ssize_t n, uint32_t seq)
{
	return n == (ssize_t)sizeof(*r) && r->hdr.magic == USDT_PROTO_MAGIC &&
	       r->hdr.type == USDT_MSG_REPLY && r->hdr.seq == seq && r->hdr.size == sizeof(*r);
}

/*
 * dlopens LIB with its drti kept quiet (USDTKIT_DISABLE=1: the test program
 * speaks instead) and returns the address of its lib_call (the test
 * libraries' probed function); exits 2 when it cannot.
 */
static inline uint64_t proto_lib_addr(const char *lib, const char *who)
{
	void *h, *f;

	setenv("USDTKIT_DISABLE", "1", 1);
	h = dlopen(lib, RTLD_NOW);
	f = h ? dlsym(h, "lib_call") : NULL;
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", who, lib, dlerror());
		exit(2);
	}
	return (uint64_t)(uintptr_t)f;
}

#endif /* USDTKIT_TESTS_PROTOCLIENT_H */
