// SPDX-License-Identifier: MIT
/*
 * The per-uid quotas and rates (issue 21): what one user's registrations
 * may hold and how fast it may ask. Counted per uid: the request rate and
 * the new-module rate (token buckets, a burst of twice the rate), the
 * modules and probe sites registered (and being written: a registration's
 * probes count from its start, registry.c), the processes watched and the
 * descriptors held. root is counted, never refused.
 */
#include <errno.h>
#include <stdlib.h>

#include "helperd.h"

struct uidacct {
	struct uidacct *next;
	uid_t uid;
	double tokens, new_tokens;
	uint64_t last_ms;
	unsigned nmodules, nprobes;
	unsigned nprocs, nfds; /* processes watched, descriptors held, for its registrations */
	uint64_t cap_warned_ms;
};

static struct uidacct *uids;

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

/*
 * The caps on what one uid's registrations hold (issue 21, item 3): the
 * processes watched (a pidfd and an epoll item each) and the descriptors
 * (those pidfds, the pidfds of REGISTERs waiting for a parse, a parse's
 * file and worker socket). Connections have their own caps (conn.c). root
 * is counted, never refused.
 */
static bool over_cap(const struct uidacct *a, unsigned fds, unsigned procs)
{
	return a->uid != 0 && (a->nfds + fds > hd_cfg.max_fds_per_uid ||
			       a->nprocs + procs > hd_cfg.max_procs_per_uid);
}

bool hd_uid_room(uid_t uid, unsigned fds, unsigned procs)
{
	struct uidacct *a = uid_acct(uid);

	return a && !over_cap(a, fds, procs);
}

int hd_uid_hold(uid_t uid, unsigned fds, unsigned procs)
{
	struct uidacct *a = uid_acct(uid);

	if (!a)
		return -ENOMEM;
	if (over_cap(a, fds, procs)) {
		uint64_t now = hd_now_ms();

		/* Once a minute per uid: a fork bomb must not flood the log. */
		if (!a->cap_warned_ms || now - a->cap_warned_ms >= 60000) {
			hd_warn("uid %u: at its cap (%u processes, %u descriptors held; caps "
				"--max-procs-per-uid %u, --max-fds-per-uid %u): further "
				"registrations refused (EDQUOT)",
				(unsigned)uid, a->nprocs, a->nfds, hd_cfg.max_procs_per_uid,
				hd_cfg.max_fds_per_uid);
			a->cap_warned_ms = now;
		}
		return -EDQUOT;
	}
	a->nfds += fds;
	a->nprocs += procs;
	return 0;
}

void hd_uid_release(uid_t uid, unsigned fds, unsigned procs)
{
	struct uidacct *a = uid_acct(uid);

	if (!a)
		return;
	a->nfds -= fds < a->nfds ? fds : a->nfds;
	a->nprocs -= procs < a->nprocs ? procs : a->nprocs;
}

void hd_quota_add(uid_t uid, int modules, long probes)
{
	struct uidacct *a = uid_acct(uid);

	if (!a)
		return;
	if (modules < 0)
		a->nmodules -= a->nmodules ? 1 : 0;
	else
		a->nmodules += (unsigned)modules;
	if (probes < 0)
		a->nprobes -= (unsigned long)-probes < a->nprobes ? (unsigned)-probes : a->nprobes;
	else
		a->nprobes += (unsigned)probes;
}

bool hd_quota_probes_fit(uid_t uid, unsigned n)
{
	struct uidacct *a = uid_acct(uid);

	return uid == 0 || (a && a->nprobes + n <= hd_cfg.max_probes_per_uid);
}

/*
 * Whether uid may have one more file parsed now: the module quota (counting
 * its `parses` under way, which the parse queue knows), the new-module rate,
 * and the cheap section check.
 */
int hd_mod_admit(const struct hd_mapping *mp, int fd, uid_t uid, unsigned parses)
{
	struct uidacct *a = uid_acct(uid);

	if (!a)
		return -ENOMEM;
	if (uid != 0 && a->nmodules + parses >= hd_cfg.max_modules_per_uid) {
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
