// SPDX-License-Identifier: MIT
/*
 * A protocol client of usdtkit-helperd for tests/crash: a process that
 * registers a library and stays, as many as a test wants.
 * Socket: $USDTKIT_HELPER_SOCKET.
 *
 *   crashclient hold LIB
 *       dlopen LIB (drti off), REGISTER its lib_call; prints
 *       "status=S nprobes=N" ("status=closed" when the daemon closed the
 *       connection unanswered, "status=timeout" after $CRASHCLIENT_WAIT_MS,
 *       default 5000), then "ready", and holds until stdin EOF
 *   crashclient hold-quiet LIB
 *       the same, but holds until killed (stdin unused: hundreds of them)
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protoclient.h"

static void reg(uint64_t addr)
{
	const char *w = getenv("CRASHCLIENT_WAIT_MS");
	struct usdt_msg_module m;
	struct usdt_msg_reply r;
	int fd = proto_connect();
	ssize_t n;

	if (fd < 0) {
		printf("status=noconnect errno=%d\n", errno);
		return;
	}
	proto_module(&m, USDT_MSG_REGISTER, addr, 7);
	if (send(fd, &m, sizeof(m), 0) != sizeof(m)) {
		printf("status=closed\n");
		close(fd);
		return;
	}
	errno = 0;
	n = proto_recv(fd, &r, sizeof(r), w ? atoi(w) : 5000);
	if (n < 0 && errno == 0)
		printf("status=timeout\n");
	else if (n <= 0)
		printf("status=closed\n");
	else if (!proto_is_reply(&r, n, 7))
		printf("status=malformed\n");
	else
		printf("status=%d nprobes=%u\n", r.status, r.nprobes);
	close(fd);
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
