// SPDX-License-Identifier: MIT
/*
 * Reading /proc on the daemon's own initiative: the start-up and --all
 * scans and the exec sweep with the rest of the timer's work (hd_tick);
 * LIST's reading is list.c's.
 *
 * The scans register the processes that map a -G module and whose drti
 * talks to our socket, and with --all those mapping any file with stapsdt
 * notes (--only narrowing it); the maps line's (dev, ino) is checked first,
 * against the registry and a cache of files known to carry nothing, so per
 * (dev, ino) a file is checked once. The start-up scan parses in line; the
 * --rescan's new files go to the parse queue (queue.c) like a REGISTER's.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helperd.h"

/* --- scanning /proc (start-up, --all) --- */

struct scan_ctx {
	bool ours;  /* the process's drti talks to our socket */
	bool async; /* new files through the parse queue (the --all rescan) */
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
	if (!mod && hd_neg_has(m->dev, m->ino))
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
	ret = c->uid != (uid_t)-1 ? hd_add_user(pid, c->uid, c->pidfd, m, fd, dev, ino, c->async)
				  : -ESRCH;
	if (ret == 0)
		c->found++;
	else if (ret == -ENODATA && !hd_mod_find(dev, ino))
		hd_neg_add(m->dev, m->ino); /* (not a refusal that may change: rate, tracefs) */
	close(fd);
	return 0;
}

unsigned hd_scan_all(bool async)
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
		struct scan_ctx c = {.pidfd = -1, .async = async};
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
		hd_each_mapping((pid_t)pid, NULL, scan_mapping, &c);
		close(c.pidfd);
		found += c.found;
	}
	closedir(d);
	return found;
}

void hd_rescan(void)
{
	unsigned n;

	n = hd_scan_all(true);

	if (n)
		hd_dbg("rescan: %u new registrations", n);
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
	if (hd_state_due(hd_parses_running() > 0 || hd_writer_queued() > 0))
		hd_registry_flush();
	/* Lingered long enough, or draining and due for another try: one /proc pass for all. */
	for (size_t b = 0; b < HD_MOD_BUCKETS; b++)
		for (struct hd_module *m = hd_modules[b]; m; m = m->hnext)
			if (!m->retiring && !m->removing && !m->reviving &&
			    ((m->idle && now >= m->idle_until) ||
			     (m->draining && m->nusers == 0 && now >= m->retry_at)))
				hd_retire(m, 0);
}
