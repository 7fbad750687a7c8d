// SPDX-License-Identifier: MIT
/*
 * The state file, the start-up recovery it serves, and waiting for tracefs:
 * persistence, beside the model (it is told the modules, hd_state_flush,
 * and calls none of the model's files; the recovery's needs of the layers
 * above, the /proc scan and whether a file is registered, are the
 * callbacks of struct hd_recovery, main.c's).
 *
 * The state file lists every site we created, rewritten whole (temporary
 * file + rename) whenever that set changes, which is only when a module is
 * added or removed, never on the per-process path; in the background, so
 * between two writes the journal (journal.c) holds the changes, each intent
 * recorded before its tracefs write. The header names the boot, which the
 * journal's repeats beside a hash of the state file it follows: a state
 * file of another boot describes events that are gone and is ignored. A failed write (disk
 * full) is logged and the daemon goes on; the cost is that a restart after a
 * crash may leave those events behind, never that it removes foreign ones.
 *
 * At start-up the previous instance's sites are read back (the state file,
 * then the journal's records on top of it: an interrupted registration's
 * sites found in the listing), /proc is scanned (scan.c, through
 * hd_recovery.scan) so that the files
 * still mapped are registered again and claim their old sites
 * (hd_claim_old), and the sites nobody claimed are removed if tracefs still
 * lists them. All of that waits for a usable tracefs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "helperd.h"
#include "strbuf.h"

bool hd_state_dirty;
uint64_t hd_state_dirty_since, hd_state_retry_at;

static bool state_warned;

/* A previous instance's sites (recovery) and whether one was claimed again. */
struct old_site {
	struct hd_site s;
	char *path;
	uint64_t dev, ino;
	bool claimed;
	bool gone; /* removed at recovery */
};
static struct old_site *old;
static size_t nold;
/*
 * What the journal follows: a hash of the state file's body, so that a
 * journal is taken only on top of the very state file it followed, and a
 * state file of the same content is the same bytes (nothing in it counts
 * writes). The body is each module's lines in turn (the lines of one
 * module share their "site DEV INO " and follow each other): FNV-1a of
 * each module's lines, and of those hashes in order. So the loop hashes no
 * line at a snapshot: a module's lines and their hash are made once, when
 * its sites are (on the writer thread for a registration, hd_state_lines),
 * and kept with it until they change (hd_module.state_text).
 */
#define TAG_BASIS 0xcbf29ce484222325ull
#define TAG_PRIME 0x100000001b3ull
static uint64_t state_tag = TAG_BASIS;

static uint64_t tag_bytes(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * TAG_PRIME;
	return h;
}

/* One module's hash into the tag. */
static uint64_t tag_mix(uint64_t tag, uint64_t h)
{
	for (int i = 0; i < 8; i++, h >>= 8)
		tag = (tag ^ (h & 0xff)) * TAG_PRIME;
	return tag;
}

/* A decimal number, by hand (no printf: a 12,000-site module's lines are many). */
static void put_dec(struct usdt_sbuf *b, uint64_t v)
{
	char d[20];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	usdt_sb_putn(b, d + i, sizeof(d) - i);
}

uint64_t hd_state_lines(struct usdt_sbuf *b, uint64_t dev, uint64_t ino, const char *path,
			const struct hd_site *sites, size_t n)
{
	struct usdt_sbuf pre = {0}, hex = {0};
	size_t from = b->len, plen = strlen(path);
	uint64_t h;

	/* site DEV INO GROUP EVENT 0xOFF 0xREF|- PATH (paths: no white space) */
	usdt_sb_puts(&pre, "site ");
	put_dec(&pre, dev);
	usdt_sb_putc(&pre, ' ');
	put_dec(&pre, ino);
	usdt_sb_putc(&pre, ' ');
	for (size_t i = 0; !pre.oom && i < n; i++) {
		const struct hd_site *s = &sites[i];
		size_t g = strlen(s->group), e = strlen(s->event);

		hex.len = 0;
		hd_put_hex(&hex, s->off);
		usdt_sb_putc(&hex, ' ');
		if (s->has_ref)
			hd_put_hex(&hex, s->ref);
		else
			usdt_sb_putc(&hex, '-');
		usdt_sb_putc(&hex, ' ');
		if (hex.oom)
			break;
		/* (one line's pieces, each copied once) */
		usdt_sb_putn(b, pre.s, pre.len);
		usdt_sb_putn(b, s->group, g);
		usdt_sb_putc(b, ' ');
		usdt_sb_putn(b, s->event, e);
		usdt_sb_putc(b, ' ');
		usdt_sb_putn(b, hex.s, hex.len);
		usdt_sb_putn(b, path, plen);
		usdt_sb_putc(b, '\n');
	}
	if (pre.oom || hex.oom)
		b->oom = true;
	usdt_sb_free(&pre);
	usdt_sb_free(&hex);
	/* (no lines, as for a registration cut short with none written: b->s may be NULL) */
	h = b->oom	     ? 0
	    : b->len == from ? TAG_BASIS
			     : tag_bytes(TAG_BASIS, b->s + from, b->len - from);
	return h;
}

/* m's lines, made now unless kept from when its sites were made. */
static bool module_lines(struct hd_module *m)
{
	struct usdt_sbuf b = {0};

	if (m->state_text)
		return true;
	m->state_hash = hd_state_lines(&b, m->dev, m->ino, m->path, m->sites, m->nsites);
	m->state_len = b.len;
	m->state_text = usdt_sb_take(&b);
	return m->state_text != NULL;
}

/* --- the state file --- */

/*
 * The modules' kept lines, one writev() per IOV_MAX modules: the loop
 * formats and hashes nothing it kept (a 12,000-site module cost it 39
 * million instructions a snapshot), only the modules whose sites changed
 * since (a removal that left EBUSY sites, a registration that dropped
 * someone else's).
 */
static bool write_state(struct hd_module *const *mods, size_t nbuckets)
{
	char tmp[4200], head[128];
	uint64_t tag = TAG_BASIS;
	struct iovec *iov = NULL;
	size_t n = 1, k = 0;
	bool ok;
	int fd;

	for (size_t b = 0; b < nbuckets; b++)
		for (const struct hd_module *m = mods[b]; m; m = m->hnext)
			n += m->nsites > 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", hd_cfg.state_path);
	/* A new file of ours: never one planted at that name (O_EXCL follows nothing). */
	unlink(tmp);
	iov = calloc(n, sizeof(*iov));
	fd = iov ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	if (fd < 0)
		goto failed;
	snprintf(head, sizeof(head), "usdtkit-helperd-state 2 %s\n", hd_boot_id());
	iov[k++] = (struct iovec){head, strlen(head)};
	ok = true;
	for (size_t b = 0; ok && b < nbuckets; b++)
		for (struct hd_module *m = mods[b]; ok && m; m = m->hnext) {
			if (!m->nsites)
				continue;
			ok = module_lines(m);
			if (ok) {
				iov[k++] = (struct iovec){m->state_text, m->state_len};
				tag = tag_mix(tag, m->state_hash);
			}
		}
	/*
	 * No fsync: the file describes tracefs events, which a power loss
	 * erases too; rename alone keeps it whole against a crash of ours.
	 */
	ok = ok && hd_writev_all(fd, iov, k) == 0;
	ok &= close(fd) == 0;
	free(iov);
	iov = NULL;
	if (!ok || rename(tmp, hd_cfg.state_path) != 0)
		goto failed;
	/* Everything the journal said is in the state file now. */
	state_tag = tag;
	hd_journal_reset(state_tag);
	if (state_warned)
		hd_info("the state file %s is written again", hd_cfg.state_path);
	state_warned = false;
	return true;
failed:
	if (!state_warned)
		hd_warn("cannot write the state file %s: %s (going on; a restart after a crash "
			"may leave events behind)",
			hd_cfg.state_path, strerror(errno ? errno : ENOMEM));
	state_warned = true;
	free(iov);
	unlink(tmp);
	return false;
}

/*
 * The state file is written in the background (hd_registry_background),
 * when no client waits, so no answer waits for it.
 */
void hd_save_state(void)
{
	if (!hd_state_dirty)
		hd_state_dirty_since = hd_now_ms();
	hd_state_dirty = true;
}

/*
 * A snapshot costs the loop in proportion to every site registered (12,000
 * sites: about a megabyte, tens of ms on a loaded machine), and under a
 * stream of registrations it would be due after every one: so it takes at
 * most 1/STATE_SHARE of the time, the next one at least the last one's
 * cost times STATE_SHARE later (a small state, a ms or less, is written
 * again at once); the journal holds every change in between, as it does
 * until any snapshot.
 */
#define STATE_SHARE 50

/*
 * And while the daemon is busy (a parse running, the writer writing:
 * others' work under way) the snapshot waits for the journal to hold
 * STATE_JOURNAL_BYTES: a snapshot stops the loop for its whole length (24,000
 * sites: tens of ms under load, a late answer for whoever asks meanwhile),
 * while the journal already holds every change; its only use is to keep
 * the journal short, so it is written when nobody waits, or when the
 * journal is long.
 */
#define STATE_JOURNAL_BYTES (4u << 20)

bool hd_state_due(bool busy)
{
	if (!hd_state_dirty || hd_now_ms() < hd_state_retry_at)
		return false;
	return !busy || hd_journal_bytes() >= STATE_JOURNAL_BYTES;
}

void hd_state_flush(struct hd_module *const *mods, size_t nbuckets)
{
	uint64_t t0 = hd_now_ms(), cost;

	if (hd_state_dirty && !write_state(mods, nbuckets)) {
		/* Tried again a second later (a full disk may have room by then). */
		hd_state_retry_at = hd_now_ms() + 1000;
		return;
	}
	cost = hd_now_ms() - t0;
	hd_state_retry_at = t0 + cost * STATE_SHARE;
	hd_state_dirty = false;
}

static bool old_add(uint64_t dev, uint64_t ino, const char *path, const struct hd_site *s)
{
	struct old_site o = {.s = *s, .dev = dev, .ino = ino}, *no;

	for (size_t i = 0; i < nold; i++)
		if (old[i].s.off == s->off && !strcmp(old[i].s.group, s->group) &&
		    !strcmp(old[i].s.event, s->event) && !strcmp(old[i].path, path))
			return true;
	o.path = strdup(path);
	no = realloc(old, (nold + 1) * sizeof(*old));
	if (!o.path || !no) {
		free(o.path);
		if (no)
			old = no;
		return false;
	}
	old = no;
	old[nold++] = o;
	return true;
}

static void load_state(void)
{
	FILE *f = hd_open_own(hd_cfg.state_path);
	char line[4400], boot[64], key[80] = "";
	uint64_t h = TAG_BASIS;

	state_tag = TAG_BASIS;
	if (!f)
		return;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return;
	}
	if (sscanf(line, "usdtkit-helperd-state 2 %63s", boot) == 1) {
		if (strcmp(boot, hd_boot_id()) != 0) {
			/* Its events died with that boot; a site it names may be someone's now. */
			hd_info("%s: a state file of an earlier boot: ignored", hd_cfg.state_path);
			fclose(f);
			return;
		}
	} else if (strcmp(line, "usdtkit-helperd-state 1\n") != 0) {
		hd_warn("%s: not a state file of this version: ignored", hd_cfg.state_path);
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		struct hd_site s = {0};
		char group[80], event[80], ref[40], path[4200];
		unsigned long long dev, ino, off;

		{
			/* A module's lines: those of one "site DEV INO " (the tag, above). */
			size_t pre = 0;

			for (int sp = 0; line[pre] && sp < 3; pre++)
				sp += line[pre] == ' ';
			if (pre >= sizeof(key) || strncmp(line, key, pre) || key[pre]) {
				if (key[0])
					state_tag = tag_mix(state_tag, h);
				h = TAG_BASIS;
				snprintf(key, sizeof(key), "%.*s", (int)pre, line);
			}
			h = tag_bytes(h, line, strlen(line));
		}
		if (sscanf(line, "site %llu %llu %79s %79s %llx %39s %4199s", &dev, &ino, group,
			   event, &off, ref, path) != 7 ||
		    strlen(group) > USDT_TRACEFS_NAME_MAX ||
		    strlen(event) > USDT_TRACEFS_NAME_MAX || !usdt_tracefs_path_ok(path))
			continue;
		strcpy(s.group, group);
		strcpy(s.event, event);
		s.off = off;
		s.has_ref = strcmp(ref, "-") != 0;
		s.ref = s.has_ref ? strtoull(ref, NULL, 16) : 0;
		if (!old_add(dev, ino, path, &s))
			break;
	}
	if (key[0])
		state_tag = tag_mix(state_tag, h);
	fclose(f);
}

/* The journal's intents whose outcome it does not say (killed in between). */
static struct hd_journal_rec *pending;
static size_t npending;

static void journal_record(const struct hd_journal_rec *r, void *arg)
{
	struct hd_journal_rec *np;

	(void)arg;
	if (!r->intent) {
		/* The module's sites are these now: its outcome, or a removal. */
		for (size_t i = 0; i < npending; i++)
			if (pending[i].seq == r->seq) {
				free(pending[i].path);
				free(pending[i].sites);
				free(pending[i].pre);
				pending[i] = pending[--npending];
				break;
			}
		for (size_t i = 0; i < nold;)
			if (old[i].dev == r->dev && old[i].ino == r->ino) {
				free(old[i].path);
				old[i] = old[--nold];
			} else {
				i++;
			}
		for (size_t i = 0; i < r->nsites; i++)
			old_add(r->dev, r->ino, r->path, &r->sites[i]);
		return;
	}
	np = realloc(pending, (npending + 1) * sizeof(*pending));
	if (!np)
		return;
	pending = np;
	pending[npending] = *r;
	pending[npending].path = strdup(r->path);
	pending[npending].sites = malloc((r->nsites + 1) * sizeof(*r->sites));
	pending[npending].pre = malloc((r->npre + 1) * sizeof(*r->pre));
	if (!pending[npending].path || !pending[npending].sites || !pending[npending].pre) {
		free(pending[npending].path);
		free(pending[npending].sites);
		free(pending[npending].pre);
		return;
	}
	/* (a record with no site or no prior site has NULL arrays: memcpy may not take them) */
	if (r->nsites)
		memcpy(pending[npending].sites, r->sites, r->nsites * sizeof(*r->sites));
	if (r->npre)
		memcpy(pending[npending].pre, r->pre, r->npre * sizeof(*r->pre));
	npending++;
}

/*
 * An interrupted registration: every listed site on its path, in a group and
 * at an offset it meant to write, that was not there before it, is ours.
 */
static size_t resolve_pending(const struct usdt_uprobe_entry *ls, size_t nls)
{
	size_t found = 0;

	for (size_t k = 0; k < npending; k++) {
		const struct hd_journal_rec *r = &pending[k];

		for (size_t j = 0; j < nls; j++) {
			struct hd_site s = {0};
			bool want = false, pre = false;

			if (ls[j].type != 'p' || strcmp(ls[j].path, r->path) != 0)
				continue;
			for (size_t i = 0; i < r->nsites && !want; i++)
				want = r->sites[i].off == ls[j].off &&
				       !strcmp(r->sites[i].group, ls[j].group);
			for (size_t i = 0; i < r->npre && !pre; i++)
				pre = r->pre[i].off == ls[j].off &&
				      !strcmp(r->pre[i].group, ls[j].group) &&
				      !strcmp(r->pre[i].event, ls[j].event);
			if (!want || pre)
				continue;
			strcpy(s.group, ls[j].group);
			strcpy(s.event, ls[j].event);
			s.off = ls[j].off;
			s.has_ref = ls[j].has_ref;
			s.ref = ls[j].ref;
			found += old_add(r->dev, r->ino, r->path, &s);
		}
	}
	return found;
}

void hd_site_removal_line(char *line, size_t size, const char *path, const struct hd_site *s)
{
	if (s->has_ref)
		snprintf(line, size, "-:%s/%s %s:0x%016" PRIx64 "(0x%" PRIx64 ")", s->group,
			 s->event, path, s->off, s->ref);
	else
		snprintf(line, size, "-:%s/%s %s:0x%016" PRIx64, s->group, s->event, path, s->off);
}

/* A previous instance's site, removed at recovery: 0 (also when already gone), -EBUSY, -errno. */
static int remove_old_site(const char *path, const struct hd_site *s)
{
	char line[USDT_UPROBE_LINE_MAX + 1], msg[256];
	int ret;

	hd_site_removal_line(line, sizeof(line), path, s);
	ret = usdt_tracefs_write(hd_tracefs, line, msg, sizeof(msg));
	if (ret == -ENOENT)
		ret = 0; /* someone removed it already */
	if (ret && ret != -EBUSY)
		hd_warn("%s: %s", line, msg);
	else if (!ret)
		hd_dbg("%s", line);
	return ret;
}

/* A site that existed before we wrote it: ours from before, or someone else's. */
bool hd_claim_old(const struct hd_module *prev, const char *path, const struct hd_site *s)
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

/* What the recovery needs from the layers above (hd_recover). */
static struct hd_recovery ops;

static void recover_now(void)
{
	struct usdt_uprobe_entry *ls = NULL;
	size_t nls = 0, removed = 0, npend;
	bool listed_ok;
	unsigned found;

	load_state();
	hd_journal_replay(hd_cfg.state_path, state_tag, journal_record, NULL);
	npend = npending;
	if (nold || npending)
		hd_info("state file: %zu sites from a previous instance, %zu registrations it "
			"did not finish",
			nold, npending);
	/*
	 * The listing before the scan: an interrupted registration's sites are
	 * claimed by it. Three readings together: one can miss a line.
	 */
	listed_ok = (nold || npending) && hd_list_union(&ls, &nls, 3) == 0;
	if (listed_ok && npending)
		hd_info("%zu sites of the registrations not finished", resolve_pending(ls, nls));
	found = ops.scan();
	/*
	 * Ours from before and not claimed by a live process: remove if still
	 * there; then look again (a reading can miss a line), until a look
	 * finds none left.
	 */
	for (int pass = 0; listed_ok && pass < 4; pass++) {
		size_t was = removed;

		for (size_t i = 0; i < nold; i++) {
			bool listed = false;

			if (old[i].claimed || old[i].gone)
				continue;
			for (size_t j = 0; j < nls && !listed; j++)
				listed = ls[j].off == old[i].s.off &&
					 !strcmp(ls[j].group, old[i].s.group) &&
					 !strcmp(ls[j].event, old[i].s.event) &&
					 !strcmp(ls[j].path, old[i].path);
			if (listed && remove_old_site(old[i].path, &old[i].s) == 0) {
				old[i].gone = true;
				removed++;
			}
			/* EBUSY: left; it is in no module, so the next state file forgets it. */
		}
		usdt_tracefs_list_free(ls, nls);
		ls = NULL;
		nls = 0;
		if (removed == was)
			break;
		listed_ok = hd_list_union(&ls, &nls, 3) == 0;
	}
	usdt_tracefs_list_free(ls, nls);
	for (size_t i = 0; i < nold; i++) {
		if (!old[i].claimed &&
		    !strncmp(old[i].path, USDT_ALIAS_DIR "/", sizeof(USDT_ALIAS_DIR)) &&
		    !ops.known(old[i].dev, old[i].ino))
			usdt_tracefs_alias_release(old[i].path);
		free(old[i].path);
	}
	for (size_t k = 0; k < npending; k++) {
		/* An alias made for a registration that wrote nothing. */
		if (!strncmp(pending[k].path, USDT_ALIAS_DIR "/", sizeof(USDT_ALIAS_DIR)) &&
		    !ops.known(pending[k].dev, pending[k].ino))
			usdt_tracefs_alias_release(pending[k].path);
		free(pending[k].path);
		free(pending[k].sites);
		free(pending[k].pre);
	}
	free(pending);
	pending = NULL;
	npending = 0;
	free(old);
	old = NULL;
	nold = 0;
	hd_save_state();
	hd_info("start-up: %u process registrations found running, %zu stale events removed%s",
		found, removed, npend ? " (after an interrupted registration)" : "");
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
bool hd_recovery_pending;

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

void hd_recover(const struct hd_recovery *o)
{
	ops = *o;
	if (hd_tracefs_ready() != 0) {
		/* The previous instance's events and state file wait until tracefs is back. */
		hd_recovery_pending = true;
		return;
	}
	if (!hd_recovery_pending)
		recover_now();
}
