/* SPDX-License-Identifier: MIT */
/*
 * The runtime-provider tests' program (tests/runtime/t-*.sh): one mode per
 * behaviour of <usdtkit/runtime.h>, each checking what it can see from
 * inside the process (check.h) and printing what the scripts compare with
 * what the tracers saw.
 *
 *   rtprog fire [SECONDS]
 *	provider $RTPROG_NAME (default "rtc"), probes "all-types" (12 arguments,
 *	every type) and "hit" (int32, string), loaded; prints "pid N", then
 *	"ready", then fires both every 10 ms with fixed values until stdin ends
 *	(or SECONDS), printing "enabled 0|1" whenever "hit" changes, then
 *	"unloaded" after an unload (also when stdin says "unload"), and exits
 *   rtprog errors         every misuse, with its errno and message
 *   rtprog many           64 providers of 20 probes and one of 1,000
 *   rtprog threads [N]    4 threads fire while the main thread loads and
 *	unloads N (300) times
 *   rtprog fork           the loaded provider fires in a fork child
 *   rtprog load           loads once and prints the error if it fails
 *   rtprog nomemfd        loads with memfd_create refused (seccomp)
 *   rtprog cycle N        create, add, load, fire, unload, destroy N times
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef RTPROG_SECCOMP
#include <seccomp.h>
#endif

#include "../lib/check.h"
#include "usdtkit/runtime.h"

static const usdtkit_type all_types[12] = {
    USDTKIT_INT8,  USDTKIT_UINT8,  USDTKIT_INT16,   USDTKIT_UINT16, USDTKIT_INT32, USDTKIT_UINT32,
    USDTKIT_INT64, USDTKIT_UINT64, USDTKIT_POINTER, USDTKIT_STRING, USDTKIT_INT32, USDTKIT_UINT64,
};

/* The provider's name: $RTPROG_NAME (unique per test run), or `dflt`. */
static const char *pname(const char *dflt)
{
	const char *n = getenv("RTPROG_NAME");

	return n && n[0] ? n : dflt;
}

static void fire_all(const usdtkit_probe *q, int i)
{
	/* The values t-runtime-*.sh expect: extremes of each type, then i. */
	CHECK(usdtkit_probe_fire(q, -128, 255, -32768, 65535, (int)-2147483647 - 1, 4294967295u,
				 (int64_t)INT64_MIN, (uint64_t)UINT64_MAX, (void *)0x1234abcd,
				 "all-types string", i,
				 (uint64_t)1000000000000ull * (unsigned)i) == 0);
}

static int stdin_says(const char *what, int timeout_ms)
{
	struct pollfd pfd = {0, POLLIN, 0};
	char buf[64];
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	n = read(0, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 2; /* EOF */
	buf[n] = '\0';
	return strstr(buf, what) ? 1 : 0;
}

static int mode_fire(int seconds)
{
	usdtkit_provider *p = usdtkit_provider_create(pname("rtc"), NULL);
	usdtkit_probe *all, *hit;
	time_t end = time(NULL) + seconds;
	int i, last = -1, r;

	CHECK(p != NULL);
	all = usdtkit_probe_addv(p, "all-types", 12, all_types);
	hit = usdtkit_probe_add(p, "hit", 2, USDTKIT_INT32, USDTKIT_STRING);
	CHECK(all && hit);
	if (!all || !hit || usdtkit_provider_load(p) != 0) {
		fprintf(stderr, "%s\n", usdtkit_provider_error(p));
		return 1;
	}
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	for (i = 0; time(NULL) < end; i++) {
		int e = usdtkit_probe_enabled(hit);

		if (e != last) {
			printf("enabled %d\n", e);
			fflush(stdout);
			last = e;
		}
		fire_all(all, i);
		CHECK(usdtkit_probe_fire(hit, i, "hello from rtc") == 0);
		r = stdin_says("unload", 10);
		if (r == 2)
			break;
		if (r == 1) {
			CHECK(usdtkit_provider_unload(p) == 0);
			CHECK(usdtkit_probe_enabled(hit) == 0);
			printf("unloaded\n");
			fflush(stdout);
			while (stdin_says("", 1000) != 2)
				;
			break;
		}
	}
	usdtkit_provider_destroy(p);
	return check_result();
}

/* A call that must fail with `err` and a message containing `words`. */
#define FAILS(call, p, err, words)                                                                 \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECKF(!(call) && errno == (err) && strstr(usdtkit_provider_error(p), (words)),    \
		       "%s: errno %d (want %d), message '%s' (want '%s')", #call, errno, err,      \
		       usdtkit_provider_error(p), words);                                          \
		printf("%s\n", usdtkit_provider_error(p));                                         \
	} while (0)

static int mode_errors(void)
{
	usdtkit_type many[13];
	usdtkit_provider *p;
	usdtkit_probe *q;
	char longname[80];
	int k;

	errno = 0;
	CHECK(usdtkit_provider_create("bad name", NULL) == NULL && errno == EINVAL);
	CHECK(usdtkit_provider_create("9lives", NULL) == NULL && errno == EINVAL);
	CHECK(usdtkit_provider_create("", NULL) == NULL && errno == EINVAL);
	CHECK(usdtkit_provider_create(NULL, NULL) == NULL && errno == EINVAL);
	CHECK(usdtkit_provider_create("ok", "bad\nmodule") == NULL && errno == EINVAL);
	memset(longname, 'a', 64);
	longname[64] = '\0';
	CHECK(usdtkit_provider_create(longname, NULL) == NULL && errno == EINVAL);
	longname[63] = '\0';
	p = usdtkit_provider_create(longname, NULL);
	CHECK(p != NULL);
	usdtkit_provider_destroy(p);

	p = usdtkit_provider_create("electric-moray", "mod-1");
	CHECK(p != NULL);
	if (!p)
		return check_result();
	FAILS(usdtkit_provider_load(p) == 0, p, ENOENT, "has no probes");
	for (k = 0; k < 13; k++)
		many[k] = USDTKIT_INT32;
	FAILS(usdtkit_probe_addv(p, "thirteen", 13, many), p, E2BIG,
	      "13 arguments; a probe has 0 to 12");
	FAILS(usdtkit_probe_addv(p, "negative", -1, many), p, E2BIG, "a probe has 0 to 12");
	FAILS(usdtkit_probe_add(p, "bad.name", 0), p, EINVAL,
	      "probe name 'bad.name' has a character");
	FAILS(usdtkit_probe_add(p, "1st", 0), p, EINVAL, "starts with a digit");
	FAILS(usdtkit_probe_add(p, "", 0), p, EINVAL, "is empty");
	FAILS(usdtkit_probe_add(p, "badtype", 1, 3), p, EINVAL, "argument 0 has type 3");
	q = usdtkit_probe_add(p, "client-error", 1, USDTKIT_STRING);
	CHECK(q != NULL);
	FAILS(usdtkit_probe_add(p, "client-error", 0), p, EEXIST, "already declared");
	FAILS(usdtkit_probe_add(p, "client__error", 0), p, EEXIST, "'-' is '__'");
	/* Before a load a fire fails, and says nothing is enabled. */
	errno = 0;
	CHECK(usdtkit_probe_fire(q, "x") == -1 && errno == ESRCH);
	CHECK(usdtkit_probe_enabled(q) == 0);
	CHECK(usdtkit_probe_semaphore(q) == NULL);
	CHECK(usdtkit_provider_load(p) == 0);
	CHECK(usdtkit_provider_loaded(p) == 1);
	CHECK(usdtkit_probe_semaphore(q) != NULL);
	CHECK(usdtkit_probe_fire(q, "x") == 0);
	FAILS(usdtkit_provider_load(p) == 0, p, EALREADY, "is loaded already");
	FAILS(usdtkit_probe_add(p, "late", 0), p, EBUSY, "unload it first");
	CHECK(usdtkit_provider_unload(p) == 0);
	FAILS(usdtkit_provider_unload(p) == 0, p, EALREADY, "is not loaded");
	errno = 0;
	CHECK(usdtkit_probe_fire(q, "x") == -1 && errno == ESRCH);
	CHECK(usdtkit_probe_fire_argv(q, 0, NULL) == -1 && errno == ESRCH);
	/* A probe added after an unload is in the next load's new object. */
	CHECK(usdtkit_probe_add(p, "late", 2, USDTKIT_INT64, USDTKIT_POINTER) != NULL);
	CHECK(usdtkit_provider_load(p) == 0);
	CHECK(usdtkit_probe_fire(q, "y") == 0);
	CHECK(strcmp(usdtkit_probe_name(q), "client-error") == 0);
	CHECK(usdtkit_probe_provider(q) == p);
	CHECK(usdtkit_probe_nargs(q) == 1 && usdtkit_probe_arg_type(q, 0) == USDTKIT_STRING);
	CHECK(strcmp(usdtkit_provider_name(p), "electric-moray") == 0);
	usdtkit_provider_destroy(p);
	printf("errors ok\n");
	return check_result();
}

static int mode_many(void)
{
	usdtkit_provider *ps[64], *big;
	char name[32];
	int i, j;

	for (i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "many%d", i);
		ps[i] = usdtkit_provider_create(name, NULL);
		CHECK(ps[i] != NULL);
		for (j = 0; j < 20; j++) {
			snprintf(name, sizeof(name), "p%d", j);
			CHECK(usdtkit_probe_add(ps[i], name, 2, USDTKIT_INT32, USDTKIT_STRING) !=
			      NULL);
		}
		CHECKF(usdtkit_provider_load(ps[i]) == 0, "%s", usdtkit_provider_error(ps[i]));
	}
	big = usdtkit_provider_create("big", NULL);
	for (j = 0; j < 1000; j++) {
		usdtkit_probe *q;

		snprintf(name, sizeof(name), "probe-%d", j);
		q = usdtkit_probe_add(
		    big, name, j % 13, USDTKIT_UINT64, USDTKIT_UINT64, USDTKIT_UINT64,
		    USDTKIT_UINT64, USDTKIT_UINT64, USDTKIT_UINT64, USDTKIT_UINT64, USDTKIT_UINT64,
		    USDTKIT_UINT64, USDTKIT_UINT64, USDTKIT_UINT64, USDTKIT_UINT64);
		CHECK(q != NULL);
	}
	CHECKF(usdtkit_provider_load(big) == 0, "%s", usdtkit_provider_error(big));
	{
		usdtkit_probe *q0 = usdtkit_probe_add(ps[0], "x", 0);

		CHECK(q0 == NULL); /* loaded: EBUSY */
	}
	printf("providers 65 probes %d\n", 64 * 20 + 1000);
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	/* Wait for the script (it lists the probes), then clean up. */
	while (stdin_says("", 1000) != 2)
		;
	for (i = 0; i < 64; i++)
		usdtkit_provider_destroy(ps[i]);
	usdtkit_provider_destroy(big);
	return check_result();
}

struct firer {
	const usdtkit_probe *q;
	int *stop; /* read and written with __atomic builtins: threads share it */
	unsigned long fired, refused, bad;
};

static void *fire_thread(void *arg)
{
	struct firer *f = arg;

	while (!__atomic_load_n(f->stop, __ATOMIC_ACQUIRE)) {
		int r;

		errno = 0;
		r = usdtkit_probe_fire(f->q, 7, "threads");
		if (r == 0)
			f->fired++;
		else if (r == -1 && errno == ESRCH)
			f->refused++;
		else
			f->bad++;
	}
	return NULL;
}

static int mode_threads(int n)
{
	usdtkit_provider *p = usdtkit_provider_create(pname("rtthreads"), NULL);
	usdtkit_probe *q = usdtkit_probe_add(p, "hit", 2, USDTKIT_INT32, USDTKIT_STRING);
	struct firer f[4];
	pthread_t t[4];
	int stop = 0;
	int i, loads = 0;

	CHECK(p && q);
	for (i = 0; i < 4; i++) {
		f[i] = (struct firer){q, &stop, 0, 0, 0};
		CHECK(pthread_create(&t[i], NULL, fire_thread, &f[i]) == 0);
	}
	for (i = 0; i < n; i++) {
		if (usdtkit_provider_load(p) == 0)
			loads++;
		else
			fprintf(stderr, "%s\n", usdtkit_provider_error(p));
		usleep(200);
		CHECK(usdtkit_provider_unload(p) == 0);
		/* Every 50 cycles a new probe: the next load maps a new object. */
		if (i % 50 == 49) {
			char name[16];

			snprintf(name, sizeof(name), "extra%d", i);
			CHECK(usdtkit_probe_add(p, name, 0) != NULL);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECKF(f[i].bad == 0, "thread %d: %lu fires failed unexpectedly", i, f[i].bad);
		CHECKF(f[i].fired + f[i].refused > 0, "thread %d fired nothing", i);
	}
	CHECK(loads == n);
	printf("threads ok: %d loads\n", loads);
	usdtkit_provider_destroy(p);
	return check_result();
}

static int mode_fork(void)
{
	usdtkit_provider *p = usdtkit_provider_create(pname("rtfork"), NULL);
	usdtkit_probe *q = usdtkit_probe_add(p, "hit", 2, USDTKIT_INT32, USDTKIT_STRING);
	int status, i;
	pid_t pid;

	if (!p || !q || usdtkit_provider_load(p) != 0)
		return 1;
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	/* The script attaches, then says go. */
	while (!stdin_says("go", 1000))
		;
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 50; i++) {
			if (usdtkit_probe_fire(q, 2000 + i, "child") != 0)
				_exit(3);
			usleep(10000);
		}
		_exit(0);
	}
	CHECK(pid > 0);
	for (i = 0; i < 50; i++) {
		CHECK(usdtkit_probe_fire(q, 1000 + i, "parent") == 0);
		usleep(10000);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("child %d done\n", (int)pid);
	fflush(stdout);
	while (stdin_says("", 1000) != 2)
		;
	usdtkit_provider_destroy(p);
	return check_result();
}

static int mode_load(void)
{
	usdtkit_provider *p = usdtkit_provider_create(pname("rtload"), NULL);
	usdtkit_probe *q = usdtkit_probe_add(p, "hit", 1, USDTKIT_INT32);

	if (!p || !q)
		return 1;
	if (usdtkit_provider_load(p) != 0) {
		printf("load failed: errno %d: %s\n", errno, usdtkit_provider_error(p));
		CHECK(usdtkit_provider_loaded(p) == 0);
		CHECK(usdtkit_probe_fire(q, 1) == -1);
		usdtkit_provider_destroy(p);
		return check_result() ? 1 : 2;
	}
	CHECK(usdtkit_probe_fire(q, 1) == 0);
	printf("loaded\n");
	usdtkit_provider_destroy(p);
	return check_result();
}

static int mode_nomemfd(void)
{
#ifdef RTPROG_SECCOMP
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(memfd_create), 0) != 0 ||
	    seccomp_load(ctx) != 0) {
		fprintf(stderr, "cannot install the seccomp filter\n");
		return 1;
	}
	seccomp_release(ctx);
	return mode_load();
#else
	printf("no libseccomp\n");
	return 77;
#endif
}

static int mode_cycle(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		usdtkit_provider *p = usdtkit_provider_create("rtcycle", "cycle-module");
		usdtkit_probe *q = usdtkit_probe_addv(p, "all-types", 12, all_types);

		CHECK(p && q && usdtkit_provider_load(p) == 0);
		fire_all(q, i);
		CHECK(usdtkit_provider_unload(p) == 0);
		CHECK(usdtkit_provider_load(p) == 0);
		usdtkit_provider_destroy(p);
	}
	printf("cycles %d\n", n);
	return check_result();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "fire") == 0)
		return mode_fire(argc > 2 ? atoi(argv[2]) : 60);
	if (strcmp(mode, "errors") == 0)
		return mode_errors();
	if (strcmp(mode, "many") == 0)
		return mode_many();
	if (strcmp(mode, "threads") == 0)
		return mode_threads(argc > 2 ? atoi(argv[2]) : 300);
	if (strcmp(mode, "fork") == 0)
		return mode_fork();
	if (strcmp(mode, "load") == 0)
		return mode_load();
	if (strcmp(mode, "nomemfd") == 0)
		return mode_nomemfd();
	if (strcmp(mode, "cycle") == 0)
		return mode_cycle(argc > 2 ? atoi(argv[2]) : 10);
	fprintf(stderr, "usage: rtprog fire|errors|many|threads|fork|load|nomemfd|cycle\n");
	return 2;
}
