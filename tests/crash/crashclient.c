// SPDX-License-Identifier: MIT
/*
 * A protocol client of usdtkit-helperd for tests/crash: a process that
 * registers a library and stays, as many as a test wants.
 * Socket: $USDTKIT_HELPER_SOCKET.
 *
 *   crashclient hold LIB
 *       dlopen LIB (drti off), REGISTER its lib_call; prints
 *       "status=S nprobes=N" ("status=closed" when the daemon closed the
 *       connection unanswered 200 times: drti's retries after a connection
 *       cap; "status=timeout" after $CRASHCLIENT_WAIT_MS, default 5000),
 *       then "ready", and holds until stdin EOF
 *   crashclient hold-quiet LIB
 *       the same, but holds until killed (stdin unused: hundreds of them)
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protoclient.h"

/* One REGISTER; 1 when the daemon closed the connection unanswered (a cap: try again). */
static int reg_once(uint64_t addr, bool last)
{
	const char *w = getenv("CRASHCLIENT_WAIT_MS");
	struct usdt_msg_module m;
	struct usdt_msg_reply r;
	int fd = proto_connect();
	ssize_t n;

	if (fd < 0) {
		printf("status=noconnect errno=%d\n", errno);
		return 0;
	}
	proto_module(&m, USDT_MSG_REGISTER, addr, 7);
	errno = 0;
	n = send(fd, &m, sizeof(m), 0) == sizeof(m)
		? proto_recv(fd, &r, sizeof(r), w ? atoi(w) : 5000)
		: 0;
	close(fd);
	if (n < 0 && errno == 0)
		printf("status=timeout\n");
	else if (n <= 0 && !last)
		return 1;
	else if (n <= 0)
		printf("status=closed\n");
	else if (!proto_is_reply(&r, n, 7))
		printf("status=malformed\n");
	else
		printf("status=%d nprobes=%u\n", r.status, r.nprobes);
	return 0;
}

/*
 * As drti does: a connection the daemon closed unanswered (its connection
 * caps: the newcomer wins over the oldest idle one) is tried again, after
 * 1, 2, 4, 8, then every 16 ms, 200 times at most.
 */
static void reg(uint64_t addr)
{
	unsigned ms = 1;

	for (int i = 0; i < 200 && reg_once(addr, i == 199); i++) {
		usleep(ms * 1000);
		if (ms < 16)
			ms *= 2;
	}
}

int main(int argc, char **argv)
{
	char c;

	if (argc != 3 || (strcmp(argv[1], "hold") && strcmp(argv[1], "hold-quiet"))) {
		fprintf(stderr, "usage: crashclient hold|hold-quiet LIB\n");
		return 2;
	}
	errno = 0;
	reg(proto_lib_addr(argv[2], "crashclient"));
	printf("ready\n");
	fflush(stdout);
	if (!strcmp(argv[1], "hold-quiet"))
		for (;;)
			pause();
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
