// SPDX-License-Identifier: MIT
/*
 * The measuring client of bench/helper/loadtest.sh: requests to
 * usdtkit-helperd ($USDTKIT_HELPER_SOCKET) timed one by one, as drti and
 * `dtrace -l` make them (a connection each), while others load the daemon.
 *
 *   loadclient known N GAP_MS LIB    N REGISTERs of LIB's lib_call (a file
 *                                    the daemon knows), GAP_MS apart
 *   loadclient new GAP_MS LIB...     one REGISTER of each LIB (new files),
 *                                    each kept mapped, GAP_MS apart
 *   loadclient list N GAP_MS         N LISTs of every process
 *
 * Prints "n=N failed=F p50=US p90=US p99=US max=US" (microseconds, from
 * connect to the REPLY; a failure is a status other than 0, or no answer
 * within 60 s, or $LOADCLIENT_WAIT_S).
 */
#include <time.h>

#include "protoclient.h"

#define WAIT_MS 60000

/* How long an answer is waited for (a 12,000-site file under callgrind takes minutes). */
static int wait_ms(void)
{
	const char *e = getenv("LOADCLIENT_WAIT_S");

	return e && atoi(e) > 0 ? atoi(e) * 1000 : WAIT_MS;
}

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static void nap(unsigned ms)
{
	struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&t, NULL);
}

/* One request; its time in µs, or -1 (failed). */
static int64_t request(const void *msg, size_t len, uint32_t seq)
{
	uint64_t t0 = now_us();
	int fd = proto_connect();
	union {
		struct usdt_msg_reply r;
		char buf[8192];
	} in;
	int64_t ret = -1;

	if (fd < 0)
		return -1;
	if (send(fd, msg, len, 0) == (ssize_t)len) {
		for (;;) {
			ssize_t n = proto_recv(fd, &in, sizeof(in), wait_ms());

			if (n <= 0)
				break;
			if (proto_is_reply(&in.r, n, seq)) {
				ret = in.r.status == 0 ? (int64_t)(now_us() - t0) : -1;
				break;
			}
			/* a LIST_ENTRY, or a HELD: not the answer yet */
		}
	}
	close(fd);
	return ret;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(int64_t *t, int n)
{
	int ok = 0;

	for (int i = 0; i < n; i++)
		if (t[i] >= 0)
			t[ok++] = t[i];
	qsort(t, (size_t)ok, sizeof(*t), cmp);
	if (!ok) {
		printf("n=%d failed=%d\n", n, n);
		return;
	}
	printf("n=%d failed=%d p50=%lld p90=%lld p99=%lld max=%lld\n", n, n - ok,
	       (long long)t[ok / 2], (long long)t[ok * 9 / 10], (long long)t[ok * 99 / 100],
	       (long long)t[ok - 1]);
}

int main(int argc, char **argv)
{
	int64_t *t;
	int n;

	if (argc >= 5 && !strcmp(argv[1], "known")) {
		uint64_t addr = proto_lib_addr(argv[4], "loadclient");
		struct usdt_msg_module m;

		n = atoi(argv[2]);
		t = calloc((size_t)n, sizeof(*t));
		for (int i = 0; t && i < n; i++) {
			proto_module(&m, USDT_MSG_REGISTER, addr, (uint32_t)i + 1);
			t[i] = request(&m, sizeof(m), (uint32_t)i + 1);
			nap((unsigned)atoi(argv[3]));
		}
	} else if (argc >= 4 && !strcmp(argv[1], "new")) {
		n = argc - 3;
		t = calloc((size_t)n, sizeof(*t));
		for (int i = 0; t && i < n; i++) {
			struct usdt_msg_module m;
			uint64_t addr = proto_lib_addr(argv[i + 3], "loadclient");

			proto_module(&m, USDT_MSG_REGISTER, addr, (uint32_t)i + 1);
			t[i] = request(&m, sizeof(m), (uint32_t)i + 1);
			nap((unsigned)atoi(argv[2]));
		}
	} else if (argc >= 4 && !strcmp(argv[1], "list")) {
		struct usdt_msg_list m;

		n = atoi(argv[2]);
		t = calloc((size_t)n, sizeof(*t));
		for (int i = 0; t && i < n; i++) {
			proto_list(&m, 0, (uint32_t)i + 1);
			t[i] = request(&m, sizeof(m), (uint32_t)i + 1);
			nap((unsigned)atoi(argv[3]));
		}
	} else {
		fprintf(stderr, "usage: loadclient known N GAP_MS LIB | new GAP_MS LIB... | "
				"list N GAP_MS\n");
		return 2;
	}
	if (!t)
		return 2;
	report(t, n);
	return 0;
}
