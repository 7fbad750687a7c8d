/* SPDX-License-Identifier: MIT */
/*
 * The generated C to running programs: clang compiles it (`-O2 -g -target
 * bpf`: -g for the BTF that libbpf's map definitions need), libbpf opens and
 * loads the object (the verifier runs here) and attaches one uprobe per
 * USDT site, the site's semaphore raised by the kernel through the
 * uprobe's reference counter (ref_ctr_offset: for every process of the
 * file, later ones too). BEGIN and END are uprobes on two functions of
 * this process, which dtrace calls when tracing starts and ends: their
 * programs run in dtrace's context, as DTrace's do. The links are this
 * process's: eg_unload() (or its exit) detaches them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "clock.h"
#include "engine.h"

struct eg_loaded {
	struct bpf_object *obj;
	struct bpf_object *single; /* loaded again for a link a site: fall_back() */
	struct bpf_link **links;
	size_t nlinks;
	int *mfds; /* multi-uprobe links (their descriptors) */
	size_t nmfds;
	bool multi;	 /* the USDT programs attach by multi-uprobe links */
	size_t nsites;	 /* sites attached */
	int64_t link_ns; /* spent in the kernel's link calls (USDTKIT_ENGINE_TIMES) */
	struct bpf_link *begin, *end, *error;
	double clang_ms, load_ms;
	struct dt_buf objbuf; /* the object, from clang or the cache */
	bool cached;	      /* clang was not run */
};

static double now_ms(void)
{
	return (double)usdt_clock_ns(CLOCK_MONOTONIC) / 1e6;
}

/*
 * libbpf's messages: kept, shown only when loading fails. The verifier's log
 * comes as one message, and its verdict is at its end: of a long one, the
 * end is kept.
 */
static struct dt_buf libbpf_log;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* libbpf's own formats */
static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const size_t keep = 1u << 16;
	char *m;
	va_list aq;
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n <= 0)
		return 0;
	m = dt_xmalloc((size_t)n + 1);
	vsnprintf(m, (size_t)n + 1, fmt, ap);
	if (libbpf_log.n > 4 * keep) /* the end is what is shown */
		libbpf_log.n = 0;
	if ((size_t)n > keep)
		dt_buf_add(&libbpf_log, m + n - keep, keep);
	else
		dt_buf_add(&libbpf_log, m, (size_t)n);
	dt_free(m);
	return 0;
}
#pragma GCC diagnostic pop

static void show_log(void)
{
	const char *s = libbpf_log.s ? libbpf_log.s : "";
	size_t n = libbpf_log.n, lines = 0;

	/* the verifier's verdict is at the end: the last 40 lines */
	while (n > 0 && lines < 40)
		if (s[--n] == '\n')
			lines++;
	if (libbpf_log.n)
		fprintf(stderr, "%s", s + n + (n ? 1 : 0));
}

/* clang: $USDTKIT_CLANG, else clang, else clang-14 (Debian 12), found on PATH. */
static int find_clang(char *out, size_t n, struct usdt_diag *diag)
{
	const char *env = getenv("USDTKIT_CLANG");
	const char *const names[] = {env && *env ? env : "clang", "clang-14", NULL};
	size_t i;

	for (i = 0; names[i]; i++)
		if (!eg_cache_find_clang(names[i], out, n))
			return 0;
	usdt_error(diag, "dtrace compiles with clang, which is not installed: "
			 "install the clang package (apt-get install clang, dnf install "
			 "clang) or name a clang in $USDTKIT_CLANG");
	return -1;
}

static int read_file(const char *path, struct dt_buf *out)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		dt_buf_add(out, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	return n == 0 ? 0 : -1;
}

/* The generated C to an object in obj: clang on a file of $TMPDIR. */
static int compile(const char *clang, const struct dt_buf *c, struct dt_buf *obj,
		   struct usdt_diag *diag)
{
	const char *tmp = getenv("TMPDIR");
	char src[4096], out[4096];
	int fd, status = -1;
	pid_t pid;

	snprintf(src, sizeof(src), "%s/usdtkit-dtrace-XXXXXX.c", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemps(src, 2);
	if (fd < 0 || write(fd, c->s, c->n) != (ssize_t)c->n) {
		usdt_error(diag, "cannot write the generated program (%s): %s", src,
			   strerror(errno));
		if (fd >= 0)
			close(fd), unlink(src);
		return -1;
	}
	close(fd);
	snprintf(out, sizeof(out), "%.*s.o", (int)strlen(src) - 2, src);
	pid = fork();
	if (pid == 0) {
		execl(clang, clang, "-O2", "-g", "-target", "bpf", "-w", "-c", src, "-o", out,
		      (char *)NULL);
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(src);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) || read_file(out, obj)) {
		unlink(out);
		usdt_error(diag,
			   "clang (%s) could not compile the generated program (a bug of "
			   "dtrace: -x bpfc prints it)",
			   clang);
		return -1;
	}
	unlink(out);
	return 0;
}

/*
 * The object for the generated C: from the cache (cache.c) when this clang
 * compiled this source for this kernel before, else from clang, then kept.
 */
static int object(const struct eg_prog *p, struct dt_buf *obj, bool *cached, struct usdt_diag *diag)
{
	static bool warned;
	struct eg_cache c;
	char clang[4096];
	int rc = 0;

	if (find_clang(clang, sizeof(clang), diag))
		return -1;
	eg_cache_open(&c, clang, p->c.s, p->c.n);
	if (c.warn && !warned) {
		warned = true;
		fprintf(stderr, "dtrace: warning: compiled programs are not cached: %s\n", c.why);
	}
	*cached = !eg_cache_get(&c, obj);
	if (!*cached) {
		rc = compile(clang, &p->c, obj, diag);
		if (!rc)
			eg_cache_put(&c, obj);
	}
	if (getenv("USDTKIT_ENGINE_TIMES") && c.dfd < 0)
		fprintf(stderr, "dtrace: no cache: %s\n", c.why);
	eg_cache_close(&c);
	return rc;
}

/* Where a function of this process is in its file: path and offset. */
static int self_offset(uintptr_t a, char *path, size_t n, uint64_t *off)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4608];
	int rc = -1;

	while (f && rc && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, foff;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &foff, &at) < 4 ||
		    a < lo || a >= hi || !at || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, n, "%s", line + at);
		*off = a - lo + foff;
		rc = 0;
	}
	if (f)
		fclose(f);
	return rc;
}

/* Called by dtrace itself; the uprobes on them run BEGIN and END. Never inlined, never merged. */
__attribute__((noinline)) void eg_begin_trigger(void);
__attribute__((noinline)) void eg_end_trigger(void);
__attribute__((noinline)) void eg_begin_trigger(void)
{
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void eg_end_trigger(void)
{
	__asm__ volatile("nop" ::: "memory");
}
/* ERROR's: its six arguments are the program's arg0..arg5 (registers). */
__attribute__((noinline)) void eg_error_trigger(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
						uint64_t a4, uint64_t a5);
__attribute__((noinline)) void eg_error_trigger(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
						uint64_t a4, uint64_t a5)
{
	__asm__ volatile("nop; nop"
			 :
			 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5)
			 : "memory");
}

static struct bpf_link *attach(struct bpf_object *obj, const char *prog, int pid, const char *path,
			       uint64_t off, uint64_t sema, uint64_t cookie, struct usdt_diag *diag)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	struct bpf_uprobe_opts uo; /* (LIBBPF_OPTS is a GNU statement expression) */
	struct bpf_link *l;

	memset(&uo, 0, sizeof(uo));
	uo.sz = sizeof(uo);
	uo.ref_ctr_offset = (size_t)sema;
	uo.bpf_cookie = cookie;
	if (!p) {
		usdt_error(diag, "the generated object has no program %s", prog);
		return NULL;
	}
	l = bpf_program__attach_uprobe_opts(p, pid, path, (size_t)off, &uo);
	if (!l)
		usdt_error(diag, "cannot attach a uprobe to %s at 0x%" PRIx64 ": %s", path, off,
			   strerror(errno));
	return l;
}

static struct bpf_link *attach_self(struct bpf_object *obj, const char *prog, uintptr_t fn,
				    struct usdt_diag *diag)
{
	char path[4096];
	uint64_t off;

	if (self_offset(fn, path, sizeof(path), &off)) {
		usdt_error(diag, "cannot find dtrace's own file in /proc/self/maps");
		return NULL;
	}
	return attach(obj, prog, getpid(), path, off, 0, 0, diag);
}

/*
 * tick-N: a CPU clock on CPU 0 (the tick fires on one CPU, as DTrace's
 * does); profile-N: one on each CPU (cpu). NULL with *offline set for a
 * CPU that is not online (no error: profile skips it).
 */
static struct bpf_link *attach_timer(struct bpf_object *obj, const struct eg_timer *t, int cpu,
				     bool *offline, struct usdt_diag *diag)
{
	struct perf_event_attr a;
	struct bpf_program *p = bpf_object__find_program_by_name(obj, t->prog);
	struct bpf_link *l;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = t->period_ns;
	*offline = false;
	fd = p ? (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC) : -1;
	if (fd < 0 && p && errno == ENODEV && t->every_cpu) {
		*offline = true;
		return NULL;
	}
	if (fd < 0) {
		usdt_error(diag, "cannot start a timer of %llu ns: %s",
			   (unsigned long long)t->period_ns, strerror(errno));
		return NULL;
	}
	l = bpf_program__attach_perf_event(p, fd);
	if (!l) {
		usdt_error(diag, "cannot attach a timer program: %s", strerror(errno));
		close(fd);
	}
	return l; /* the link owns fd */
}

/*
 * -e: what the start will attach to is there, short of attaching (which
 * would enable the probes): each site's program and file, BEGIN's and
 * END's function in dtrace's own file.
 */
static int check_targets(struct bpf_object *obj, const struct eg_prog *p, struct usdt_diag *diag)
{
	char path[4096];
	uint64_t off;
	size_t i;

	for (i = 0; i < p->nsites; i++) {
		const struct eg_site *s = &p->sites[i];

		if (!bpf_object__find_program_by_name(obj, s->prog)) {
			usdt_error(diag, "the generated object has no program %s", s->prog);
			return -1;
		}
		if (access(s->path, R_OK)) {
			usdt_error(diag, "cannot read %s, where a probe is: %s", s->path,
				   strerror(errno));
			return -1;
		}
	}
	if ((p->has_begin || p->has_end || p->has_error) &&
	    self_offset((uintptr_t)eg_begin_trigger, path, sizeof(path), &off)) {
		usdt_error(diag, "cannot find dtrace's own file in /proc/self/maps");
		return -1;
	}
	return 0;
}

/*
 * Multi-uprobe links (BPF_TRACE_UPROBE_MULTI, Linux 6.6): one link for many
 * sites of one file, each with its offset, reference counter and cookie,
 * made in one bpf(BPF_LINK_CREATE) call, which libbpf 1.1.2 does not make:
 * the attribute is laid out here as the kernel's uapi has it. A program
 * attached so must be loaded for it (its expected attach type), and then
 * cannot be attached by a perf event: the choice is made before the load,
 * by the kernel's version, and USDTKIT_UPROBE_MULTI=0 refuses it (one link
 * a site, as before 6.6). A kernel that refuses the link all the same is
 * answered by fall_back(), below.
 */
#define EG_TRACE_UPROBE_MULTI 48
struct eg_umulti_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, mflags, pid, pad;
};

static bool want_multi(void)
{
	const char *e = getenv("USDTKIT_UPROBE_MULTI");
	struct utsname u;
	unsigned a = 0, b = 0;

	if (e && !strcmp(e, "0"))
		return false;
	return !uname(&u) && sscanf(u.release, "%u.%u", &a, &b) == 2 &&
	       (a > 6 || (a == 6 && b >= 6));
}

/* USDTKIT_UPROBE_MULTI=refused: the tests' way to the fallback (fall_back()). */
static bool refuse_multi(void)
{
	const char *e = getenv("USDTKIT_UPROBE_MULTI");

	return e && !strcmp(e, "refused");
}

/* Sites [i, j) of one program and file, by one link: its descriptor, or -1. */
static int attach_multi(struct eg_loaded *l, const struct eg_prog *p, size_t i, size_t j)
{
	struct bpf_program *pg = bpf_object__find_program_by_name(l->obj, p->sites[i].prog);
	size_t n = j - i, k;
	uint64_t *off = dt_xmalloc(n * 8), *ref = dt_xmalloc(n * 8), *ck = dt_xmalloc(n * 8);
	struct eg_umulti_attr a;
	int fd;

	for (k = 0; k < n; k++) {
		off[k] = p->sites[i + k].off;
		ref[k] = p->sites[i + k].sema_off;
		ck[k] = p->sites[i + k].cookie;
	}
	memset(&a, 0, sizeof(a));
	a.prog_fd = pg ? (uint32_t)bpf_program__fd(pg) : 0;
	a.attach_type = EG_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)p->sites[i].path;
	a.offsets = (uint64_t)(uintptr_t)off;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)ref;
	a.cookies = (uint64_t)(uintptr_t)ck;
	a.cnt = (uint32_t)n;
	/* tests: a refusal, by the kernel itself (a flag it does not know: EINVAL) */
	if (refuse_multi())
		a.mflags = 1u << 31;
	fd = pg ? (int)syscall(SYS_bpf, 28 /* BPF_LINK_CREATE */, &a, sizeof(a)) : -1;
	dt_free(off);
	dt_free(ref);
	dt_free(ck);
	return fd;
}

static struct eg_loaded *load(const struct eg_prog *p, bool do_attach, struct usdt_diag *diag)
{
	struct eg_loaded *l = dt_xmalloc(sizeof(*l));
	struct bpf_object_open_opts oo; /* (LIBBPF_OPTS is a GNU statement expression) */
	double t0;
	size_t i;

	memset(l, 0, sizeof(*l));
	t0 = now_ms();
	if (object(p, &l->objbuf, &l->cached, diag)) {
		eg_unload(l);
		return NULL;
	}
	l->clang_ms = now_ms() - t0;
	t0 = now_ms();
	libbpf_set_print(on_libbpf_print);
	memset(&oo, 0, sizeof(oo));
	oo.sz = sizeof(oo);
	oo.object_name = "dtrace";
	l->obj = bpf_object__open_mem(l->objbuf.s, l->objbuf.n, &oo);
	l->multi = do_attach && want_multi();
	for (i = 0; l->obj && l->multi && i < p->ngroups; i++) {
		struct bpf_program *pg =
		    bpf_object__find_program_by_name(l->obj, p->groups[i].prog);

		if (pg)
			bpf_program__set_expected_attach_type(
			    pg, (enum bpf_attach_type)EG_TRACE_UPROBE_MULTI);
	}
	if (!l->obj || bpf_object__load(l->obj)) {
		int e = errno;

		if (e != EPERM || geteuid() == 0)
			show_log();
		if (e == EPERM && geteuid() != 0)
			usdt_error(diag, "loading BPF programs needs root: run dtrace as root, "
					 "e.g. with sudo");
		else
			usdt_error(diag,
				   "the kernel refused the generated program (%s): the "
				   "verifier's last words are above",
				   strerror(e));
		eg_unload(l);
		return NULL;
	}
	if (do_attach && p->has_begin &&
	    !(l->begin = attach_self(l->obj, "dt_begin", (uintptr_t)eg_begin_trigger, diag))) {
		eg_unload(l);
		return NULL;
	}
	if (do_attach && p->has_end &&
	    !(l->end = attach_self(l->obj, "dt_end", (uintptr_t)eg_end_trigger, diag))) {
		eg_unload(l);
		return NULL;
	}
	if (do_attach && p->has_error &&
	    !(l->error = attach_self(l->obj, "dt_error", (uintptr_t)eg_error_trigger, diag))) {
		eg_unload(l);
		return NULL;
	}
	if (!do_attach && check_targets(l->obj, p, diag)) {
		eg_unload(l);
		return NULL;
	}
	l->load_ms = now_ms() - t0;
	return l;
}

/*
 * What BEGIN precedes: every site, timer and tracepoint, attached once it
 * has run (DTrace's other probes do not fire before BEGIN). 0, or -1.
 */
int eg_attach(struct eg_loaded *l, const struct eg_prog *p, struct usdt_diag *diag)
{
	double t0 = now_ms();
	size_t i;

	if (eg_attach_sites(l, p, 0, diag))
		return -1;
	for (i = 0; i < p->ntimers; i++) {
		int cpu, ncpu = p->timers[i].every_cpu ? libbpf_num_possible_cpus() : 1;

		for (cpu = 0; cpu < ncpu; cpu++) {
			bool offline;
			struct bpf_link *k =
			    attach_timer(l->obj, &p->timers[i], cpu, &offline, diag);

			if (!k && offline)
				continue;
			if (!k)
				return -1;
			DT_PUSH(l->links, l->nlinks, k);
		}
	}
	for (i = 0; i < p->ntps; i++) {
		struct bpf_program *pg = bpf_object__find_program_by_name(l->obj, p->tps[i].prog);
		struct bpf_link *k =
		    pg ? bpf_program__attach_tracepoint(pg, p->tps[i].category, p->tps[i].name)
		       : NULL;

		if (!k) {
			usdt_error(diag, "cannot attach to the tracepoint %s/%s: %s",
				   p->tps[i].category, p->tps[i].name, strerror(errno));
			return -1;
		}
		DT_PUSH(l->links, l->nlinks, k);
	}
	l->load_ms += now_ms() - t0;
	if (getenv("USDTKIT_ENGINE_TIMES"))
		fprintf(stderr, "dtrace: %s %.1f ms, load and attach %.1f ms (%zu sites%s)\n",
			l->cached ? "cached object" : "clang", l->clang_ms, l->load_ms, l->nsites,
			l->multi ? ", multi-uprobe links" : "");
	return 0;
}

/*
 * The kernel refused a multi-uprobe link (a kernel that has the call but
 * refuses these sites, or one older than 6.6 that says it is newer): the
 * object is loaded again, once, its USDT programs for perf-event links,
 * every map the first load's (so the records, aggregations and variables
 * are one set), and from then on every site gets a link of its own. What
 * multi-uprobe links attached before stays. Nothing is printed: the user
 * sees every site traced either way. 0, or -1 (reported).
 */
static int fall_back(struct eg_loaded *l, const struct eg_prog *p, int why, struct usdt_diag *diag)
{
	struct bpf_object_open_opts oo; /* (LIBBPF_OPTS is a GNU statement expression) */
	struct bpf_program *pg;
	struct bpf_map *m, *m0 = NULL;
	size_t i;

	memset(&oo, 0, sizeof(oo));
	oo.sz = sizeof(oo);
	oo.object_name = "dtrace";
	l->single = bpf_object__open_mem(l->objbuf.s, l->objbuf.n, &oo);
	if (!l->single)
		goto fail;
	bpf_object__for_each_map(m, l->single)
	{
		m0 = bpf_object__next_map(l->obj, m0);
		if (!m0 || strcmp(bpf_map__name(m), bpf_map__name(m0)) ||
		    bpf_map__reuse_fd(m, bpf_map__fd(m0)))
			goto fail;
	}
	/* only the USDT programs: BEGIN, END, timers and tracepoints stay the first load's */
	bpf_object__for_each_program(pg, l->single)
	{
		bool usdt = false;

		for (i = 0; i < p->ngroups && !usdt; i++)
			usdt = !strcmp(bpf_program__name(pg), p->groups[i].prog);
		bpf_program__set_autoload(pg, usdt);
	}
	if (bpf_object__load(l->single))
		goto fail;
	l->multi = false;
	if (getenv("USDTKIT_ENGINE_TIMES"))
		fprintf(stderr, "dtrace: multi-uprobe link refused (%s): a link a site\n",
			strerror(why));
	return 0;
fail:
	usdt_error(diag,
		   "the kernel refused a multi-uprobe link (%s), and the programs could not be "
		   "loaded again for a link a site: %s",
		   strerror(why), strerror(errno));
	return -1;
}

/* The refusals fall_back() answers (the kernel's ENOTSUPP, 524, included). */
static bool refusal(int e)
{
	return e == EINVAL || e == EOPNOTSUPP || e == ENOSYS || e == 524;
}

/*
 * Sites [first, nsites) into the map: one bpf(BPF_MAP_UPDATE_BATCH) call
 * (Linux 5.6) rather than a call a site, else (a kernel without it) one by
 * one. 0, or -1 with errno.
 */
static int write_sites(int fd, const struct eg_prog *p, size_t first)
{
	size_t i, n = p->nsites - first;
	uint32_t *keys, count = (uint32_t)n;
	struct eg_site_val *vals;
	int rc;

	if (!n)
		return 0;
	keys = dt_xmalloc(n * sizeof(*keys));
	vals = dt_xmalloc(n * sizeof(*vals));
	for (i = 0; i < n; i++) {
		keys[i] = p->sites[first + i].cookie;
		vals[i] = p->sites[first + i].val;
	}
	rc = bpf_map_update_batch(fd, keys, vals, &count, NULL);
	dt_free(keys);
	dt_free(vals);
	if (!rc && count == n)
		return 0;
	for (i = first; i < p->nsites; i++)
		if (bpf_map_update_elem(fd, &p->sites[i].cookie, &p->sites[i].val, BPF_ANY))
			return -1;
	return 0;
}

/*
 * A site's entry goes into the map `sites` at its cookie before its link
 * is made: the program never fires on a cookie it cannot find.
 */
int eg_attach_sites(struct eg_loaded *l, const struct eg_prog *p, size_t first,
		    struct usdt_diag *diag)
{
	int fd = bpf_object__find_map_fd_by_name(l->obj, "sites");
	int64_t t0;
	size_t i, j;

	if (fd < 0 || write_sites(fd, p, first)) {
		usdt_error(diag, "cannot write the sites' map: %s", strerror(errno));
		return -1;
	}
	for (i = first; l->multi && i < p->nsites; i = j) {
		int mfd;

		for (j = i + 1; j < p->nsites && !strcmp(p->sites[j].prog, p->sites[i].prog) &&
				!strcmp(p->sites[j].path, p->sites[i].path);
		     j++)
			;
		t0 = usdt_clock_ns(CLOCK_MONOTONIC);
		mfd = attach_multi(l, p, i, j);
		l->link_ns += usdt_clock_ns(CLOCK_MONOTONIC) - t0;
		if (mfd < 0 && refusal(errno) && !l->single) {
			if (fall_back(l, p, errno, diag))
				return -1;
			first = i; /* these and the rest: a link a site, below */
			break;
		}
		if (mfd < 0) {
			usdt_error(diag, "cannot attach %zu uprobes to %s: %s", j - i,
				   p->sites[i].path, strerror(errno));
			return -1;
		}
		DT_PUSH(l->mfds, l->nmfds, mfd);
		l->nsites += j - i;
	}
	if (!l->multi && p->nsites > first) {
		/* a descriptor a link: the soft limit (often 1024) raised to the hard one */
		struct rlimit r;

		if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
			r.rlim_cur = r.rlim_max;
			setrlimit(RLIMIT_NOFILE, &r);
		}
	}
	for (i = first; !l->multi && i < p->nsites; i++) {
		const struct eg_site *s = &p->sites[i];
		struct bpf_link *k;

		t0 = usdt_clock_ns(CLOCK_MONOTONIC);
		k = attach(l->single ? l->single : l->obj, s->prog, -1, s->path, s->off,
			   s->sema_off, s->cookie, diag);
		l->link_ns += usdt_clock_ns(CLOCK_MONOTONIC) - t0;
		if (!k)
			return -1;
		DT_PUSH(l->links, l->nlinks, k);
		l->nsites++;
	}
	return 0;
}

struct eg_loaded *eg_load(const struct eg_prog *p, struct usdt_diag *diag)
{
	return load(p, true, diag);
}

struct eg_loaded *eg_check(const struct eg_prog *p, struct usdt_diag *diag)
{
	return load(p, false, diag);
}

/*
 * The triggers' callers keep a frame pointer whatever the build's flags:
 * at the uprobe (the trigger's first instruction) the user stack is walked
 * by frame pointers, so ucaller and ustack()'s second frame are the
 * caller's return address, not what the register held (DTrace's BEGIN
 * sees its consumer's frames). gcc's attribute; a clang build has frame
 * pointers only where its flags give them.
 */
#if defined(__clang__) /* (clang has no attribute for a frame pointer) */
#define EG_FRAME __attribute__((noinline, disable_tail_calls))
#else
#define EG_FRAME                                                                                   \
	__attribute__((noinline, optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")))
#endif

EG_FRAME void eg_fire_begin(struct eg_loaded *l)
{
	if (l->begin)
		eg_begin_trigger();
}

EG_FRAME void eg_fire_end(struct eg_loaded *l)
{
	if (l->end)
		eg_end_trigger();
}

EG_FRAME void eg_fire_error(struct eg_loaded *l, const uint64_t arg[6])
{
	if (l->error)
		eg_error_trigger(arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}

int eg_map_fd(const struct eg_loaded *l, const char *name)
{
	return l->obj ? bpf_object__find_map_fd_by_name(l->obj, name) : -1;
}

double eg_links_ms(const struct eg_loaded *l)
{
	return (double)l->link_ns / 1e6;
}

void eg_times(const struct eg_loaded *l, double *clang_ms, double *load_ms)
{
	*clang_ms = l->clang_ms;
	*load_ms = l->load_ms;
}

void eg_unload(struct eg_loaded *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nlinks; i++)
		bpf_link__destroy(l->links[i]);
	for (i = 0; i < l->nmfds; i++)
		close(l->mfds[i]);
	dt_free(l->mfds);
	bpf_link__destroy(l->begin);
	bpf_link__destroy(l->error);
	bpf_link__destroy(l->end);
	bpf_object__close(l->single);
	bpf_object__close(l->obj);
	dt_free(l->links);
	dt_free(l->objbuf.s);
	dt_free(libbpf_log.s);
	memset(&libbpf_log, 0, sizeof(libbpf_log));
	dt_free(l);
}
