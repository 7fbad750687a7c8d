/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l -p PID` on a process that has only just started: waiting until
 * there is something to list.
 *
 * Theory. A shell's `./prog & dtrace -l -p $!` names a process that the shell
 * has forked but that may not have exec'd ./prog yet, or that has exec'd it
 * while its dynamic loader is still mapping the libraries. Read at that
 * moment, its mappings are the shell's (no probes), or the program's without
 * its libraries'. DTrace stops the process it grabs and follows its exec and
 * its run-time linker; we read files, not the process, so we wait instead,
 * judging from what /proc shows:
 *
 *  - Not exec'd yet: its /proc/PID/auxv is byte for byte its parent's. fork()
 *    copies the parent's auxiliary vector (vfork() shares it), while every
 *    exec writes a new one (new AT_ENTRY, AT_PHDR, and with address space
 *    randomisation new AT_RANDOM and AT_EXECFN stack addresses).
 *  - The loader still at work: some mapped object lists in DT_NEEDED a
 *    library that no mapped file provides, by its DT_SONAME or its file name.
 *    The loader maps objects breadth first and reads an object's DT_NEEDED
 *    only once it has mapped it, so until it has mapped them all some mapped
 *    object needs one that is not mapped; once done, the set is closed (a
 *    dlopen() in progress looks the same, and is waited for the same way).
 *
 * Neither test can tell a process that is about to change from one that
 * never will: a server's worker forked without exec (PostgreSQL's backends
 * are forks of the postmaster) shares its parent's auxv for good, and a
 * library named neither by its SONAME nor by its file name (a symlink to a
 * file without DT_SONAME) never closes the set. So the wait is bounded by
 * the process's age, from its start time in /proc/PID/stat: dtrace waits,
 * polling every millisecond, only while the process is younger than
 * GRAB_WAIT_MS (2 s); an older one is listed at once, as it is. The worst
 * cost: a worker forked less than 2 s ago is listed when it is 2 s old.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "list_grab.h"
#include "list_source.h"

#define GRAB_WAIT_MS 2000
#define POLL_NS 1000000L
#define DELETED_SUFFIX " (deleted)"
#define EMPTY_AUXV (2 * sizeof(unsigned long))

/* What one mapped file provides and needs; read once per file. */
struct dyn_file {
	uint64_t dev, ino;
	char *soname;  /* NULL: none */
	char **needed; /* DT_NEEDED, as written */
	size_t nneeded;
};

/* The mapped files of one look at the process. */
struct present {
	size_t file; /* index in the cache */
	char *base;  /* the mapped path's basename */
};

struct grab {
	int pid;
	struct dyn_file *files; /* cache, by (dev, ino) */
	size_t nfiles;
	struct present *now;
	size_t nnow;
	bool nomem;
};

static int64_t boot_ms(void)
{
	return usdt_clock_ns(CLOCK_BOOTTIME) / 1000000;
}

/*
 * The parent and the start time (ms since boot) from /proc/PID/stat: fields 4
 * and 22, counted after the command name's closing parenthesis (the name may
 * hold spaces and parentheses itself).
 */
static int proc_stat(int pid, int *ppid, int64_t *start_ms)
{
	char path[64], *text, *p, *end;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int field, err;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	err = usdt_list_read_proc(path, &text, NULL);
	if (err)
		return err;
	p = strrchr(text, ')');
	err = -EINVAL;
	for (field = 3; p && field <= 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
		if (field == 4)
			*ppid = (int)strtol(p, NULL, 10);
		if (field == 22) {
			ticks = strtoull(p, &end, 10);
			if (end != p && hz > 0)
				err = 0;
		}
	}
	free(text);
	if (!err)
		*start_ms = (int64_t)(ticks * 1000 / (unsigned long long)hz);
	return err;
}

/*
 * True when pid has an auxiliary vector of its own: it has exec'd since its
 * fork, and its exec is complete. In the middle of an exec the new image's
 * vector is still empty (AT_NULL alone, one pair of zero longs: EMPTY_AUXV
 * bytes) while the kernel maps the program and its interpreter; after a fork
 * and before an exec it is the parent's.
 */
static bool execd(int pid, int ppid)
{
	char path[64], *mine = NULL, *theirs = NULL;
	size_t n1 = 0, n2 = 0;
	bool own;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	if (usdt_list_read_proc(path, &mine, &n1))
		return true; /* unreadable: its maps will say why */
	own = n1 > EMPTY_AUXV;
	snprintf(path, sizeof(path), "/proc/%d/auxv", ppid);
	if (own && ppid > 0 && !usdt_list_read_proc(path, &theirs, &n2))
		own = !(n1 == n2 && !memcmp(mine, theirs, n1));
	free(mine);
	free(theirs);
	return own;
}

static int add_needed(struct dyn_file *f, const char *name)
{
	char **nv = realloc(f->needed, (f->nneeded + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	f->needed = nv;
	f->needed[f->nneeded] = strdup(name);
	if (!f->needed[f->nneeded])
		return -ENOMEM;
	f->nneeded++;
	return 0;
}

/* DT_NEEDED and DT_SONAME of an ELF file; nothing for any other file. */
static int read_dynamic(int fd, struct dyn_file *f)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int err = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	while (!err && elf_kind(elf) == ELF_K_ELF && (scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; data && i < n && !err; i++) {
			const char *s;
			GElf_Dyn d;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			if (!s)
				continue;
			if (d.d_tag == DT_NEEDED)
				err = add_needed(f, s);
			else if (!f->soname && !(f->soname = strdup(s)))
				err = -ENOMEM;
		}
	}
	elf_end(elf);
	return err;
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The file's entry in the cache, read on first sight. */
static int cached_file(struct grab *g, const struct usdt_mapping *m, size_t *idx)
{
	struct dyn_file *nv, *f;
	size_t i;
	int fd, err = 0;

	for (i = 0; i < g->nfiles; i++)
		if (g->files[i].dev == m->dev && g->files[i].ino == m->ino) {
			*idx = i;
			return 0;
		}
	nv = realloc(g->files, (g->nfiles + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	g->files = nv;
	f = &g->files[g->nfiles];
	memset(f, 0, sizeof(*f));
	f->dev = m->dev;
	f->ino = m->ino;
	*idx = g->nfiles++;
	fd = usdt_list_open_mapping(g->pid, m);
	if (fd >= 0) {
		err = read_dynamic(fd, f);
		close(fd);
	}
	return err;
}

static int note_mapping(const struct usdt_mapping *m, void *arg)
{
	size_t i, idx, len, sl = strlen(DELETED_SUFFIX);
	struct grab *g = arg;
	struct present *nv;
	const char *base;
	int err;

	err = cached_file(g, m, &idx);
	if (err)
		return err;
	for (i = 0; i < g->nnow; i++)
		if (g->now[i].file == idx)
			return 0;
	nv = realloc(g->now, (g->nnow + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	g->now = nv;
	g->now[g->nnow].file = idx;
	/* A deleted file's " (deleted)" is in its path, not in the loader's names. */
	base = base_of(m->path);
	len = strlen(base);
	if (len > sl && !strcmp(base + len - sl, DELETED_SUFFIX))
		len -= sl;
	g->now[g->nnow].base = strndup(base, len);
	if (!g->now[g->nnow].base)
		return -ENOMEM;
	g->nnow++;
	return 0;
}

static bool provided(const struct grab *g, const char *needed)
{
	const char *want = base_of(needed);
	size_t i;

	for (i = 0; i < g->nnow; i++) {
		const struct dyn_file *f = &g->files[g->now[i].file];

		if (!strcmp(g->now[i].base, want) || (f->soname && !strcmp(f->soname, want)))
			return true;
	}
	return false;
}

static void forget_present(struct grab *g)
{
	size_t i;

	for (i = 0; i < g->nnow; i++)
		free(g->now[i].base);
	free(g->now);
	g->now = NULL;
	g->nnow = 0;
}

/* True when every DT_NEEDED of every mapped object is mapped (or on any error). */
static bool loader_done(struct grab *g)
{
	bool done = true;
	size_t i, k;
	int err;

	err = usdt_list_proc_maps(g->pid, note_mapping, g);
	if (err) {
		g->nomem = err == -ENOMEM;
		forget_present(g);
		return true;
	}
	for (i = 0; i < g->nnow && done; i++) {
		const struct dyn_file *f = &g->files[g->now[i].file];

		for (k = 0; k < f->nneeded && done; k++)
			done = provided(g, f->needed[k]);
	}
	forget_present(g);
	return done;
}

int usdt_list_grab_wait(int pid)
{
	struct timespec nap = {0, POLL_NS};
	struct grab g = {.pid = pid};
	int64_t born, deadline;
	int ppid = 0;
	size_t i, k;

	if (proc_stat(pid, &ppid, &born))
		return 0; /* reading its maps will say why */
	deadline = born + GRAB_WAIT_MS;
	while (boot_ms() < deadline && !g.nomem) {
		if (execd(pid, ppid) && loader_done(&g))
			break;
		nanosleep(&nap, NULL);
	}
	for (i = 0; i < g.nfiles; i++) {
		for (k = 0; k < g.files[i].nneeded; k++)
			free(g.files[i].needed[k]);
		free(g.files[i].needed);
		free(g.files[i].soname);
	}
	free(g.files);
	return g.nomem ? -ENOMEM : 0;
}
