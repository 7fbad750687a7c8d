// SPDX-License-Identifier: MIT
/*
 * The registry: which files (modules) have events, and the tracefs work of
 * creating and removing those events (the per-uid quotas and rates: quota.c).
 *
 * A module is one file, keyed by (st_dev, st_ino) of the file really mapped
 * (fstat of /proc/PID/map_files/...). It owns the list of sites it created
 * (group, event, offset, ref_ctr, path: exactly what a removal line needs),
 * never more: a site that already existed is someone else's, unless it is
 * one of ours from before (a previous instance's state file, or this
 * module's own leftovers after an EBUSY).
 *
 * Its users are processes (procs.c). When the last one goes the module
 * lingers, then is retired (retire.c, told through hd_model_hooks.idle:
 * the registry is the model and calls nothing above it); its sites are
 * removed one by one;
 * EBUSY (a consumer has the event enabled) leaves the module "draining",
 * retried with backoff from 5 s to 5 min, and revived if a process maps the
 * file again meanwhile. A new file is parsed in line here (hd_mod_create: the
 * start-up scan) or through the parse queue (queue.c), and registered by
 * hd_mod_start either way. The tracefs writes of a registration or a
 * removal are jobs of the writer thread (writer.c) once the daemon serves:
 * the loop hands a job what it needs (the notes, or the module's sites,
 * which nothing changes while it is removing), the thread writes and does
 * what grows with the sites (a removal's lines; a registration's sites,
 * journal lines and log lines, reg_make), and the loop finishes it
 * (reg_done, rm_done) by taking what was made: a 12,000-site file costs
 * it about what a 10-site file does.
 *
 * The model is this file with procs.c above it (the processes) and quota.c
 * below it (the per-uid counts); persistence, beside it, is state.c,
 * journal.c and board.c, which it calls and which call nothing of it (the
 * state file is written from the modules handed to it, hd_registry_flush).
 * The layers: kernel-helper/README.md, "The layers".
 */
#include <errno.h>
#include <stdatomic.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helperd.h"
#include "strbuf.h"

struct hd_module *hd_modules[HD_MOD_BUCKETS];
size_t hd_nmodules_total, hd_nidle;
size_t hd_nodd; /* modules whose maps key is not their (st_dev, st_ino): btrfs, overlayfs */
struct hd_model_hooks hd_model_hooks;

static size_t mod_hash(uint64_t dev, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ dev) % HD_MOD_BUCKETS;
}

struct hd_module *hd_mod_find(uint64_t dev, uint64_t ino)
{
	for (struct hd_module *m = hd_modules[mod_hash(dev, ino)]; m; m = m->hnext)
		if (m->dev == dev && m->ino == ino)
			return m;
	return NULL;
}

#define NEG_MAX 65536

/* Files known to carry nothing for us (the scans' cache, and the parse queue's). */
static struct {
	uint64_t dev, ino;
} * neg;
static size_t nneg;

bool hd_neg_has(uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < nneg; i++)
		if (neg[i].dev == dev && neg[i].ino == ino)
			return true;
	return false;
}

void hd_neg_add(uint64_t dev, uint64_t ino)
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
	free(m->state_text);
	free(m);
}

/* Removes what is left of m's sites; true when all are gone (m is then freed). */
void hd_mod_withdraw(struct hd_module *m)
{
	if (m->published)
		hd_board_withdraw(m->mdev, m->mino, m->mapped_path);
	m->published = false;
}

/*
 * A module named through our descriptor is a deleted file, or one no alias
 * could be made for: the daemon in a mount namespace of its own (its
 * systemd unit) cannot bind-mount a file of another namespace's mount
 * (EINVAL). The latter is published and lingers as any other.
 */
bool hd_mod_deleted(const struct hd_module *m)
{
	struct stat st;

	return m->hold_fd >= 0 && (fstat(m->hold_fd, &st) != 0 || st.st_nlink == 0);
}

void hd_mod_publish(struct hd_module *m)
{
	if (!m->published && !m->draining && !hd_mod_deleted(m))
		m->published = hd_board_publish(m->mdev, m->mino, m->mapped_path);
}

void hd_mod_unidle(struct hd_module *m)
{
	if (m->idle) {
		m->idle = false;
		hd_nidle--;
	}
}

/*
 * A removal: the module's removal lines, made and written by the writer
 * thread (writer.c) from the module's sites and path, which nothing changes
 * while it is removing (the loop hands them over in O(1): a 12,000-site
 * file's lines cost the loop nothing); rm_done, on the loop, keeps the
 * sites that could not go (EBUSY: a consumer has the event enabled) and
 * frees the module when none is left.
 */
struct removal {
	struct hd_wjob job; /* first: the writer's */
	struct hd_module *m;
	const struct hd_site *sites; /* m's, read only until done */
	const char *path;	     /* m's */
	size_t nsites;
	char **lines; /* the first n made (fewer: no memory, the rest kept as -ENOMEM) */
	int *err;
	size_t n, next;
	bool made, save;
	bool clean; /* every site gone (or gone already): rm_done need not look at them */
};

/* The removal lines, on the writer's thread: they touch only the job's memory and m's sites. */
static void rm_make(struct removal *r)
{
	char line[USDT_UPROBE_LINE_MAX + 1];

	r->made = true;
	r->lines = calloc(r->nsites + 1, sizeof(*r->lines));
	r->err = calloc(r->nsites + 1, sizeof(*r->err));
	if (!r->lines || !r->err)
		return;
	for (; r->n < r->nsites; r->n++) {
		r->err[r->n] = -EINTR; /* not written (yet) */
		hd_site_removal_line(line, sizeof(line), r->path, &r->sites[r->n]);
		r->lines[r->n] = strdup(line);
		if (!r->lines[r->n])
			break;
	}
}

static bool rm_step(struct hd_wjob *j, uint64_t budget_ns)
{
	struct removal *r = (struct removal *)j;

	if (!r->made)
		rm_make(r);
	if (!r->lines || !r->err)
		return false;
	if (usdt_tracefs_run_lines(hd_tracefs, r->lines, r->n, &r->next, r->err, budget_ns) > 0)
		return true;
	r->clean = r->n == r->nsites;
	for (size_t i = 0; r->clean && i < r->n; i++)
		r->clean = r->err[i] == 0 || r->err[i] == -ENOENT;
	if (r->clean) {
		/* Nothing to warn of: the lines freed here, not on the loop. */
		for (size_t i = 0; i < r->n; i++)
			free(r->lines[i]);
		free(r->lines);
		r->lines = NULL;
	}
	return false;
}

static void rm_free(struct removal *r)
{
	for (size_t i = 0; r->lines && i < r->n; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r->err);
	free(r);
}

static void rm_done(struct hd_wjob *j)
{
	struct removal *r = (struct removal *)j;
	struct hd_module *m = r->m;
	uint64_t dev = m->dev, ino = m->ino;
	size_t keep = 0, warned = 0;

	m->removing = false;
	for (size_t i = 0; !r->clean && i < m->nsites; i++) {
		int e = r->err && i < r->n ? r->err[i] : -ENOMEM;

		if (e == -ENOENT)
			e = 0; /* someone removed it already, or the batch did */
		if (e && e != -EBUSY && e != -EINTR && warned++ < 8)
			hd_warn("%s: %s", i < r->n && r->lines[i] ? r->lines[i] : m->mapped_path,
				strerror(-e));
		if (e == -EBUSY || e == -EINTR || e == -ENOMEM)
			m->sites[keep++] = m->sites[i];
	}
	m->nsites = keep;
	free(m->state_text); /* (its lines in the state file: made again at the next) */
	m->state_text = NULL;
	/* Until this record, a restart takes them all for ours and removes those still listed. */
	hd_journal_sites(0, m);
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
		if (r->save)
			hd_save_state();
	} else {
		hd_info("unregistered %s (%" PRIu64 ":%" PRIu64 ")", m->mapped_path, m->dev,
			m->ino);
		hd_quota_add(m->owner, -1, -(long)m->nprobes);
		if (m->alias)
			usdt_tracefs_alias_release(m->path);
		mod_unlink(m);
		mod_free(m);
		if (r->save)
			hd_save_state();
	}
	rm_free(r);
	/* A parse of the same file waited for this removal: it may register it now. */
	if (hd_model_hooks.removed)
		hd_model_hooks.removed(dev, ino);
}

void hd_mod_remove(struct hd_module *m, bool save)
{
	struct removal *r;

	if (hd_model_hooks.forget)
		hd_model_hooks.forget(m);
	hd_mod_withdraw(m);
	hd_mod_unidle(m);
	if (m->removing || m->reviving)
		return;
	r = calloc(1, sizeof(*r));
	if (!r) {
		/* No memory now: tried again as a draining module is (so is a job short of it). */
		m->draining = true;
		m->backoff_s = 5;
		m->retry_at = hd_now_ms() + 5000;
		return;
	}
	r->m = m;
	r->sites = m->sites;
	r->nsites = m->nsites;
	r->path = m->path;
	r->save = save;
	r->job.uid = m->owner;
	r->job.step = rm_step;
	r->job.done = rm_done;
	r->job.bulk = m->nsites > HD_BULK_SITES;
	m->removing = true;
	hd_writer_submit(&r->job);
}

void hd_mod_put(struct hd_module *m, pid_t leaving)
{
	if (--m->nusers == 0 && hd_model_hooks.idle)
		hd_model_hooks.idle(m, leaving);
}

/*
 * The path events name. Never a name the caller can change: the kernel
 * resolves the path again for every line written, so a name checked first
 * and written after lets whoever owns a directory on it swap another file
 * in between (issue 21). So: the mapped path itself only when tracefs can
 * take it and it is trusted (usdt_path_trusted: walked without symlinks
 * through directories only root can change, and naming this very file);
 * else the alias, a bind mount of the verified descriptor in a root-only
 * directory. A deleted file cannot be bind-mounted (ENOENT): we keep it
 * open and name it /proc/OURPID/fd/N, which only we can change; the kernel
 * resolves it at creation and matches it as a string at removal.
 */
static int event_path(const struct hd_mapping *mp, int fd, struct hd_module *m)
{
	char buf[256];
	int kind, ret;

	m->alias = false;
	ret = usdt_tracefs_event_path(fd, mp->deleted ? NULL : mp->path, true, buf, sizeof(buf),
				      &kind);
	if (ret == 0 && kind == USDT_PATH_LITERAL) {
		m->path = strdup(mp->path);
		return m->path ? 0 : -ENOMEM;
	}
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

/* The worker's limits for this file (the test-only delay may apply to some paths only). */
struct hd_worker_limits hd_limits_for(const struct hd_mapping *mp)
{
	struct hd_worker_limits lim = hd_cfg.worker;

	if (lim.test_delay_glob && fnmatch(lim.test_delay_glob, mp->path, 0) != 0)
		lim.test_delay_ms = 0;
	return lim;
}

/*
 * What a registration's writes made, in the form the module keeps: its
 * sites (those that existed before are listed in `old`, for the loop to
 * claim or drop), the journal's lines of them, the log's lines. Made by
 * reg_make from the results and the notes alone, so on the writer's
 * thread: for a 12,000-site file the loop then only takes the array.
 */
struct reg_made {
	bool ok; /* made (else: no memory, or not yet) */
	struct hd_site *sites;
	size_t nsites;
	size_t *old, nold; /* indexes in sites of those that existed */
	unsigned nprobes, refused;
	uint64_t delta;
	struct usdt_sbuf journal, warn, dbg;
	struct usdt_sbuf state; /* its lines in the state file (when none existed before) */
	uint64_t state_hash;
};

/* Parses s->line's "(0xREF)" back: what the kernel will list and match at removal. */
static void site_from(struct hd_site *out, const struct usdt_site_result *s)
{
	const char *loc = strchr(s->line, ' '), *paren;

	snprintf(out->group, sizeof(out->group), "%s", s->probe->group);
	snprintf(out->event, sizeof(out->event), "%s", s->event);
	out->off = s->probe->pc_off;
	paren = loc ? strchr(loc, '(') : NULL;
	out->has_ref = paren && (!strchr(loc + 1, ' ') || paren < strchr(loc + 1, ' '));
	out->ref = out->has_ref ? strtoull(paren + 1, NULL, 16) : 0;
}

static void reg_made_free(struct reg_made *d)
{
	free(d->sites);
	free(d->old);
	usdt_sb_free(&d->journal);
	usdt_sb_free(&d->warn);
	usdt_sb_free(&d->dbg);
	usdt_sb_free(&d->state);
	memset(d, 0, sizeof(*d));
}

/*
 * Ends tr (freed): its results made into d, for m (only its key and path
 * read); touches nothing but its arguments.
 */
static void reg_make(struct reg_made *d, struct usdt_tracefs_reg *tr, const struct usdt_notes *n,
		     const struct hd_module *m)
{
	struct usdt_site_result *res = NULL;
	size_t nres = 0;

	usdt_tracefs_reg_end(tr, &res, &nres);
	d->sites = calloc(nres ? nres : 1, sizeof(*d->sites));
	d->old = calloc(nres ? nres : 1, sizeof(*d->old));
	d->ok = d->sites && d->old;
	for (size_t i = 0; d->ok && i < nres; i++) {
		const struct usdt_site_result *x = &res[i];

		if (x->err) {
			/* (a hostile file's thousands of refusals must not flood the log) */
			if (d->refused++ < 16)
				usdt_sb_printf(&d->warn, "%s:%s: %s\n", x->probe->provider,
					       x->probe->name, x->msg);
			continue;
		}
		d->nprobes++;
		if (x->existed)
			d->old[d->nold++] = d->nsites;
		else if (hd_debug && x->line)
			usdt_sb_printf(&d->dbg, "%s\n", x->line);
		site_from(&d->sites[d->nsites++], x);
	}
	if (d->ok)
		hd_journal_site_lines(&d->journal, d->sites, d->nsites);
	/* (With sites that existed, the loop may drop some: their lines made there, if so.) */
	if (d->ok && !d->nold)
		d->state_hash =
		    hd_state_lines(&d->state, m->dev, m->ino, m->path, d->sites, d->nsites);
	for (size_t i = 0; i < n->nsites; i++)
		if (!n->sites[i].reject) {
			d->delta = n->sites[i].pc - n->sites[i].pc_off;
			break;
		}
	usdt_tracefs_results_free(res, nres);
}

/* Logs text's lines, each after prefix (on the loop: the log is the loop's). */
static void log_lines(bool warn, const char *prefix, const struct usdt_sbuf *text)
{
	const char *p = text->s, *nl;

	for (; p && *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		if (warn)
			hd_warn("%s: %.*s", prefix, (int)(nl - p), p);
		else
			hd_dbg("%.*s", (int)(nl - p), p);
		if (!*nl)
			break;
	}
}

/*
 * A registration: a parsed file's events, written by the writer thread
 * (writer.c) in slices; reg_done, on the loop, makes the module of what
 * was created and tells the caller.
 */
struct registration {
	struct hd_wjob job; /* first: the writer's */
	struct hd_module *m, *prev;
	struct usdt_notes *n;
	struct usdt_tracefs_reg *tr;
	uint64_t seq;	  /* its intent's record (0: none), the writer's first slice's */
	bool intent_made; /* (the first slice began by it) */
	bool own_path;	  /* m->path is our alias or descriptor name */
	unsigned charged; /* probes counted in the owner's quota while written */
	bool deleted;	  /* the mapping's file was deleted: never on the board */
	void (*done)(void *arg, int ret, struct hd_module *m, struct usdt_notes *back);
	void *arg;
	struct reg_made made; /* what the writes made, ready for the module */
};

static bool reg_step(struct hd_wjob *j, uint64_t budget_ns)
{
	struct registration *r = (struct registration *)j;

	if (!r->intent_made) {
		/*
		 * Intent first, here rather than on the loop (it grows with the
		 * sites): a kill during the writes leaves sites a restart knows
		 * as ours. m is the job's until reg_done.
		 */
		r->seq = hd_journal_intent(r->m->dev, r->m->ino, r->m->path, r->own_path, r->n);
		r->intent_made = true;
	}
	if (usdt_tracefs_reg_step(r->tr, budget_ns) > 0)
		return true;
	/* The last slice: the module's sites made here, off the loop. */
	reg_make(&r->made, r->tr, r->n, r->m);
	r->tr = NULL;
	/* Not cut (a job's last slice never is): nobody needs the notes any more. */
	usdt_notes_free(r->n);
	r->n = NULL;
	return false;
}

/* The end of a registration (on the loop): its module, or an error; the caller told either way. */
static void reg_done(struct hd_wjob *j)
{
	struct registration *r = (struct registration *)j;
	struct hd_module *m = r->m, *prev = r->prev;
	struct reg_made *d = &r->made;
	size_t out, dropped;

	if (r->tr) {
		/* Cut before its last slice: made here. */
		reg_make(d, r->tr, r->n, m);
		r->tr = NULL;
	}
	hd_quota_add(m->owner, 0, -(long)r->charged);
	if (prev)
		prev->reviving = false;
	if (!d->ok) {
		hd_warn("%s: cannot register: %s", m->mapped_path ? m->mapped_path : "?",
			strerror(ENOMEM));
		if (r->seq)
			hd_journal_drop(r->seq);
		if (m->alias && !prev)
			usdt_tracefs_alias_release(m->path);
		if (prev && m->hold_fd >= 0) {
			prev->hold_fd = m->hold_fd;
			m->hold_fd = -1;
		}
		mod_free(m);
		usdt_notes_free(r->n);
		reg_made_free(d);
		r->done(r->arg, -ENOMEM, NULL, NULL);
		free(r);
		return;
	}
	log_lines(true, m->mapped_path, &d->warn);
	if (d->refused > 16)
		hd_warn("%s: %u sites refused in all", m->mapped_path, d->refused);
	log_lines(false, "", &d->dbg);
	/* Those that existed: ours from before, or someone else's, never ours to remove. */
	out = d->nold ? d->old[0] : d->nsites;
	for (size_t i = out, k = 0; i < d->nsites; i++) {
		if (k < d->nold && d->old[k] == i) {
			k++;
			if (!hd_claim_old(prev, m->path, &d->sites[i]))
				continue;
		}
		if (out != i)
			d->sites[out] = d->sites[i];
		out++;
	}
	dropped = d->nsites - out;
	m->sites = d->sites;
	m->nsites = d->nsites - dropped;
	m->nprobes = d->nprobes;
	m->delta = d->delta;
	d->sites = NULL;
	if (!dropped && !d->nold && !d->state.oom) {
		m->state_len = d->state.len;
		m->state_hash = d->state_hash;
		m->state_text = usdt_sb_take(&d->state);
	}
	/* The journal's lines were made for all of them: made again when some were dropped. */
	hd_journal_sites_as(r->seq, m, dropped ? NULL : &d->journal);
	reg_made_free(d);
	hd_quota_add(m->owner, 1, m->nprobes);
	hd_info("registered %s (%" PRIu64 ":%" PRIu64 "): %u probe sites, %zu events created%s%s%s",
		m->mapped_path, m->dev, m->ino, m->nprobes, m->nsites,
		m->alias ? ", through an alias" : "",
		m->hold_fd >= 0 ? ", through a descriptor" : "",
		r->job.cut ? " (cut short: nobody waits for it any more)" : "");
	if (prev) {
		mod_unlink(prev);
		mod_free(prev);
	}
	m->hnext = hd_modules[mod_hash(m->dev, m->ino)];
	hd_modules[mod_hash(m->dev, m->ino)] = m;
	hd_nmodules_total++;
	hd_save_state();
	if (r->job.cut) {
		/*
		 * Cut short (nobody waited for it any more): what was written
		 * goes, and the notes go back to the caller, who registers the
		 * file anew, after this removal, should a waiter have come
		 * meanwhile.
		 */
		hd_mod_remove(m, true);
		r->done(r->arg, -ECANCELED, NULL, r->n);
	} else {
		usdt_notes_free(r->n);
		if (!r->deleted)
			hd_mod_publish(m);
		r->done(r->arg, 0, m, NULL);
	}
	free(r);
}

/*
 * Starts registering a parsed file (or reviving a draining one, `prev`);
 * takes n. The file's quota and rate were admitted before its parse; its
 * probes count in the owner's quota from now. The events are written by
 * the writer, `done` called on the loop when they are (in line when
 * `now`, or when the writer does not run).
 */
int hd_mod_start(const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino, uid_t uid,
		 struct hd_module *prev, struct usdt_notes *n, bool now,
		 void (*done)(void *arg, int ret, struct hd_module *m, struct usdt_notes *back),
		 void *arg, struct hd_wjob **job)
{
	struct registration *r;
	struct hd_module *m;
	int ret;

	if (n->naccepted == 0) {
		usdt_notes_free(n);
		return -ENODATA;
	}
	if (!hd_quota_probes_fit(uid, (unsigned)n->naccepted)) {
		hd_warn("uid %u: probe quota (%u) reached: %s refused", (unsigned)uid,
			hd_cfg.max_probes_per_uid, mp->path);
		usdt_notes_free(n);
		return -EDQUOT;
	}
	r = calloc(1, sizeof(*r));
	m = calloc(1, sizeof(*m));
	if (!m || !r) {
		free(r);
		free(m);
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
	r->m = m;
	r->prev = prev;
	r->n = n;
	r->deleted = mp->deleted;
	r->done = done;
	r->arg = arg;
	if (prev && !prev->alias) {
		/*
		 * Revived: the same name its leftover events have, a descriptor
		 * of ours or a literal path, which must still be trusted and
		 * name this file (root may have replaced it meanwhile).
		 */
		m->path = strdup(prev->path);
		m->hold_fd = prev->hold_fd;
		prev->hold_fd = -1;
		ret = m->path ? 0 : -ENOMEM;
		if (!ret && m->hold_fd < 0 && usdt_path_trusted(m->path, fd) != 0) {
			hd_warn("%s: its leftover events name %s, which no longer names it "
				"safely: not revived until they are gone",
				mp->path, m->path);
			ret = -EBUSY;
		}
	} else {
		ret = event_path(mp, fd, m);
	}
	if (!ret && !m->mapped_path)
		ret = -ENOMEM;
	if (!ret) {
		/* (The journal's intent is the job's first step: reg_step.) */
		r->own_path = m->alias || m->hold_fd >= 0;
		ret = usdt_tracefs_reg_begin(hd_tracefs, n, m->path, &r->tr);
	}
	if (ret) {
		r->done = NULL;
		if (prev && m->hold_fd >= 0) {
			prev->hold_fd = m->hold_fd;
			m->hold_fd = -1;
		}
		hd_warn("%s: cannot register: %s", mp->path, strerror(-ret));
		if (r->seq)
			hd_journal_drop(r->seq);
		if (m->alias && !prev)
			usdt_tracefs_alias_release(m->path);
		mod_free(m);
		usdt_notes_free(n);
		free(r);
		return ret;
	}
	r->charged = (unsigned)n->naccepted;
	hd_quota_add(uid, 0, r->charged);
	if (prev)
		prev->reviving = true;
	r->job.uid = uid;
	r->job.step = reg_step;
	r->job.done = reg_done;
	r->job.bulk = n->naccepted > HD_BULK_SITES;
	r->job.stop_cancels = true;
	if (job)
		*job = &r->job;
	if (now)
		hd_writer_run(&r->job);
	else
		hd_writer_submit(&r->job);
	return 0;
}

/* hd_mod_create's end: the result, kept. */
struct create_result {
	int ret;
	struct hd_module *m;
};

static void create_done(void *arg, int ret, struct hd_module *m, struct usdt_notes *back)
{
	struct create_result *c = arg;

	usdt_notes_free(back);
	c->ret = ret;
	c->m = m;
}

/* Reads and registers a new file in line (the start-up scan; REGISTER, --rescan: hd_parse_begin).
 */
int hd_mod_create(const struct hd_mapping *mp, int fd, uint64_t dev, uint64_t ino, uid_t uid,
		  struct hd_module *prev, unsigned parses, struct hd_module **out)
{
	struct hd_worker_limits lim = hd_limits_for(mp);
	struct usdt_notes *n = NULL;
	struct create_result c = {-EIO, NULL};
	char err[256];
	int ret = hd_tracefs_ready();

	if (!ret && prev && (prev->removing || prev->reviving))
		ret = -EBUSY; /* its removal is under way: the next scan finds it */
	if (!ret)
		ret = hd_mod_admit(mp, fd, uid, parses);
	if (ret)
		return ret;
	ret = hd_parse(fd, &lim, &n, err, sizeof(err));
	if (ret) {
		hd_warn("%s: %s", mp->path, err);
		return ret;
	}
	ret = hd_mod_start(mp, fd, dev, ino, uid, prev, n, true, create_done, &c, NULL);
	if (ret)
		return ret;
	if (!c.ret)
		*out = c.m;
	return c.ret;
}

/*
 * SIGTERM, once the writer has stopped, the processes are forgotten and the
 * parses abandoned (main.c): every module's events removed, in line.
 * Returns the modules left (EBUSY: a consumer has their events enabled).
 */
size_t hd_registry_shutdown(void)
{
	size_t left;

	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *m = hd_modules[b], *next; m; m = next) {
			next = m->hnext;
			hd_mod_remove(m, false); /* in line: the writer has stopped */
		}
	left = hd_nmodules_total;
	if (left)
		hd_warn("%zu modules keep enabled events (EBUSY); the state file lists them for "
			"the next start",
			left);
	return left;
}

/* The state file (state.c) of the modules as they are, if it changed. */
void hd_registry_flush(void)
{
	hd_state_flush(hd_modules, HD_MOD_BUCKETS);
}
