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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "clock.h"
#include "engine.h"

struct eg_loaded {
	struct bpf_object *obj;
	struct bpf_link **links;
	size_t nlinks;
	struct bpf_link *begin, *end;
	double clang_ms, load_ms;
};

static double now_ms(void)
{
	return (double)usdt_clock_ns(CLOCK_MONOTONIC) / 1e6;
}

/* libbpf's messages: kept, shown only when loading fails (the verifier's log). */
static struct dt_buf libbpf_log;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* libbpf's own formats */
static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static char buf[1 << 16]; /* the verifier's log comes as one message */

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (libbpf_log.n < (1u << 20))
		dt_buf_add(&libbpf_log, buf, strlen(buf));
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

/* clang's path: $USDTKIT_CLANG, else clang, else clang-14 (Debian 12). */
static int compile(const char *src, const char *obj, struct usdt_diag *diag)
{
	const char *env = getenv("USDTKIT_CLANG");
	const char *const names[] = {env && *env ? env : "clang", "clang-14", NULL};
	int status = -1;
	size_t i;

	for (i = 0; names[i]; i++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0) {
			execlp(names[i], names[i], "-O2", "-g", "-target", "bpf", "-w", "-c", src,
			       "-o", obj, (char *)NULL);
			_exit(127);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 127)
			break;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		usdt_error(diag, "-x engine=bpf compiles with clang, which is not installed: "
				 "install the clang package (apt-get install clang, dnf install "
				 "clang) or name a clang in $USDTKIT_CLANG");
	else
		usdt_error(diag, "clang could not compile the generated program (a bug of "
				 "dtrace: -x bpfc prints it)");
	return -1;
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

static struct bpf_link *attach(struct bpf_object *obj, const char *prog, int pid, const char *path,
			       uint64_t off, uint64_t sema, struct usdt_diag *diag)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	struct bpf_uprobe_opts uo; /* (LIBBPF_OPTS is a GNU statement expression) */
	struct bpf_link *l;

	memset(&uo, 0, sizeof(uo));
	uo.sz = sizeof(uo);
	uo.ref_ctr_offset = (size_t)sema;
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

static struct bpf_link *attach_self(struct bpf_object *obj, const char *prog, void (*fn)(void),
				    struct usdt_diag *diag)
{
	char path[4096];
	uint64_t off;

	if (self_offset((uintptr_t)fn, path, sizeof(path), &off)) {
		usdt_error(diag, "cannot find dtrace's own file in /proc/self/maps");
		return NULL;
	}
	return attach(obj, prog, getpid(), path, off, 0, diag);
}

/* tick-N: a CPU clock on CPU 0 (the tick fires on one CPU, as DTrace's does). */
static struct bpf_link *attach_timer(struct bpf_object *obj, const struct eg_timer *t,
				     struct usdt_diag *diag)
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
	fd = p ? (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC) : -1;
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

static struct eg_loaded *load(const struct eg_prog *p, bool do_attach, struct usdt_diag *diag)
{
	struct eg_loaded *l = dt_xmalloc(sizeof(*l));
	const char *tmp = getenv("TMPDIR");
	char src[4096], obj[4096];
	double t0;
	size_t i;
	int fd;

	memset(l, 0, sizeof(*l));
	snprintf(src, sizeof(src), "%s/usdtkit-dtrace-XXXXXX.c", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemps(src, 2);
	if (fd < 0 || write(fd, p->c.s, p->c.n) != (ssize_t)p->c.n) {
		usdt_error(diag, "cannot write the generated program (%s): %s", src,
			   strerror(errno));
		if (fd >= 0)
			close(fd), unlink(src);
		dt_free(l);
		return NULL;
	}
	close(fd);
	snprintf(obj, sizeof(obj), "%.*s.o", (int)strlen(src) - 2, src);
	t0 = now_ms();
	if (compile(src, obj, diag)) {
		unlink(src);
		unlink(obj);
		dt_free(l);
		return NULL;
	}
	unlink(src);
	l->clang_ms = now_ms() - t0;
	t0 = now_ms();
	libbpf_set_print(on_libbpf_print);
	l->obj = bpf_object__open_file(obj, NULL);
	unlink(obj);
	if (!l->obj || bpf_object__load(l->obj)) {
		show_log();
		usdt_error(diag, "the kernel refused the generated program (%s)", strerror(errno));
		eg_unload(l);
		return NULL;
	}
	for (i = 0; do_attach && i < p->nsites; i++) {
		const struct eg_site *s = &p->sites[i];
		struct bpf_link *k =
		    attach(l->obj, s->prog, -1, s->path, s->off, s->sema_off, diag);

		if (!k) {
			eg_unload(l);
			return NULL;
		}
		DT_PUSH(l->links, l->nlinks, k);
	}
	for (i = 0; do_attach && i < p->ntimers; i++) {
		struct bpf_link *k = attach_timer(l->obj, &p->timers[i], diag);

		if (!k) {
			eg_unload(l);
			return NULL;
		}
		DT_PUSH(l->links, l->nlinks, k);
	}
	if (do_attach && p->has_begin &&
	    !(l->begin = attach_self(l->obj, "dt_begin", eg_begin_trigger, diag))) {
		eg_unload(l);
		return NULL;
	}
	if (do_attach && p->has_end &&
	    !(l->end = attach_self(l->obj, "dt_end", eg_end_trigger, diag))) {
		eg_unload(l);
		return NULL;
	}
	l->load_ms = now_ms() - t0;
	if (getenv("USDTKIT_ENGINE_TIMES"))
		fprintf(stderr, "dtrace: clang %.1f ms, load and attach %.1f ms (%zu uprobes)\n",
			l->clang_ms, l->load_ms, l->nlinks);
	return l;
}

struct eg_loaded *eg_load(const struct eg_prog *p, struct usdt_diag *diag)
{
	return load(p, true, diag);
}

struct eg_loaded *eg_check(const struct eg_prog *p, struct usdt_diag *diag)
{
	return load(p, false, diag);
}

void eg_fire_begin(struct eg_loaded *l)
{
	if (l->begin)
		eg_begin_trigger();
}

void eg_fire_end(struct eg_loaded *l)
{
	if (l->end)
		eg_end_trigger();
}

int eg_map_fd(const struct eg_loaded *l, const char *name)
{
	return l->obj ? bpf_object__find_map_fd_by_name(l->obj, name) : -1;
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
	bpf_link__destroy(l->begin);
	bpf_link__destroy(l->end);
	bpf_object__close(l->obj);
	dt_free(l->links);
	dt_free(libbpf_log.s);
	memset(&libbpf_log, 0, sizeof(libbpf_log));
	dt_free(l);
}
