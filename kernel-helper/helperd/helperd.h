/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of usdtkit-helperd, one section per source file. The
 * theory statement is at the head of main.c.
 */
#ifndef USDT_HELPERD_H
#define USDT_HELPERD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "notes.h"
#include "tracefs.h"

/* ---- log.c: stderr in the foreground, syslog otherwise ---- */
extern bool hd_debug;
void hd_log_init(bool foreground);
void hd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define hd_err(...) hd_log(3, __VA_ARGS__)
#define hd_warn(...) hd_log(4, __VA_ARGS__)
#define hd_info(...) hd_log(6, __VA_ARGS__)
#define hd_dbg(...)                                                                                \
	do {                                                                                       \
		if (hd_debug)                                                                      \
			hd_log(7, __VA_ARGS__);                                                    \
	} while (0)

/* ---- proc.c: what /proc says about a process ---- */

/* The file-backed mapping of a process that contains an address. */
struct hd_mapping {
	uint64_t start, end, offset;
	uint64_t dev, ino; /* as /proc/PID/maps says (checked later against fstat) */
	bool deleted;	   /* the path ended in " (deleted)" */
	char path[4096];   /* as the process mapped it, " (deleted)" removed */
};

/*
 * Finds the file-backed mapping of `pid` containing `addr`. Returns 0, -ESRCH
 * (no such process), -ENOENT (no mapping there), -ENXIO (anonymous or special
 * mapping), -EIO.
 */
int hd_find_mapping(pid_t pid, uint64_t addr, struct hd_mapping *m);
/* Opens the file of a mapping through /proc/PID/map_files (O_RDONLY). Returns an fd or -errno. */
int hd_open_mapping(pid_t pid, const struct hd_mapping *m);

/*
 * Calls `fn` for every distinct file-backed mapping of `pid` (first mapping of
 * each (dev, ino)); stops early when fn returns non-zero. Returns 0 or -errno.
 */
int hd_each_mapping(pid_t pid, int (*fn)(pid_t pid, const struct hd_mapping *m, void *arg),
		    void *arg);
/* The process's start time (field 22 of /proc/PID/stat), 0 when unknown. */
uint64_t hd_start_time(pid_t pid);
/*
 * Whether `pid` would talk to the daemon listening on `socket_path`: its
 * initial environment names that socket in USDTKIT_HELPER_SOCKET, or names
 * none and socket_path is the default.
 */
bool hd_pid_uses_socket(pid_t pid, const char *socket_path);
/* The real uid of pid, or (uid_t)-1. */
uid_t hd_pid_uid(pid_t pid);

/*
 * The cheap check made before any parse: does the ELF file on fd have a
 * section named ".note.usdtkit" (a -G module), or ".note.stapsdt"? Reads at
 * most a few hundred KiB with every offset checked. Bits: 1 usdtkit, 2 stapsdt.
 */
#define HD_HAS_USDTKIT 1u
#define HD_HAS_STAPSDT 2u
unsigned hd_elf_note_kinds(int fd);

#include "meta.h"

/* ---- worker.c: the sandboxed parser ---- */
struct hd_worker_limits {
	unsigned timeout_ms;	     /* wall clock for one parse */
	unsigned cpu_seconds;	     /* RLIMIT_CPU */
	uint64_t address_space;	     /* RLIMIT_AS */
	unsigned test_delay_ms;	     /* tests: the worker sleeps this long first (a hung parser) */
	const char *test_delay_glob; /* tests: ... only for files mapped at paths matching this */
	bool test_no_seccomp;	     /* tests under valgrind: no seccomp filter, no RLIMIT_AS */
};
/*
 * Reads the probes of the file on fd in a forked child under a seccomp
 * filter, applies the metadata note's argument names and string hints there,
 * and returns the accepted probes (re-checked here) as *out. Rejected probes
 * are logged. Returns 0, or -errno (-ETIMEDOUT, -ECHILD: the worker died).
 */
int hd_parse(int fd, const struct hd_worker_limits *lim, struct usdt_notes **out, char *err,
	     size_t errlen);

/*
 * The same parse without blocking, for the epoll loop: hd_parse_start hands
 * the file to the spare worker or forks one (rfd is the socket to watch,
 * deadline when to give up);
 * hd_parse_read takes what is readable and returns 1 once the answer is
 * complete (EOF or an error), else 0; hd_parse_finish ends the job (the
 * worker killed first when `why` is an error: -ETIMEDOUT, -ECANCELED),
 * reaps it and decodes the answer. hd_parse is these three with poll().
 */
struct hd_parse_job {
	pid_t pid;
	int rfd;
	uint64_t deadline; /* hd_now_ms() */
	unsigned timeout_ms;
	int ret;       /* a read error */
	bool complete; /* the whole answer (its length comes first) was read */
	bool spare;    /* the worker was the spare (forked ahead), not forked for this parse */
	unsigned char *buf;
	size_t len, cap;
};
int hd_parse_start(int fd, const struct hd_worker_limits *lim, struct hd_parse_job *j, char *err,
		   size_t errlen);
int hd_parse_read(struct hd_parse_job *j);
int hd_parse_finish(struct hd_parse_job *j, int fd, int why, struct usdt_notes **out, char *err,
		    size_t errlen);
/*
 * After hd_parse_read said the job ended: when its worker was the spare and
 * died before it answered anything (killed from outside, between its fork
 * and its use), forks a worker for the job (same deadline; j->rfd is new)
 * and returns 1; returns 0 when that is not the case, -errno when the fork
 * failed (then end the job with hd_parse_finish as usual).
 */
int hd_parse_respawn(struct hd_parse_job *j, int fd, const struct hd_worker_limits *lim);
/* Reaps the workers hd_parse_finish left exiting (WNOHANG unless wait). */
void hd_parse_reap(bool wait);
/*
 * Keeps one worker forked ahead with these limits (the main loop calls it
 * in the background while no parse runs; a fork failure is retried a second
 * later), whether it is missing, and stops it.
 */
void hd_parse_spare(const struct hd_worker_limits *lim);
bool hd_parse_spare_missing(const struct hd_worker_limits *lim);
void hd_parse_spare_stop(void);

/* ---- msg.c: a client's packet, checked ---- */
struct hd_request {
	uint32_t seq;  /* the client's, echoed (set whenever a header was read) */
	uint16_t type; /* USDT_MSG_REGISTER, _UNREGISTER or _LIST */
	int32_t pid;   /* LIST: 0 or the process asked about */
	uint64_t addr; /* REGISTER, UNREGISTER */
};
/*
 * Checks one packet of `len` bytes (the length the socket reported, so a
 * truncated one has len larger than what was read: callers pass the real
 * packet length). Returns 0 and *req; -EMSGSIZE: shorter than a header
 * (drop the connection); -EPROTO: not exactly as protocol.h defines it;
 * -EINVAL: a LIST of a negative pid.
 */
int hd_msg_decode(const void *pkt, size_t len, struct hd_request *req);

/* ---- registry.c: modules, processes, tracefs ---- */
struct hd_config {
	const char *socket_path;
	const char *state_path;
	bool all;	     /* --all: any file with stapsdt notes, not only -G modules */
	const char *only;    /* --only GLOB: --all takes only files mapped at a matching path */
	unsigned rescan_s;   /* --all: rescan /proc every this many seconds */
	unsigned sweep_s;    /* check every registered process's maps this often (exec) */
	unsigned linger_s;   /* --linger: a file's events outlive its last process this long */
	unsigned linger_max; /* --linger-max: at most this many files lingering at once */
	unsigned rate_per_s; /* REGISTER per uid per second (token bucket) */
	unsigned new_modules_per_s; /* parses per uid per second */
	unsigned max_modules_per_uid;
	unsigned max_probes_per_uid;
	struct hd_worker_limits worker;
};
extern struct hd_config hd_cfg;

int hd_registry_init(struct usdt_tracefs *t, int epfd);
/* After each turn of the loop: writes the state file if it changed. */
void hd_registry_flush(void);
/*
 * Work that no client waits for, in steps the loop takes when it is idle
 * (and at least every BACKGROUND_STARVE_MS under load): retiring modules
 * (a few processes' maps per step) and the state file. _pending: whether
 * there is any; hd_registry_background takes one step and says whether
 * more remain.
 */
bool hd_registry_background_pending(void);
bool hd_registry_background(void);
/* Parses whose worker is running. */
unsigned hd_parses_running(void);

/*
 * board.c: the published list of registered files (protocol.h, "The
 * board"), keyed as /proc/PID/maps names a mapping (its device as
 * makedev(major, minor), inode, path). hd_board_open creates SOCKET.known
 * (0 or -errno: the daemon goes on without it); hd_board_close unlinks it.
 * publish returns false when the entry does not fit (its clients then ask);
 * withdraw ends with a full barrier.
 */
int hd_board_open(const char *socket_path);
void hd_board_close(void);
bool hd_board_publish(uint64_t maps_dev, uint64_t ino, const char *path);
void hd_board_withdraw(uint64_t maps_dev, uint64_t ino, const char *path);
/*
 * REGISTER/UNREGISTER from (pid, uid), identified by pidfd (the peer's
 * pidfd, or -1 when the kernel gives none). Returns 0 and *nprobes, or -errno.
 */
/* The per-uid request rate (every request type): 0, or -EAGAIN over it. */
int hd_rate_ok(uid_t uid, pid_t pid);
/*
 * REGISTER: 0 (answered now), -errno, or -EINPROGRESS: a new file is being
 * parsed; the answer comes later through hd_register_done(cookie, ...),
 * unless hd_register_cancel(cookie) is called first (the client went away).
 */
int hd_register(pid_t pid, uid_t uid, int pidfd, uint64_t addr, uint32_t *nprobes, void *cookie);
void hd_register_cancel(void *cookie);
/* main.c: the deferred answer of a REGISTER. */
void hd_register_done(void *cookie, int status, uint32_t nprobes);
/* A parse's pipe (HD_TAG_PARSE) is readable. */
void hd_parse_event(void *parse);
/* Kills parses past their deadline; returns the next deadline (UINT64_MAX: none). */
uint64_t hd_parses_expire(uint64_t now_ms);
/*
 * 0 when tracefs is usable, else the errno of opening it (-ENODEV,
 * -EROFS, -EOPNOTSUPP, -EACCES), retried at most once a second.
 */
int hd_tracefs_ready(void);
int hd_unregister(pid_t pid, uid_t uid, int pidfd, uint64_t addr);
/* A pidfd registered with epoll became readable: that process exited. */
void hd_process_exited(void *proc);
/* Start-up: adopt a previous instance's events, register running processes. */
void hd_recover(void);
/* --all: register processes not seen yet. */
void hd_rescan(void);
/* Timer: EBUSY retries, the rate buckets. Returns true when work remains. */
void hd_tick(uint64_t now_ms);
/* SIGTERM: remove every event we created. */
void hd_registry_shutdown(void);

/* One LIST entry; the callback sends it. */
struct hd_list_entry {
	pid_t pid;
	uint32_t nprobes;
	uint64_t dev, ino, start, end, load_bias;
	const char *path;
};
/* Calls fn for every (process, module) visible to uid (root: all; others: own). */
size_t hd_list(pid_t pid, uid_t uid, void (*fn)(const struct hd_list_entry *e, void *arg),
	       void *arg);

/* epoll data tags: the first member of every object registered with epoll. */
enum hd_tag {
	HD_TAG_LISTEN = 1,
	HD_TAG_SIGNAL,
	HD_TAG_NONE,
	HD_TAG_CONN,
	HD_TAG_PROC,
	HD_TAG_PARSE
};

uint64_t hd_now_ms(void);
/* main.c: obj (a connection or process) is being freed; drop its pending epoll events. */
void hd_forget(void *obj);

#endif
