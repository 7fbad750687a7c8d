// SPDX-License-Identifier: MIT
/*
 * The daemon's connections (conn.c) and the protocol spoken on them
 * (serve.c): the top layer, called by main.c's loop only. conn.c is the
 * transport (accepting within the caps, the idle list, queued packets,
 * shedding when out of descriptors) and calls nothing above it: what a
 * closing connection means to the protocol (a watcher gone, a held answer
 * dropped) is serve.c's callback, given to conns_init. serve.c reads the
 * requests and answers them with the registry below and conn.c.
 */
#ifndef USDTKIT_HELPERD_CONN_H
#define USDTKIT_HELPERD_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "helperd.h"

struct conn {
	enum hd_tag tag; /* HD_TAG_CONN */
	struct conn *prev, *next;
	int fd, pidfd;
	pid_t pid;
	uid_t uid;
	uint64_t deadline;
	unsigned char *out; /* queued packets: u32 length + bytes each */
	size_t outlen, outpos;
	bool closing; /* close once the queue is sent */
	bool linked;  /* in the idle list (not while a REGISTER waits for its parse) */
	bool waiting; /* a REGISTER waits for its parse (serve_register_done), or a LIST */
	bool listing; /* a LIST waits for the lister lane: answered by serve_list_done */
	uint32_t wait_seq;
	/* the parse is done, the answer waits for the watchers (see "holds") */
	uint32_t hold; /* the NOTICE's number; 0: not held */
	int held_status;
	uint32_t held_nprobes;
	struct conn *hnext;  /* in the held list */
	bool watcher;	     /* sent WATCH: in watchers[], never idle */
	uint32_t watch_from; /* the first NOTICE it was sent */
	uint32_t nsent;	     /* NOTICEs sent: watch_from .. watch_from + nsent - 1 */
	uint64_t born;	     /* the loop iteration that accepted it */
	int64_t accepted_ns; /* --test-timing: when it was accepted (CLOCK_MONOTONIC) */
	int64_t read_ns;     /* --test-timing: when its request was read */
};

/* What epoll's data points to: a struct conn, a process, a parse, or one of main.c's. */
struct tagged {
	enum hd_tag tag;
};

/* ---- conn.c: the transport ---- */

/* The descriptor accept() takes back when there is none left (conn.c, shed()). */
void conns_reserve_open(void);
/*
 * The loop's epoll set and the listening socket (added to it here);
 * closing(c) is called for every connection about to be closed.
 */
void conns_init(int epfd, int lfd, void (*closing)(struct conn *c));
/* Accepts one connection; false when there is none left to accept (or none can be). */
bool conn_accept_one(int lfd);
/* The loop's turn is over (connections accepted from now on are newer than it). */
void conns_turn_end(void);
/* When the loop must wake for the connections: an idle deadline, the listener's pause. */
uint64_t conns_next_wake(void);
/* Watches the listening socket again once its pause is over. */
void conns_listen_resume(uint64_t now);
/* Closes the connections idle past their deadline. */
void conns_expire(uint64_t now);
void conns_close_all(void);

void conn_close(struct conn *c);
/* c was active: its idle deadline starts again. */
void conn_touch(struct conn *c);
/* c leaves the idle list (waiting for a parse, or a watcher): it never expires. */
void conn_unlink(struct conn *c);
/* c waits for its answer (a parse): out of the idle list, only its hang-up watched. */
void conn_await(struct conn *c);
/* Queues a packet on c; false when its queue is full. */
bool conn_queue(struct conn *c, const void *pkt, size_t len);
/* Sends what is queued; false when the connection is to be closed. */
bool conn_flush(struct conn *c);
/* Queues a REPLY. */
bool conn_reply(struct conn *c, uint32_t seq, int status, uint32_t nprobes);

/* ---- serve.c: the protocol ---- */

/* c's socket is ready (epoll's events): read and answer it, or close it. */
void serve_conn_event(struct conn *c, uint32_t events);
/* The loop's turn ended: every uid may have its few requests read again. */
void serve_turn_end(void);
/* conn.c's closing callback: c is no longer a watcher nor held. */
void serve_conn_closing(struct conn *c);
/* --test-hold-ms: the bound of a hold, at most USDT_HOLD_MAX_MS. */
/* The library's calls up (helperd.h, struct hd_upcalls), installed by main. */
uint32_t serve_hold_begin(pid_t pid, uint64_t maps_dev, uint64_t ino);
void serve_register_done(void *cookie, int status, uint32_t nprobes, uint32_t hold);
void serve_list_done(void *cookie, const struct hd_list_entry *e, size_t n, int status);
void serve_hold_bound(unsigned ms);
/* --test-timing: connections stamped at accept (conn.c), answers timed by kind (serve.c). */
extern bool conn_timing;
void serve_timing_report(void);
/* Holds past their bound end; returns the next deadline (UINT64_MAX: none). */
uint64_t serve_holds_expire(uint64_t now);

#endif
