/* SPDX-License-Identifier: MIT */
/*
 * drti: the registration constructor compiled into every `dtrace -G` object.
 *
 * `dtrace -G` pastes this file, unchanged, at the end of the C source it
 * generates for the provider object and compiles it with the target's
 * compiler, so one copy lives in each executable or shared library that
 * links a -G object. Before this file the generated source defines
 *
 *   USDT_DRTI_NOTE   the address of this module's own metadata note
 *                    (.note.usdtkit, see dtrace-G/METADATA-NOTE.md).
 *
 * That address is all the helper daemon will need from us: it takes the
 * caller's identity from the socket, finds the module by looking the address
 * up in the caller's /proc/PID/maps, and reads the notes from the file that
 * is really mapped there. Nothing the process says is trusted beyond it.
 *
 * The daemon does not exist yet, so usdt_drti_register() is a placeholder
 * that registers nothing. What is already final is the contract:
 *   - USDTKIT_DISABLE (set, non-empty, not "0") or DTrace's
 *     DTRACE_DOF_INIT_DISABLE (set at all) turns registration off;
 *   - USDTKIT_DEBUG or DTRACE_DOF_INIT_DEBUG (same rule as USDTKIT_DISABLE)
 *     makes the constructor and destructor say what they do on stderr, with
 *     write(2), one line each; otherwise nothing is ever printed;
 *   - no malloc, no stdio, no locks, nothing that can fail loudly: only
 *     async-signal-safe calls, so the same code can run in a fork child;
 *   - every name here is static: several -G objects in one program, or in
 *     one link, each carry their own copy without colliding.
 *
 * It is written in plain C89 plus GNU attributes because it is compiled with
 * the user's CFLAGS (which may ask for -std=c89 -pedantic -Werror).
 */
#include <unistd.h>

extern char **environ;

/* Registration handle of this module; -1 while unregistered. */
static int usdt_drti_handle = -1;

/* The value of environment variable `name`, or 0; scans environ directly. */
static const char *usdt_drti_getenv(const char *name)
{
	char **e;

	if (!environ)
		return 0;
	for (e = environ; *e; e++) {
		const char *s = *e, *n = name;

		while (*n && *s == *n) {
			s++;
			n++;
		}
		if (!*n && *s == '=')
			return s + 1;
	}
	return 0;
}

static int usdt_drti_flag(const char *name)
{
	const char *v = usdt_drti_getenv(name);

	return v && v[0] && !(v[0] == '0' && v[1] == '\0');
}

static void usdt_drti_say(const char *what, const void *addr)
{
	char buf[96];
	const char *prefix = "usdtkit drti: ";
	unsigned long a = (unsigned long)addr;
	unsigned i = 0, k;
	ssize_t ignored;

	for (k = 0; prefix[k] && i < 40; k++)
		buf[i++] = prefix[k];
	for (k = 0; what[k] && i < 80; k++)
		buf[i++] = what[k];
	if (addr) {
		buf[i++] = ' ';
		buf[i++] = '0';
		buf[i++] = 'x';
		for (k = sizeof(a) * 2; k-- > 0;)
			buf[i++] = "0123456789abcdef"[(a >> (k * 4)) & 0xf];
	}
	buf[i++] = '\n';
	ignored = write(2, buf, i);
	(void)ignored;
}

/*
 * Placeholder for the daemon protocol: will connect to the helper's socket
 * with a short bounded timeout, send `anchor` and return the daemon's
 * handle. Now: nothing to register with.
 */
static int usdt_drti_register(const void *anchor)
{
	(void)anchor;
	return -1;
}

static void usdt_drti_unregister(int handle)
{
	(void)handle;
}

static int usdt_drti_debug(void)
{
	return usdt_drti_flag("USDTKIT_DEBUG") || usdt_drti_flag("DTRACE_DOF_INIT_DEBUG");
}

__attribute__((constructor)) static void usdt_drti_init(void)
{
	int debug = usdt_drti_debug();

	if (usdt_drti_flag("USDTKIT_DISABLE") || usdt_drti_getenv("DTRACE_DOF_INIT_DISABLE")) {
		if (debug)
			usdt_drti_say("registration disabled by the environment", 0);
		return;
	}
	usdt_drti_handle = usdt_drti_register(USDT_DRTI_NOTE);
	if (debug)
		usdt_drti_say("register module, metadata note at", USDT_DRTI_NOTE);
}

__attribute__((destructor)) static void usdt_drti_fini(void)
{
	if (usdt_drti_handle >= 0)
		usdt_drti_unregister(usdt_drti_handle);
	usdt_drti_handle = -1;
}
