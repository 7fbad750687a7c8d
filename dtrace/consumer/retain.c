/* SPDX-License-Identifier: MIT */
/*
 * Retained enablings: files that appear after the start.
 *
 * Theory. DTrace keeps a consumer's probe descriptions and matches them
 * again whenever a process registers new probes (illumos
 * dtrace_enabling_matchall), so `dtrace -Z -n 'php*:::function-entry'` then
 * `php x.php` traces php. A file known at the start is traced in every
 * process that maps it, now or later (uprobes are on the file), but a new
 * file (a new binary, a dlopen()ed library, a runtime provider's object)
 * needs new uprobes. So the registry is watched, and every batch of new
 * files whose probes the program matches is handed to the engine
 * (dt_retain_poll_probes(): dtrace/engine/engine.c attaches their sites to
 * the programs already loaded, in milliseconds).
 *
 * The registry is the helper daemon's: every POLL_MS, a stat of its state
 * file and journal (rewritten, appended to, whenever a file's events are
 * created or removed, also for a file its board does not publish: a
 * deleted one, a runtime provider's memfd), and when they moved, one pread
 * of its board (core/protocol.h: the files whose events exist, beside its
 * socket). A change of the state is a registration: the daemon is then
 * listed (one LIST, dtrace/list: its processes, their files' probes), and
 * again after BURST_MS, twice that, and so on for BURST_END_MS, until the
 * new file shows (the journal is written before the registration ends).
 * A file on the board that no listing showed (it lingers, no process maps
 * it, and a new process of it registers nothing: it finds the board) is
 * listed every LIST_MS until a process maps it; without a board or a state
 * file (an older daemon, --no-board, --state elsewhere) the daemon is
 * listed every LIST_MS. The -p/-c processes are also read directly (their
 * /proc/PID/maps, when it changes: a dlopen()) so that they need no
 * daemon.
 *
 * Watching so as to lose no firing. Polling finds a new file after its
 * program went on: the program's first firings would be lost (DTrace
 * enables a process's probes before it goes on). So as root, when the daemon accepts it, a WATCH
 * (core/protocol.h) is kept open: the daemon then holds each registration
 * of a new file (its REGISTER's answer, which drti waits for) and sends a
 * NOTICE naming the file. That file alone is read at once, through its
 * registrant's mapping of it (its notes, once: no round trip to the daemon,
 * none of the process's other files), else the daemon is listed; the engine
 * attaches the batch, and READY is sent only when the batch that holds the
 * file is attached (right after its links: the caller calls
 * dt_retain_started), at once for a
 * file no clause matches or a listing showed before (the daemon holds a
 * known file's registration too while we watch: a program restarted, its
 * file lingering, is traced like a new one). The hold is bounded twice: by
 * the daemon (USDT_HOLD_MAX_MS) and by drti's own timeout (USDTKIT_HELPER_TIMEOUT_MS,
 * 100 ms by default: a program is held only as long as its environment
 * allows). Polling goes on beside it (files the daemon does not announce:
 * a lingering file mapped again, the -p/-c processes' maps); a daemon that
 * refuses WATCH (an older one, or not root) leaves polling alone. A watch
 * that ends (the daemon restarted) is asked for again every LIST_MS; when
 * tracing ends it is closed, so that nobody is held for a batch that
 * will not be attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "d.h"
#include "maps.h"
#include "protocol.h"

#define POLL_MS 10
#define LIST_MS 1000
#define MAPS_MS 50
#define BURST_MS 20
#define BURST_END_MS 500

struct dt_retain {
	struct dt_program *prog;
	char board[4200];
	char socket[4200];
	char state[2][4400]; /* the daemon's state file and its journal */
	struct stat state_st[2];
	long long burst_until, burst_gap;
	unsigned char *prev; /* the board's bytes at the last read */
	size_t nprev;
	bool pending; /* a board file no listing has shown */
	long long last_poll, last_list, last_maps;
	bool last_poll_done; /* the state's first stat is no change */
	int *pids;	     /* -p/-c: read directly */
	size_t npids;
	uint64_t *maps_hash;
	unsigned batch;
	/* watching (see the theory): -1 when not */
	int watch_fd;
	bool watched;	      /* the daemon took a WATCH once: ask again if it restarts */
	long long last_watch; /* the last try */
	struct covered *cov;  /* which batch traces which file */
	size_t ncov;
	struct held *held; /* notices answered once their batch started */
	size_t nheld;
	bool *started; /* [batch]: attached (or will never be) */
	size_t nstarted;
};

#define WATCH_SEQ 0x44545743u /* "CWTD": our WATCH's, echoed in its NOTICEs */
#define WATCH_REPLY_MS 1000
#define WATCH_RETRY_MS 50 /* while tracing: the loop must not wait long */

struct covered {
	uint64_t dev, ino; /* makedev(), as the listing says */
	unsigned batch;
};

struct held {
	uint32_t notice;
	int pid;	   /* the registrant, held */
	long long t_ns;	   /* when it came */
	uint64_t dev, ino; /* makedev() */
	unsigned batch;	   /* 0: not known yet (a listing comes first) */
};

/*
 * A WATCH on the daemon's socket: its connection, or -1 (no daemon, an
 * older one, not root, a refusal): then polling alone, as before.
 */
static int watch_open(const char *path, int reply_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct usdt_msg_watch w;
	struct usdt_msg_reply r;
	struct pollfd p;
	ssize_t n;
	int fd;

	if (geteuid() != 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&w, 0, sizeof(w));
	usdt_hdr_fill(&w.hdr, USDT_MSG_WATCH, sizeof(w), WATCH_SEQ);
	p.fd = fd;
	p.events = POLLIN;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, &w, sizeof(w), MSG_NOSIGNAL) != sizeof(w) || poll(&p, 1, reply_ms) != 1 ||
	    (n = recv(fd, &r, sizeof(r), MSG_TRUNC)) != sizeof(r) ||
	    usdt_answer_check(&r, (unsigned long)n, WATCH_SEQ) != USDT_ANSWER_REPLY || r.status) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

int dt_retain_fd(const struct dt_retain *rt)
{
	return rt ? rt->watch_fd : -1;
}

static void watch_close(struct dt_retain *rt)
{
	if (rt->watch_fd >= 0)
		close(rt->watch_fd);
	rt->watch_fd = -1;
	rt->nheld = 0; /* the daemon lets them go when the connection goes */
}

void dt_retain_unwatch(struct dt_retain *rt)
{
	if (rt) {
		watch_close(rt);
		rt->watched = false; /* for good */
	}
}

/*
 * The answer to a NOTICE: the program it held goes on. USDTKIT_ENGINE_TIMES
 * says how long it was held here (bench/consumer/hold.sh).
 */
static void send_ready(struct dt_retain *rt, uint32_t notice, long long t_ns)
{
	struct usdt_msg_ready r;

	if (getenv("USDTKIT_ENGINE_TIMES"))
		fprintf(stderr, "dtrace: notice %u answered in %.2f ms\n", notice,
			(double)(usdt_clock_ns(CLOCK_MONOTONIC) - t_ns) / 1e6);
	memset(&r, 0, sizeof(r));
	usdt_hdr_fill(&r.hdr, USDT_MSG_READY, sizeof(r), WATCH_SEQ);
	r.notice = notice;
	/* a full socket (the daemon not reading): it drops us, we poll */
	if (rt->watch_fd >= 0 &&
	    send(rt->watch_fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(r))
		watch_close(rt);
}

static bool batch_started(const struct dt_retain *rt, unsigned b)
{
	return b < rt->nstarted && rt->started[b];
}

static unsigned covering_batch(const struct dt_retain *rt, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < rt->ncov; i++)
		if (rt->cov[i].dev == dev && rt->cov[i].ino == ino)
			return rt->cov[i].batch;
	return 0;
}

/*
 * The held notices that can be answered: their batch started; or, with
 * `listed` (a listing was just made), those whose file no batch traces.
 */
static void answer_held(struct dt_retain *rt, bool listed)
{
	size_t i = 0;

	while (i < rt->nheld) {
		struct held *h = &rt->held[i];

		if (!h->batch)
			h->batch = covering_batch(rt, h->dev, h->ino);
		if ((h->batch && batch_started(rt, h->batch)) || (!h->batch && listed)) {
			send_ready(rt, h->notice, h->t_ns);
			if (rt->watch_fd < 0)
				return;
			rt->held[i] = rt->held[--rt->nheld];
			continue;
		}
		i++;
	}
}

void dt_retain_started(struct dt_retain *rt, unsigned batch)
{
	if (!rt || !batch)
		return;
	while (rt->nstarted <= batch) {
		bool f = false;

		DT_PUSH(rt->started, rt->nstarted, f);
	}
	rt->started[batch] = true;
	answer_held(rt, false);
}

/*
 * The NOTICEs that came; true when one names a file no batch traces yet (a
 * listing is due now). Anything not a NOTICE of ours ends the watch.
 */
static bool read_notices(struct dt_retain *rt)
{
	bool unknown = false;

	while (rt->watch_fd >= 0) {
		struct usdt_msg_notice no;
		struct held h;
		ssize_t n = recv(rt->watch_fd, &no, sizeof(no), MSG_TRUNC | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0 || (size_t)n > sizeof(no) ||
		    usdt_answer_check(&no, (unsigned long)n, WATCH_SEQ) != USDT_ANSWER_NOTICE) {
			watch_close(rt); /* the daemon stopped, or is not one to trust */
			break;
		}
		h.notice = no.notice;
		h.pid = no.pid;
		h.t_ns = (long long)usdt_clock_ns(CLOCK_MONOTONIC);
		h.dev = makedev((unsigned)(no.dev >> 32), (unsigned)no.dev);
		h.ino = no.ino;
		h.batch = covering_batch(rt, h.dev, h.ino);
		/* a file listed before (a restart): traced by its inode, or matched nothing */
		if (!h.batch && dt_match_known(h.dev, h.ino)) {
			send_ready(rt, h.notice, h.t_ns);
			continue;
		}
		unknown |= !h.batch;
		DT_PUSH(rt->held, rt->nheld, h);
	}
	answer_held(rt, false);
	return unknown;
}

struct dt_retain *dt_retain_start(struct dt_program *prog)
{
	const struct dt_consumer_opts *o = prog->o;
	struct dt_retain *rt;
	const char *sock = getenv(USDT_HELPER_SOCKET_ENV);
	bool usdt = false;
	size_t i, k;

	for (i = 0; i < prog->nclauses; i++)
		for (k = 0; k < prog->clauses[i]->ndescs; k++)
			usdt |= dt_match_is_usdt(&prog->clauses[i]->descs[k]);
	if (!usdt)
		return NULL;
	rt = dt_xmalloc(sizeof(*rt));
	memset(rt, 0, sizeof(*rt));
	rt->prog = prog;
	if (!sock || !*sock)
		sock = USDT_HELPER_SOCKET_PATH;
	snprintf(rt->socket, sizeof(rt->socket), "%s", sock);
	snprintf(rt->board, sizeof(rt->board), "%s%s", sock, USDT_BOARD_SUFFIX);
	/* kernel-helper/README.md: the state file's default place */
	if (!strcmp(sock, USDT_HELPER_SOCKET_PATH))
		snprintf(rt->state[0], sizeof(rt->state[0]), "/run/usdtkit/helperd.state");
	else
		snprintf(rt->state[0], sizeof(rt->state[0]), "%s.state", sock);
	snprintf(rt->state[1], sizeof(rt->state[1]), "%.4300s.journal", rt->state[0]);
	if (o->cmd)
		DT_PUSH(rt->pids, rt->npids, o->target);
	for (i = 0; i < o->npids; i++)
		DT_PUSH(rt->pids, rt->npids, o->pids[i]);
	rt->maps_hash = dt_xmalloc((rt->npids + 1) * sizeof(uint64_t));
	memset(rt->maps_hash, 0, (rt->npids + 1) * sizeof(uint64_t));
	rt->watch_fd = watch_open(rt->socket, WATCH_REPLY_MS);
	rt->watched = rt->watch_fd >= 0;
	return rt;
}

/*
 * The board, whole, or NULL (none, or not one to believe: the same rules as
 * drti's, a regular file of root's that nobody else may write).
 */
static unsigned char *read_board(const struct dt_retain *rt, size_t *n)
{
	struct usdt_board_hdr h;
	unsigned char *b;
	struct stat st;
	size_t want;
	int fd = open(rt->board, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
	    pread(fd, &h, sizeof(h), 0) != sizeof(h) || h.magic != USDT_BOARD_MAGIC ||
	    h.version != USDT_BOARD_VERSION || h.hdr_size != sizeof(h) ||
	    h.slot_size != sizeof(struct usdt_board_slot) || !h.nslots ||
	    h.nslots > USDT_BOARD_SLOTS_MAX) {
		close(fd);
		return NULL;
	}
	want = sizeof(h) + ((size_t)h.nslots + USDT_BOARD_WINDOW - 1) * h.slot_size;
	if ((uint64_t)st.st_size < want) {
		close(fd);
		return NULL;
	}
	b = dt_xmalloc(want);
	if (pread(fd, b, want, 0) != (ssize_t)want) {
		dt_free(b);
		close(fd);
		return NULL;
	}
	close(fd);
	*n = want;
	return b;
}

/* A valid slot whose file no listing has shown. */
static bool board_has_new(const unsigned char *b, size_t n)
{
	const struct usdt_board_slot *s = (const void *)(b + sizeof(struct usdt_board_hdr));
	size_t i, ns = (n - sizeof(struct usdt_board_hdr)) / sizeof(*s);

	for (i = 0; i < ns; i++) {
		struct usdt_board_slot x;

		memcpy(&x, &s[i], sizeof(x));
		if (!x.check || x.check != usdt_board_check(x.dev, x.ino, x.path_hash))
			continue;
		if (!dt_match_known(makedev((unsigned)(x.dev >> 32), (unsigned)x.dev), x.ino))
			return true;
	}
	return false;
}

/*
 * What files pid maps, as one number: anonymous memory comes and goes all
 * the time (a JIT, malloc's arenas), so only file-backed lines count.
 */
static uint64_t maps_hash(int pid)
{
	char path[64], line[4600];
	uint64_t h = 1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct usdt_mapping m;

		if (usdt_maps_parse_line(line, &m))
			h += (m.dev * 0x9e3779b97f4a7c15ull ^ m.ino) * 0xff51afd7ed558ccdull;
	}
	fclose(f);
	return h ? h : 1;
}

/* The state file or the journal changed (or came, or went); *seen: one is there. */
static bool state_changed(struct dt_retain *rt, bool *seen)
{
	bool changed = false;
	int i;

	*seen = false;
	for (i = 0; i < 2; i++) {
		struct stat st;

		memset(&st, 0, sizeof(st));
		if (!stat(rt->state[i], &st))
			*seen = true;
		if (st.st_ino != rt->state_st[i].st_ino || st.st_size != rt->state_st[i].st_size ||
		    st.st_mtim.tv_sec != rt->state_st[i].st_mtim.tv_sec ||
		    st.st_mtim.tv_nsec != rt->state_st[i].st_mtim.tv_nsec)
			changed = true;
		rt->state_st[i] = st;
	}
	return changed;
}

/*
 * Diagnostics kept from the user, in memory: what a listing or a
 * translation of later files says is ours to reduce to one line, or drop.
 * After quiet_close(), q->text (NULL or the text) is the caller's to free.
 */
struct quiet {
	char *text;
	size_t len;
	FILE *sink;
	struct usdt_diag d;
};

static bool quiet_open(struct quiet *q)
{
	q->text = NULL;
	q->len = 0;
	q->sink = open_memstream(&q->text, &q->len);
	if (!q->sink)
		return false;
	usdt_diag_init(&q->d, q->sink, "dtrace");
	return true;
}

static void quiet_close(struct quiet *q)
{
	fclose(q->sink);
}

/* A listing (its complaints kept from the user: the daemon may be restarting). */
static long list_new(struct dt_retain *rt, struct dt_probes *ps, const int *pids, size_t npids)
{
	struct quiet q;
	long n;

	if (!quiet_open(&q))
		return -1;
	n = dt_match_new(rt->prog, ps, pids, npids, &q.d);
	quiet_close(&q);
	free(q.text);
	return n;
}

/*
 * The held registrants' files that no batch traces: those files alone, each
 * through its registrant (one mapping opened, its notes read once: neither
 * the daemon's LIST nor the process's other files). -1: one could not be
 * read so (the caller lists the daemon).
 */
static long list_noticed(struct dt_retain *rt, struct dt_probes *ps)
{
	struct dt_noticed *f = dt_xmalloc((rt->nheld + 1) * sizeof(*f));
	size_t i, n = 0;
	struct quiet q;
	long got = 0;

	for (i = 0; i < rt->nheld && got == 0; i++) {
		const struct held *h = &rt->held[i];

		if (h->batch)
			continue;
		if (h->pid <= 0)
			got = -1;
		f[n].pid = h->pid;
		f[n].dev = h->dev;
		f[n++].ino = h->ino;
	}
	if (!got && n) {
		if (quiet_open(&q)) {
			got = dt_match_files(rt->prog, ps, f, n, &q.d);
			quiet_close(&q);
			free(q.text);
		} else {
			got = -1;
		}
	}
	dt_free(f);
	return got;
}

int dt_retain_poll_probes(struct dt_retain *rt, struct dt_probes *ps)
{
	long long now = usdt_now_ms();
	bool list = false, maps = false, have_state, state, due, noticed;
	unsigned char *b;
	size_t n = 0, i;
	long got;

	if (!rt)
		return 0;
	/* the daemon restarted (the watch ended): watched again once it serves */
	if (rt->watch_fd < 0 && rt->watched && now - rt->last_watch >= LIST_MS) {
		rt->last_watch = now;
		rt->watch_fd = watch_open(rt->socket, WATCH_RETRY_MS);
	}
	/* a NOTICE is answered at once: a program waits for it */
	noticed = read_notices(rt);
	if (!noticed && now - rt->last_poll < POLL_MS)
		return 0;
	rt->last_poll = now;
	/*
	 * Every registration writes the journal before its events exist, so
	 * the board (128 KiB) is read only when the state moved, at the
	 * first poll, when a lingering file is due, or when there is no
	 * state file to watch.
	 */
	state = state_changed(rt, &have_state);
	due = now - rt->last_list >= LIST_MS;
	b = NULL;
	if (!rt->last_poll_done || state || !have_state || (rt->pending && due))
		b = read_board(rt, &n);
	if (b) {
		if (n != rt->nprev || memcmp(b, rt->prev, n)) {
			rt->pending = board_has_new(b, n);
			/* watching: its NOTICE comes (else the burst or LIST_MS lists it) */
			list = rt->pending && rt->watch_fd < 0;
			dt_free(rt->prev);
			rt->prev = b;
			rt->nprev = n;
		} else {
			dt_free(b);
		}
	}
	/*
	 * A registration: listed now, and in a burst after it; while watching,
	 * its NOTICE is what a new file's registrant waits for, so the burst
	 * starts BURST_MS later (a LIST now waits for a daemon busy with that
	 * registration, and held the NOTICE unread behind it).
	 */
	if (state && rt->last_poll_done) {
		rt->burst_until = now + BURST_END_MS, rt->burst_gap = BURST_MS;
		if (rt->watch_fd >= 0)
			rt->last_list = now;
		else
			list = true;
	}
	if (now < rt->burst_until && now - rt->last_list >= rt->burst_gap) {
		list = true;
		rt->burst_gap *= 2;
	}
	if (due && (rt->pending || ((!rt->prev || !have_state) && !access(rt->socket, F_OK))))
		list = true;
	rt->last_poll_done = true;
	list |= noticed;
	if (rt->npids && now - rt->last_maps >= MAPS_MS) {
		rt->last_maps = now;
		for (i = 0; i < rt->npids; i++) {
			uint64_t h = maps_hash(rt->pids[i]);

			if (h && h != rt->maps_hash[i])
				maps = true, rt->maps_hash[i] = h;
		}
	}
	if (!list && !maps)
		return 0;
	got = 0;
	if (list) {
		rt->last_list = now;
		/*
		 * A NOTICE's file is read through its registrant, alone: the
		 * daemon's LIST (a round trip to a daemon busy with
		 * registrations) and the process's other files were most of a
		 * hold. The daemon is listed when that fails; when it matched
		 * nothing, the notices are answered now and the burst's
		 * listings come at the next polls.
		 */
		got = noticed ? list_noticed(rt, ps) : -1;
		if (got < 0) {
			dt_free(ps->matched);
			memset(ps, 0, sizeof(*ps));
			got = list_new(rt, ps, NULL, 0);
		}
		if (rt->prev)
			rt->pending = board_has_new(rt->prev, rt->nprev);
	}
	if (maps && got <= 0) {
		dt_free(ps->matched);
		memset(ps, 0, sizeof(*ps));
		got = list_new(rt, ps, rt->pids, rt->npids);
	}
	if (maps && got > 0) /* listed from the daemon: read them again next time */
		memset(rt->maps_hash, 0, rt->npids * sizeof(uint64_t));
	if (got <= 0) {
		answer_held(rt, list); /* their files matched nothing */
		return 0;
	}
	rt->burst_until = 0;
	rt->batch++;
	for (i = 0; i < ps->n; i++) {
		struct covered c = {ps->v[i].dev, ps->v[i].ino, rt->batch};

		if (ps->v[i].kind == P_USDT && !covering_batch(rt, c.dev, c.ino))
			DT_PUSH(rt->cov, rt->ncov, c);
	}
	answer_held(rt, true);
	return (int)rt->batch;
}
