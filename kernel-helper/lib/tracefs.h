/* SPDX-License-Identifier: MIT */
/*
 * The tracefs uprobe layer: turns validated probes (notes.h) into uprobe
 * events `sdt_<provider>/<probe>` in /sys/kernel/tracing/uprobe_events, lists
 * what exists, and removes exactly what we created. See tracefs.c for the
 * rules (append-only writes, batches, names, paths, signatures).
 */
#ifndef USDT_TRACEFS_H
#define USDT_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notes.h"

/* The longest definition line we write (the kernel parses at most 4096 bytes per line). */
#define USDT_UPROBE_LINE_MAX 4000
/* Where paths unsafe to write literally get a bind-mounted alias. */
#define USDT_ALIAS_DIR "/run/usdtkit/files"

struct usdt_tracefs {
	char root[64];	  /* "/sys/kernel/tracing" */
	int fd;		  /* uprobe_events, O_WRONLY|O_APPEND */
	uint64_t line_ns; /* the kernel's recent cost of a line (tracefs_batch.c), 0: unknown */
	uint64_t last_ns; /* the last batch's cost per line */
	/* When set and true, a slice of writing ends at its next batch (the caller's flag). */
	const _Atomic(bool) *yield;
};

#define USDT_TRACEFS_MOUNT 0x1u /* mount tracefs when absent (needs root) */

/*
 * Returns 0, or -errno with a message in err: -ENODEV not mounted (and not
 * mountable), -EOPNOTSUPP mounted without uprobe_events (or not tracefs:
 * never mounted over), -EROFS read-only, -EACCES/-EPERM not root.
 */
int usdt_tracefs_open(struct usdt_tracefs *t, unsigned flags, char *err, size_t errlen);
void usdt_tracefs_close(struct usdt_tracefs *t);

/*
 * Writes one definition or removal line with one write(). Returns 0 or
 * -errno; then msg holds the kernel's explanation from error_log when it
 * logged one for this command, else a description of the errno.
 */
int usdt_tracefs_write(struct usdt_tracefs *t, const char *line, char *msg, size_t msglen);
/*
 * Batches (tracefs_batch.c): lines packed into one write() of at most
 * USDT_TRACEFS_BATCH_MAX bytes; the kernel runs them in order and stops at
 * the first that fails, whose errno the write() returns.
 */
#define USDT_TRACEFS_BATCH_MAX (64 * 1024)
struct usdt_tracefs_batch {
	size_t len, lines;
	char buf[USDT_TRACEFS_BATCH_MAX];
};
/* Appends one line; false when it does not fit (or is not one line). */
bool usdt_tracefs_batch_add(struct usdt_tracefs_batch *b, const char *line);
/* One write() of len bytes holding `lines` lines. 0, or -errno (which line failed: unknown). */
int usdt_tracefs_write_many(struct usdt_tracefs *t, const char *buf, size_t len, size_t lines);
/* How many lines fit in budget_ns at the kernel's recent cost per line (at least 1). */
size_t usdt_tracefs_batch_lines(struct usdt_tracefs *t, uint64_t budget_ns);
/* Whether t->yield is set and true: a slice ends at its next batch. */
bool usdt_tracefs_yielding(const struct usdt_tracefs *t);
/*
 * Writes lines[*next..n) in batches for about budget_ns (at least one
 * batch), each line's result in err[] (a failed batch is written again a
 * line at a time, so a line the batch had run answers as it would then:
 * ENOENT for a removal). Advances *next; returns 1 while lines remain, 0
 * when all are written, -ENOMEM.
 */
int usdt_tracefs_run_lines(struct usdt_tracefs *t, char *const *lines, size_t n, size_t *next,
			   int *err, uint64_t budget_ns);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t usdt_tracefs_now_ns(void);

/*
 * Tests only: called after every write to uprobe_events (the daemon's
 * --test-crash-after kills itself from it); NULL, nothing, otherwise.
 */
extern void (*usdt_tracefs_write_hook)(void);

/*
 * Whether `path` can be written literally into a definition: absolute, at
 * most 1024 bytes, only [A-Za-z0-9/._+,:@=~-]. The kernel splits the line
 * on white space and has no quoting, so anything else needs an alias.
 */
bool usdt_tracefs_path_ok(const char *path);

/*
 * Whether `path` names the regular file open on `fd` through directories
 * only root can change (tracefs.c, "Trusted paths"): walked from / without
 * following any symlink, every directory owned by root and writable by
 * neither group nor others, none on FUSE. Returns 0, or why not: -EPERM (an
 * untrusted directory, FUSE, not a regular file), -ELOOP (a symlink),
 * -ESTALE (another file), -ENOENT, -EINVAL (relative, "." or "..").
 */
int usdt_path_trusted(const char *path, int fd);

/*
 * The name to write into the definitions of the file open on `fd`, mapped
 * or opened as `path` (NULL: none known): `path` itself when tracefs can
 * take it literally and it is trusted (*kind USDT_PATH_LITERAL), else the
 * alias USDT_ALIAS_DIR/<dev>-<ino> (USDT_PATH_ALIAS), made now when
 * make_alias, else only named (a removal). A name nobody but root can
 * change is the only kind that reaches the kernel: a caller-controlled one
 * would let the kernel bind the events to another file than the one checked.
 * Returns 0, or -errno from making the alias.
 */
enum { USDT_PATH_LITERAL, USDT_PATH_ALIAS };
int usdt_tracefs_event_path(int fd, const char *path, bool make_alias, char *out, size_t outlen,
			    int *kind);

/*
 * A safe path for the file open on `fd`: USDT_ALIAS_DIR/<dev>-<ino>, a bind
 * mount of the file (made if not there already) in a directory only root
 * can change (checked). Returns 0, or -errno.
 */
int usdt_tracefs_alias(int fd, char *out, size_t outlen);
/* Unmounts and removes an alias made by usdt_tracefs_alias(). */
int usdt_tracefs_alias_release(const char *alias);
/* The alias path for (dev, ino), whether it exists or not. */
void usdt_tracefs_alias_path(uint64_t dev, uint64_t ino, char *out, size_t outlen);

/*
 * The definition of one accepted probe site as event `event` of `group`:
 *   p:GROUP/EVENT PATH:0xOFF(0xREF) arg1=%di:s32 arg2=+8(%si):u64 arg3=+0(%r12):ustring
 * Argument N keeps its note position in its name (an unsupported argument 2
 * leaves arg1, arg3); a metadata name replaces "argN". Returns the length, or
 * -EINVAL (rejected probe, unsafe path, bad name), -ENAMETOOLONG.
 */
int usdt_uprobe_def(char *buf, size_t len, const char *group, const char *event, const char *path,
		    const struct usdt_site *p);

/* One line of uprobe_events, parsed back. */
struct usdt_uprobe_entry {
	char type; /* 'p' or 'r' */
	char group[USDT_TRACEFS_NAME_MAX + 1];
	char event[USDT_TRACEFS_NAME_MAX + 1];
	char *path;
	uint64_t off;
	bool has_ref;
	uint64_t ref;
	char *args; /* the rest of the line, "" when none */
};

/* Returns 0 or -EINVAL. Free with usdt_uprobe_entry_clear(). */
int usdt_uprobe_parse_line(const char *line, struct usdt_uprobe_entry *e);
void usdt_uprobe_entry_clear(struct usdt_uprobe_entry *e);
/* Every uprobe event (for restart recovery). Returns 0 or -errno. */
int usdt_tracefs_list(struct usdt_tracefs *t, struct usdt_uprobe_entry **out, size_t *n);
void usdt_tracefs_list_free(struct usdt_uprobe_entry *e, size_t n);

/* What happened to one probe site. */
struct usdt_site_result {
	const struct usdt_site *probe;
	char event[USDT_TRACEFS_NAME_MAX + 1]; /* with its _N suffix when one was needed */
	char *line;			       /* what was written (NULL: nothing) */
	int err;			       /* 0, or -errno (EBUSY: retry later) */
	bool existed;			       /* register: already there; unregister: not there */
	char msg[256];
};

/*
 * Registers every accepted probe of `n` under `path` (usdt_tracefs_path_ok).
 * All sites of a probe go into one event; sites whose argument types differ
 * from the event's get `<probe>_2`, `_3`...; an event of that name made by
 * someone else with other argument types is skipped over the same way.
 * Returns 0 (each site's outcome in *sites, freed with
 * usdt_tracefs_results_free) or -errno when nothing could be attempted.
 * Sites already registered count as success. Lines are packed into
 * batches where the result stays exact (tracefs_register.c).
 */
int usdt_tracefs_register(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			  struct usdt_site_result **sites, size_t *nsites);
void usdt_tracefs_results_free(struct usdt_site_result *s, size_t n);
/*
 * The same in slices: begin (0 or -errno as above), step writes for about
 * budget_ns (at least one line) and returns 1 while sites remain, 0 when
 * done; end hands over the results (sites NULL: dropped) and frees r. n
 * must live until end. A caller that stops early calls end: the results
 * are those of the sites written so far.
 */
struct usdt_tracefs_reg;
int usdt_tracefs_reg_begin(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			   struct usdt_tracefs_reg **r);
int usdt_tracefs_reg_step(struct usdt_tracefs_reg *r, uint64_t budget_ns);
void usdt_tracefs_reg_end(struct usdt_tracefs_reg *r, struct usdt_site_result **sites,
			  size_t *nsites);

/*
 * Removes, site by site, the events of `n` registered under `path`: entries
 * of the probe's group named <probe> or <probe>_N at one of the file's probe
 * offsets. Other probes of a shared event (another file's) stay. Returns 0
 * and the outcomes, or -errno.
 */
int usdt_tracefs_unregister(struct usdt_tracefs *t, const struct usdt_notes *n, const char *path,
			    struct usdt_site_result **sites, size_t *nsites);

#endif /* USDT_TRACEFS_H */
