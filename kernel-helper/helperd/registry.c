// SPDX-License-Identifier: MIT
/*
 * The registry: which files (modules) have events, which processes use them,
 * and the tracefs work of creating and removing those events.
 *
 * A module is one file, keyed by (st_dev, st_ino) of the file really mapped
 * (fstat of /proc/PID/map_files/...). It owns the list of sites it created
 * (group, event, offset, ref_ctr, path: exactly what a removal line needs),
 * never more: a site that already existed is someone else's, unless it is
 * one of ours from before (a previous instance's state file, or this
 * module's own leftovers after an EBUSY).
 *
 * A process holds a reference count per module (two -G objects in one
 * module register it twice; an UNREGISTER drops one). Its exit is seen on
 * its pidfd, which is in our epoll set: the pidfd is the one the kernel gave
 * for the socket's peer (SO_PEERPIDFD), so it is the very process that
 * connected, not whoever has its pid now. When a module's last user goes,
 * its sites are removed one by one; EBUSY (a consumer has the event
 * enabled) leaves the module "draining", retried with backoff from 5 s to
 * 5 min, and revived if a process maps the file again meanwhile.
 *
 * The state file lists every site we created, rewritten whole (temporary
 * file + rename) whenever that set changes, which is only when a module is
 * added or removed, never on the per-process path. A failed write (disk
 * full) is logged and the daemon goes on; the cost is that a restart after a
 * crash may leave those events behind, never that it removes foreign ones.
 *
 * Exec: a process that execs keeps its pid and pidfd but loses its modules
 * without running a destructor. When a known pid registers again, its other
 * modules are checked against its maps and dropped if gone; and a sweep
 * checks every registered process's maps once per --sweep seconds.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helperd.h"

struct hd_config hd_cfg;

struct hd_site {
	char group[USDT_TRACEFS_NAME_MAX + 1];
	char event[USDT_TRACEFS_NAME_MAX + 1];
	uint64_t off, ref;
	bool has_ref;
};

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
};

struct hd_pmod {
	struct hd_module *m;
	uint32_t count;
	uint64_t start, end, bias;
	char *path; /* the process's own name for the file when not m->mapped_path, else NULL */
};

struct hd_proc {
	enum hd_tag tag; /* HD_TAG_PROC: epoll data points here */
	struct hd_proc *hnext;
	pid_t pid;
	uid_t uid;
	int pidfd;
	uint32_t nmods;
	struct hd_pmod *mods;
};

struct uidacct {
	struct uidacct *next;
	uid_t uid;
	double tokens, new_tokens;
	uint64_t last_ms;
	unsigned nmodules, nprobes;
};

#define HD_MOD_BUCKETS 4096
#define HD_PROC_BUCKETS 16384
#define NEG_MAX 65536

static struct hd_module *hd_modules[HD_MOD_BUCKETS];
static struct hd_proc *hd_procs[HD_PROC_BUCKETS];
static struct uidacct *uids;
static size_t hd_nmodules_total, hd_nprocs_total, hd_nidle;
static size_t hd_nodd; /* modules whose maps key is not their (st_dev, st_ino): btrfs, overlayfs */
static bool hd_state_dirty;
static uint64_t hd_state_dirty_since, hd_state_retry_at;
static struct usdt_tracefs *hd_tracefs;
static int hd_epfd = -1;
static bool state_warned;

/* Files known to carry nothing for us (the scan's cache). */
static struct {
	uint64_t dev, ino;
} * neg;
static size_t nneg;

/* A previous instance's sites (recovery) and whether one was claimed again. */
struct old_site {
	struct hd_site s;
	char *path;
	uint64_t dev, ino;
	bool claimed;
};
static struct old_site *old;
static size_t nold;

uint64_t hd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t mod_hash(uint64_t dev, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ dev) % HD_MOD_BUCKETS;
}

static struct hd_module *hd_mod_find(uint64_t dev, uint64_t ino)
{
	for (struct hd_module *m = hd_modules[mod_hash(dev, ino)]; m; m = m->hnext)
		if (m->dev == dev && m->ino == ino)
			return m;
	return NULL;
}

static struct hd_proc *hd_proc_find(pid_t pid)
{
	for (struct hd_proc *p = hd_procs[(unsigned)pid % HD_PROC_BUCKETS]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct uidacct *uid_acct(uid_t uid)
{
	struct uidacct *a;

	for (a = uids; a; a = a->next)
		if (a->uid == uid)
			return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->uid = uid;
	a->tokens = hd_cfg.rate_per_s * 2.0;
	a->new_tokens = hd_cfg.new_modules_per_s * 2.0;
	a->last_ms = hd_now_ms();
	a->next = uids;
	uids = a;
	return a;
}

/* Token buckets: a burst of twice the rate, refilled continuously. */
static void refill(struct uidacct *a)
{
	uint64_t now = hd_now_ms();
	double dt = (double)(now - a->last_ms) / 1000.0;

	a->last_ms = now;
	a->tokens += dt * hd_cfg.rate_per_s;
	if (a->tokens > hd_cfg.rate_per_s * 2.0)
		a->tokens = hd_cfg.rate_per_s * 2.0;
	a->new_tokens += dt * hd_cfg.new_modules_per_s;
	if (a->new_tokens > hd_cfg.new_modules_per_s * 2.0)
		a->new_tokens = hd_cfg.new_modules_per_s * 2.0;
}

static bool neg_has(uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < nneg; i++)
		if (neg[i].dev == dev && neg[i].ino == ino)
			return true;
	return false;
}

static void hd_neg_add(uint64_t dev, uint64_t ino)
{
	if (!neg)
		neg = calloc(NEG_MAX, sizeof(*neg));
	if (!neg)
		return;
	if (nneg == NEG_MAX)
		nneg = 0; /* forget, rather than grow without bound */
	neg[nneg].dev = dev;
	neg[nneg].ino = ino;
	nneg++;
}

/* --- the state file --- */

static bool write_state(void)
{
	char tmp[4200];
	FILE *f;
	int fd, bad;

	snprintf(tmp, sizeof(tmp), "%s.tmp", hd_cfg.state_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		goto failed;
	}
	fprintf(f, "usdtkit-helperd-state 1\n");
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *m = hd_modules[b]; m; m = m->hnext)
			for (size_t i = 0; i < m->nsites; i++) {
				const struct hd_site *s = &m->sites[i];

				/* Paths are usdt_tracefs_path_ok: no white space. */
				fprintf(f, "site %" PRIu64 " %" PRIu64 " %s %s 0x%" PRIx64, m->dev,
					m->ino, s->group, s->event, s->off);
				if (s->has_ref)
					fprintf(f, " 0x%" PRIx64 " %s\n", s->ref, m->path);
				else
					fprintf(f, " - %s\n", m->path);
			}
	/*
	 * No fsync: the file describes tracefs events, which a power loss
	 * erases too; rename alone keeps it whole against a crash of ours.
	 */
	bad = ferror(f) || fflush(f) != 0;
	bad |= fclose(f);
	if (bad || rename(tmp, hd_cfg.state_path) != 0)
		goto failed;
	if (state_warned)
		hd_info("the state file %s is written again", hd_cfg.state_path);
	state_warned = false;
	return true;
failed:
	if (!state_warned)
		hd_warn("cannot write the state file %s: %s (going on; a restart after a crash "
			"may leave events behind)",
			hd_cfg.state_path, strerror(errno));
	state_warned = true;
	unlink(tmp);
	return false;
}

/*
 * The state file is written in the background (hd_registry_background),
 * when no client waits, so no answer waits for it.
 */
static void hd_save_state(void)
{
	if (!hd_state_dirty)
		hd_state_dirty_since = hd_now_ms();
	hd_state_dirty = true;
}

void hd_registry_flush(void)
{
	if (hd_state_dirty && !write_state()) {
		/* Tried again a second later (a full disk may have room by then). */
		hd_state_retry_at = hd_now_ms() + 1000;
		return;
	}
	hd_state_dirty = false;
}

static void load_state(void)
{
	FILE *f = fopen(hd_cfg.state_path, "re");
	char line[4400];

	if (!f)
		return;
	if (!fgets(line, sizeof(line), f) || strcmp(line, "usdtkit-helperd-state 1\n") != 0) {
		hd_warn("%s: not a state file of this version: ignored", hd_cfg.state_path);
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		struct old_site o = {0};
		char group[80], event[80], ref[40], path[4200];
		unsigned long long dev, ino, off;
		struct old_site *no;

		if (sscanf(line, "site %llu %llu %79s %79s %llx %39s %4199s", &dev, &ino, group,
			   event, &off, ref, path) != 7 ||
		    strlen(group) > USDT_TRACEFS_NAME_MAX ||
		    strlen(event) > USDT_TRACEFS_NAME_MAX || !usdt_tracefs_path_ok(path))
			continue;
		strcpy(o.s.group, group);
		strcpy(o.s.event, event);
		o.s.off = off;
		o.s.has_ref = strcmp(ref, "-") != 0;
		o.s.ref = o.s.has_ref ? strtoull(ref, NULL, 16) : 0;
		o.dev = dev;
		o.ino = ino;
		o.path = strdup(path);
		no = realloc(old, (nold + 1) * sizeof(*old));
		if (!o.path || !no) {
			free(o.path);
			break;
		}
		old = no;
		old[nold++] = o;
	}
	fclose(f);
	hd_info("state file: %zu sites from a previous instance", nold);
}

/* --- tracefs --- */

static int hd_remove_site(const char *path, const struct hd_site *s)
{
	char line[USDT_UPROBE_LINE_MAX + 1], msg[256];
	int ret;

	if (s->has_ref)
		snprintf(line, sizeof(line), "-:%s/%s %s:0x%016" PRIx64 "(0x%" PRIx64 ")", s->group,
			 s->event, path, s->off, s->ref);
	else
		snprintf(line, sizeof(line), "-:%s/%s %s:0x%016" PRIx64, s->group, s->event, path,
			 s->off);
	ret = usdt_tracefs_write(hd_tracefs, line, msg, sizeof(msg));
	if (ret == -ENOENT)
		ret = 0; /* someone removed it already */
	if (ret && ret != -EBUSY)
		hd_warn("%s: %s", line, msg);
	else if (!ret)
		hd_dbg("%s", line);
	return ret;
}

static void mod_unlink(struct hd_module *m)
{
	struct hd_module **pp = &hd_modules[mod_hash(m->dev, m->ino)];

	while (*pp && *pp != m)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = m->hnext;
	hd_nmodules_total--;
}

static void mod_free(struct hd_module *m)
{
	hd_nodd -= m->mdev != m->dev || m->mino != m->ino;
	if (m->hold_fd >= 0)
		close(m->hold_fd);
	free(m->path);
	free(m->mapped_path);
	free(m->sites);
	free(m);
}

/* Removes what is left of m's sites; true when all are gone (m is then freed). */
static void hd_mod_withdraw(struct hd_module *m)
{
	if (m->published)
		hd_board_withdraw(m->mdev, m->mino, m->mapped_path);
	m->published = false;
}

static void hd_mod_publish(struct hd_module *m)
{
	if (!m->published && !m->draining && m->hold_fd < 0)
		m->published = hd_board_publish(m->mdev, m->mino, m->mapped_path);
}

static void hd_mod_unidle(struct hd_module *m)
{
	if (m->idle) {
		m->idle = false;
		hd_nidle--;
	}
}

static void hd_retire_forget(struct hd_module *m);

static bool hd_mod_remove(struct hd_module *m, bool save)
{
	size_t keep = 0;
	struct uidacct *a;

	hd_retire_forget(m);
	hd_mod_withdraw(m);
	hd_mod_unidle(m);
	for (size_t i = 0; i < m->nsites; i++)
		if (hd_remove_site(m->path, &m->sites[i]) == -EBUSY)
			m->sites[keep++] = m->sites[i];
	m->nsites = keep;
	if (keep) {
		if (!m->draining) {
			m->draining = true;
			m->backoff_s = 5;
		} else if (m->backoff_s < 300) {
			m->backoff_s *= 2;
		}
		m->retry_at = hd_now_ms() + m->backoff_s * 1000ull;
		hd_info("%s: %zu events are enabled by a consumer (EBUSY): retry in %u s",
			m->mapped_path, keep, m->backoff_s);
		if (save)
			hd_save_state();
		return false;
	}
	hd_info("unregistered %s (%" PRIu64 ":%" PRIu64 ")", m->mapped_path, m->dev, m->ino);
	a = uid_acct(m->owner);
	if (a) {
		a->nmodules--;
		a->nprobes -= m->nprobes < a->nprobes ? m->nprobes : a->nprobes;
	}
	if (m->alias)
		usdt_tracefs_alias_release(m->path);
	mod_unlink(m);
	mod_free(m);
	if (save)
		hd_save_state();
	return true;
}

static void hd_mod_idle(struct hd_module *m, pid_t leaving);

static void hd_mod_put(struct hd_module *m, pid_t leaving)
{
	if (--m->nusers == 0)
		hd_mod_idle(m, leaving);
}

/* A site that existed before we wrote it: ours from before, or someone else's. */
static bool hd_claim_old(const struct hd_module *prev, const char *path, const struct hd_site *s)
{
	if (prev)
		for (size_t i = 0; i < prev->nsites; i++)
			if (!strcmp(prev->sites[i].group, s->group) &&
			    !strcmp(prev->sites[i].event, s->event) &&
			    prev->sites[i].off == s->off && !strcmp(prev->path, path))
				return true;
	for (size_t i = 0; i < nold; i++)
		if (!strcmp(old[i].s.group, s->group) && !strcmp(old[i].s.event, s->event) &&
		    old[i].s.off == s->off && !strcmp(old[i].path, path)) {
			old[i].claimed = true;
			return true;
		}
	return false;
}

/* Parses s->line's "(0xREF)" back: what the kernel will list and match at removal. */
static void site_from(struct hd_site *out, const struct usdt_site *s)
{
	const char *loc = strchr(s->line, ' '), *paren;

	snprintf(out->group, sizeof(out->group), "%s", s->probe->group);
	snprintf(out->event, sizeof(out->event), "%s", s->event);
	out->off = s->probe->pc_off;
	paren = loc ? strchr(loc, '(') : NULL;
	out->has_ref = paren && (!strchr(loc + 1, ' ') || paren < strchr(loc + 1, ' '));
	out->ref = out->has_ref ? strtoull(paren + 1, NULL, 16) : 0;
}

/*
 * The path events name: the mapped path itself when tracefs can take it and
 * it still names this very file in our mount namespace; else an alias (a
 * bind mount of the file). A deleted file cannot be bind-mounted (ENOENT):
 * we keep it open and name it /proc/OURPID/fd/N, which the kernel resolves
 * at creation and matches as a string at removal.
 */
static int event_path(const struct hd_mapping *mp, int fd, struct hd_module *m)
{
	char buf[256];
	struct stat st;
	int ret;

	m->alias = false;
	if (!mp->deleted && usdt_tracefs_path_ok(mp->path) && stat(mp->path, &st) == 0 &&
	    (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->ino) {
		m->path = strdup(mp->path);
		return m->path ? 0 : -ENOMEM;
	}
	ret = usdt_tracefs_alias(fd, buf, sizeof(buf));
	if (ret == 0) {
		m->alias = true;
	} else {
		m->hold_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (m->hold_fd < 0)
			return ret;
		snprintf(buf, sizeof(buf), "/proc/%d/fd/%d", (int)getpid(), m->hold_fd);
	}
	m->path = strdup(buf);
	return m->path ? 0 : -ENOMEM;
}

/* Parses still running (the asynchronous REGISTER path): at most PARSES_MAX. */
static unsigned hd_parses_of(uid_t uid);
static struct hd_parse *hd_parse_find(uint64_t dev, uint64_t ino);
static int hd_parse_wait(struct hd_parse *p, void *cookie, pid_t pid, uid_t uid, int pidfd,
			 const struct hd_mapping *mp);
static int hd_parse_begin(void *cookie, pid_t pid, uid_t uid, int pidfd,
			  const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino);
/* hd_rescan is scanning: new files are parsed asynchronously (hd_add_user). */
static bool hd_scan_async;

/*
 * Whether uid may have one more file parsed now: the module quota (counting
 * its parses under way), the new-module rate, and the cheap section check.
 */
static int hd_mod_admit(const struct hd_mapping *mp, int fd, uid_t uid)
{
	struct uidacct *a = uid_acct(uid);

	if (!a)
		return -ENOMEM;
	if (uid != 0 && a->nmodules + hd_parses_of(uid) >= hd_cfg.max_modules_per_uid) {
		hd_warn("uid %u: module quota (%u) reached: %s refused", (unsigned)uid,
			hd_cfg.max_modules_per_uid, mp->path);
		return -EDQUOT;
	}
	refill(a);
	if (uid != 0 && a->new_tokens < 1.0) {
		hd_warn("uid %u: new-module rate (%u/s) exceeded: %s refused", (unsigned)uid,
			hd_cfg.new_modules_per_s, mp->path);
		return -EAGAIN;
	}
	a->new_tokens -= 1.0;
	if (!(hd_elf_note_kinds(fd) & HD_HAS_STAPSDT))
		return -ENODATA;
	return 0;
}

/* The worker's limits for this file (the test-only delay may apply to some paths only). */
static struct hd_worker_limits hd_limits_for(const struct hd_mapping *mp)
{
	struct hd_worker_limits lim = hd_cfg.worker;

	if (lim.test_delay_glob && fnmatch(lim.test_delay_glob, mp->path, 0) != 0)
		lim.test_delay_ms = 0;
	return lim;
}

/*
 * Registers a parsed file (or revives a draining one, `prev`); takes n.
 * The file's quota and rate were admitted before its parse.
 */
static int hd_mod_finish(const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino, uid_t uid,
			 struct hd_module *prev, struct usdt_notes *n, struct hd_module **out)
{
	struct usdt_site *sites = NULL;
	struct hd_module *m;
	struct uidacct *a = uid_acct(uid);
	size_t nsites = 0;
	int ret;

	if (!a) {
		usdt_notes_free(n);
		return -ENOMEM;
	}
	if (n->naccepted == 0) {
		usdt_notes_free(n);
		return -ENODATA;
	}
	if (uid != 0 && a->nprobes + n->naccepted > hd_cfg.max_probes_per_uid) {
		hd_warn("uid %u: probe quota (%u) reached: %s refused", (unsigned)uid,
			hd_cfg.max_probes_per_uid, mp->path);
		usdt_notes_free(n);
		return -EDQUOT;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		usdt_notes_free(n);
		return -ENOMEM;
	}
	m->dev = dev;
	m->ino = ino;
	m->owner = uid;
	m->hold_fd = -1;
	m->mapped_path = strdup(mp->path);
	m->mdev = mp->dev;
	m->mino = mp->ino;
	hd_nodd += m->mdev != dev || m->mino != ino;
	if (prev && !prev->alias) {
		/* Revived: the same name its leftover events have. */
		m->path = strdup(prev->path);
		m->hold_fd = prev->hold_fd;
		prev->hold_fd = -1;
		ret = m->path ? 0 : -ENOMEM;
	} else {
		ret = event_path(mp, fd, m);
	}
	if (!ret && !m->mapped_path)
		ret = -ENOMEM;
	if (!ret)
		ret = usdt_tracefs_register(hd_tracefs, n, m->path, &sites, &nsites);
	if (!ret) {
		m->sites = calloc(nsites ? nsites : 1, sizeof(*m->sites));
		if (!m->sites)
			ret = -ENOMEM;
	}
	if (ret) {
		hd_warn("%s: cannot register: %s", mp->path, strerror(-ret));
		if (m->alias && !prev)
			usdt_tracefs_alias_release(m->path);
		if (prev && m->hold_fd >= 0) {
			prev->hold_fd = m->hold_fd;
			m->hold_fd = -1;
		}
		mod_free(m);
		usdt_notes_free(n);
		free(sites);
		return ret;
	}
	for (size_t i = 0; i < nsites; i++) {
		struct hd_site s;

		if (sites[i].err) {
			hd_warn("%s: %s:%s: %s", mp->path, sites[i].probe->provider,
				sites[i].probe->name, sites[i].msg);
			continue;
		}
		m->nprobes++;
		site_from(&s, &sites[i]);
		if (sites[i].existed && !hd_claim_old(prev, m->path, &s))
			continue; /* someone else's event: never ours to remove */
		m->sites[m->nsites++] = s;
		if (!sites[i].existed)
			hd_dbg("%s", sites[i].line);
	}
	for (size_t i = 0; i < n->nprobes; i++)
		if (!n->probes[i].reject) {
			m->delta = n->probes[i].pc - n->probes[i].pc_off;
			break;
		}
	a->nmodules++;
	a->nprobes += m->nprobes;
	hd_info("registered %s (%" PRIu64 ":%" PRIu64 "): %u probe sites, %zu events created%s%s",
		m->mapped_path, dev, ino, m->nprobes, m->nsites,
		m->alias ? ", through an alias" : "",
		m->hold_fd >= 0 ? ", through a descriptor" : "");
	free(sites);
	usdt_notes_free(n);
	if (prev) {
		mod_unlink(prev);
		mod_free(prev);
	}
	m->hnext = hd_modules[mod_hash(dev, ino)];
	hd_modules[mod_hash(dev, ino)] = m;
	hd_nmodules_total++;
	hd_save_state();
	if (!mp->deleted)
		hd_mod_publish(m);
	*out = m;
	return 0;
}

/* Reads and registers a new file in line (the start-up scan; REGISTER, --rescan: hd_parse_begin).
 */
static int hd_mod_create(const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino, uid_t uid,
			 struct hd_module *prev, struct hd_module **out)
{
	struct hd_worker_limits lim = hd_limits_for(mp);
	struct usdt_notes *n = NULL;
	char err[256];
	int ret = hd_tracefs_ready();

	if (!ret)
		ret = hd_mod_admit(mp, fd, uid);
	if (ret)
		return ret;
	ret = hd_parse(fd, &lim, &n, err, sizeof(err));
	if (ret) {
		hd_warn("%s: %s", mp->path, err);
		return ret;
	}
	return hd_mod_finish(mp, fd, dev, ino, uid, prev, n, out);
}

/* --- processes --- */

static struct hd_proc *hd_proc_get(pid_t pid, uid_t uid, int pidfd)
{
	struct hd_proc *p = hd_proc_find(pid);
	struct epoll_event ev = {.events = EPOLLIN};
	int fd;

	if (p)
		return p;
	fd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : (int)pidfd_open(pid, 0);
	if (fd < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return NULL;
	}
	p->tag = HD_TAG_PROC;
	p->pid = pid;
	p->uid = uid;
	p->pidfd = fd;
	ev.data.ptr = p;
	if (epoll_ctl(hd_epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		free(p);
		return NULL;
	}
	p->hnext = hd_procs[(unsigned)pid % HD_PROC_BUCKETS];
	hd_procs[(unsigned)pid % HD_PROC_BUCKETS] = p;
	hd_nprocs_total++;
	return p;
}

static void hd_proc_free(struct hd_proc *p)
{
	struct hd_proc **pp = &hd_procs[(unsigned)p->pid % HD_PROC_BUCKETS];

	while (*pp && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = p->hnext;
	hd_forget(p);
	epoll_ctl(hd_epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
	close(p->pidfd);
	free(p->mods);
	free(p);
	hd_nprocs_total--;
}

/* Whether pid still maps module m at start (maps' dev:ino, else map_files + fstat). */
static bool hd_still_mapped(pid_t pid, uint64_t start, const struct hd_module *m,
			    struct hd_mapping *mp)
{
	struct stat st;
	bool same;
	int fd;

	if (hd_find_mapping(pid, start, mp) != 0)
		return false;
	if (mp->dev == m->dev && mp->ino == m->ino)
		return true;
	/* maps prints the superblock's device: not st_dev on btrfs subvolumes. */
	fd = hd_open_mapping(pid, mp);
	if (fd < 0)
		return false;
	same =
	    fstat(fd, &st) == 0 && (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->ino;
	close(fd);
	return same;
}

static int hd_proc_attach(struct hd_proc *p, struct hd_module *m, const struct hd_mapping *mp)
{
	struct hd_pmod *pm;

	for (uint32_t i = 0; i < p->nmods; i++) {
		struct hd_mapping *was;
		bool moved;

		pm = &p->mods[i];
		if (pm->m != m)
			continue;
		if (pm->start == mp->start) {
			pm->count++;
			return 0;
		}
		/*
		 * Registered again at another address: either a second mapping
		 * of the file (the old one still there: one more reference), or
		 * the process exec'ed and its new image mapped the file anew,
		 * when the old image's references died with it. The mapping
		 * must then follow, or the sweep would look at the old address,
		 * find nothing and remove events the process uses.
		 */
		was = malloc(sizeof(*was));
		if (!was)
			return -ENOMEM;
		moved = !hd_still_mapped(p->pid, pm->start, m, was);
		free(was);
		if (!moved) {
			pm->count++;
			return 0;
		}
		hd_dbg("pid %d maps %s anew at 0x%" PRIx64 " (exec)", (int)p->pid, m->mapped_path,
		       mp->start);
		free(pm->path);
		pm->count = 1;
		pm->start = mp->start;
		pm->end = mp->end;
		pm->bias = mp->start - mp->offset - m->delta;
		pm->path = strcmp(mp->path, m->mapped_path) != 0 ? strdup(mp->path) : NULL;
		return 0;
	}
	pm = realloc(p->mods, (p->nmods + 1) * sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	p->mods = pm;
	pm = &p->mods[p->nmods++];
	pm->m = m;
	pm->count = 1;
	pm->start = mp->start;
	pm->end = mp->end;
	pm->bias = mp->start - mp->offset - m->delta;
	/* Another mount namespace may name it otherwise: LIST answers with the process's name. */
	pm->path = strcmp(mp->path, m->mapped_path) != 0 ? strdup(mp->path) : NULL;
	m->nusers++;
	hd_mod_unidle(m);
	return 0;
}

/* `unloading`: the process says it unmaps the file (UNREGISTER at dlclose). */
static void hd_proc_detach(struct hd_proc *p, uint32_t i, bool unloading)
{
	struct hd_module *m = p->mods[i].m;

	free(p->mods[i].path);
	p->mods[i] = p->mods[--p->nmods];
	hd_mod_put(m, unloading ? p->pid : 0);
}

/* After an exec the pid's old modules may be gone: drop those no longer mapped. */
static void proc_check_maps(struct hd_proc *p, const struct hd_module *keep)
{
	for (uint32_t i = 0; i < p->nmods;) {
		struct hd_mapping *mp = malloc(sizeof(*mp));
		bool still;

		if (!mp)
			return;
		still = p->mods[i].m == keep ||
			hd_still_mapped(p->pid, p->mods[i].start, p->mods[i].m, mp);
		free(mp);
		if (still) {
			i++;
			continue;
		}
		hd_dbg("pid %d no longer maps %s", (int)p->pid, p->mods[i].m->mapped_path);
		hd_proc_detach(p, i, false);
	}
}

void hd_process_exited(void *arg)
{
	struct hd_proc *p = arg;

	hd_dbg("pid %d exited", (int)p->pid);
	while (p->nmods)
		hd_proc_detach(p, p->nmods - 1, true);
	hd_proc_free(p);
}

static bool hd_peer_alive(int pidfd)
{
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};

	/* A pidfd polls readable once its process has exited. */
	return pidfd < 0 || poll(&pf, 1, 0) == 0;
}

/*
 * --- lingering and retiring (issue 13: registration off the hot path) ---
 *
 * The daemon does not know every process that maps a registered file: a
 * process that found it on the board, or a fork child, never asked. So a
 * module whose last known user goes is not removed at once: it lingers
 * (--linger seconds, default 60) still published, so that a command run
 * over and over keeps its events; a file that is deleted or replaced
 * (nothing can map it by its name again, and its events would pin it) does
 * not linger. When it has lingered long enough, or at once with --linger 0,
 * or when more than --linger-max modules linger (the oldest first), it is
 * retired: withdrawn from the board, then /proc is read, and every process
 * still mapping it becomes a known user (adopted: its pidfd watched as if it
 * had asked); only a module nobody maps loses its events. A process that read
 * the board before the withdrawal had mapped the file before (the barrier in
 * hd_board_withdraw), so the scan sees it; one that reads it after asks.
 */
static bool file_gone(const struct hd_module *m)
{
	struct stat st;

	if (m->hold_fd >= 0)
		return true;
	/* The name the events use: the file itself, or our bind-mounted alias of it. */
	return stat(m->path, &st) != 0 || (uint64_t)st.st_dev != m->dev ||
	       (uint64_t)st.st_ino != m->ino || st.st_nlink == 0;
}

/*
 * The retirement runs in steps (hd_registry_background): a module is
 * withdrawn from the board at once and queued; a pass over /proc reads a
 * few processes' maps per step, so a registration that arrives meanwhile
 * waits for one step, never for a whole scan (a millisecond and more per
 * hundred processes). A pass checks the modules that were queued before it
 * began; modules queued meanwhile wait for the next pass. Until its pass
 * ends a module keeps its events, and a process that asks for it meanwhile
 * is a user like any other.
 */
enum { RT_NONE, RT_QUEUED, RT_SCANNING };
#define RETIRE_STEP_PIDS 8

struct modlist {
	struct hd_module **v;
	size_t n, cap;
};

static struct {
	struct modlist queued, scanning;
	DIR *proc; /* the pass under way, else NULL */
	unsigned adopted;
} rt;

static bool modlist_add(struct modlist *l, struct hd_module *m)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct hd_module **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = m;
	return true;
}

static void modlist_del(struct modlist *l, struct hd_module *m)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == m) {
			l->v[i] = l->v[--l->n];
			return;
		}
}

static void hd_retire_forget(struct hd_module *m)
{
	if (m->retiring == RT_QUEUED)
		modlist_del(&rt.queued, m);
	else if (m->retiring == RT_SCANNING)
		modlist_del(&rt.scanning, m);
	m->retiring = RT_NONE;
}

static int retire_mapping(pid_t pid, const struct hd_mapping *mp, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < rt.scanning.n; i++) {
		struct hd_module *m = rt.scanning.v[i];
		struct hd_proc *p;

		if (mp->dev != m->mdev || mp->ino != m->mino || pid == m->leaving)
			continue;
		p = hd_proc_find(pid);
		/* A known pid whose process exited: the pid is someone else's now. */
		if (p && !hd_peer_alive(p->pidfd))
			return 0;
		if (!p) {
			uid_t uid = hd_pid_uid(pid);

			if (uid == (uid_t)-1 || !(p = hd_proc_get(pid, uid, -1)))
				return 0;
		}
		if (hd_proc_attach(p, m, mp) == 0) {
			rt.adopted++;
			hd_dbg("pid %d maps %s: adopted", (int)pid, m->mapped_path);
		}
		if (p->nmods == 0)
			hd_proc_free(p);
	}
	return 0;
}

/* Withdrawn now; its /proc pass comes in steps. */
static void hd_retire(struct hd_module *m, pid_t leaving)
{
	hd_mod_withdraw(m);
	if (m->retiring) {
		if (m->leaving != leaving)
			m->leaving = 0;
		return;
	}
	if (!modlist_add(&rt.queued, m)) {
		/* No memory for the queue: its users are unknown, so it keeps its events. */
		hd_mod_publish(m);
		return;
	}
	m->retiring = RT_QUEUED;
	m->leaving = leaving;
}

/* The end of a pass: who nobody maps loses its events. */
static void retire_pass_end(void)
{
	size_t n = rt.scanning.n;

	if (rt.proc)
		closedir(rt.proc);
	rt.proc = NULL;
	if (rt.adopted)
		hd_dbg("retire: %zu files checked, %u processes still map them", n, rt.adopted);
	rt.adopted = 0;
	while (rt.scanning.n) {
		struct hd_module *m = rt.scanning.v[--rt.scanning.n];

		m->retiring = RT_NONE;
		if (m->nusers == 0)
			hd_mod_remove(m, true); /* EBUSY: draining, retried by hd_tick */
		else
			hd_mod_publish(m);
	}
}

/* One step of the retirement: returns whether more remain. */
static bool retire_step(void)
{
	pid_t self = getpid();
	unsigned read = 0;
	struct dirent *de;

	if (!rt.proc) {
		struct modlist t;

		if (rt.queued.n == 0)
			return false;
		t = rt.scanning;
		rt.scanning = rt.queued;
		rt.queued = t;
		rt.queued.n = 0;
		for (size_t i = 0; i < rt.scanning.n; i++)
			rt.scanning.v[i]->retiring = RT_SCANNING;
		rt.proc = opendir("/proc");
		if (!rt.proc) {
			retire_pass_end();
			return rt.queued.n > 0;
		}
	}
	while (read < RETIRE_STEP_PIDS && (de = readdir(rt.proc))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		hd_each_mapping((pid_t)pid, retire_mapping, NULL);
		read++;
	}
	if (read < RETIRE_STEP_PIDS || rt.scanning.n == 0)
		retire_pass_end();
	return rt.proc || rt.queued.n > 0;
}

/* SIGTERM: the pass under way and the queues dropped. */
static void hd_retire_stop(void)
{
	if (rt.proc)
		closedir(rt.proc);
	rt.proc = NULL;
	free(rt.queued.v);
	free(rt.scanning.v);
	memset(&rt, 0, sizeof(rt));
}

static void hd_mod_idle(struct hd_module *m, pid_t leaving)
{
	struct hd_module *oldest = NULL;

	if (hd_cfg.linger_s == 0 || m->draining || file_gone(m)) {
		hd_retire(m, leaving);
		return;
	}
	m->idle = true;
	m->idle_until = hd_now_ms() + hd_cfg.linger_s * 1000ull;
	hd_nidle++;
	if (hd_nidle <= hd_cfg.linger_max)
		return;
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *x = hd_modules[b]; x; x = x->hnext)
			if (x->idle && !x->retiring &&
			    (!oldest || x->idle_until < oldest->idle_until))
				oldest = x;
	if (oldest)
		hd_retire(oldest, 0);
}

bool hd_registry_background_pending(void)
{
	return rt.proc || rt.queued.n || (hd_state_dirty && hd_now_ms() >= hd_state_retry_at);
}

bool hd_registry_background(void)
{
	bool retiring = (rt.proc || rt.queued.n) && retire_step();

	/* The state file after the retirements, unless they have kept it waiting a second. */
	if (hd_state_dirty && hd_now_ms() >= hd_state_retry_at &&
	    (!retiring || hd_now_ms() - hd_state_dirty_since >= 1000))
		hd_registry_flush();
	return hd_registry_background_pending();
}

/*
 * The file of the mapping holding addr: (mapping, fd, dev, ino). With
 * `found`, mp is that mapping already (resolve_known read the maps).
 */
static int resolve(pid_t pid, int pidfd, uint64_t addr, bool found, struct hd_mapping *mp, int *fd,
		   uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	int ret = found ? 0 : hd_find_mapping(pid, addr, mp);

	if (ret == -ENOENT)
		return -EFAULT; /* no mapping at that address */
	if (ret)
		return ret;
	*fd = hd_open_mapping(pid, mp);
	if (*fd < 0)
		return *fd == -ENOENT ? -ESRCH : *fd;
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(*fd);
		return -ENXIO;
	}
	/* What we read was that process's maps only if it is still alive now. */
	if (!hd_peer_alive(pidfd)) {
		close(*fd);
		return -ESRCH;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

static int hd_add_user(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp, int fd,
		       uint64_t dev, uint64_t ino, struct hd_module **mout)
{
	struct hd_module *m = hd_mod_find(dev, ino);
	struct hd_proc *p;
	bool known_pid = hd_proc_find(pid) != NULL;
	int ret;

	if (!m || m->draining) {
		struct hd_parse *pending = hd_parse_find(dev, ino);

		/*
		 * The --all rescan, which runs while clients are served, parses
		 * new files as a REGISTER does (no connection to answer); the
		 * start-up scan, before serving, parses in line.
		 */
		if (pending)
			return hd_scan_async ? hd_parse_wait(pending, NULL, pid, uid, pidfd, mp)
					     : -EINPROGRESS;
		if (hd_scan_async)
			return hd_parse_begin(NULL, pid, uid, pidfd, mp, fd, dev, ino);
		ret = hd_mod_create(mp, fd, dev, ino, uid, m, &m);
		if (ret)
			return ret;
	}
	p = hd_proc_get(pid, uid, pidfd);
	if (!p) {
		if (m->nusers == 0)
			hd_mod_remove(m, true);
		return -ENOMEM;
	}
	ret = hd_proc_attach(p, m, mp);
	if (ret == 0 && known_pid)
		proc_check_maps(p, m);
	if (mout)
		*mout = m;
	return ret;
}

/*
 * The cheap path, for a file already registered: the (dev, ino) that
 * /proc/PID/maps prints for the mapping is the kernel's word for the mapped
 * file (the client cannot forge it), so a hit needs no open of map_files.
 * The slow path is taken for anything else, the first process of a file and
 * the one after an EBUSY included.
 * Returns 0 and the module, -EAGAIN when the slow path must decide (not
 * known, draining, or anything unusual), or an error for the client.
 */
static int resolve_known(pid_t pid, int pidfd, uint64_t addr, struct hd_mapping *mp,
			 struct hd_module **m, bool *found)
{
	int ret = hd_find_mapping(pid, addr, mp);

	*found = ret == 0;
	/* A zombie's maps are empty: a dead caller is -ESRCH, not a liar. */
	if (ret && !hd_peer_alive(pidfd))
		return -ESRCH;
	if (ret == -ENOENT)
		return -EFAULT;
	if (ret)
		return ret == -ENXIO ? -ENXIO : -EAGAIN;
	*m = hd_mod_find(mp->dev, mp->ino);
	/*
	 * maps prints the superblock's device, which is st_dev except on btrfs
	 * subvolumes (whose inode numbers overlap): the same path too, or the
	 * slow path decides.
	 */
	if (!*m || (*m)->draining || strcmp((*m)->mapped_path, mp->path) != 0)
		return -EAGAIN;
	return hd_peer_alive(pidfd) ? 0 : -ESRCH;
}

static int hd_add_known(pid_t pid, uid_t uid, int pidfd, const struct hd_mapping *mp,
			struct hd_module *m)
{
	bool known_pid = hd_proc_find(pid) != NULL;
	struct hd_proc *p = hd_proc_get(pid, uid, pidfd);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = hd_proc_attach(p, m, mp);
	if (ret == 0 && known_pid)
		proc_check_maps(p, m);
	return ret;
}

/*
 * --- the asynchronous parse of a REGISTER's new file ---
 *
 * The worker's pipe is in the epoll set (HD_TAG_PARSE): the REGISTER's
 * answer waits for the parse while the loop serves everyone else. Every
 * REGISTER of the same (dev, ino) meanwhile joins the same parse as one more
 * waiter: a process (its own pidfd) and the connection to answer (main.c's
 * cookie). A connection that closes meanwhile (drti gave up after its
 * 100 ms; hd_register_cancel) leaves the waiter without an answer to send
 * but still to be registered, as the synchronous parse did; once every
 * waiter's process has exited (checked at cancel and on each loop) the
 * worker is killed. When the parse ends, the file is registered only if a
 * waiter is still alive, so no event is created for processes that are
 * gone; each live waiter is attached as a user and answered. At its
 * deadline (--parse-timeout) the worker is killed and every waiter
 * answered -ETIMEDOUT. At most PARSES_MAX workers run, PARSES_PER_UID per
 * uid: other parses are queued in arrival order and started by
 * hd_parses_expire, which the loop calls after every batch.
 */
#define PARSES_MAX 16	      /* running, all uids: each is a forked worker */
#define PARSES_PER_UID 4      /* running per uid other than root */
#define PARSES_QUEUED_MAX 256 /* running or queued, all uids (beyond: -EAGAIN) */

struct waiter {
	struct waiter *next;
	void *cookie; /* main.c's connection; NULL once it closed */
	pid_t pid;
	uid_t uid;
	int pidfd; /* a dup of the connection's, or -1 */
	struct hd_mapping *mp;
};

struct hd_parse {
	enum hd_tag tag; /* HD_TAG_PARSE: epoll data points here */
	struct hd_parse *next;
	uint64_t dev, ino;
	uid_t uid; /* the first requester: the module's owner, whose quota it counts in */
	int fd;	   /* the file (a dup of the first requester's map_files open) */
	struct hd_mapping *mp; /* the first requester's mapping: the path for the events */
	struct hd_parse_job job;
	struct waiter *waiters;
};

static struct hd_parse *parses;
static unsigned nparses;

static unsigned hd_parses_of(uid_t uid)
{
	unsigned n = 0;

	for (struct hd_parse *p = parses; p; p = p->next)
		n += p->uid == uid;
	return n;
}

/* Workers running, of uid or (any) all. */
static unsigned running(bool any, uid_t uid)
{
	unsigned n = 0;

	for (struct hd_parse *p = parses; p; p = p->next)
		n += p->job.pid > 0 && (any || p->uid == uid);
	return n;
}

unsigned hd_parses_running(void)
{
	return running(true, 0);
}

static bool may_run(uid_t uid)
{
	return running(true, 0) < PARSES_MAX && (uid == 0 || running(false, uid) < PARSES_PER_UID);
}

/* Forks p's worker and watches its pipe. */
static int parse_run(struct hd_parse *p)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	struct hd_worker_limits lim = hd_limits_for(p->mp);
	char err[256];
	int ret = hd_parse_start(p->fd, &lim, &p->job, err, sizeof(err));

	if (ret) {
		hd_warn("%s: %s", p->mp->path, err);
		return ret;
	}
	if (epoll_ctl(hd_epfd, EPOLL_CTL_ADD, p->job.rfd, &ev) != 0) {
		ret = -errno;
		hd_parse_finish(&p->job, p->fd, -ECANCELED, NULL, err, sizeof(err));
		return ret;
	}
	hd_dbg("%s: parse started (worker %d%s)", p->mp->path, (int)p->job.pid,
	       p->job.spare ? ", the spare" : "");
	return 0;
}

static struct hd_parse *hd_parse_find(uint64_t dev, uint64_t ino)
{
	for (struct hd_parse *p = parses; p; p = p->next)
		if (p->dev == dev && p->ino == ino)
			return p;
	return NULL;
}

static void parse_unlink_free(struct hd_parse *p)
{
	struct hd_parse **pp = &parses;

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	nparses--;
	hd_forget(p);
	if (p->job.rfd >= 0)
		epoll_ctl(hd_epfd, EPOLL_CTL_DEL, p->job.rfd, NULL);
	close(p->fd);
	free(p->mp);
	free(p);
}

static int hd_parse_wait(struct hd_parse *p, void *cookie, pid_t pid, uid_t uid, int pidfd,
			 const struct hd_mapping *mp)
{
	struct waiter *w = calloc(1, sizeof(*w));

	if (!w || !(w->mp = malloc(sizeof(*w->mp)))) {
		free(w);
		return -ENOMEM;
	}
	*w->mp = *mp;
	w->cookie = cookie;
	w->pid = pid;
	w->uid = uid;
	w->pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : -1;
	if (pidfd >= 0 && w->pidfd < 0) {
		free(w->mp);
		free(w);
		return -ENOMEM;
	}
	w->next = p->waiters;
	p->waiters = w;
	return -EINPROGRESS;
}

/* A new file: admitted, a worker started, the requester its first waiter. */
static int hd_parse_begin(void *cookie, pid_t pid, uid_t uid, int pidfd,
			  const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino)
{
	struct hd_parse *p, **tail = &parses;
	int ret;

	if (nparses >= PARSES_QUEUED_MAX) {
		hd_warn("%u parses running or queued: %s refused", nparses, mp->path);
		return -EAGAIN;
	}
	ret = hd_mod_admit(mp, fd, uid);
	if (ret)
		return ret;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->mp = malloc(sizeof(*p->mp)))) {
		free(p);
		return -ENOMEM;
	}
	*p->mp = *mp;
	p->tag = HD_TAG_PARSE;
	p->dev = dev;
	p->ino = ino;
	p->uid = uid;
	p->job.pid = -1;
	p->job.rfd = -1;
	p->job.deadline = UINT64_MAX;
	p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	ret = p->fd < 0 ? -errno : may_run(uid) ? parse_run(p) : 0;
	if (ret) {
		if (p->fd >= 0)
			close(p->fd);
		free(p->mp);
		free(p);
		return ret;
	}
	if (p->job.pid <= 0)
		hd_dbg("%s: parse queued (%u workers running)", mp->path, running(true, 0));
	/* In arrival order: the queued ones start first come, first served. */
	while (*tail)
		tail = &(*tail)->next;
	*tail = p;
	nparses++;
	return hd_parse_wait(p, cookie, pid, uid, pidfd, mp);
}

static void waiter_free(struct waiter *w)
{
	if (w->pidfd >= 0)
		close(w->pidfd);
	free(w->mp);
	free(w);
}

/* Whether anyone still waits: a connection to answer, or a live process to register. */
static bool parse_wanted(const struct hd_parse *p)
{
	for (const struct waiter *w = p->waiters; w; w = w->next)
		if (w->cookie || hd_peer_alive(w->pidfd))
			return true;
	return false;
}

/* The parse is over (or abandoned: why): register, attach and answer every waiter. */
static void parse_end(struct hd_parse *p, int why)
{
	struct usdt_notes *n = NULL;
	struct hd_module *m = NULL;
	struct waiter *w = p->waiters, *next;
	bool live = false;
	char err[256];
	int ret;

	p->waiters = NULL; /* answered below: a cancel during an answer finds nothing */
	if (p->job.rfd >= 0)
		epoll_ctl(hd_epfd, EPOLL_CTL_DEL, p->job.rfd, NULL);
	ret = hd_parse_finish(&p->job, p->fd, why, &n, err, sizeof(err));
	if (ret && why != -ECANCELED)
		hd_warn("%s: %s", p->mp->path, err);
	if (!ret && n->naccepted == 0) {
		/* Nothing for us in it: the /proc scans need not parse it again. */
		hd_neg_add(p->mp->dev, p->mp->ino);
	}
	for (struct waiter *x = w; x; x = x->next)
		live |= hd_peer_alive(x->pidfd);
	if (!ret && !live) {
		hd_dbg("%s: every requester is gone: not registered", p->mp->path);
		usdt_notes_free(n);
		ret = -ESRCH;
	} else if (!ret) {
		m = hd_mod_find(p->dev, p->ino);
		if (m && !m->draining)
			usdt_notes_free(n); /* registered meanwhile (a /proc scan) */
		else
			ret = hd_mod_finish(p->mp, p->fd, p->dev, p->ino, p->uid, m, n, &m);
	}
	for (; w; w = next) {
		uint32_t np = 0;
		int r = ret;

		next = w->next;
		if (!r && !hd_peer_alive(w->pidfd))
			r = -ESRCH;
		if (!r)
			r = hd_add_known(w->pid, w->uid, w->pidfd, w->mp, m);
		if (!r)
			np = m->nprobes;
		hd_dbg("REGISTER pid %d uid %u: %s", (int)w->pid, (unsigned)w->uid,
		       r ? strerror(-r) : w->mp->path);
		if (w->cookie)
			hd_register_done(w->cookie, r, np);
		waiter_free(w);
	}
	if (m && m->nusers == 0 && !m->draining)
		hd_mod_remove(m, true);
	parse_unlink_free(p);
}

void hd_parse_event(void *arg)
{
	struct hd_parse *p = arg;
	struct hd_worker_limits lim = hd_limits_for(p->mp);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	int ret;

	if (!hd_parse_read(&p->job))
		return;
	ret = hd_parse_respawn(&p->job, p->fd, &lim);
	if (ret == 1) {
		/* (The old socket left the epoll set when it was closed.) */
		hd_dbg("%s: the spare died before its parse: worker %d forked for it", p->mp->path,
		       (int)p->job.pid);
		if (epoll_ctl(hd_epfd, EPOLL_CTL_ADD, p->job.rfd, &ev) == 0)
			return;
		ret = -errno;
	}
	parse_end(p, ret < 0 ? ret : 0);
}

uint64_t hd_parses_expire(uint64_t now)
{
	uint64_t next = UINT64_MAX;

	hd_parse_reap(false);
	/* Queued parses start as workers finish (parse_end answers only its own waiters). */
	for (struct hd_parse *p = parses, *pn; p; p = pn) {
		int ret;

		pn = p->next;
		if (p->job.pid > 0 || !may_run(p->uid) || !parse_wanted(p))
			continue;
		ret = parse_run(p);
		if (ret)
			parse_end(p, ret);
	}
	for (struct hd_parse *p = parses, *pn; p; p = pn) {
		pn = p->next;
		if (now >= p->job.deadline) {
			parse_end(p, -ETIMEDOUT);
		} else if (!parse_wanted(p)) {
			hd_dbg("%s: nobody waits for its parse any more: worker killed",
			       p->mp->path);
			parse_end(p, -ECANCELED);
		} else if (p->job.deadline < next)
			next = p->job.deadline;
	}
	return next;
}

void hd_register_cancel(void *cookie)
{
	for (struct hd_parse *p = parses; p; p = p->next)
		for (struct waiter *w = p->waiters; w; w = w->next) {
			if (w->cookie != cookie)
				continue;
			w->cookie = NULL; /* still registered at the end if its process lives */
			if (!parse_wanted(p)) {
				hd_dbg("%s: nobody waits for its parse any more: worker killed",
				       p->mp->path);
				parse_end(p, -ECANCELED);
			}
			return;
		}
}

/* SIGTERM: every parse abandoned, its waiters answered. */
static void hd_parses_cancel(void)
{
	while (parses)
		parse_end(parses, -ECANCELED);
}

int hd_rate_ok(uid_t uid, pid_t pid)
{
	struct uidacct *a = uid_acct(uid);

	if (!a)
		return -ENOMEM;
	refill(a);
	if (uid != 0 && a->tokens < 1.0) {
		hd_dbg("request of pid %d uid %u: over the rate (%u/s)", (int)pid, (unsigned)uid,
		       hd_cfg.rate_per_s);
		return -EAGAIN;
	}
	a->tokens -= 1.0;
	return 0;
}

int hd_register(pid_t pid, uid_t uid, int pidfd, uint64_t addr, uint32_t *nprobes, void *cookie)
{
	struct hd_mapping *mp;
	struct hd_module *m = NULL;
	struct hd_parse *pa;
	uint64_t dev, ino;
	bool found;
	int fd = -1, ret = hd_tracefs_ready();

	*nprobes = 0;
	if (ret)
		return ret;
	mp = malloc(sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	ret = resolve_known(pid, pidfd, addr, mp, &m, &found);
	if (ret == -EAGAIN) {
		ret = resolve(pid, pidfd, addr, found, mp, &fd, &dev, &ino);
		m = ret ? NULL : hd_mod_find(dev, ino);
		if (!ret && m && !m->draining)
			ret = hd_add_known(pid, uid, pidfd, mp, m);
		else if (!ret && (pa = hd_parse_find(dev, ino)))
			ret = hd_parse_wait(pa, cookie, pid, uid, pidfd, mp);
		else if (!ret)
			ret = hd_parse_begin(cookie, pid, uid, pidfd, mp, fd, dev, ino);
	} else if (!ret) {
		ret = hd_add_known(pid, uid, pidfd, mp, m);
	}
	if (!ret)
		*nprobes = m->nprobes;
	hd_dbg("REGISTER pid %d uid %u addr 0x%" PRIx64 ": %s", (int)pid, (unsigned)uid, addr,
	       ret == -EINPROGRESS ? "waits for the parse"
	       : ret		   ? strerror(-ret)
				   : mp->path);
	if (fd >= 0)
		close(fd);
	free(mp);
	return ret;
}

int hd_unregister(pid_t pid, uid_t uid, int pidfd, uint64_t addr)
{
	struct hd_mapping *mp = malloc(sizeof(*mp));
	struct hd_proc *p = hd_proc_find(pid);
	uint64_t dev, ino;
	int fd = -1, ret;

	if (!mp)
		return -ENOMEM;
	ret = resolve(pid, pidfd, addr, false, mp, &fd, &dev, &ino);
	free(mp);
	if (fd >= 0)
		close(fd);
	hd_dbg("UNREGISTER pid %d uid %u addr 0x%" PRIx64 ": %s", (int)pid, (unsigned)uid, addr,
	       ret ? strerror(-ret) : "ok");
	if (ret)
		return ret;
	if (!p)
		return -ENOENT;
	for (uint32_t i = 0; i < p->nmods; i++) {
		if (p->mods[i].m->dev != dev || p->mods[i].m->ino != ino)
			continue;
		if (--p->mods[i].count == 0)
			hd_proc_detach(p, i, true);
		if (p->nmods == 0)
			hd_proc_free(p);
		return 0;
	}
	return -ENOENT;
}

/* --- scanning /proc (start-up, --all) --- */

struct scan_ctx {
	bool ours; /* the process's drti talks to our socket */
	uid_t uid;
	bool uid_known;
	int pidfd;
	unsigned found;
};

static int scan_mapping(pid_t pid, const struct hd_mapping *m, void *arg)
{
	struct scan_ctx *c = arg;
	struct hd_module *mod;
	struct hd_proc *p;
	uint64_t dev, ino;
	struct stat st;
	unsigned kinds;
	int fd, ret;

	/* The maps fields name the file (dev, ino) without opening it: the cheap filters. */
	mod = hd_mod_find(m->dev, m->ino);
	if (!mod && neg_has(m->dev, m->ino))
		return 0;
	p = hd_proc_find(pid);
	if (mod && p)
		for (uint32_t i = 0; i < p->nmods; i++)
			if (p->mods[i].m == mod)
				return 0; /* already counted */
	fd = hd_open_mapping(pid, m);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	dev = (uint64_t)st.st_dev;
	ino = (uint64_t)st.st_ino;
	if (!hd_mod_find(dev, ino)) {
		/*
		 * A -G module of a process whose drti talks to us; with --all, any
		 * file with stapsdt notes or ours, --only narrowing what --all adds
		 * to the paths an operator names.
		 */
		kinds = hd_elf_note_kinds(fd);
		if (!((kinds & HD_HAS_USDTKIT) && c->ours) &&
		    !(hd_cfg.all && (kinds & (HD_HAS_STAPSDT | HD_HAS_USDTKIT)) &&
		      (!hd_cfg.only || fnmatch(hd_cfg.only, m->path, 0) == 0))) {
			/* Whether a -G module is taken depends on the process: never cached. */
			if (!(kinds & HD_HAS_USDTKIT))
				hd_neg_add(m->dev, m->ino);
			close(fd);
			return 0;
		}
	}
	if (!c->uid_known) {
		c->uid = hd_pid_uid(pid);
		c->uid_known = true;
	}
	ret = c->uid != (uid_t)-1 ? hd_add_user(pid, c->uid, c->pidfd, m, fd, dev, ino, NULL)
				  : -ESRCH;
	if (ret == 0)
		c->found++;
	else if (ret == -ENODATA && !hd_mod_find(dev, ino))
		hd_neg_add(m->dev, m->ino); /* (not a refusal that may change: rate, tracefs) */
	close(fd);
	return 0;
}

static unsigned hd_scan_all(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	unsigned found = 0;
	pid_t self = getpid();

	if (!d) {
		hd_err("cannot read /proc: %s", strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		struct scan_ctx c = {.pidfd = -1};
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		/* Without --all: only processes whose drti would talk to us. */
		c.ours = hd_pid_uses_socket((pid_t)pid, hd_cfg.socket_path);
		if (!hd_cfg.all && !c.ours)
			continue;
		c.pidfd = (int)pidfd_open((pid_t)pid, 0);
		if (c.pidfd < 0 && errno == ENOSYS) {
			static bool said;

			/* (valgrind 3.19, kernels < 5.3): pidfds come with connections only */
			if (!said)
				hd_warn("pidfd_open: %s: running processes are not adopted by the "
					"/proc scan; they are registered when they connect",
					strerror(errno));
			said = true;
			break;
		}
		if (c.pidfd < 0)
			continue;
		hd_each_mapping((pid_t)pid, scan_mapping, &c);
		close(c.pidfd);
		found += c.found;
	}
	closedir(d);
	return found;
}

void hd_rescan(void)
{
	unsigned n;

	hd_scan_async = true;
	n = hd_scan_all();
	hd_scan_async = false;

	if (n)
		hd_dbg("rescan: %u new registrations", n);
}

static void recover_now(void)
{
	struct usdt_uprobe_entry *ls = NULL;
	size_t nls = 0, removed = 0;
	unsigned found;

	load_state();
	found = hd_scan_all();
	/* Ours from before and not claimed by a live process: remove if still there. */
	if (nold && usdt_tracefs_list(hd_tracefs, &ls, &nls) == 0) {
		for (size_t i = 0; i < nold; i++) {
			bool listed = false;

			if (old[i].claimed)
				continue;
			for (size_t j = 0; j < nls && !listed; j++)
				listed = ls[j].off == old[i].s.off &&
					 !strcmp(ls[j].group, old[i].s.group) &&
					 !strcmp(ls[j].event, old[i].s.event) &&
					 !strcmp(ls[j].path, old[i].path);
			if (listed && hd_remove_site(old[i].path, &old[i].s) == 0)
				removed++;
			/* EBUSY: left; it is in no module, so the next state file forgets it. */
		}
		usdt_tracefs_list_free(ls, nls);
	}
	for (size_t i = 0; i < nold; i++) {
		if (!old[i].claimed &&
		    !strncmp(old[i].path, USDT_ALIAS_DIR "/", sizeof(USDT_ALIAS_DIR)) &&
		    !hd_mod_find(old[i].dev, old[i].ino))
			usdt_tracefs_alias_release(old[i].path);
		free(old[i].path);
	}
	free(old);
	old = NULL;
	nold = 0;
	hd_save_state();
	hd_info("start-up: %u process registrations found running, %zu stale events removed", found,
		removed);
}

/*
 * tracefs may be missing, read-only or without uprobe support (a container,
 * a kernel without CONFIG_UPROBE_EVENTS, a boot that has not mounted it yet).
 * The daemon serves anyway: REGISTER is answered with the open's errno
 * (-ENODEV not mounted, -EROFS read-only, -EOPNOTSUPP no uprobe_events,
 * -EACCES), LIST works, and nothing is written (no event, no state file:
 * recovery waits for tracefs). The open is retried on demand, at most once
 * per TRACEFS_RETRY_MS, so the daemon registers as soon as tracefs is usable,
 * without a restart. The problem is logged once per distinct error.
 */
#define TRACEFS_RETRY_MS 1000

static int tracefs_err;
static uint64_t tracefs_retry_at;
static bool hd_recovery_pending;

static const char *tracefs_advice(int err)
{
	switch (-err) {
	case ENODEV:
		return "mount it (mount -t tracefs nodev /sys/kernel/tracing)";
	case EROFS:
		return "remount it read-write";
	case EOPNOTSUPP:
		return "mount tracefs there, on a kernel with CONFIG_UPROBE_EVENTS";
	case EACCES:
	case EPERM:
		return "run the daemon as root";
	default:
		return "make /sys/kernel/tracing/uprobe_events writable";
	}
}

int hd_tracefs_ready(void)
{
	char err[256];
	uint64_t now;
	int ret;

	if (hd_tracefs->fd >= 0)
		return 0;
	now = hd_now_ms();
	if (tracefs_err && now < tracefs_retry_at)
		return tracefs_err;
	tracefs_retry_at = now + TRACEFS_RETRY_MS;
	ret = usdt_tracefs_open(hd_tracefs, USDT_TRACEFS_MOUNT, err, sizeof(err));
	if (ret) {
		if (ret != tracefs_err)
			hd_err("tracefs is not usable: %s. Registrations are refused (%s) and "
			       "nothing is written until it is; to fix: %s. The daemon retries at "
			       "the next registration (at most once a second), no restart needed",
			       err, strerror(-ret), tracefs_advice(ret));
		tracefs_err = ret;
		return ret;
	}
	if (tracefs_err)
		hd_info("tracefs is usable again (%s): registering", hd_tracefs->root);
	tracefs_err = 0;
	if (hd_recovery_pending) {
		hd_recovery_pending = false;
		recover_now();
	}
	return 0;
}

void hd_recover(void)
{
	if (hd_tracefs_ready() != 0) {
		/* The previous instance's events and state file wait until tracefs is back. */
		hd_recovery_pending = true;
		return;
	}
	if (!hd_recovery_pending)
		recover_now();
}

/*
 * The exec sweep: a process that exec'ed into a program without drti keeps
 * its pid (its pidfd never fires) but maps its old modules no more. Every
 * tick checks the processes of the next slice of the table, so that each is
 * checked every hd_cfg.sweep_s seconds: one maps read per process per period.
 */
static void sweep(void)
{
	static size_t next;
	size_t n = hd_cfg.sweep_s ? HD_PROC_BUCKETS / hd_cfg.sweep_s + 1 : 0;
	struct hd_mapping *mp;

	if (!n || !hd_nprocs_total || !(mp = malloc(sizeof(*mp))))
		return;
	for (size_t k = 0; k < n; k++, next = (next + 1) % HD_PROC_BUCKETS)
		for (struct hd_proc *p = hd_procs[next], *pn; p; p = pn) {
			pn = p->hnext;
			/* Exited: its pidfd says so; its pid's maps may be another's. */
			if (!hd_peer_alive(p->pidfd))
				continue;
			for (uint32_t i = 0; i < p->nmods;) {
				if (hd_still_mapped(p->pid, p->mods[i].start, p->mods[i].m, mp)) {
					i++;
					continue;
				}
				hd_dbg("pid %d no longer maps %s (exec)", (int)p->pid,
				       p->mods[i].m->mapped_path);
				hd_proc_detach(p, i, false);
			}
			if (p->nmods == 0)
				hd_proc_free(p);
		}
	free(mp);
}

void hd_tick(uint64_t now)
{
	sweep();
	/* A state file that could not be written (disk full) is tried again. */
	if (hd_state_dirty && now >= hd_state_retry_at)
		hd_registry_flush();
	/* Lingered long enough, or draining and due for another try: one /proc pass for all. */
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *m = hd_modules[b]; m; m = m->hnext)
			if (!m->retiring && ((m->idle && now >= m->idle_until) ||
					     (m->draining && m->nusers == 0 && now >= m->retry_at)))
				hd_retire(m, 0);
}

void hd_registry_shutdown(void)
{
	size_t left = 0;

	while (hd_nprocs_total) {
		for (size_t b = 0; b < HD_PROC_BUCKETS; b++)
			while (hd_procs[b]) {
				struct hd_proc *p = hd_procs[b];

				/* Detach without removal: everything goes below in one pass. */
				for (uint32_t i = 0; i < p->nmods; i++) {
					p->mods[i].m->nusers--;
					free(p->mods[i].path);
				}
				p->nmods = 0;
				hd_proc_free(p);
			}
	}
	hd_parses_cancel();
	hd_parse_reap(true);
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *m = hd_modules[b], *next; m; m = next) {
			next = m->hnext;
			if (!hd_mod_remove(m, false))
				left++;
		}
	hd_retire_stop();
	/* Without tracefs nothing was recovered: the previous state file stays as it was. */
	if (!hd_recovery_pending)
		hd_save_state();
	if (left)
		hd_warn("%zu modules keep enabled events (EBUSY); the state file lists them for "
			"the next start",
			left);
}

/*
 * LIST reads /proc, because the daemon does not track every process that
 * maps a registered file (see "lingering and retiring"): every process (or
 * the one asked for) whose maps hold a registered, non-draining file, as
 * maps names it. root sees all; another uid only its own processes.
 */
struct list_ctx {
	void (*fn)(const struct hd_list_entry *e, void *arg);
	void *arg;
	size_t n;
};

static struct hd_module *mod_by_mapping(const struct hd_mapping *mp)
{
	struct hd_module *m = hd_mod_find(mp->dev, mp->ino);

	if (m && m->mdev == mp->dev && m->mino == mp->ino)
		return m;
	if (hd_nodd)
		for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
			for (m = hd_modules[b]; m; m = m->hnext)
				if (m->mdev == mp->dev && m->mino == mp->ino)
					return m;
	return NULL;
}

static int list_mapping(pid_t pid, const struct hd_mapping *mp, void *arg)
{
	struct list_ctx *l = arg;
	struct hd_module *m = mod_by_mapping(mp);
	struct hd_list_entry e;

	if (!m || m->draining)
		return 0;
	e = (struct hd_list_entry){
	    .pid = pid,
	    .nprobes = m->nprobes,
	    .dev = m->dev,
	    .ino = m->ino,
	    .start = mp->start,
	    .end = mp->end,
	    .load_bias = mp->start - mp->offset - m->delta,
	    .path = mp->path,
	};
	l->fn(&e, l->arg);
	l->n++;
	return 0;
}

size_t hd_list(pid_t pid, uid_t uid, void (*fn)(const struct hd_list_entry *e, void *arg),
	       void *arg)
{
	struct list_ctx l = {.fn = fn, .arg = arg};
	pid_t self = getpid();
	struct dirent *de;
	DIR *d;

	if (!hd_nmodules_total)
		return 0;
	if (pid) {
		if (pid != self && (uid == 0 || hd_pid_uid(pid) == uid))
			hd_each_mapping(pid, list_mapping, &l);
		return l.n;
	}
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);

		if (*end || p <= 0 || p == self || (uid != 0 && hd_pid_uid((pid_t)p) != uid))
			continue;
		hd_each_mapping((pid_t)p, list_mapping, &l);
	}
	if (d)
		closedir(d);
	return l.n;
}

int hd_registry_init(struct usdt_tracefs *t, int ep)
{
	hd_tracefs = t;
	hd_epfd = ep;
	return 0;
}
