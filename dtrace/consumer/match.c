/* SPDX-License-Identifier: MIT */
/*
 * Probe descriptions to the probes the engine attaches, with DTrace's
 * matching.
 *
 * Theory. A description is provider:module:function:name, each field a
 * glob, an empty field matching anything, fewer fields aligned on the name.
 * dtrace:::BEGIN/END, profile:::tick-N/profile-N, syscall::F:entry|return
 * and proc:::exec-success|exit|create are BEGIN/END, timers (a CPU clock),
 * profile timers and tracepoints (each probe's `attach` names its kind and
 * place: "usdt:/path:prov:name", "interval:s:1", "tracepoint:cat:name"). Everything else is USDT,
 * matched against the probes the listing sees (dtrace/list/: the -p/-c processes read directly, and
 * every process the helper daemon has registered) exactly as `dtrace -l -n` matches: the provider
 * field sees the name with the pid
 * (`php*` matches php1234 and phpoci1234), the module the file's basename,
 * the function the site's, the name with `__` written `-`.
 *
 * USDT probes are attached by file (uprobes on an inode fire in every
 * process that maps it, now or later). So one probe per (file, provider,
 * name), and per clause the processes it is for: when the
 * provider field would match the provider with any pid (`php*`, or empty),
 * every process (`any_pid`: this is also how processes started later from
 * a known file are traced), else only the pids that matched
 * (`php1234`, `prov$target`), tested in the program.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "d.h"
#include "list.h"
#include "maps.h"

#define TRACEFS "/sys/kernel/tracing/events"

struct matcher {
	struct dt_program *prog;
	struct dt_probes *probes;
	struct usdt_diag *diag;
	struct usdt_list_probe *usdt; /* copied from the listing */
	size_t nusdt;
	bool have_usdt;
	bool retained; /* matching new files' probes: USDT descriptions only, silently */
	size_t desc;   /* the description being matched, its index in its clause's list */
};

/*
 * The files whose probes are attached (or that matched nothing): every other file a listing shows
 * is new (retain.c).
 */
static unsigned next_id; /* the next probe ID, for the probes of new files */
static void free_usdt(struct matcher *m);
static struct dt_file_id *known;
static size_t nknown;

static bool is_known(uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < nknown; i++)
		if (known[i].dev == dev && known[i].ino == ino)
			return true;
	return false;
}

static void add_known(uint64_t dev, uint64_t ino)
{
	struct dt_file_id f = {dev, ino};

	if (!is_known(dev, ino))
		DT_PUSH(known, nknown, f);
}

bool dt_match_known(uint64_t dev, uint64_t ino)
{
	return is_known(dev, ino);
}

static bool fmatch(const char *pat, const char *v)
{
	return !*pat || !fnmatch(pat, v, 0);
}

static struct dt_probe *find_or_add(struct dt_probes *ps, const char *attach, bool *added)
{
	struct dt_probe p;
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].attach, attach)) {
			*added = false;
			return &ps->v[i];
		}
	memset(&p, 0, sizeof(p));
	p.attach = dt_xstrdup(attach);
	p.id = ++ps->next_id;
	DT_PUSH(ps->v, ps->n, p);
	*added = true;
	return &ps->v[ps->n - 1];
}

/*
 * The clause on the probe, once for each of its descriptions that matches
 * it: DTrace's enablings, so `BEGIN, BEGIN { }` runs twice a firing.
 */
static struct dt_pclause *add_clause(const struct matcher *m, struct dt_probe *p, size_t clause)
{
	struct dt_pclause pc;
	size_t i;

	for (i = 0; i < p->npc; i++)
		if (p->pc[i].clause == clause && p->pc[i].desc == m->desc)
			return &p->pc[i];
	memset(&pc, 0, sizeof(pc));
	pc.clause = clause;
	pc.desc = m->desc;
	DT_PUSH(p->pc, p->npc, pc);
	return &p->pc[p->npc - 1];
}

static void set_names(struct dt_probe *p, const char *prov, const char *mod, const char *func,
		      const char *name)
{
	p->prov = dt_xstrdup(prov);
	p->mod = dt_xstrdup(mod);
	p->func = dt_xstrdup(func);
	p->name = dt_xstrdup(name);
}

/* tick-10ms, tick-1sec, tick-5 (Hz), profile-97: the timer's probe, or NULL. */
/*
 * DTrace's profile provider has no interval under 200 µs (5000 Hz): a
 * shorter tick-N or profile-N matches no probe, as there.
 */
static bool timer_long_enough(unsigned long n, const char *unit)
{
	if (!*unit || !strcmp(unit, "hz"))
		return n <= 5000;
	if (!strcmp(unit, "ns") || !strcmp(unit, "nsec"))
		return n >= 200000;
	if (!strcmp(unit, "us") || !strcmp(unit, "usec"))
		return n >= 200;
	return true;
}

static char *timer_probe(const char *name, bool *is_tick)
{
	const char *p, *unit;
	char buf[96];
	unsigned long n;
	char *end;

	if (!strncmp(name, "tick-", 5))
		*is_tick = true, p = name + 5;
	else if (!strncmp(name, "profile-", 8))
		*is_tick = false, p = name + 8;
	else
		return NULL;
	n = strtoul(p, &end, 10);
	if (end == p || n == 0)
		return NULL;
	unit = end;
	if (!timer_long_enough(n, unit))
		return NULL;
	if ((!strcmp(unit, "ns") || !strcmp(unit, "nsec")) && n % 1000)
		snprintf(buf, sizeof(buf), "%s:ns:%lu", *is_tick ? "interval" : "profile", n);
	else if (!strcmp(unit, "ns") || !strcmp(unit, "nsec"))
		snprintf(buf, sizeof(buf), "%s:us:%lu", *is_tick ? "interval" : "profile",
			 n / 1000);
	else if (!*unit || !strcmp(unit, "hz"))
		snprintf(buf, sizeof(buf), "%s:hz:%lu", *is_tick ? "interval" : "profile", n);
	else if (!strcmp(unit, "s") || !strcmp(unit, "sec"))
		snprintf(buf, sizeof(buf), "%s:s:%lu", *is_tick ? "interval" : "profile", n);
	else if (!strcmp(unit, "ms") || !strcmp(unit, "msec"))
		snprintf(buf, sizeof(buf), "%s:ms:%lu", *is_tick ? "interval" : "profile", n);
	else if (!strcmp(unit, "us") || !strcmp(unit, "usec"))
		snprintf(buf, sizeof(buf), "%s:us:%lu", *is_tick ? "interval" : "profile", n);
	else if (!strcmp(unit, "m") || !strcmp(unit, "min"))
		snprintf(buf, sizeof(buf), "%s:s:%lu", *is_tick ? "interval" : "profile", n * 60);
	else if (!strcmp(unit, "h") || !strcmp(unit, "hour"))
		snprintf(buf, sizeof(buf), "%s:s:%lu", *is_tick ? "interval" : "profile", n * 3600);
	else if (!strcmp(unit, "d") || !strcmp(unit, "day"))
		snprintf(buf, sizeof(buf), "%s:s:%lu", *is_tick ? "interval" : "profile",
			 n * 86400);
	else
		return NULL;
	return dt_xstrdup(buf);
}

/* The fields of a syscall tracepoint after __syscall_nr: argN's names. */
static void tp_fields(struct dt_probe *p, const char *event)
{
	char path[512], line[512];
	bool past_nr = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/format", TRACEFS, event);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *field = strstr(line, "field:"), *semi, *name;

		if (!field)
			continue;
		semi = strchr(field, ';');
		if (!semi)
			continue;
		*semi = '\0';
		name = strrchr(field, ' ');
		name = name ? name + 1 : field + 6;
		if (strchr(name, '['))
			*strchr(name, '[') = '\0';
		if (!strncmp(name, "common_", 7))
			continue;
		if (!strcmp(name, "__syscall_nr")) {
			past_nr = true;
			continue;
		}
		if (past_nr || strncmp(event, "syscalls/", 9))
			DT_PUSH(p->tp_fields, p->ntp_fields, dt_xstrdup(name));
	}
	fclose(f);
}

/* syscall:: and proc::: are tracepoints: their formats are read from tracefs. */
static bool have_tracefs(struct matcher *m, const struct dt_pdesc *d)
{
	if (!access(TRACEFS, R_OK))
		return true;
	usdt_error(m->diag,
		   "%s: tracefs is not mounted at /sys/kernel/tracing (the %s provider's probes "
		   "are its tracepoints): mount it with 'mount -t tracefs nodev "
		   "/sys/kernel/tracing'",
		   d->text, d->field[0]);
	return false;
}

static size_t match_syscall(struct matcher *m, size_t ci, const struct dt_pdesc *d)
{
	DIR *dir = opendir(TRACEFS "/syscalls");
	struct dirent *e;
	size_t n = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		const char *fn, *name;
		char attach[300], ev[300];
		struct dt_probe *p;
		bool added;

		if (!strncmp(e->d_name, "sys_enter_", 10))
			fn = e->d_name + 10, name = "entry";
		else if (!strncmp(e->d_name, "sys_exit_", 9))
			fn = e->d_name + 9, name = "return";
		else
			continue;
		if (!fmatch(d->field[2], fn) || !fmatch(d->field[3], name) ||
		    !fmatch(d->field[1], ""))
			continue;
		snprintf(attach, sizeof(attach), "tracepoint:syscalls:%s", e->d_name);
		snprintf(ev, sizeof(ev), "syscalls/%s", e->d_name);
		p = find_or_add(m->probes, attach, &added);
		if (added) {
			p->kind = P_TRACEPOINT;
			set_names(p, "syscall", "", fn, name);
			tp_fields(p, ev);
		}
		add_clause(m, p, ci)->any_pid = true;
		n++;
	}
	closedir(dir);
	return n;
}

static size_t match_proc(struct matcher *m, size_t ci, const struct dt_pdesc *d)
{
	static const struct {
		const char *name, *tp;
	} t[] = {
	    {"exec-success", "sched:sched_process_exec"},
	    {"exit", "sched:sched_process_exit"},
	    {"create", "sched:sched_process_fork"},
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char attach[100];
		struct dt_probe *p;
		bool added;

		if (!fmatch(d->field[3], t[i].name) || !fmatch(d->field[1], "") ||
		    !fmatch(d->field[2], ""))
			continue;
		snprintf(attach, sizeof(attach), "tracepoint:%s", t[i].tp);
		p = find_or_add(m->probes, attach, &added);
		if (added) {
			p->kind = P_TRACEPOINT;
			set_names(p, "proc", "", "", t[i].name);
		}
		add_clause(m, p, ci)->any_pid = true;
		n++;
	}
	return n;
}

/*
 * The name a probe is attached by: the path the process mapped, unless that
 * is not the file any more (deleted, replaced; a runtime provider's sealed
 * memfd, `/memfd:name (deleted)`), then the process's map_files link to
 * the mapping, which the kernel resolves to the inode when the engine
 * attaches (the uprobe then stays on the inode).
 */
static char *attach_path(const struct usdt_list_probe *lp)
{
	char maps[64], line[4600], *found = NULL;
	struct stat st;
	FILE *f;

	if (!stat(lp->path, &st) && st.st_dev == lp->dev && st.st_ino == lp->ino)
		return dt_xstrdup(lp->path);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", lp->pid);
	f = fopen(maps, "r");
	if (!f)
		return dt_xstrdup(lp->path);
	while (!found && fgets(line, sizeof(line), f)) {
		struct usdt_mapping m;

		if (usdt_maps_parse_line(line, &m) && m.dev == lp->dev && m.ino == lp->ino) {
			snprintf(maps, sizeof(maps), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
				 lp->pid, m.start, m.end);
			found = dt_xstrdup(maps);
		}
	}
	fclose(f);
	return found ? found : dt_xstrdup(lp->path);
}

static int copy_probe(const struct usdt_list_probe *lp, void *arg)
{
	struct matcher *m = arg;
	struct usdt_list_probe c = *lp;
	unsigned k;

	if (m->retained && is_known(lp->dev, lp->ino))
		return 0;

	c.path = attach_path(lp);
	c.module = dt_xstrdup(lp->module);
	c.provider = dt_xstrdup(lp->provider);
	c.name = dt_xstrdup(lp->name);
	c.dname = dt_xstrdup(lp->dname);
	c.func = dt_xstrdup(lp->func);
	c.site = NULL;
	for (k = 0; k < c.ntypes && k < 32; k++)
		c.types[k] = dt_xstrdup(lp->types[k] ? lp->types[k] : "");
	if (c.ntypes > 32)
		c.ntypes = 32;
	DT_PUSH(m->usdt, m->nusdt, c);
	return 0;
}

/*
 * Without the daemon, -Z and -e go on with what can be listed (the -p/-c
 * processes: for -e, to compile; for -Z, to trace them and wait): -Z says
 * once what is missing. Anything else needs the daemon's listing (its
 * error names the daemon). True when the daemon is not to be asked.
 */
static bool without_daemon(const struct dt_consumer_opts *o)
{
	static bool said;
	const char *path;

	if (usdt_list_daemon_running(&path))
		return false;
	if (o->zero_ok && !said) {
		said = true;
		fprintf(stderr,
			"dtrace: the usdtkit helper daemon is not running (nothing listens on %s): "
			"processes started later are seen only with usdtkit-helperd\n",
			path);
	}
	return o->zero_ok || o->compile_only || o->npids || o->cmd;
}

/* The probes of -p/-c processes and of the daemon's, read once. */
static int load_usdt(struct matcher *m)
{
	const struct dt_consumer_opts *o = m->prog->o;
	int target = o->target;

	if (m->have_usdt)
		return 0;
	m->have_usdt = true;
	if (o->npids || o->cmd) {
		int *pids = dt_xmalloc((o->npids + 1) * sizeof(*pids));
		size_t n = 0, i;
		int rc;

		if (o->cmd)
			pids[n++] = target;
		for (i = 0; i < o->npids; i++)
			pids[n++] = o->pids[i];
		rc = usdt_list_each(pids, n, copy_probe, m, m->diag);
		dt_free(pids);
		if (rc)
			return -1;
		/* and the daemon's processes, when one runs (globs see them all) */
		if (!without_daemon(o)) {
			char *junk = NULL;
			size_t junklen = 0;
			FILE *sink = open_memstream(&junk, &junklen);
			struct usdt_diag quiet;
			size_t before = m->nusdt;

			if (sink) {
				usdt_diag_init(&quiet, sink, "dtrace");
				if (usdt_list_each(NULL, 0, copy_probe, m, &quiet))
					m->nusdt = before;
				fclose(sink);
			}
			free(junk);
		}
		return 0;
	}
	if (without_daemon(o))
		return 0;
	return usdt_list_each(NULL, 0, copy_probe, m, m->diag) ? -1 : 0;
}

static bool any_pid(const char *pat, const char *provider)
{
	char a[300], b[300];

	if (!*pat)
		return true;
	snprintf(a, sizeof(a), "%s1", provider);
	snprintf(b, sizeof(b), "%s2147483646", provider);
	return !fnmatch(pat, a, 0) && !fnmatch(pat, b, 0);
}

static int match_usdt(struct matcher *m, size_t ci, const struct dt_pdesc *d, size_t *count)
{
	size_t i;

	if (load_usdt(m))
		return -1;
	for (i = 0; i < m->nusdt; i++) {
		const struct usdt_list_probe *lp = &m->usdt[i];
		char prov[300], attach[4400];
		struct dt_pclause *pc;
		struct dt_probe *p;
		bool added;
		unsigned k;

		snprintf(prov, sizeof(prov), "%s%d", lp->provider, lp->pid);
		if (!fmatch(d->field[0], prov) || !fmatch(d->field[1], lp->module) ||
		    !fmatch(d->field[2], lp->func) || !fmatch(d->field[3], lp->dname))
			continue;
		if (lp->nfuncs > 1 && *d->field[2] && strcmp(d->field[2], "*")) {
			if (m->retained)
				continue; /* refused at the start already, or not selectable */
			dt_error_at(
			    m->diag, &d->pos, "D_UNSUPPORTED",
			    "probe %s:%s has sites in %zu functions of %s: a description that "
			    "selects some of them by function is not supported (leave the "
			    "function field empty)",
			    lp->provider, lp->dname, lp->nfuncs, lp->module);
			return -1;
		}
		(*count)++;
		snprintf(attach, sizeof(attach), "usdt:%s:%s:%s", lp->path, lp->provider, lp->name);
		p = find_or_add(m->probes, attach, &added);
		if (added) {
			p->kind = P_USDT;
			set_names(p, lp->provider, lp->module, lp->func, lp->dname);
			p->dev = lp->dev;
			p->ino = lp->ino;
			p->nfuncs = lp->nfuncs;
			p->nargs = lp->nargs;
			p->ntypes = lp->ntypes;
			p->types = dt_xmalloc((lp->ntypes + 1) * sizeof(*p->types));
			for (k = 0; k < lp->ntypes; k++)
				p->types[k] = dt_xstrdup(lp->types[k]);
		}
		pc = add_clause(m, p, ci);
		if (any_pid(d->field[0], lp->provider)) {
			pc->any_pid = true;
		} else {
			for (k = 0; k < pc->npids; k++)
				if (pc->pids[k] == lp->pid)
					break;
			if (k == pc->npids)
				DT_PUSH(pc->pids, pc->npids, lp->pid);
		}
	}
	return 0;
}

/* What match_desc() hands to match_usdt(). */
static bool is_usdt_desc(const struct dt_pdesc *d)
{
	const char *prov = d->field[0];
	bool anyprov = !*prov, bare = !*d->field[1] && !*d->field[2], is_tick;
	char *timer;

	if ((anyprov || !strcmp(prov, "dtrace")) && bare &&
	    (!strcmp(d->field[3], "BEGIN") || !strcmp(d->field[3], "END") ||
	     !strcmp(d->field[3], "ERROR")))
		return false;
	if ((anyprov || !strcmp(prov, "profile")) && bare &&
	    (timer = timer_probe(d->field[3], &is_tick))) {
		dt_free(timer);
		return false;
	}
	if (!strcmp(prov, "syscall") || !strcmp(prov, "proc") || !strcmp(prov, "dtrace") ||
	    !strcmp(prov, "profile") || !strcmp(prov, "fbt") || !strcmp(prov, "sdt") ||
	    !strcmp(prov, "io") || !strcmp(prov, "sched") || !strcmp(prov, "lockstat") ||
	    !strcmp(prov, "ip") || !strcmp(prov, "tcp") || !strcmp(prov, "vminfo") ||
	    !strcmp(prov, "sysinfo"))
		return false;
	return strncmp(prov, "pid", 3) || (prov[3] && !strchr("0123456789", prov[3]));
}

bool dt_match_is_usdt(const struct dt_pdesc *d)
{
	return is_usdt_desc(d);
}

static int match_desc(struct matcher *m, size_t ci, const struct dt_pdesc *d)
{
	const char *prov = d->field[0], *mod = d->field[1], *func = d->field[2],
		   *name = d->field[3];
	struct dt_probes *ps = m->probes;
	size_t count = 0;
	bool is_tick;
	char *timer;

	if (m->retained) {
		/* a new file can only bring USDT probes */
		if (!is_usdt_desc(d))
			return 0;
		return match_usdt(m, ci, d, &count);
	}
	if ((!*prov || !strcmp(prov, "dtrace")) && !*mod && !*func &&
	    (!strcmp(name, "BEGIN") || !strcmp(name, "END") || !strcmp(name, "ERROR"))) {
		struct dt_probe *p;
		bool added;

		p = find_or_add(ps, name, &added);
		if (added) {
			p->kind = name[0] == 'B' ? P_BEGIN : name[1] == 'N' ? P_END : P_ERROR;
			p->id = name[0] == 'B' ? 1 : name[1] == 'N' ? 2 : 3;
			ps->next_id--;
			set_names(p, "dtrace", "", "", name);
		}
		add_clause(m, p, ci)->any_pid = true;
		count = 1;
	} else if ((!*prov || !strcmp(prov, "profile")) && !*mod && !*func &&
		   (timer = timer_probe(name, &is_tick))) {
		struct dt_probe *p;
		bool added;

		p = find_or_add(ps, timer, &added);
		dt_free(timer);
		if (added) {
			p->kind = is_tick ? P_TICK : P_PROFILE;
			set_names(p, "profile", "", "", name);
		}
		add_clause(m, p, ci)->any_pid = true;
		count = 1;
	} else if ((!*prov || !strcmp(prov, "profile")) && !*mod && !*func &&
		   (!strncmp(name, "tick-", 5) || !strncmp(name, "profile-", 8))) {
		count = 0; /* tick-n, tick-1ns: no such probe (timer_probe()) */
	} else if (!strcmp(prov, "syscall")) {
		if (!have_tracefs(m, d))
			return -1;
		count = match_syscall(m, ci, d);
	} else if (!strcmp(prov, "proc")) {
		if (!have_tracefs(m, d))
			return -1;
		count = match_proc(m, ci, d);
	} else if (!strcmp(prov, "dtrace") || !strcmp(prov, "profile") || !strcmp(prov, "fbt") ||
		   !strncmp(prov, "pid", 3) || !strcmp(prov, "sdt") || !strcmp(prov, "io") ||
		   !strcmp(prov, "sched") || !strcmp(prov, "lockstat") || !strcmp(prov, "ip") ||
		   !strcmp(prov, "tcp") || !strcmp(prov, "vminfo") || !strcmp(prov, "sysinfo")) {
		if (strncmp(prov, "pid", 3) || !prov[3] || strchr("0123456789", prov[3])) {
			dt_error_at(m->diag, &d->pos, "D_UNSUPPORTED",
				    "probe description %s:%s:%s:%s: the %s provider is not "
				    "supported (USDT providers, dtrace:::BEGIN/END, tick-N, "
				    "profile-N, syscall:: and proc::: are)",
				    prov, mod, func, name, prov);
			return -1;
		}
		if (match_usdt(m, ci, d, &count))
			return -1;
	} else if (match_usdt(m, ci, d, &count)) {
		return -1;
	}
	ps->matched[m->prog->clauses[ci]->source] += count;
	if (!count && !m->prog->o->zero_ok) {
		const struct dt_source *s = &m->prog->o->sources[m->prog->clauses[ci]->source];

		if (s->kind == 'n')
			fprintf(m->diag->out,
				"dtrace: invalid probe specifier %s: probe description %s:%s:%s:%s "
				"does not match any probes\n",
				s->name, prov, mod, func, name);
		else
			fprintf(m->diag->out,
				"dtrace: failed to compile script %s: line %u: probe description "
				"%s:%s:%s:%s does not match any probes\n",
				s->name, d->pos.line, prov, mod, func, name);
		m->diag->errors++;
		return -1;
	}
	return 0;
}

/*
 * Every clause's descriptions against the listing in m, then its files are
 * known (matched or not) and the probe IDs go on from there. A retained
 * listing with no USDT probe matches nothing (its other descriptions, BEGIN
 * and the like, were matched at the start). Returns match_desc()'s error.
 */
static int match_clauses(struct matcher *m)
{
	struct dt_program *prog = m->prog;
	size_t i, k;
	int rc = 0;

	for (i = 0; (m->nusdt || !m->retained) && i < prog->nclauses && !rc; i++)
		for (k = 0; k < prog->clauses[i]->ndescs && !rc; k++) {
			m->desc = k;
			rc = match_desc(m, i, &prog->clauses[i]->descs[k]);
		}
	for (i = 0; i < m->nusdt; i++)
		add_known(m->usdt[i].dev, m->usdt[i].ino);
	next_id = m->probes->next_id;
	free_usdt(m);
	return rc;
}

int dt_match(struct dt_program *prog, struct dt_probes *probes, struct usdt_diag *diag)
{
	struct matcher m = {.prog = prog, .probes = probes, .diag = diag};

	probes->nsources = prog->o->nsources;
	probes->matched = dt_xmalloc((prog->o->nsources + 1) * sizeof(size_t));
	memset(probes->matched, 0, (prog->o->nsources + 1) * sizeof(size_t));
	probes->next_id = 2; /* 1 BEGIN, 2 END, as in DTrace (3 is ERROR) */
	probes->next_id++;
	return match_clauses(&m);
}

/* New files listed into m: their probes matched against the clauses (IDs after every earlier
 * one's). */
static long match_listed(struct matcher *m)
{
	struct dt_probes *probes = m->probes;
	size_t ns = m->prog->o->nsources;

	m->have_usdt = true;
	probes->nsources = ns;
	probes->matched = dt_xmalloc((ns + 1) * sizeof(size_t));
	memset(probes->matched, 0, (ns + 1) * sizeof(size_t));
	probes->next_id = next_id;
	return match_clauses(m) ? -1 : (long)probes->n;
}

/*
 * Retained enablings: the probes of files no listing showed before, matched
 * against the program's USDT descriptions into `probes` (empty at the call,
 * IDs after every earlier one's). The files are known afterwards, matched
 * or not. Returns the number of probes matched, or -1 (no listing: quietly,
 * the daemon may be restarting).
 */
long dt_match_new(struct dt_program *prog, struct dt_probes *probes, const int *pids, size_t npids,
		  struct usdt_diag *diag)
{
	struct matcher m = {.prog = prog, .probes = probes, .diag = diag, .retained = true};

	if (usdt_list_each_new(pids, npids, is_known, copy_probe, &m, diag)) {
		free_usdt(&m);
		return -1;
	}
	return match_listed(&m);
}

long dt_match_files(struct dt_program *prog, struct dt_probes *probes, const struct dt_noticed *f,
		    size_t n, struct usdt_diag *diag)
{
	struct matcher m = {.prog = prog, .probes = probes, .diag = diag, .retained = true};
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_known(f[i].dev, f[i].ino) &&
		    usdt_list_each_file(f[i].pid, f[i].dev, f[i].ino, copy_probe, &m, diag)) {
			free_usdt(&m);
			return -1;
		}
	return match_listed(&m);
}

static void free_usdt(struct matcher *mp)
{
	struct matcher m = *mp;
	size_t i, k;

	for (i = 0; i < m.nusdt; i++) {
		dt_free((char *)m.usdt[i].path);
		dt_free((char *)m.usdt[i].module);
		dt_free((char *)m.usdt[i].provider);
		dt_free((char *)m.usdt[i].name);
		dt_free((char *)m.usdt[i].dname);
		dt_free((char *)m.usdt[i].func);
		for (k = 0; k < m.usdt[i].ntypes; k++)
			dt_free((char *)m.usdt[i].types[k]);
	}
	dt_free(m.usdt);
	mp->usdt = NULL;
	mp->nusdt = 0;
}
