// SPDX-License-Identifier: MIT
/*
 * A protocol client for the process-fault tests (tests/fault/process): a
 * process that maps a real probed module and says what drti would say about
 * it, but dies or waits where a test needs it to. It speaks
 * core/protocol.h on $USDTKIT_HELPER_SOCKET. LIB's own drti is kept
 * quiet (USDTKIT_DISABLE=1 before the dlopen): only this program talks.
 *
 *   fclient regexit LIB N [zombies]
 *       dlopen LIB, then fork N children; each connects, sends a REGISTER
 *       for LIB's lib_call and _exits at once, reading no answer. The parent
 *       prints "child PID" for each, reaps them all (with "zombies": only
 *       after printing "forked N" and reading stdin to EOF, so that they stay
 *       zombies meanwhile) and prints "sent K" (the children whose send
 *       succeeded, told through their exit status).
 *   fclient hold LIB
 *       dlopen LIB, print "ready PID ADDR" (ADDR: lib_call), then obey stdin:
 *         reg       REGISTER ADDR and wait for the answer: "status=S nprobes=N"
 *         regexit   send REGISTER ADDR and _exit(0) without reading the answer
 *       and exit 0 at EOF.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protoclient.h"

/* Sends a REGISTER for addr on a new connection; the connection, or -1. */
static int send_register(uint64_t addr, uint32_t seq)
{
	struct usdt_msg_module m;
	int fd = proto_connect();

	if (fd < 0)
		return -1;
	proto_module(&m, USDT_MSG_REGISTER, addr, seq);
	if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* REGISTER and wait (30 s: tests hold the parser): the status, or -1000 - why. */
static int32_t register_wait(uint64_t addr, uint32_t *nprobes)
{
	struct usdt_msg_reply r;
	int fd = send_register(addr, 77);
	ssize_t n;

	if (fd < 0)
		return -1000;
	n = proto_recv(fd, &r, sizeof(r), 30000);
	close(fd);
	if (n < 0)
		return -1001;
	if (!proto_is_reply(&r, n, 77))
		return -1002;
	*nprobes = r.nprobes;
	return r.status;
}

static uint64_t lib_addr(const char *lib)
{
	return proto_lib_addr(lib, "fclient");
}

static int regexit(const char *lib, int n, int zombies)
{
	uint64_t addr = lib_addr(lib);
	int sent = 0, status;
	char c;
	pid_t pid;

	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0)
			_exit(send_register(addr, (uint32_t)i) < 0 ? 1 : 0);
		if (pid < 0) {
			fprintf(stderr, "fclient: fork: %s\n", strerror(errno));
			break;
		}
		printf("child %d\n", (int)pid);
	}
	if (zombies) {
		printf("forked %d\n", n);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	while ((pid = wait(&status)) > 0)
		sent += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("sent %d\n", sent);
	return 0;
}

static int hold(const char *lib)
{
	uint64_t addr = lib_addr(lib);
	char line[64];
	uint32_t np = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d 0x%" PRIx64 "\n", (int)getpid(), addr);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "reg\n")) {
			int32_t st = register_wait(addr, &np);

			printf("status=%d nprobes=%u\n", (int)st, np);
		} else if (!strcmp(line, "regexit\n")) {
			_exit(send_register(addr, 78) < 0 ? 1 : 0);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "regexit"))
		return regexit(argv[2], atoi(argv[3]), argc == 5 && !strcmp(argv[4], "zombies"));
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return hold(argv[2]);
	fprintf(stderr, "usage: see the head comment of tests/fault/process/fclient.c\n");
	return 2;
}
