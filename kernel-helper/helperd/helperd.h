/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of usdtkit-helperd, one section per source file. The
 * theory statement is kernel-helper/README.md ("The daemon", and "The
 * layers": each file calls only files of the layers below its own, and
 * the layers above only through the callbacks declared here).
 */
#ifndef USDT_HELPERD_H
#define USDT_HELPERD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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
/*
 * --test-timing: the stages of a new file's REGISTER and of a LIST, timed
 * where they happen (any thread), printed at exit (p50/p90/p99/max, µs).
 */
enum hd_stage {
	HD_ST_PARSE_QUEUED,  /* a parse: its REGISTER read to its worker started */
	HD_ST_PARSE,	     /* its worker started to its answer read */
	HD_ST_TO_WRITER,     /* its answer read to its job queued for the writer */
	HD_ST_WRITER_WAIT,   /* a small writer job, its uid's only one: queued to its first slice */
	HD_ST_WRITER_RUN,    /* its first slice's start to its last's end */
	HD_ST_WRITER_DONE,   /* its last slice's end to its end on the loop */
	HD_ST_LIST_WAIT,     /* a LIST's job: queued to its reading */
	HD_ST_LIST_READ,     /* its reading of /proc */
	HD_ST_WRITER_SLICES, /* HD_ST_WRITER_WAIT's job: the slices run meanwhile (a count) */
	HD_ST_BULK_SLICE,    /* a slice of a bulk job of the writer, when another uid waited */
	HD_STAGES
};
extern bool hd_timing;
/* The calling thread's CLOCK_MONOTONIC in ns (0 when not timing). */
uint64_t hd_timing_now(void);
void hd_timing_put(enum hd_stage st, uid_t uid, uint64_t from_ns, uint64_t to_ns);
/* A count, not a time (HD_ST_WRITER_SLICES). */
void hd_timing_count(enum hd_stage st, uid_t uid, unsigned long n);
void hd_timing_report(void);

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
/*
 * The same for n addresses at once, one reading of the maps: found[i] says
 * whether ms[i] is the file-backed mapping holding addrs[i]. 0, or -errno
 * (-ESRCH: no such process; then nothing is found).
 */
int hd_find_mappings(pid_t pid, const uint64_t *addrs, size_t n, struct hd_mapping *ms,
		     bool *found);
/* Opens the file of a mapping through /proc/PID/map_files (O_RDONLY). Returns an fd or -errno. */
int hd_open_mapping(pid_t pid, const struct hd_mapping *m);

/*
 * Calls `fn` for every distinct file-backed mapping of `pid` (first mapping of
 * each (dev, ino)) that `want` (if not NULL) takes, asked with the maps
 * line's (dev, ino) before the line is read whole; stops early when fn
 * returns non-zero. Returns 0 or -errno.
 */
int hd_each_mapping(pid_t pid, bool (*want)(uint64_t dev, uint64_t ino, void *arg),
		    int (*fn)(pid_t pid, const struct hd_mapping *m, void *arg), void *arg);
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
 * The worker's answer (buf, len: the stream after its length word), decoded
 * as if the worker were compromised: every probe re-checked, its site read
 * again from fd. 0 with *out, or -errno (err says why). hd_parse_finish's
 * last step (worker_answer.c); the fuzz target tests/fuzz/fuzz-worker.c calls
 * it alone.
 */
int hd_worker_decode(const unsigned char *buf, size_t len, int fd, struct usdt_notes **out,
		     char *err, size_t errlen);
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
 * hd_parse_finish in two halves, so that the second can run off the loop
 * (the checker thread, writer.c): the worker's end (the loop's: it reaps),
 * its whole answer handed over undecoded in ans; then the answer checked
 * and decoded (worker_answer.c; touches only ans and fd; frees ans).
 */
struct hd_answer {
	unsigned char *buf; /* its length (8 bytes), then the answer */
	size_t len;
};
int hd_parse_collect(struct hd_parse_job *j, int why, struct hd_answer *ans, char *err,
		     size_t errlen);
int hd_parse_check(struct hd_answer *ans, int fd, struct usdt_notes **out, char *err,
		   size_t errlen);
void hd_answer_free(struct hd_answer *ans);
/*
 * After hd_parse_read said the job ended: when its worker was the spare and
 * died before it answered anything (killed from outside, between its fork
 * and its use), forks a worker for the job (same deadline; j->rfd is new)
 * and returns 1; returns 0 when that is not the case, -errno when the fork
 * failed (then end the job with hd_parse_finish as usual).
 */
int hd_parse_respawn(struct hd_parse_job *j, int fd, const struct hd_worker_limits *lim);
/* The answer's limits (worker.c writes it, worker_answer.c reads it back). */
#define HD_WORKER_LOG_MAX 16	     /* rejection lines, for the log */
#define HD_WORKER_STR_MAX 4096u	     /* a string's bytes */
#define HD_WORKER_NO_STR 0xffffffffu /* a string's length that means NULL */
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

/* ---- worker_child.c: the worker's own program ---- */
/*
 * The worker is the daemon's binary executed again with HD_WORKER_ARG first:
 * a program that starts workers calls hd_worker_main(argc, argv) before
 * anything else; it returns at once unless argv[1] is HD_WORKER_ARG, and
 * never returns when it is. A worker that cannot start exits with
 * HD_WORKER_EXIT_EXEC (the exec failed) or HD_WORKER_EXIT_ARGS.
 */
#define HD_WORKER_ARG "--usdtkit-parse-worker"
#define HD_WORKER_EXIT_EXEC 7
#define HD_WORKER_EXIT_ARGS 8
void hd_worker_main(int argc, char **argv);

/* ---- sandbox.c: the worker's confinement ---- */
/*
 * In the daemon, before starting a worker: prepares the filter every worker
 * loads, a sealed memfd (hd_sandbox_filter_fd; -1 when the export failed).
 */
void hd_sandbox_prepare(void);
int hd_sandbox_filter_fd(void);
/*
 * In the worker: its resource limits and seccomp filter, the program read
 * from filter_fd (then closed), or built here when it is -1. 0, or -errno.
 */
int hd_sandbox(const struct hd_worker_limits *lim, int filter_fd);

/* ---- msg.c: a client's packet, checked ---- */
struct hd_request {
	uint32_t seq;	 /* the client's, echoed (set whenever a header was read) */
	uint16_t type;	 /* USDT_MSG_REGISTER, _UNREGISTER, _LIST, _WATCH or _READY */
	int32_t pid;	 /* LIST: 0 or the process asked about */
	uint32_t notice; /* READY: the NOTICE's number (not 0) */
	uint64_t addr;	 /* REGISTER, UNREGISTER */
};
/*
 * Checks one packet of `len` bytes (the length the socket reported, so a
 * truncated one has len larger than what was read: callers pass the real
 * packet length). Returns 0 and *req; -EMSGSIZE: shorter than a header
 * (drop the connection); -EPROTO: not exactly as protocol.h defines it;
 * -EINVAL: a LIST of a negative pid, a WATCH with flags, a READY of notice 0.
 */
int hd_msg_decode(const void *pkt, size_t len, struct hd_request *req);

/* epoll data tags: the first member of every object registered with epoll. */
enum hd_tag {
	HD_TAG_LISTEN = 1,
	HD_TAG_SIGNAL,
	HD_TAG_NONE,
	HD_TAG_CONN,
	HD_TAG_PROC,
	HD_TAG_PARSE,
	HD_TAG_WRITER
};

/* ---- writer.c: the threads that write events and check answers (its head comment) ---- */
#define HD_BULK_SITES 1000 /* a job of more sites than this is bulk work */
enum {
	HD_LANE_WRITE, /* the writer: uprobe_events */
	HD_LANE_CHECK, /* the checker: a parse worker's answer */
	HD_LANE_LIST,  /* the lister: LIST's reading of /proc (list.c) */
	HD_LANES
};
struct hd_wjob {
	struct hd_wjob *next;
	uid_t uid;	    /* whose turn it takes */
	unsigned char lane; /* HD_LANE_*: which thread */
	bool bulk;	    /* over HD_BULK_SITES sites: its thread yields (nice) meanwhile */
	/* On the writer thread: about budget_ns of writing; true while more remains. */
	bool (*step)(struct hd_wjob *j, uint64_t budget_ns);
	/* On the loop's thread, once the job ended (the job may be freed there). */
	void (*done)(struct hd_wjob *j);
	bool stop_cancels; /* SIGTERM ends it at its next slice (a registration) */
	atomic_bool cancel;
	uint64_t t_queued, t_first, t_last; /* --test-timing (writer.c) */
	bool t_alone;			    /* --test-timing: its uid had no other job queued */
	unsigned long t_slices;		    /* --test-timing: the lane's slices when queued */
	bool cut;			    /* it ended cancelled, before its end (read by done) */
};
/* Starts the thread; its eventfd joins epfd (HD_TAG_WRITER). 0 or -errno (then all runs in line).
 */
int hd_writer_start(int epfd);
/* Queues j in its uid's turn (in line, done called before it returns, when the thread is not
 * running). */
void hd_writer_submit(struct hd_wjob *j);
/* Whether lane's thread runs (loop's thread only): jobs are queued, not run in line. */
bool hd_writer_running(unsigned lane);
/* Runs j in line to its end, done called before it returns. */
void hd_writer_run(struct hd_wjob *j);
/* j ends at its next slice (its done still called). */
void hd_writer_cancel(struct hd_wjob *j);
/* The eventfd is readable: the done callbacks of finished jobs. */
void hd_writer_event(void);
/* Jobs queued or under way. */
unsigned hd_writer_queued(void);
/* Tests only (--test-bulk-nice): bulk work's nice value above the daemon's (default 10). */
void hd_writer_bulk_nice(int n);
/* SIGTERM: registrations cut short, removals finished, the thread joined, done callbacks run. */
void hd_writer_stop(void);

/* ---- loop.c: what every layer shares with the event loop ---- */
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
	unsigned max_procs_per_uid; /* --max-procs-per-uid: processes watched for one uid */
	unsigned max_fds_per_uid;   /* --max-fds-per-uid: descriptors held for one uid's */
	struct hd_worker_limits worker;
};
extern struct hd_config hd_cfg;
/* SIGTERM: the daemon is stopping (nothing is registered anew). */
extern bool hd_stopping;
/* The tracefs instance and the loop's epoll fd (hd_loop_init, main.c, before anything else). */
extern struct usdt_tracefs *hd_tracefs;
extern int hd_epfd;
void hd_loop_init(struct usdt_tracefs *t, int epfd);
/* The monotonic clock in milliseconds (core/clock.c's, the tree's one clock). */
uint64_t hd_now_ms(void);
/*
 * The calling thread's scheduling (loop.c, "Scheduling of the threads that
 * answer"): answers, the loop and the lister: a short slice and nice
 * HD_ANSWER_NICE; else nice 0, the default slice. Children forked after
 * it start at nice 0 with the default slice. 0, or -errno (-EPERM: the
 * nice value could not be raised, the slice is set).
 */
#define HD_ANSWER_NICE (-5)
enum { HD_SCHED_SLICE = 1, HD_SCHED_NICE = 2 };
extern unsigned hd_sched_mode; /* --test-sched: HD_SCHED_* (default both) */
int hd_sched_self(bool answers);

/* ---- registry.c: modules, their events (the model; quota.c below it, procs.c above) ---- */

/* A site we created: what its removal line needs. */
struct hd_site {
	char group[USDT_TRACEFS_NAME_MAX + 1];
	char event[USDT_TRACEFS_NAME_MAX + 1];
	uint64_t off, ref;
	bool has_ref;
};

/* A registered file (see the head of registry.c). */
struct hd_module {
	struct hd_module *hnext;
	uint64_t dev, ino;
	char *path;	   /* what the events name: the literal path or our alias */
	char *mapped_path; /* as the first process mapped it, for LIST */
	bool alias;
	int hold_fd; /* a deleted file: held open, named /proc/OURPID/fd/N; else -1 */
	uid_t owner;
	uint32_t nprobes; /* accepted probes whose sites are registered */
	uint64_t delta;	  /* link-time vaddr minus file offset of the text (load bias) */
	struct hd_site *sites;
	size_t nsites;
	size_t nusers;
	uint64_t mdev, mino; /* the board's key: maps' device and inode of that mapping */
	bool published;	     /* on the board: processes mapping it do not ask */
	bool idle;	     /* no user known: lingering until idle_until */
	uint64_t idle_until;
	bool draining;
	uint64_t retry_at;
	unsigned backoff_s;
	unsigned char retiring; /* RT_QUEUED or RT_SCANNING (see "lingering and retiring") */
	pid_t leaving;		/* the process that said it unmaps it (dlclose): not adopted */
	bool unadopted; /* a retirement found a process mapping it that it could not adopt */
	bool removing;	/* its removal is being written (writer.c) */
	bool reviving;	/* draining, and a registration of the file revives it */
	/* Its lines in the state file and their hash, kept until its sites change (NULL: none). */
	char *state_text;
	size_t state_len;
	uint64_t state_hash;
};

/* Whether new users may attach to m: not draining, nor being removed. */
static inline bool hd_mod_usable(const struct hd_module *m)
{
	return !m->draining && !m->removing;
}

#define HD_MOD_BUCKETS 4096
/* The modules by (dev, ino); their count; those lingering; those whose maps key differs (btrfs). */
extern struct hd_module *hd_modules[HD_MOD_BUCKETS];
extern size_t hd_nmodules_total, hd_nidle;
extern size_t hd_nodd;
/*
 * What the model tells the layer above (main.c installs them; unset, each
 * does nothing): `idle`, m lost its last known user (retire.c lingers or
 * retires it); `forget`, m is being removed (out of retire.c's queues);
 * `removed`, the removal of (dev, ino)'s module ended (queue.c: a parse
 * that waited for it goes on).
 */
struct hd_model_hooks {
	void (*idle)(struct hd_module *m, pid_t leaving);
	void (*forget)(struct hd_module *m);
	void (*removed)(uint64_t dev, uint64_t ino);
};
extern struct hd_model_hooks hd_model_hooks;
/*
 * SIGTERM (the writer stopped, the processes dropped, the parses
 * abandoned): every module's events removed in line; returns the modules
 * left (EBUSY).
 */
size_t hd_registry_shutdown(void);
/* Writes the state file (state.c) of the modules as they are, if it changed. */
void hd_registry_flush(void);
/* Files known to carry nothing for us (the scans skip them): remembered, looked up. */
void hd_neg_add(uint64_t dev, uint64_t ino);
bool hd_neg_has(uint64_t dev, uint64_t ino);
/*
 * The per-uid caps on processes watched and descriptors held: hold charges
 * them (0, or -EDQUOT over a cap; root never refused), release gives back;
 * room says whether that much more would fit.
 */
int hd_uid_hold(uid_t uid, unsigned fds, unsigned procs);
void hd_uid_release(uid_t uid, unsigned fds, unsigned procs);
bool hd_uid_room(uid_t uid, unsigned fds, unsigned procs);
/* The per-uid request rate (every request type): 0, or -EAGAIN over it. */
int hd_rate_ok(uid_t uid, pid_t pid);
/*
 * quota.c: a uid's count of modules (+1/-1) and probe sites (+/-n), as
 * registrations start and end; whether n more sites fit its quota.
 */
void hd_quota_add(uid_t uid, int modules, long probes);
bool hd_quota_probes_fit(uid_t uid, unsigned n);
/* The module of (st_dev, st_ino), or NULL. */
struct hd_module *hd_mod_find(uint64_t dev, uint64_t ino);
/* Takes m off the board. */
void hd_mod_withdraw(struct hd_module *m);
/* Puts m on the board, unless draining or deleted. */
void hd_mod_publish(struct hd_module *m);
/* Whether m is a deleted file (named through our descriptor, its last link gone). */
bool hd_mod_deleted(const struct hd_module *m);
/* m has a user again: it no longer lingers. */
void hd_mod_unidle(struct hd_module *m);
/*
 * Removes m's sites, written by the writer (in line when it does not run):
 * m is freed once all are gone, else left draining (EBUSY). Meanwhile m
 * is `removing`: not usable, a new registration of the file waits.
 */
void hd_mod_remove(struct hd_module *m, bool save);
/* Drops one user of m (leaving: the process that said it unmaps it, else 0). */
void hd_mod_put(struct hd_module *m, pid_t leaving);
/*
 * quota.c: the module quota (counting uid's `parses` under way), the
 * new-module rate and the cheap section check, before uid's file is parsed.
 */
int hd_mod_admit(const struct hd_mapping *mp, int fd, uid_t uid, unsigned parses);
/* The worker's limits for this file (the test-only delay may apply to some paths only). */
struct hd_worker_limits hd_limits_for(const struct hd_mapping *mp);
/*
 * Registers a parsed file (or revives a draining one, prev); takes n. The
 * events are written by the writer (in line when `now`); done(arg, ret, m,
 * back) is called on the loop when they are (m: the module; ret: -errno,
 * m NULL; -ECANCELED: cut short by hd_writer_cancel, what was written
 * being removed, n handed `back`, else back is NULL). Returns 0 (done
 * will be called, perhaps already was), or -errno (it will not). *job (if
 * given) is the writer's job, for hd_writer_cancel, valid until done.
 */
int hd_mod_start(const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino, uid_t uid,
		 struct hd_module *prev, struct usdt_notes *n, bool now,
		 void (*done)(void *arg, int ret, struct hd_module *m, struct usdt_notes *back),
		 void *arg, struct hd_wjob **job);
/* Parses and registers a new file in line (the start-up scan; parses: uid's under way). */
int hd_mod_create(const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino, uid_t uid,
		  struct hd_module *prev, unsigned parses, struct hd_module **out);

/* ---- procs.c: the processes that use modules (the model, above registry.c) ---- */
/* A process's use of a module: a reference count and where it maps it. */
struct hd_pmod {
	struct hd_module *m;
	uint32_t count;
	uint64_t start, end, bias;
	char *path; /* the process's own name for the file when not m->mapped_path, else NULL */
};

/* A process known to use modules (asked, or adopted). */
struct hd_proc {
	enum hd_tag tag; /* HD_TAG_PROC: epoll data points here */
	struct hd_proc *hnext;
	pid_t pid;
	uid_t uid;
	int pidfd;
	uint32_t nmods;
	struct hd_pmod *mods;
};
#define HD_PROC_BUCKETS 16384
/* The processes by pid, and their count. */
extern struct hd_proc *hd_procs[HD_PROC_BUCKETS];
extern size_t hd_nprocs_total;

/* A pidfd registered with epoll became readable: that process exited. */
void hd_process_exited(void *proc);
/* The process of pid, or NULL. */
struct hd_proc *hd_proc_find(pid_t pid);
/*
 * The process of pid, added (its pidfd, or one opened, watched by epoll) if
 * new; NULL with errno EDQUOT over its uid's caps, else ENOMEM/EMFILE/...
 */
struct hd_proc *hd_proc_get(pid_t pid, uid_t uid, int pidfd);
/* Forgets a process (its modules already detached). */
void hd_proc_free(struct hd_proc *p);
/* Whether pid still maps module m at start (mp receives the mapping found there). */
bool hd_still_mapped(pid_t pid, uint64_t start, const struct hd_module *m, struct hd_mapping *mp);
/* Makes p a user of m at the mapping mp (one more reference if it is already). */
int hd_proc_attach(struct hd_proc *p, struct hd_module *m, const struct hd_mapping *mp);
/* Drops p's module i; unloading: the process says it unmaps the file. */
void hd_proc_detach(struct hd_proc *p, uint32_t i, bool unloading);
/* Whether the process of a pidfd is alive (true for -1: unknown). */
bool hd_peer_alive(int pidfd);
/* Makes pid a user of the registered module m (a known pid's other modules checked: exec). */
int hd_add_known(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, struct hd_module *m);
/* SIGTERM: every process forgotten, no module removed (hd_registry_shutdown does that). */
void hd_procs_drop_all(void);

/* ---- queue.c: the parse queue (a new file parsed asynchronously) ---- */
struct hd_parse;
/* Parses whose worker is running. */
unsigned hd_parses_running(void);
/* The client of cookie went away: its waiter is answered no more (see hd_register). */
void hd_register_cancel(void *cookie);
/* A parse's pipe (HD_TAG_PARSE) is readable. */
void hd_parse_event(void *parse);
/* Kills parses past their deadline; returns the next deadline (UINT64_MAX: none). */
uint64_t hd_parses_expire(uint64_t now_ms);
/* Parses of uid running or queued (they count in its module quota). */
unsigned hd_parses_of(uid_t uid);
/* The parse of (dev, ino) running or queued, or NULL. */
struct hd_parse *hd_parse_find(uint64_t dev, uint64_t ino);
/* One more waiter on parse p; returns -EINPROGRESS, or -errno. */
int hd_parse_wait(struct hd_parse *p, void *cookie, pid_t pid, uid_t uid, int pidfd,
		  const struct hd_mapping *mp);
/* A new file: admitted, a worker started or queued, the requester its first waiter. */
int hd_parse_begin(void *cookie, pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp,
		   int fd, uint64_t dev, uint64_t ino);
/* SIGTERM: every parse abandoned, its waiters answered. */
void hd_parses_cancel(void);
/* The removal of (dev, ino)'s module ended: a parse that waited for it goes on. */
void hd_parse_resume(uint64_t dev, uint64_t ino);

/* ---- users.c: REGISTER, UNREGISTER, a scan's user (registration logic) ---- */
/*
 * REGISTER/UNREGISTER from (pid, uid), identified by pidfd (the peer's
 * pidfd, or -1 when the kernel gives none). REGISTER: 0 and *nprobes
 * (answered now), -errno, or -EINPROGRESS: a new file is being parsed; the
 * answer comes later through hd_register_done(cookie, ...), unless
 * hd_register_cancel(cookie) is called first (the client went away).
 */
int hd_register(pid_t pid, uid_t uid, int pidfd, uint64_t addr, uint32_t *nprobes, void *cookie);
int hd_unregister(pid_t pid, uid_t uid, int pidfd, uint64_t addr);
/*
 * A scan found pid mapping the file (fd, dev, ino) at mp: make it a user,
 * a new file parsed in line, or through the parse queue when `async`.
 */
int hd_add_user(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, int fd, uint64_t dev,
		uint64_t ino, bool async);

/* ---- retire.c: lingering and retiring, the background steps ---- */
/*
 * Work that no client waits for, in steps the loop takes when it is idle
 * (and at least every BACKGROUND_STARVE_MS under load): retiring modules
 * (a few processes' maps per step) and the state file. _pending: whether
 * there is any; hd_registry_background takes one step and says whether
 * more remain.
 */
bool hd_registry_background_pending(void);
bool hd_registry_background(void);
/* m lost its last known user: it lingers, or is retired at once. */
void hd_mod_idle(struct hd_module *m, pid_t leaving);
/* Withdraws m from the board and queues it for a /proc pass. */
void hd_retire(struct hd_module *m, pid_t leaving);
/* m is removed or revived: out of the retirement queues. */
void hd_retire_forget(struct hd_module *m);
/* SIGTERM: the pass under way and the queues dropped. */
void hd_retire_stop(void);

/* ---- state.c: the state file, start-up recovery, tracefs readiness (persistence) ---- */
/* Writes the state file of these modules (buckets of hd_module.hnext lists) if it changed. */
void hd_state_flush(struct hd_module *const *mods, size_t nbuckets);
struct usdt_sbuf;
/*
 * A module's lines of the state file appended to b, and their hash (for
 * hd_module.state_text and state_hash; 0 if b ran out of memory). Touches
 * only its arguments: called on the writer thread for a new module.
 */
uint64_t hd_state_lines(struct usdt_sbuf *b, uint64_t dev, uint64_t ino, const char *path,
			const struct hd_site *sites, size_t n);
/* A site's removal line, as the kernel lists it. */
void hd_site_removal_line(char *line, size_t size, const char *path, const struct hd_site *s);
/*
 * 0 when tracefs is usable, else the errno of opening it (-ENODEV,
 * -EROFS, -EOPNOTSUPP, -EACCES), retried at most once a second.
 */
int hd_tracefs_ready(void);
/*
 * Start-up: adopt a previous instance's events, register running processes.
 * What the recovery needs from above: `scan`, register what runs (scan.c's
 * hd_scan_all) and return how many; `known`, whether (dev, ino) is
 * registered (registry.c). The recovery waits for tracefs if need be
 * (hd_tracefs_ready runs it then).
 */
struct hd_recovery {
	unsigned (*scan)(void);
	bool (*known)(uint64_t dev, uint64_t ino);
};
void hd_recover(const struct hd_recovery *ops);
/*
 * Whether the state file is to be written now: it changed, its last write
 * is not too recent, and either the daemon is not `busy` (a parse or the
 * writer at work) or the journal has grown past what a snapshot is for.
 */
bool hd_state_due(bool busy);
/* The state file is to be written (since when; a failed write is retried after retry_at). */
extern bool hd_state_dirty;
extern uint64_t hd_state_dirty_since, hd_state_retry_at;
/* Recovery waits for tracefs (and the state file is then left as it is). */
extern bool hd_recovery_pending;
/* ownfiles.c: the daemon's own files (its head comment has the rules). */
/* Makes the socket's directories, then refuses (logged, -EPERM) unsafe ones. */
int hd_dirs_prepare(const char *socket_path, const char *state_path);
/* A file of ours to read (regular, our uid, writable by us alone), else NULL (logged). */
FILE *hd_open_own(const char *path);
/* The same as a descriptor opened with flags (O_RDONLY, O_RDWR...), else -errno. */
int hd_open_own_fd(const char *path, int flags);
/* A new file of ours at path (O_EXCL temporary renamed into place), else -errno. */
int hd_create_own(const char *path, int flags);
struct iovec;
/* All of iov (consumed) written to fd, IOV_MAX pieces a writev(): 0, else the errno. */
int hd_writev_all(int fd, struct iovec *iov, size_t n);
/* Marks the state file to be written in the background. */
void hd_save_state(void);
/* Whether a site that existed is ours: prev's, or a previous instance's (then claimed). */
bool hd_claim_old(const struct hd_module *prev, const char *path, const struct hd_site *s);

/* ---- journal.c: intent before each tracefs change (see its head comment) ---- */
/* One whole record read back: an intent (I..E) or a module's sites (M..F). */
struct hd_journal_rec {
	bool intent;
	uint64_t seq, dev, ino;
	char *path;
	struct hd_site *sites; /* M: the sites owned; I: the sites wanted (group, off) */
	size_t nsites;
	struct hd_site *pre; /* I: the sites there before (group, event, off): not ours */
	size_t npre;
	size_t nwant_expected, npre_expected;
};
/*
 * uprobe_events as `reads` readings put together: the kernel lists it a
 * page at a time, so a reading while others add and remove events can
 * skip a line (or repeat one); where a line must not be missed, the union
 * of several readings is taken (duplicates and all). Free with
 * usdt_tracefs_list_free.
 */
int hd_list_union(struct usdt_uprobe_entry **out, size_t *n, int reads);
/* This boot's id (/proc/sys/kernel/random/boot_id), in both headers. */
const char *hd_boot_id(void);
/*
 * Before the first tracefs write of a registration on `path` (own_path: our
 * alias or descriptor name, which nobody else uses): the sites of n about to
 * be written, and those already there. Returns the record's number for
 * hd_journal_sites, 0 when nothing was recorded.
 */
uint64_t hd_journal_intent(uint64_t dev, uint64_t ino, const char *path, bool own_path,
			   const struct usdt_notes *n);
/* A registration that failed before its writes: its intent is not kept across a reset. */
void hd_journal_drop(uint64_t seq);
/* After a registration (seq: its intent's) or a removal (0): the sites m owns now. */
void hd_journal_sites(uint64_t seq, const struct hd_module *m);
/*
 * The same with m's site lines formatted already (by hd_journal_site_lines,
 * which touches nothing but its arguments: the writer thread formats them).
 */
struct usdt_sbuf;
void hd_journal_sites_as(uint64_t seq, const struct hd_module *m, const struct usdt_sbuf *lines);
void hd_journal_site_lines(struct usdt_sbuf *b, const struct hd_site *sites, size_t n);
/* 0x and v in lowercase hexadecimal, as "0x%" PRIx64 prints it, appended to b (any thread). */
void hd_put_hex(struct usdt_sbuf *b, uint64_t v);
/* What the journal holds since the last state file (SIZE_MAX: no journal, all is in that file). */
size_t hd_journal_bytes(void);
/* After a state file (tag: the hash of its body): the journal starts again, empty. */
void hd_journal_reset(uint64_t tag);
/* Start-up: the records of the journal following the state file of tag, in order; then opened. */
void hd_journal_replay(const char *state_path, uint64_t tag,
		       void (*fn)(const struct hd_journal_rec *r, void *arg), void *arg);

/* ---- scan.c: the /proc scans, the exec sweep ---- */
/* --all: register processes not seen yet. */
void hd_rescan(void);
/* Timer: EBUSY retries, the rate buckets. Returns true when work remains. */
void hd_tick(uint64_t now_ms);
/*
 * Scans /proc and registers what it finds; returns the registrations. New
 * files parsed in line (start-up), or through the parse queue when `async`.
 */
unsigned hd_scan_all(bool async);

/* ---- list.c: LIST, its /proc reading on the lister lane (its head comment) ---- */
/* One LIST entry; the callback sends it. */
struct hd_list_entry {
	pid_t pid;
	uint32_t nprobes;
	uint64_t dev, ino, start, end, load_bias;
	const char *path;
};
/* Past this many bytes of entries the answer is -EFBIG (conn.c's queue holds 16 MiB). */
#define HD_LIST_MAX_BYTES (16u << 20)
/*
 * Queues the LIST of pid (0: every process) visible to uid (root: all;
 * others: their own) on the lister lane: -EINPROGRESS, answered by
 * hd_upcalls.list_done(cookie, ...). 0: not queued (nothing registered, no
 * lane, no memory): the caller lists in line with hd_list.
 */
int hd_list_begin(pid_t pid, uid_t uid, void *cookie);
/* cookie's connection closed: its LIST is not answered. */
void hd_list_cancel(void *cookie);
/* The same LIST in line: fn for every (process, module); returns their number. */
size_t hd_list(pid_t pid, uid_t uid, void (*fn)(const struct hd_list_entry *e, void *arg),
	       void *arg);

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
/* SOCKET.watched while a watcher is there (on), so that drti asks for board files too. */
void hd_board_watched(bool on);

/*
 * ---- loop.c: the callbacks up (the layer above everything here, the
 * protocol and the loop, is reached by these three names only) ----
 */
/*
 * What the library needs from the layer above it (the protocol and the
 * event loop: serve.c, main.c), as callbacks that layer installs before it
 * serves (issue 33, item 6): the library calls only downward and links on
 * its own (the fuzz targets link it without main.c). Unset, each does
 * nothing (and hold_begin holds nothing).
 */
struct hd_upcalls {
	/*
	 * serve.c: a REGISTER created the events of the file maps_dev/ino
	 * (pid: the first registrant): the watchers are told (NOTICE), and the
	 * answers given with the returned hold (register_done's `hold`) wait
	 * until they are ready (protocol.h, WATCH). 0: nobody watches.
	 */
	uint32_t (*hold_begin)(pid_t pid, uint64_t maps_dev, uint64_t ino);
	/* serve.c: the deferred answer of a REGISTER (sent once `hold`, if not 0, ends). */
	void (*register_done)(void *cookie, int status, uint32_t nprobes, uint32_t hold);
	/* serve.c: a LIST's answer (list.c): its n entries, then its status. */
	void (*list_done)(void *cookie, const struct hd_list_entry *e, size_t n, int status);
	/* main.c: obj (a connection or process) is being freed; drop its pending epoll events. */
	void (*forget)(void *obj);
};
extern struct hd_upcalls hd_upcalls;

static inline uint32_t hd_hold_begin(pid_t pid, uint64_t maps_dev, uint64_t ino)
{
	return hd_upcalls.hold_begin ? hd_upcalls.hold_begin(pid, maps_dev, ino) : 0;
}

static inline void hd_register_done(void *cookie, int status, uint32_t nprobes, uint32_t hold)
{
	if (hd_upcalls.register_done)
		hd_upcalls.register_done(cookie, status, nprobes, hold);
}

static inline void hd_forget(void *obj)
{
	if (hd_upcalls.forget)
		hd_upcalls.forget(obj);
}

#endif
