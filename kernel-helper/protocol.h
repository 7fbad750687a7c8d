/* SPDX-License-Identifier: MIT */
/*
 * The helper socket protocol: what drti (in every probed process) and
 * `dtrace -l` say to usdtkit-helperd, and what it answers.
 *
 * Transport: a Unix socket of type SOCK_SEQPACKET, so every message is one
 * packet and a short read is impossible to mistake for a whole message.
 * Default path USDT_HELPER_SOCKET_PATH; the environment variable
 * USDT_HELPER_SOCKET_ENV overrides it (tests, containers with a bind-mounted
 * socket).
 *
 * Trust: the daemon believes nothing in a message but the request itself.
 * Who is asking comes from SO_PEERCRED; which module is meant comes from
 * looking `addr` up in the caller's own /proc/PID/maps; what the module
 * contains comes from the file really mapped there. A message that is not
 * exactly the size its type demands, has the wrong magic or version, or an
 * unknown type is answered with -EPROTO (or the connection is dropped) and
 * changes nothing.
 *
 * All integers are in the host's byte order (both ends run on one machine);
 * every structure is naturally aligned with explicit padding and has the
 * same layout for 32- and 64-bit clients (a -m32 program talks to a 64-bit
 * daemon).
 *
 * This header is included by drti, which is compiled with the user's CFLAGS
 * (possibly -std=c89 -pedantic): keep it plain C89, no // comments, no
 * designated initialisers, fixed-width types only through <stdint.h>.
 */
#ifndef USDT_HELPER_PROTOCOL_H
#define USDT_HELPER_PROTOCOL_H

#include <stdint.h>

#define USDT_HELPER_SOCKET_PATH "/run/usdtkit/helper.sock"
#define USDT_HELPER_SOCKET_ENV "USDTKIT_HELPER_SOCKET"
/* How long drti waits for an answer, in milliseconds (default, and cap). */
#define USDT_HELPER_TIMEOUT_ENV "USDTKIT_HELPER_TIMEOUT_MS"
#define USDT_HELPER_TIMEOUT_DEFAULT_MS 100
#define USDT_HELPER_TIMEOUT_MAX_MS 5000

#define USDT_PROTO_MAGIC 0x54445355u /* "USDT" in little-endian bytes */
#define USDT_PROTO_VERSION 1

enum usdt_msg_type {
	/* client -> daemon */
	USDT_MSG_REGISTER = 1,   /* struct usdt_msg_module: the module containing addr was loaded */
	USDT_MSG_UNREGISTER = 2, /* struct usdt_msg_module: it is being unloaded (dlclose, exit) */
	USDT_MSG_LIST = 3,       /* struct usdt_msg_list: which modules of which processes are registered */
	/* daemon -> client */
	USDT_MSG_REPLY = 0x81,      /* struct usdt_msg_reply: the answer to REGISTER/UNREGISTER/LIST */
	USDT_MSG_LIST_ENTRY = 0x82 /* struct usdt_msg_list_entry: one per (process, module), before the REPLY */
};

struct usdt_msg_hdr {
	uint32_t magic;   /* USDT_PROTO_MAGIC */
	uint16_t version; /* USDT_PROTO_VERSION */
	uint16_t type;    /* enum usdt_msg_type */
	uint32_t size;    /* of the whole message, header included: must equal the packet length */
	uint32_t seq;     /* chosen by the client, echoed in every packet of the answer */
};

/* REGISTER, UNREGISTER */
struct usdt_msg_module {
	struct usdt_msg_hdr hdr;
	uint64_t addr; /* any address inside the module: drti sends its .note.usdtkit note's */
};

/* LIST */
struct usdt_msg_list {
	struct usdt_msg_hdr hdr;
	int32_t pid; /* 0: every registered process */
	uint32_t pad;
};

#define USDT_PROTO_PATH_MAX 4096

/*
 * LIST_ENTRY: the message is sizeof(struct usdt_msg_list_entry) + path_len
 * bytes; path_len includes the terminating NUL. The path is the daemon's
 * name for the file as the process mapped it (it may no longer exist; open
 * /proc/PID/map_files/START-END to reach the file itself).
 */
struct usdt_msg_list_entry {
	struct usdt_msg_hdr hdr;
	int32_t pid;
	uint32_t nprobes;   /* probes registered from this module */
	uint64_t dev;       /* st_dev of the mapped file */
	uint64_t ino;       /* st_ino */
	uint64_t start;     /* the mapping's start and end, as in /proc/PID/maps */
	uint64_t end;
	uint64_t load_bias; /* runtime address minus link-time address */
	uint32_t path_len;
	uint32_t pad;
	/* char path[path_len] follows */
};

/* REPLY */
struct usdt_msg_reply {
	struct usdt_msg_hdr hdr;
	int32_t status;   /* 0, or a negative errno */
	uint32_t nprobes; /* REGISTER: probes registered; LIST: entries sent */
};

#endif /* USDT_HELPER_PROTOCOL_H */
