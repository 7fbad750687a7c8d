// SPDX-License-Identifier: MIT
/*
 * The journal: intent written before each change to tracefs, so that a
 * daemon killed at any instant (SIGKILL, a crash) leaves nothing a restart
 * cannot recognise as its own (issue 21, item 2).
 *
 * The state file (state.c) is a snapshot of every site we own, rewritten
 * whole in the background. Between two snapshots the truth is in the
 * journal, STATE.journal, appended to with one writev() per record (its
 * lines made before, never copied into one buffer):
 *
 *   usdtkit-helperd-journal 1 TAG BOOTID     header: the hash of the snapshot it follows
 *   I SEQ DEV INO PATH NWANT NPRE            intent: sites about to be written on PATH,
 *   w GROUP OFF                                NWANT of them (group, file offset),
 *   x GROUP EVENT OFF                          NPRE sites already there (someone else's),
 *   E SEQ                                    complete; only now is tracefs written
 *   M SEQ DEV INO PATH NSITES                the sites (DEV, INO) owns now (0: none),
 *   s GROUP EVENT OFF REF|-                    NSITES of them,
 *   F SEQ                                    complete
 *
 * A registration appends I..E before its first tracefs write and M..F after
 * its last; a removal appends M..F after its writes (until then the sites
 * are still ours in the state, and a restart removes those still listed).
 * A record without its end line (killed during the write(): a large write
 * can be cut short by SIGKILL) is ignored: a torn intent was followed by no
 * tracefs write, a torn M leaves the previous word in force. At restart
 * (hd_journal_replay) an intent without its M is resolved against the
 * listing: every listed site on PATH, in a group and at an offset it named,
 * that is not one of its NPRE, is ours. The NPRE sites are what makes that
 * exact: a site that exists before we write it (perf probe's, on the same
 * literal path) is never ours. They are known before the first write by
 * reading uprobe_events, which is needed only when the path could be
 * someone else's (a literal path, not our alias or descriptor name) and one
 * of the file's groups already exists: a new provider costs one access()
 * per group and no listing.
 *
 * Threads. A registration's intent is made and appended by the writer
 * thread (writer.c) at the job's first slice, before its first tracefs
 * write, so the loop never makes one (a 12,000-site file's cost it 7.6
 * million instructions, bench/helper/README.md); everything else is the
 * loop's. One mutex keeps the file's end, the sequence numbers and the
 * open intents whole between the two: a reset (after a snapshot) and an
 * intent's append are never interleaved, so an intent is either in the
 * journal the reset truncated and written again by it, or appended after.
 *
 * No fsync. Against SIGKILL the page cache is enough (the data of a
 * returned write() survives the process). Against a power loss nothing is
 * needed: the kernel's uprobe events do not survive it either; the boot id
 * in both headers makes a restart on a later boot ignore a state that
 * describes events of an earlier one (which could otherwise name a site
 * that someone else has made since, and remove it).
 *
 * The journal is reset (truncated, a new header) after each snapshot, whose
 * hash it then carries; a journal whose hash is not the snapshot's (a kill
 * between the snapshot's rename and the reset) is older than the snapshot
 * and ignored. (Replaying it would do no harm either: its records are
 * outcomes the snapshot already holds, each replacing a module's sites.)
 * A failed append (disk full) is cut back to the last whole record, logged
 * once, and the daemon goes on: the cost, as for the snapshot, is that a
 * crash meanwhile may leave events behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "helperd.h"
#include "strbuf.h"

#define JOURNAL_MAX (256u << 20) /* read back at most this much */
#define JOURNAL_HEADER "usdtkit-helperd-journal 1"

static int jfd = -1;
static off_t jsize;   /* the end of the last whole record */
static uint64_t jseq; /* the last record's sequence number */
static bool jwarned;
static char jpath[4200];
static char boot_id[40];
static pthread_mutex_t jlock = PTHREAD_MUTEX_INITIALIZER; /* all of the above, open_intents */

size_t hd_journal_bytes(void)
{
	size_t n;

	pthread_mutex_lock(&jlock);
	n = jfd >= 0 ? (size_t)jsize : SIZE_MAX;
	pthread_mutex_unlock(&jlock);
	return n;
}

/*
 * Intents whose registration is still being written (the writer thread
 * writes them in slices while the loop goes on): a reset, which follows a
 * snapshot that does not know their sites yet, writes them again.
 */
struct open_intent {
	struct open_intent *next;
	uint64_t seq;
	char *text;
	size_t len;
};
static struct open_intent *open_intents;

const char *hd_boot_id(void)
{
	FILE *f;

	if (boot_id[0])
		return boot_id;
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f || !fgets(boot_id, sizeof(boot_id), f))
		snprintf(boot_id, sizeof(boot_id), "unknown");
	if (f)
		fclose(f);
	boot_id[strcspn(boot_id, "\n ")] = '\0';
	return boot_id;
}

/*
 * Appends one whole record made of n pieces with writev(), or nothing
 * (cut back to the last whole one). Under jlock.
 */
static bool appendv(struct iovec *iov, int n)
{
	size_t total = 0;
	int e;

	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (jfd < 0)
		return false;
	e = hd_writev_all(jfd, iov, (size_t)n);
	if (e) {
		if (ftruncate(jfd, jsize) != 0) {
			/* Cannot even cut it back: stop appending to a torn file. */
			close(jfd);
			jfd = -1;
		}
		if (!jwarned)
			hd_warn("cannot write the state journal %s: %s (going on; a restart "
				"after a crash may leave events behind)",
				jpath, strerror(e));
		jwarned = true;
		return false;
	}
	jsize += (off_t)total;
	if (jwarned)
		hd_info("the state journal %s is written again", jpath);
	jwarned = false;
	return true;
}

/* One record in one buffer (freed), under jlock. */
static bool append(struct usdt_sbuf *b)
{
	struct iovec iov = {b->s, b->len};
	bool ok = !b->oom && appendv(&iov, 1);

	usdt_sb_free(b);
	return ok;
}

static bool write_header(uint64_t tag)
{
	struct usdt_sbuf b = {0};

	jsize = 0;
	usdt_sb_printf(&b, JOURNAL_HEADER " %" PRIu64 " %s\n", tag, hd_boot_id());
	return append(&b);
}

/* Whether a file of this group already exists in tracefs (so a site in it might). */
static bool group_exists(const char *group)
{
	char p[sizeof(hd_tracefs->root) + 96];

	snprintf(p, sizeof(p), "%s/events/%s", hd_tracefs->root, group);
	return access(p, F_OK) == 0;
}

static bool wanted(const struct usdt_notes *n, const char *group, uint64_t off)
{
	for (size_t i = 0; i < n->nsites; i++)
		if (!n->sites[i].reject && n->sites[i].pc_off == off &&
		    !strcmp(n->sites[i].group, group))
			return true;
	return false;
}

int hd_list_union(struct usdt_uprobe_entry **out, size_t *n, int reads)
{
	struct usdt_uprobe_entry *all = NULL;
	size_t nall = 0;
	int ret = 0;

	for (int r = 0; r < reads; r++) {
		struct usdt_uprobe_entry *ls, *na;
		size_t nls;

		ret = usdt_tracefs_list(hd_tracefs, &ls, &nls);
		if (ret)
			break;
		na = realloc(all, (nall + nls + 1) * sizeof(*all));
		if (!na) {
			usdt_tracefs_list_free(ls, nls);
			ret = -ENOMEM;
			break;
		}
		all = na;
		if (nls)
			memcpy(all + nall, ls, nls * sizeof(*ls));
		nall += nls;
		free(ls); /* (its entries' strings now belong to all) */
	}
	if (ret && !nall) {
		free(all);
		*out = NULL;
		*n = 0;
		return ret;
	}
	*out = all;
	*n = nall;
	return 0;
}

void hd_put_hex(struct usdt_sbuf *b, uint64_t v)
{
	char d[2 + 16];
	size_t i = sizeof(d);

	do {
		d[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	d[--i] = 'x';
	d[--i] = '0';
	usdt_sb_putn(b, d + i, sizeof(d) - i);
}

/*
 * A site's line, "K GROUP [EVENT] 0xOFF" (K 'w'), or with " 0xREF" or " -"
 * (K 's'): by hand, not printf, which cost a 12,000-site file's two records
 * about 18 million instructions on the loop (bench/helper/loopcost.sh).
 */
static void site_line(struct usdt_sbuf *b, char kind, const char *group, const char *event,
		      uint64_t off, const uint64_t *ref)
{
	usdt_sb_putc(b, kind);
	usdt_sb_putc(b, ' ');
	usdt_sb_puts(b, group);
	usdt_sb_putc(b, ' ');
	if (event) {
		usdt_sb_puts(b, event);
		usdt_sb_putc(b, ' ');
	}
	hd_put_hex(b, off);
	if (kind == 's') {
		usdt_sb_putc(b, ' ');
		if (ref)
			hd_put_hex(b, *ref);
		else
			usdt_sb_putc(b, '-');
	}
	usdt_sb_putc(b, '\n');
}

uint64_t hd_journal_intent(uint64_t dev, uint64_t ino, const char *path, bool own_path,
			   const struct usdt_notes *n)
{
	struct usdt_uprobe_entry *ls = NULL;
	struct usdt_sbuf b = {0};
	size_t nls = 0, nwant = 0, npre = 0;
	bool maybe = false, ok;
	uint64_t seq;

	pthread_mutex_lock(&jlock);
	seq = jfd >= 0 ? ++jseq : 0;
	pthread_mutex_unlock(&jlock);
	if (!seq)
		return 0;
	/* Made without the lock: the loop's records and snapshots do not wait for it. */
	for (size_t i = 0; i < n->nsites; i++) {
		if (n->sites[i].reject)
			continue;
		nwant++;
		/* One access() per group: sites in a row share it. */
		if (!own_path && !maybe &&
		    (i == 0 || strcmp(n->sites[i].group, n->sites[i - 1].group) != 0))
			maybe = group_exists(n->sites[i].group);
	}
	if (maybe && hd_list_union(&ls, &nls, 2) == 0) {
		for (size_t j = 0; j < nls; j++)
			if (!strcmp(ls[j].path, path) && wanted(n, ls[j].group, ls[j].off))
				npre++;
	}
	usdt_sb_printf(&b, "I %" PRIu64 " %" PRIu64 " %" PRIu64 " %s %zu %zu\n", seq, dev, ino,
		       path, nwant, npre);
	for (size_t i = 0; i < n->nsites; i++)
		if (!n->sites[i].reject)
			site_line(&b, 'w', n->sites[i].group, NULL, n->sites[i].pc_off, NULL);
	for (size_t j = 0; j < nls && npre; j++)
		if (!strcmp(ls[j].path, path) && wanted(n, ls[j].group, ls[j].off))
			usdt_sb_printf(&b, "x %s %s 0x%" PRIx64 "\n", ls[j].group, ls[j].event,
				       ls[j].off);
	usdt_sb_printf(&b, "E %" PRIu64 "\n", seq);
	usdt_tracefs_list_free(ls, nls);
	if (b.oom) {
		usdt_sb_free(&b);
		return 0;
	}
	pthread_mutex_lock(&jlock);
	{
		/* Kept (the text itself) for the resets until its record of sites. */
		struct open_intent *o = malloc(sizeof(*o));
		struct iovec iov = {b.s, b.len};

		ok = appendv(&iov, 1);
		if (o) {
			o->len = b.len;
			o->text = usdt_sb_take(&b);
			o->seq = seq;
			o->next = open_intents;
			open_intents = o;
		}
	}
	pthread_mutex_unlock(&jlock);
	usdt_sb_free(&b);
	return ok ? seq : 0;
}

static void drop_locked(uint64_t seq)
{
	for (struct open_intent **pp = &open_intents; *pp; pp = &(*pp)->next)
		if ((*pp)->seq == seq) {
			struct open_intent *o = *pp;

			*pp = o->next;
			free(o->text);
			free(o);
			return;
		}
}

void hd_journal_drop(uint64_t seq)
{
	pthread_mutex_lock(&jlock);
	drop_locked(seq);
	pthread_mutex_unlock(&jlock);
}

void hd_journal_site_lines(struct usdt_sbuf *b, const struct hd_site *sites, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct hd_site *s = &sites[i];

		site_line(b, 's', s->group, s->event, s->off, s->has_ref ? &s->ref : NULL);
	}
}

void hd_journal_sites_as(uint64_t seq, const struct hd_module *m, const struct usdt_sbuf *lines)
{
	struct usdt_sbuf head = {0}, own = {0};
	char tail[32];
	struct iovec iov[3];

	pthread_mutex_lock(&jlock);
	if (jfd < 0) {
		pthread_mutex_unlock(&jlock);
		return;
	}
	if (seq)
		drop_locked(seq);
	else
		seq = ++jseq;
	pthread_mutex_unlock(&jlock);
	usdt_sb_printf(&head, "M %" PRIu64 " %" PRIu64 " %" PRIu64 " %s %zu\n", seq, m->dev, m->ino,
		       m->path, m->nsites);
	if (!lines || lines->oom) {
		hd_journal_site_lines(&own, m->sites, m->nsites);
		lines = &own;
	}
	snprintf(tail, sizeof(tail), "F %" PRIu64 "\n", seq);
	/* The lines as they were made (the writer thread's, for a registration): not copied. */
	iov[0] = (struct iovec){head.s, head.len};
	iov[1] = (struct iovec){lines->s, lines->len};
	iov[2] = (struct iovec){tail, strlen(tail)};
	if (!head.oom && !lines->oom) {
		pthread_mutex_lock(&jlock);
		appendv(iov, 3);
		pthread_mutex_unlock(&jlock);
	}
	usdt_sb_free(&head);
	usdt_sb_free(&own);
}

void hd_journal_sites(uint64_t seq, const struct hd_module *m)
{
	hd_journal_sites_as(seq, m, NULL);
}

void hd_journal_reset(uint64_t tag)
{
	pthread_mutex_lock(&jlock);
	if (jfd < 0) {
		pthread_mutex_unlock(&jlock);
		return;
	}
	if (ftruncate(jfd, 0) != 0 || !write_header(tag)) {
		hd_warn("cannot reset the state journal %s: %s", jpath, strerror(errno));
		close(jfd);
		jfd = -1;
		pthread_mutex_unlock(&jlock);
		return;
	}
	/* The registrations being written: their intents hold across the snapshot. */
	for (struct open_intent *o = open_intents; o; o = o->next) {
		struct iovec iov = {o->text, o->len};

		appendv(&iov, 1);
	}
	pthread_mutex_unlock(&jlock);
}

/* --- reading it back --- */

static bool name_ok(const char *s)
{
	return strlen(s) <= USDT_TRACEFS_NAME_MAX;
}

static void jrec_clear(struct hd_journal_rec *r)
{
	free(r->path);
	free(r->sites);
	free(r->pre);
	memset(r, 0, sizeof(*r));
}

static bool push(void **v, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		void *nv = realloc(*v, c * size);

		if (!nv)
			return false;
		*v = nv;
		*cap = c;
	}
	(*n)++;
	return true;
}

/*
 * Reads STATE.journal, if it follows the state file whose body hashes to
 * tag (and this boot), and calls fn for each whole record in order; opens
 * it for appending afterwards, cut to its last whole record (or made anew
 * for tag when it is not that one).
 */
void hd_journal_replay(const char *state_path, uint64_t tag,
		       void (*fn)(const struct hd_journal_rec *r, void *arg), void *arg)
{
	char line[4400], want_hdr[128];
	struct hd_journal_rec r = {0};
	size_t cap_sites = 0, cap_pre = 0, left = 0;
	char kind = 0;
	off_t end = 0, pos = 0;
	bool valid = false;
	FILE *f;

	snprintf(jpath, sizeof(jpath), "%s.journal", state_path);
	snprintf(want_hdr, sizeof(want_hdr), JOURNAL_HEADER " %" PRIu64 " %s\n", tag, hd_boot_id());
	/* Ours already (then appended to, cut to its last whole record), else made anew. */
	jfd = hd_open_own_fd(jpath, O_RDWR | O_APPEND);
	f = jfd >= 0 ? fdopen(fcntl(jfd, F_DUPFD_CLOEXEC, 0), "r") : NULL;
	if (f && fgets(line, sizeof(line), f) && !strcmp(line, want_hdr)) {
		valid = true;
		pos = end = (off_t)strlen(line);
	}
	while (valid && pos < (off_t)JOURNAL_MAX && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char a[80], b[80], p[4200], ref[40];
		unsigned long long s, d, i, o;
		size_t n1, n2;

		pos += (off_t)len;
		if (!len || line[len - 1] != '\n')
			break; /* torn */
		if (sscanf(line, "I %llu %llu %llu %4199s %zu %zu", &s, &d, &i, p, &n1, &n2) == 6 ||
		    sscanf(line, "M %llu %llu %llu %4199s %zu", &s, &d, &i, p, &n1) == 5) {
			jrec_clear(&r);
			cap_sites = cap_pre = 0;
			kind = line[0];
			r.intent = kind == 'I';
			r.seq = s;
			r.dev = d;
			r.ino = i;
			r.path = usdt_tracefs_path_ok(p) ? strdup(p) : NULL;
			left = kind == 'I' ? n1 + n2 : n1;
			r.nwant_expected = kind == 'I' ? n1 : 0;
			r.npre_expected = kind == 'I' ? n2 : 0;
			if (!r.path)
				kind = 0;
			if (s > jseq)
				jseq = s;
			continue;
		}
		if (kind && left &&
		    ((kind == 'I' && r.nsites < r.nwant_expected &&
		      sscanf(line, "w %79s %llx", a, &o) == 2 && (b[0] = '\0', true)) ||
		     (kind == 'M' && sscanf(line, "s %79s %79s %llx %39s", a, b, &o, ref) == 4)) &&
		    name_ok(a) && name_ok(b)) {
			struct hd_site *st;

			if (!push((void **)&r.sites, &r.nsites, &cap_sites, sizeof(*r.sites))) {
				kind = 0;
				continue;
			}
			st = &r.sites[r.nsites - 1];
			memset(st, 0, sizeof(*st));
			strcpy(st->group, a);
			if (line[0] == 's') {
				strcpy(st->event, b);
				st->has_ref = strcmp(ref, "-") != 0;
				st->ref = st->has_ref ? strtoull(ref, NULL, 16) : 0;
			}
			st->off = o;
			left--;
			continue;
		}
		if (kind == 'I' && left && line[0] == 'x' &&
		    sscanf(line, "x %79s %79s %llx", a, b, &o) == 3 && name_ok(a) && name_ok(b) &&
		    r.nsites == r.nwant_expected) {
			struct hd_site *st;

			if (!push((void **)&r.pre, &r.npre, &cap_pre, sizeof(*r.pre))) {
				kind = 0;
				continue;
			}
			st = &r.pre[r.npre - 1];
			memset(st, 0, sizeof(*st));
			strcpy(st->group, a);
			strcpy(st->event, b);
			st->off = o;
			left--;
			continue;
		}
		if (kind && !left && sscanf(line, "%c %llu", &a[0], &s) == 2 &&
		    ((kind == 'I' && a[0] == 'E') || (kind == 'M' && a[0] == 'F')) && s == r.seq) {
			fn(&r, arg);
			end = pos;
		}
		/* A whole record just ended, or a line out of place: wait for the next header. */
		jrec_clear(&r);
		kind = 0;
	}
	jrec_clear(&r);
	if (f)
		fclose(f);
	if (jfd >= 0 && valid && ftruncate(jfd, end) == 0) {
		jsize = end;
		return;
	}
	if (jfd >= 0)
		close(jfd);
	/* Never what stood at the name (a FIFO, somebody's file): a new one replaces it. */
	jfd = hd_create_own(jpath, O_WRONLY | O_APPEND);
	if (jfd < 0) {
		hd_warn("cannot create the state journal %s: %s (going on; a restart after a "
			"crash may leave events behind)",
			jpath, strerror(-jfd));
		jfd = -1;
		return;
	}
	if (ftruncate(jfd, 0) != 0 || !write_header(tag)) {
		close(jfd);
		jfd = -1;
	}
}
