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
/*
 * How much longer drti waits when the daemon says a tracer holds the
 * registration (HELD, below), in milliseconds (default; the cap is
 * USDT_HOLD_MAX_MS; 0: never wait for a hold).
 */
#define USDT_HELPER_HOLD_ENV "USDTKIT_HELPER_HOLD_MS"
#define USDT_HELPER_HOLD_DEFAULT_MS 2000

#define USDT_PROTO_MAGIC 0x54445355u /* "USDT" in little-endian bytes */
#define USDT_PROTO_VERSION 1

enum usdt_msg_type {
	/* client -> daemon */
	/* struct usdt_msg_module: the module containing addr was loaded */
	USDT_MSG_REGISTER = 1,
	/* struct usdt_msg_module: it is being unloaded (dlclose, exit) */
	USDT_MSG_UNREGISTER = 2,
	/* struct usdt_msg_list: which modules of which processes are registered */
	USDT_MSG_LIST = 3,
	/* struct usdt_msg_watch: root only: hold new files' registrations for me */
	USDT_MSG_WATCH = 4,
	/* struct usdt_msg_ready: a watcher is done with a NOTICE */
	USDT_MSG_READY = 5,
	/* daemon -> client */
	/* struct usdt_msg_reply: the answer to REGISTER/UNREGISTER/LIST/WATCH */
	USDT_MSG_REPLY = 0x81,
	/* struct usdt_msg_list_entry: one per (process, module), before the REPLY */
	USDT_MSG_LIST_ENTRY = 0x82,
	/* struct usdt_msg_notice: to a watcher: a new file's events now exist */
	USDT_MSG_NOTICE = 0x83,
	/* struct usdt_msg_held: to a registrant: a watcher holds the answer */
	USDT_MSG_HELD = 0x84
};

struct usdt_msg_hdr {
	uint32_t magic;	  /* USDT_PROTO_MAGIC */
	uint16_t version; /* USDT_PROTO_VERSION */
	uint16_t type;	  /* enum usdt_msg_type */
	uint32_t size;	  /* of the whole message, header included: must equal the packet length */
	uint32_t seq;	  /* chosen by the client, echoed in every packet of the answer */
};

/* A request's or an answer's header: the one way every sender writes it. */
static __inline__ void usdt_hdr_fill(struct usdt_msg_hdr *h, uint16_t type, uint32_t size,
				     uint32_t seq)
{
	h->magic = USDT_PROTO_MAGIC;
	h->version = USDT_PROTO_VERSION;
	h->type = type;
	h->size = size;
	h->seq = seq;
}

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

/*
 * WATCH, READY, NOTICE: retained enablings that lose no firing (DTrace
 * enables a process's probes before the process goes on: illumos matches
 * retained enablings inside the registering ioctl).
 *
 * A consumer (root only: anyone else is answered -EPERM) sends WATCH on a
 * connection it then keeps open; the REPLY (status 0) makes it a watcher.
 * Whenever a REGISTER creates the events of a file (a new file: a
 * registration that finds them existing is answered at once, as always),
 * the daemon sends every watcher a NOTICE, whose hdr.seq is the WATCH's and
 * whose `notice` numbers it (1, 2, ...: never 0), and holds the REGISTER's
 * REPLY until every watcher has answered READY with that number, or
 * USDT_HOLD_MAX_MS have passed, or the watcher is gone. A watcher that
 * sends anything else, a READY for a notice it was never sent, or does not
 * read its socket (a NOTICE that does not fit in it) is dropped: the daemon
 * never waits for it again.
 *
 * A registrant waits for its REPLY at most USDT_HELPER_TIMEOUT_ENV
 * milliseconds (100 by default), too little for a tracer to start. So when
 * a REGISTER needs a parse while a watcher is there, the daemon first sends
 * the registrant a HELD (hdr.seq: the REGISTER's) saying how long the
 * answer may take (`ms`, at most USDT_HOLD_MAX_MS); drti then waits up to
 * that long, and at most USDT_HELPER_HOLD_ENV milliseconds (2000 by
 * default, 0: not at all), from the HELD on. Only the first HELD of a
 * request counts: a registrant waits at most its timeout plus its hold.
 * drti counts a HELD only from a peer whose SO_PEERCRED uid is 0 or its
 * own effective uid (anyone else's ends the request: no daemon).
 * A client that does not know HELD skips it as a packet not its answer.
 *
 * Restarted programs (a file the daemon knows, no process of it alive: it
 * lingers). While a watcher is there, a REGISTER that finds the file's
 * events existing but no registered process mapping it is held as a new
 * file's is (a NOTICE naming the file, a HELD to the registrant, the REPLY
 * once the watchers are READY): a NOTICE means "a process registered this
 * file and no listing shows another", and a watcher that traces the file
 * already answers READY at once. A process
 * whose file is on the board sends no REGISTER, so while a watcher is
 * there the daemon keeps the file SOCKET.watched (USDT_WATCHED_SUFFIX,
 * empty, root's, 0644) beside its socket, and drti asks even for a file on
 * the board when that file exists (one stat() a known file's start). An
 * older drti never asks for a board file: its restarted programs are
 * traced only by a watcher that knew their file; an older watcher gets
 * NOTICEs for known files, which it answers as any other.
 */
#define USDT_HOLD_MAX_MS USDT_HELPER_TIMEOUT_MAX_MS
#define USDT_WATCHED_SUFFIX ".watched"

struct usdt_msg_watch {
	struct usdt_msg_hdr hdr;
	uint32_t flags; /* 0 */
	uint32_t pad;
};

struct usdt_msg_ready {
	struct usdt_msg_hdr hdr;
	uint32_t notice; /* the NOTICE's */
	uint32_t pad;
};

struct usdt_msg_held {
	struct usdt_msg_hdr hdr; /* seq: the REGISTER's */
	uint32_t ms;		 /* 1..USDT_HOLD_MAX_MS: the REPLY comes within it */
	uint32_t pad;
};

struct usdt_msg_notice {
	struct usdt_msg_hdr hdr; /* seq: the WATCH's */
	uint32_t notice;	 /* 1, 2, ...: answer READY with it */
	int32_t pid;		 /* the (first) registrant */
	uint64_t dev;		 /* the file as the registrant's maps shows it: */
	uint64_t ino;		 /* major << 32 | minor, and the inode (the board's key) */
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
	uint32_t nprobes; /* probes registered from this module */
	uint64_t dev;	  /* st_dev of the mapped file */
	uint64_t ino;	  /* st_ino */
	uint64_t start;	  /* the mapping's start and end, as in /proc/PID/maps */
	uint64_t end;
	uint64_t load_bias; /* runtime address minus link-time address */
	uint32_t path_len;
	uint32_t pad;
	/* char path[path_len] follows */
};

/* REPLY */
struct usdt_msg_reply {
	struct usdt_msg_hdr hdr;
	int32_t status;	  /* 0, or a negative errno */
	uint32_t nprobes; /* REGISTER: probes registered; LIST: entries sent */
};

/*
 * What a packet read from the daemon is, to a client whose request carried
 * `seq`: the one validator of the daemon's answers, used by drti, by
 * `dtrace -l` and by the protocol fuzzer, so that a rule fixed here is
 * fixed for all of them.
 *   USDT_ANSWER_MALFORMED  not a message of this protocol: shorter than a
 *                          header, wrong magic or version, a size that is
 *                          not the packet's length; or a REPLY to `seq`
 *                          that is not exactly a struct usdt_msg_reply or
 *                          whose status is -4096 or below (no errno, and
 *                          INT32_MIN would not negate); or a
 *                          LIST_ENTRY to `seq` whose path is empty, longer
 *                          than USDT_PROTO_PATH_MAX, not the rest of the
 *                          packet, not NUL-terminated, or whose pid is not
 *                          positive; or a NOTICE to `seq` that is not
 *                          exactly a struct usdt_msg_notice, or whose
 *                          notice is 0 or pid not positive; or a HELD to
 *                          `seq` that is not exactly a struct
 *                          usdt_msg_held, or whose ms is 0 or above
 *                          USDT_HOLD_MAX_MS;
 *   USDT_ANSWER_OTHER      well formed, but for another seq or of a type
 *                          no client receives;
 *   USDT_ANSWER_REPLY, USDT_ANSWER_ENTRY, USDT_ANSWER_NOTICE, USDT_ANSWER_HELD
 *                          valid, for `seq`.
 * `n` is the packet's real length (recv with MSG_TRUNC); `pkt` holds at
 * least min(n, what the caller's buffer holds) bytes, and a packet longer
 * than the buffer is rejected by the caller before this is called.
 */
enum usdt_answer {
	USDT_ANSWER_MALFORMED,
	USDT_ANSWER_OTHER,
	USDT_ANSWER_REPLY,
	USDT_ANSWER_ENTRY,
	USDT_ANSWER_NOTICE,
	USDT_ANSWER_HELD
};

static __inline__ enum usdt_answer usdt_answer_check(const void *pkt, unsigned long n, uint32_t seq)
{
	const struct usdt_msg_hdr *h = (const struct usdt_msg_hdr *)pkt;

	if (n < sizeof(*h) || h->magic != USDT_PROTO_MAGIC || h->version != USDT_PROTO_VERSION ||
	    h->size != n)
		return USDT_ANSWER_MALFORMED;
	if (h->seq != seq)
		return USDT_ANSWER_OTHER;
	if (h->type == USDT_MSG_REPLY) {
		const struct usdt_msg_reply *r = (const struct usdt_msg_reply *)pkt;

		if (n != sizeof(*r) || r->status <= -4096)
			return USDT_ANSWER_MALFORMED;
		return USDT_ANSWER_REPLY;
	}
	if (h->type == USDT_MSG_LIST_ENTRY) {
		const struct usdt_msg_list_entry *e = (const struct usdt_msg_list_entry *)pkt;
		const char *path = (const char *)(e + 1);

		if (n < sizeof(*e) || e->path_len == 0 || e->path_len > USDT_PROTO_PATH_MAX ||
		    n != sizeof(*e) + e->path_len || path[e->path_len - 1] != '\0' || e->pid <= 0)
			return USDT_ANSWER_MALFORMED;
		return USDT_ANSWER_ENTRY;
	}
	if (h->type == USDT_MSG_NOTICE) {
		const struct usdt_msg_notice *no = (const struct usdt_msg_notice *)pkt;

		if (n != sizeof(*no) || no->notice == 0 || no->pid <= 0)
			return USDT_ANSWER_MALFORMED;
		return USDT_ANSWER_NOTICE;
	}
	if (h->type == USDT_MSG_HELD) {
		const struct usdt_msg_held *he = (const struct usdt_msg_held *)pkt;

		if (n != sizeof(*he) || he->ms == 0 || he->ms > USDT_HOLD_MAX_MS)
			return USDT_ANSWER_MALFORMED;
		return USDT_ANSWER_HELD;
	}
	return USDT_ANSWER_OTHER;
}

/*
 * The board: which files the daemon has registered, for clients to read
 * without asking (issue "registration off the hot path").
 *
 * The daemon keeps the file USDT_HELPER_SOCKET_PATH + USDT_BOARD_SUFFIX
 * (beside its socket, whatever the socket path), owned by root, mode 0644,
 * created whole and renamed into place at start, unlinked at stop. It is a
 * struct usdt_board_hdr followed by nslots + USDT_BOARD_WINDOW - 1 slots of
 * struct usdt_board_slot. A slot names one file whose events exist, by what
 * /proc/PID/maps says of a mapping of it: the device (major << 32 | minor),
 * the inode, and the FNV-1a hash of the path (usdt_board_path_hash). It is
 * found in the window of USDT_BOARD_WINDOW slots starting at
 * usdt_board_index(); an entry that fits no free slot of its window is not
 * published (its clients ask, as before).
 *
 * A slot is valid when its `check` equals usdt_board_check() of its other
 * fields; a reader that meets a slot half-written sees a wrong check and
 * treats the slot as empty. The daemon writes check last when it publishes
 * and clears it first when it withdraws, then rescans /proc before it
 * removes the file's events (so a process that read the slot before the
 * withdrawal, and so had mapped the file, is found by that scan).
 *
 * The daemon holds an open-file-description read lock (F_OFD_SETLK,
 * F_RDLCK) on the whole file for as long as it lives: the kernel drops it
 * when the daemon dies, however it dies. A client that finds the board but
 * no lock on it (F_OFD_GETLK) knows its daemon is gone, and that the socket
 * beside it is a crashed daemon's, which would refuse the connection: it
 * asks nothing, and pays no refused connect. A client needs to know only
 * when its file is not on the board (drti looks at the lock on a miss
 * only): a file on it has its events, a SIGKILL leaves them.
 * The next daemon registers what runs by its start-up scan of /proc.
 * (Version 1 boards had no lock: a version-1 client ignores this one's board
 * and asks, as it always could.)
 *
 * A client never trusts the board for more than "my file's events already
 * exist, skip the REGISTER": it reads it with pread (no mapping that a
 * truncation could turn into SIGBUS), only if the file is a regular file
 * owned by root and writable by nobody else, and bounds every offset by the
 * header and the file's size. A wrong answer costs at most that file's
 * events, never the program.
 */
#define USDT_BOARD_SUFFIX ".known"
#define USDT_BOARD_MAGIC 0x44524255u /* "UBRD" in little-endian bytes */
#define USDT_BOARD_VERSION 2
#define USDT_BOARD_WINDOW 8
#define USDT_BOARD_SLOTS_MAX 65536
/* A 64-bit constant in C89 (no long long literals): two 32-bit halves. */
#define USDT_U64(hi, lo) (((uint64_t)(hi) << 32) | (uint64_t)(lo))

struct usdt_board_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t hdr_size;  /* sizeof(struct usdt_board_hdr) */
	uint32_t nslots;    /* the window starts are 0 .. nslots - 1 */
	uint32_t slot_size; /* sizeof(struct usdt_board_slot) */
};

struct usdt_board_slot {
	uint64_t dev; /* major << 32 | minor, as maps prints it */
	uint64_t ino;
	uint64_t path_hash;
	uint64_t check;
};

/* 64-bit FNV-1a of a NUL-terminated path, as maps prints it. */
static __inline__ uint64_t usdt_board_path_hash(const char *s)
{
	uint64_t h = USDT_U64(0xcbf29ce4u, 0x84222325u);

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= USDT_U64(0x00000100u, 0x000001b3u);
	}
	return h;
}

static __inline__ uint64_t usdt_board_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= USDT_U64(0xff51afd7u, 0xed558ccdu);
	x ^= x >> 33;
	x *= USDT_U64(0xc4ceb9feu, 0x1a85ec53u);
	x ^= x >> 33;
	return x;
}

static __inline__ uint32_t usdt_board_index(uint64_t dev, uint64_t ino, uint32_t nslots)
{
	return (uint32_t)(usdt_board_mix(dev * USDT_U64(0x9e3779b9u, 0x7f4a7c15u) ^ ino) % nslots);
}

/* Never 0, so an all-zero (empty) slot is never valid. */
static __inline__ uint64_t usdt_board_check(uint64_t dev, uint64_t ino, uint64_t path_hash)
{
	return usdt_board_mix(usdt_board_mix(dev ^ USDT_U64(0x55534454u, 0x42524430u)) ^ ino ^
			      usdt_board_mix(path_hash)) |
	       1;
}

#endif /* USDT_HELPER_PROTOCOL_H */
