/* SPDX-License-Identifier: MIT */
/*
 * drti: the registration constructor compiled into every `dtrace -G` object.
 *
 * `dtrace -G` pastes this file (with core/protocol.h inlined in place of its
 * #include, see kernel-helper/embed.py) at the end of the C source it
 * generates for the provider object and compiles it with the target's
 * compiler and the user's CFLAGS, so one copy lives in each executable or
 * shared library that links a -G object. Before this file the generated
 * source defines
 *
 *   USDT_DRTI_NOTE   the address of this module's own metadata note
 *                    (.note.usdtkit, see core/METADATA-NOTE.md).
 *
 * That address is all the helper daemon (usdtkit-helperd) needs from us: it
 * takes the caller's identity from the socket (SO_PEERCRED), finds the module
 * by looking the address up in the caller's /proc/PID/maps, and reads the
 * notes from the file that is really mapped there. Nothing the process says
 * is trusted beyond it. The conversation is core/protocol.h: one
 * SOCK_SEQPACKET connection per request, REGISTER or UNREGISTER carrying the
 * address, one REPLY back.
 *
 * When it talks (the cost model is in kernel-helper/README.md, "Registration
 * off the hot path"):
 *   - load (constructor: program start, or dlopen). No socket file (no
 *     daemon installed): one access(), nothing else. Else, if the daemon's
 *     board (protocol.h) lists the file mapped at our note's address, its
 *     events exist already: nothing is sent, no round trip. The file is
 *     named by a stat() of its path (the executable's, AT_EXECFN, or a
 *     library's as the loader's list has it: device, inode; 6 system
 *     calls in all, no /proc), else, or when that misses, as PROCMAP_QUERY
 *     names it (device, inode, path).
 *     A file not on a board whose daemon is gone (no liveness lock: a
 *     crashed daemon's, its socket left behind) sends nothing either: the
 *     connection would be refused, and the next daemon finds us by its
 *     start-up scan. The lock is looked at on such a miss only: a hit
 *     needs no daemon (drti_board.c).
 *     Else REGISTER, and wait for the REPLY so that the probes exist before
 *     the program goes on (a first-seen file);
 *   - fork child: nothing. The child maps the same file, whose events the
 *     kernel applies to it already; the daemon finds such processes by
 *     reading /proc when it needs to know them (a LIST, or before it would
 *     remove the file's events), so a fork costs no message;
 *   - unload (destructor), only when this module sent a REGISTER: at
 *     dlclose UNREGISTER and wait for the REPLY, so that an immediate
 *     dlopen of the same library cannot overtake it; at exit nothing: an
 *     exiting process must not be delayed, and the daemon sees the exit on
 *     its pidfd. Which of the two it is: an atexit handler registered by
 *     the constructor runs before the destructors at exit (exit handlers
 *     run in reverse order of registration, and the one that runs the
 *     destructors, ld.so's _dl_fini or a static program's call_fini, was
 *     registered before main), but after them at dlclose (__cxa_finalize
 *     runs after the module's fini array), so it sets a flag the destructor
 *     reads. exec runs no destructor; the daemon sees that too.
 *
 * The rules it keeps, because it runs inside every traced program
 * (docs/ARCHITECTURE.md, invariant 2: it must not crash, hang, or change the
 * program's behaviour):
 *   - bounded: every wait is a poll() against one deadline per request,
 *     USDTKIT_HELPER_TIMEOUT_MS (default 100, at most 5000, 0 = send and do
 *     not wait). One thing moves it: when root runs a tracer with retained
 *     enablings (dtrace -Z) and this registration needs the daemon's parse,
 *     the daemon says HELD (core/protocol.h) and the deadline moves to the
 *     HELD's `ms` from then, at most USDTKIT_HELPER_HOLD_MS (default 2000,
 *     at most 5000, 0 = never), once per request: the program's first
 *     firings then reach the tracer, as DTrace's would. A HELD counts
 *     only from a peer whose SO_PEERCRED uid (the listening socket's
 *     creator) is 0 or this program's effective uid; from anyone else the
 *     request ends at once, as with no daemon. Root: a squatter on the
 *     socket path (a USDTKIT_HELPER_SOCKET in a directory others can write,
 *     a container's bind mount) must not delay every probed program's
 *     start (issue 33, item 4). Our own uid: such a peer can stop or slow
 *     this program anyway (same uid: signals, ptrace), so trusting it gives
 *     nothing away, and a daemon a user runs for its own programs (tests,
 *     a developer's non-root daemon) keeps its holds. The effective uid,
 *     not the real one: a set-user-ID program does not trust its caller.
 *     The check costs one getsockopt, made only when a HELD arrives.
 *     The socket is non-blocking from socket() on, so a daemon whose
 *     listen backlog is full (or that is SIGSTOPped) costs at most the
 *     deadline, never a blocked connect() or send(). A connection the
 *     daemon sheds (full backlog, closed unread), and a request it refuses
 *     for now (-EAGAIN: the user's share of the parse queue, or a rate,
 *     full), is retried with backoff within the same deadline;
 *   - silent: any failure (no socket, refused, timeout, garbage) just leaves
 *     the module unregistered. With USDTKIT_DEBUG=1 (or DTrace's
 *     DTRACE_DOF_INIT_DEBUG) each action prints one line to stderr with a
 *     single write(2); otherwise nothing is ever printed;
 *   - harmless: errno is preserved; every descriptor is SOCK_CLOEXEC and
 *     closed before returning; sends use MSG_NOSIGNAL (never SIGPIPE);
 *     EINTR is retried against the same deadline;
 *   - small: no malloc, no stdio, no locks, no libc beyond system call
 *     wrappers; the destructor uses only async-signal-safe calls (access,
 *     socket, connect, send, recv, poll, close, clock_gettime, write). With
 *     no daemon (no socket file) a load costs one access() and no socket at
 *     all. After a REGISTER the constructor also calls atexit, once, from
 *     the ordinary loader context;
 *   - off switch: USDTKIT_DISABLE (set, non-empty, not "0") or
 *     DTRACE_DOF_INIT_DISABLE (set at all) turns everything off. The
 *     environment is read in the constructor only (DTrace's tst.corruptenv:
 *     a program may clobber environ later).
 *     A set-user-ID program (AT_SECURE) ignores the socket, timeout and
 *     debug variables: they would leak its addresses to its caller;
 *   - every name here is static: several -G objects in one program, or in
 *     one link, each carry their own copy without colliding (each then
 *     registers the same module: the daemon keeps one registration per file).
 *
 * The source is four files pasted as one: this one (the state, the
 * environment, the constructor and destructor, the library's entry points)
 * #includes drti_line.c (the debug line), drti_conn.c (one request to the
 * daemon) and drti_board.c (the board: is our file known, is its daemon
 * alive), each in the place its names are first needed. embed.py inlines
 * every quoted #include, so `dtrace -G` still carries one source.
 *
 * It is written in plain C89 plus GNU attributes because it is compiled with
 * the user's CFLAGS (which may ask for -std=c89 -pedantic -Werror, -m32, or
 * another target). _GNU_SOURCE is defined, before the first #include of the
 * generated source, so that a strict -std= still declares the POSIX calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../core/protocol.h"

#ifdef USDT_DRTI_LIBRARY
/*
 * Built once more, into libusdtkit-runtime (drti_lib.h, runtime/README.md):
 * there the module is a runtime provider's object, one of many, and its
 * note's address is an argument of each call instead of a constant.
 */
#include <drti_lib.h>
static const void *usdt_drti_lib_note;
#define USDT_DRTI_NOTE usdt_drti_lib_note
#endif

/* environ: declared by <unistd.h> under _GNU_SOURCE. */

/* What the constructor found in the environment (read once, see above). */
static int usdt_drti_enabled;
static int usdt_drti_debug_on;
static int usdt_drti_timeout_ms = USDT_HELPER_TIMEOUT_DEFAULT_MS;
static int usdt_drti_hold_ms = USDT_HELPER_HOLD_DEFAULT_MS;
static struct sockaddr_un usdt_drti_sun;
static socklen_t usdt_drti_sun_len;
/* The daemon's board: the socket path + USDT_BOARD_SUFFIX. */
static char usdt_drti_board[sizeof(usdt_drti_sun.sun_path) + sizeof(USDT_BOARD_SUFFIX)];
/* The daemon's mark that a tracer watches: the socket path + USDT_WATCHED_SUFFIX. */
static char usdt_drti_watched[sizeof(usdt_drti_sun.sun_path) + sizeof(USDT_WATCHED_SUFFIX)];

/* REGISTER reached the daemon, so the destructor owes it an UNREGISTER. */
static int usdt_drti_registered;
#ifndef USDT_DRTI_LIBRARY
/* Set by the atexit handler: the destructor runs at exit, not dlclose. */
static int usdt_drti_exiting;
#endif
static uint32_t usdt_drti_seq;

/*
 * The variables drti reads, found in one pass over environ (the constructor
 * of every probed program runs it: seven getenv scans were most of drti's
 * own instructions at a start, callgrind, issue 33 item 7). Each gets the
 * first entry of its name, as getenv would.
 */
#define USDT_DRTI_ENV_SOCKET 0
#define USDT_DRTI_ENV_TIMEOUT 1
#define USDT_DRTI_ENV_HOLD 2
#define USDT_DRTI_ENV_DEBUG 3
#define USDT_DRTI_ENV_DOF_DEBUG 4
#define USDT_DRTI_ENV_DISABLE 5
#define USDT_DRTI_ENV_DOF_DISABLE 6
#define USDT_DRTI_ENV_N 7

static void usdt_drti_environment(const char *v[USDT_DRTI_ENV_N])
{
	static const char *const names[USDT_DRTI_ENV_N] = {
	    USDT_HELPER_SOCKET_ENV,   USDT_HELPER_TIMEOUT_ENV, USDT_HELPER_HOLD_ENV,
	    "USDTKIT_DEBUG",	      "DTRACE_DOF_INIT_DEBUG", "USDTKIT_DISABLE",
	    "DTRACE_DOF_INIT_DISABLE"};
	char **e;
	unsigned k;

	for (k = 0; k < USDT_DRTI_ENV_N; k++)
		v[k] = 0;
	if (!environ)
		return;
	for (e = environ; *e; e++) {
		/* every name starts with one of these two */
		if ((*e)[0] != 'U' && (*e)[0] != 'D')
			continue;
		for (k = 0; k < USDT_DRTI_ENV_N; k++) {
			const char *s = *e, *n = names[k];

			while (*n && *s == *n) {
				s++;
				n++;
			}
			if (!*n && *s == '=') {
				if (!v[k])
					v[k] = s + 1;
				break;
			}
		}
	}
}

/* A flag variable's value: set, non-empty and not "0". */
static int usdt_drti_flag(const char *v)
{
	return v && v[0] && !(v[0] == '0' && v[1] == '\0');
}

#include "drti_line.c"
#include "drti_conn.c"
#include "drti_board.c"

static void usdt_drti_register(const char *what, int with_pid)
{
	struct usdt_drti_result res;
	struct usdt_drti_line l;

	usdt_drti_registered = usdt_drti_request(USDT_MSG_REGISTER, 1, &res);
	if (usdt_drti_debug_on) {
		usdt_drti_begin(&l, what, with_pid);
		usdt_drti_report(&l, &res, 1);
		usdt_drti_emit(&l);
	}
}

/* UNREGISTER, waiting for the answer (the module is about to go). */
static void usdt_drti_unregister(const char *what)
{
	struct usdt_drti_result res;
	struct usdt_drti_line l;

	(void)usdt_drti_request(USDT_MSG_UNREGISTER, 1, &res);
	if (usdt_drti_debug_on) {
		usdt_drti_begin(&l, what, 0);
		usdt_drti_report(&l, &res, 1);
		usdt_drti_emit(&l);
	}
}

#ifndef USDT_DRTI_LIBRARY
static void usdt_drti_at_exit(void)
{
	usdt_drti_exiting = 1;
}
#endif

/* Decimal milliseconds, capped at max, into *ms; anything else keeps *ms. */
static void usdt_drti_ms(const char *t, int *ms, long max)
{
	unsigned i;
	long v = 0;

	if (!t || !t[0])
		return;
	for (i = 0; t[i] >= '0' && t[i] <= '9'; i++)
		if (v <= max)
			v = v * 10 + (t[i] - '0');
	if (!t[i])
		*ms = (int)(v > max ? max : v);
}

/* Reads the environment; 0 when registration is off. */
static int usdt_drti_configure(void)
{
	const char *env[USDT_DRTI_ENV_N], *path, *t, *h;
	unsigned i;
	int secure;

	/*
	 * A set-user-ID (or otherwise secure-execution) program takes only
	 * the off switch from its caller's environment: another socket would
	 * hand the caller the module's load address (defeating ASLR) and the
	 * debug line prints it; the timeout could hold the program up.
	 */
	secure = getauxval(AT_SECURE) != 0;
	usdt_drti_environment(env);
	path = env[USDT_DRTI_ENV_SOCKET];
	t = env[USDT_DRTI_ENV_TIMEOUT];
	h = env[USDT_DRTI_ENV_HOLD];
	usdt_drti_debug_on = !secure && (usdt_drti_flag(env[USDT_DRTI_ENV_DEBUG]) ||
					 usdt_drti_flag(env[USDT_DRTI_ENV_DOF_DEBUG]));
	if (usdt_drti_flag(env[USDT_DRTI_ENV_DISABLE]) || env[USDT_DRTI_ENV_DOF_DISABLE])
		return 0;
	if (secure)
		path = t = h = 0;
	if (!path || !path[0])
		path = USDT_HELPER_SOCKET_PATH;
	usdt_drti_sun.sun_family = AF_UNIX;
	for (i = 0; path[i] && i < sizeof(usdt_drti_sun.sun_path) - 1; i++)
		usdt_drti_sun.sun_path[i] = path[i];
	usdt_drti_sun.sun_path[i] = '\0';
	/* A path that does not fit is not silently shortened into another one. */
	usdt_drti_sun_len = path[i] ? 0 : (socklen_t)(sizeof(usdt_drti_sun.sun_family) + i + 1);
	if (usdt_drti_sun_len) {
		unsigned k;

		for (k = 0; k < i; k++)
			usdt_drti_board[k] = path[k];
		for (k = 0; k < sizeof(USDT_BOARD_SUFFIX); k++)
			usdt_drti_board[i + k] = USDT_BOARD_SUFFIX[k];
		for (k = 0; k < i; k++)
			usdt_drti_watched[k] = path[k];
		for (k = 0; k < sizeof(USDT_WATCHED_SUFFIX); k++)
			usdt_drti_watched[i + k] = USDT_WATCHED_SUFFIX[k];
	}
	usdt_drti_ms(t, &usdt_drti_timeout_ms, USDT_HELPER_TIMEOUT_MAX_MS);
	usdt_drti_ms(h, &usdt_drti_hold_ms, USDT_HOLD_MAX_MS);
	return 1;
}

/*
 * A module load, once the environment is read: nothing without a socket
 * file, nothing for a file on the board, else REGISTER and its answer.
 */
static void usdt_drti_load(void)
{
	struct usdt_drti_line l;
	int known;

	/* No daemon installed (no socket file): one access(), nothing else. */
	if (usdt_drti_sun_len && access(usdt_drti_sun.sun_path, F_OK) != 0 &&
	    (errno == ENOENT || errno == ENOTDIR)) {
		if (usdt_drti_debug_on) {
			int e = errno;

			usdt_drti_begin(&l, "register module", 0);
			usdt_drti_put(&l, "no helper socket: ");
			usdt_drti_put_errno(&l, e);
			usdt_drti_put(&l, " (");
			usdt_drti_put(&l, usdt_drti_sun.sun_path);
			usdt_drti_put(&l, ")");
			usdt_drti_emit(&l);
		}
		return;
	}
	/*
	 * A file the daemon registered already: its events exist, nothing to
	 * ask. A board whose daemon is gone: nobody to ask.
	 */
	known = usdt_drti_sun_len ? usdt_drti_known() : 0;
	if (known) {
		if (usdt_drti_debug_on) {
			usdt_drti_begin(&l, "register module", 0);
			usdt_drti_put(&l, known > 0
					      ? "known to the helper (its board): nothing to ask"
					      : "the helper's board has no daemon (it crashed): "
						"nothing to ask; its next start scans for us");
			usdt_drti_emit(&l);
		}
		return;
	}
	usdt_drti_register("register module", 0);
}

#ifndef USDT_DRTI_LIBRARY
__attribute__((constructor)) static void usdt_drti_init(void)
{
	int saved = errno;
	struct usdt_drti_line l;

	usdt_drti_enabled = usdt_drti_configure();
	if (!usdt_drti_enabled) {
		if (usdt_drti_debug_on) {
			l.len = 0;
			usdt_drti_put(&l, "usdtkit drti: registration disabled by the environment");
			usdt_drti_emit(&l);
		}
		errno = saved;
		return;
	}
	usdt_drti_load();
	/* Failing to install it only costs a dlclose its wait for the answer. */
	if (usdt_drti_registered)
		(void)atexit(usdt_drti_at_exit);
	errno = saved;
}

__attribute__((destructor)) static void usdt_drti_fini(void)
{
	int saved = errno, wait = !usdt_drti_exiting;

	usdt_drti_enabled = 0;
	/* At exit, nothing: the daemon sees the exit on its pidfd of the process. */
	if (usdt_drti_registered && wait) {
		usdt_drti_registered = 0;
		usdt_drti_unregister("unregister at dlclose");
	}
	errno = saved;
}
#else  /* USDT_DRTI_LIBRARY */

int usdt_drti_lib_configure(void)
{
	int saved = errno;

	usdt_drti_enabled = usdt_drti_configure();
	errno = saved;
	return usdt_drti_enabled;
}

int usdt_drti_lib_register(const void *note)
{
	int saved = errno, r;

	if (!usdt_drti_enabled)
		return 0;
	usdt_drti_lib_note = note;
	usdt_drti_registered = 0;
	usdt_drti_load();
	r = usdt_drti_registered;
	usdt_drti_registered = 0;
	errno = saved;
	return r;
}

void usdt_drti_lib_unregister(const void *note)
{
	int saved = errno;

	if (!usdt_drti_enabled)
		return;
	usdt_drti_lib_note = note;
	usdt_drti_unregister("unregister at unload");
	errno = saved;
}
#endif /* USDT_DRTI_LIBRARY */

#ifdef USDT_DRTI_FUZZ_ENTRY
/*
 * One more entry, in a build of this file made for tests/fuzz/fuzz-protocol.c
 * alone (tests/fuzz/meson.build; drti_fuzz.h): the static reader of the
 * daemon's answer and the debug line, exactly as a request runs them, so
 * that the harness links drti instead of pasting its source in.
 */
#include <drti_fuzz.h>

int usdt_drti_fuzz_read(int fd, uint32_t seq, int timeout_ms)
{
	struct usdt_drti_result res = {0};
	struct usdt_drti_line l;
	struct timespec deadline;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	usdt_drti_read_reply(fd, seq, &deadline, &res);
	if (res.answered)
		r |= USDT_DRTI_FUZZ_ANSWERED;
	if (res.fail)
		r |= USDT_DRTI_FUZZ_FAILED;
	usdt_drti_begin(&l, "register module", 0);
	usdt_drti_report(&l, &res, 1);
	if (l.len >= sizeof(l.buf))
		r |= USDT_DRTI_FUZZ_OVERFLOW;
	return r;
}
#endif /* USDT_DRTI_FUZZ_ENTRY */
