// SPDX-License-Identifier: MIT
/*
 * usdtkit-helperd: registers the USDT probes of every process that loads a
 * `dtrace -G` module as tracefs uprobe events `sdt_<provider>/<probe>`, and
 * removes them when the last process mapping the module is gone.
 *
 *   usdtkit-helperd [-f] [--all [--only GLOB]] [--socket PATH] [--state PATH] [--debug]
 *                   [--rescan S] [--sweep S] [--rate N] [--parse-timeout MS]
 *                   [--linger S] [--linger-max N] [--no-board]
 *
 * How it works (the daemon's theory statement, with the whole design, is
 * kernel-helper/README.md, "The daemon"; this is main.c's part, with
 * conn.c's and serve.c's, the connections and the protocol it serves):
 *
 * - One epoll loop over: the listening SOCK_SEQPACKET socket (ours, or
 *   systemd's through LISTEN_FDS), a signalfd (SIGTERM/SIGINT: clean stop),
 *   the connections, one pidfd per registered process (readable when it
 *   exits), the socket of each parser worker at work, and the writer
 *   thread's eventfd. The per-process path is a /proc read, an open and an
 *   fstat, and a hash lookup; nothing in the loop waits for a worker, nor
 *   for a file's events: once the daemon serves, those are written by the
 *   one other thread, the writer (writer.c: its head comment has what it
 *   may touch), in turns between uids; the loop reads at most a few
 *   requests of one uid per turn (serve.c).
 * - Work no client waits for is done in the background, a step at a time,
 *   when nothing else is ready and no parse runs (or after 10 ms under a
 *   steady stream of clients): forking the spare worker (worker.c), the
 *   /proc passes that retire files (retire.c; a few processes' maps per
 *   step), and writing the state file. So an answer waits for one step at
 *   most, never for a whole scan of /proc.
 * - A connection's caller is who the kernel says it is: SO_PEERCRED (pid,
 *   uid) and SO_PEERPIDFD (a pidfd on that very process, so a pid recycled
 *   between connect and our reading /proc is detected: after reading its
 *   maps we check the pidfd has not exited). Messages are taken only when
 *   exactly as protocol.h defines them (size = packet length = the type's
 *   size, magic, version, known type); anything else gets -EPROTO and the
 *   connection is closed. Connections idle for more than 1 s are closed; at
 *   most 1024 are open, at most 64 per uid. At a cap the newcomer wins: an
 *   idle connection (of its uid, for the per-uid cap) of the process
 *   holding the most is closed for it (conn.c, victim()), so a process
 *   holding connections locks out neither other users nor the other
 *   processes of its own uid, and exhausts neither fds nor memory.
 * - REGISTER resolves the address in the caller's own maps (users.c,
 *   proc.c); a known file only gains a user, answered at once. A new file is
 *   parsed in a sandboxed worker (worker.c: the spare, forked ahead, when
 *   there is one) whose socket joins the epoll set:
 *   the answer is deferred until the parse ends (hd_register_done), the
 *   connection meanwhile neither read nor expired, only its hang-up watched
 *   (hd_register_cancel). At most 16 workers run at once, 4 per uid; more
 *   new files wait in a queue (queue.c). UNREGISTER drops one
 *   reference. LIST reads /proc and answers one LIST_ENTRY per (process,
 *   registered file it maps) the caller may see (root: all; others: their
 *   own uid's), then the REPLY.
 * - Off the hot path (kernel-helper/README.md, "Registration off the hot
 *   path"): every registered file is published on the board (board.c,
 *   SOCKET.known), so a process of a known file sends nothing; fork
 *   children and exits send nothing either. The daemon therefore knows only
 *   the processes that asked: when a file's last known user goes, its
 *   events linger (--linger, default 60 s; at most --linger-max, 256, files
 *   at once), then the file is withdrawn from the board, /proc is read (in
 *   background steps), and the processes still mapping it are adopted; only
 *   a file nobody maps loses its events. --linger 0 does that at once. --no-board publishes
 *   nothing: every process asks, as before the board (debugging, and the
 *   tests whose subject is the REGISTER path itself).
 * - Holds (protocol.h, WATCH): a root client may watch new files (at most
 *   WATCHERS_MAX at once). When a REGISTER's parse creates a file's events,
 *   each watcher gets a NOTICE and the registrants' answers wait, in the
 *   held list, until every watcher answered READY, or USDT_HOLD_MAX_MS
 *   passed, or the watcher went; a watcher is never waited on otherwise: it
 *   is sent to without blocking and dropped when its socket is full or it
 *   says anything but a READY for a notice it was sent. A registration of
 *   a known file, answered at once, is never held.
 * - Per-uid limits (root is exempt from the quotas, not from validation):
 *   request rate, all types (token bucket, --rate, default 10000/s, burst 2x), new
 *   modules (parses) per second (default 20/s), modules (256) and probe
 *   sites (65536) per uid, processes watched (--max-procs-per-uid, 4096)
 *   and descriptors held for its registrations (--max-fds-per-uid, a
 *   quarter of the descriptor limit): over those, REGISTER is -EDQUOT.
 *   Out of descriptors altogether, accept() is answered with a reserve
 *   descriptor (conn.c, shed()), never retried in a spin.
 * - Start-up: a previous instance's state file says which events were ours;
 *   /proc is scanned for processes mapping a -G module (a `.note.usdtkit`
 *   section; with --all any `.note.stapsdt`), which are registered again
 *   (their existing events adopted), and our old events nobody maps any more
 *   are removed. Without --all only processes whose environment names our
 *   socket (or none, for the default socket) are taken: they are the ones
 *   whose drti talks to us, so daemons on private sockets (tests) never
 *   share a process. With --all, /proc is rescanned every --rescan seconds
 *   (default 10) for new processes; per (dev, ino) a file is checked once.
 *   --only GLOB narrows what --all adds to files mapped at paths matching
 *   GLOB (fnmatch(3): every file under /opt/app, say): an operator's scope, and what lets
 *   a test exercise --all without touching the rest of the machine. The
 *   start-up scan parses in line (before serving); the --rescan's new files
 *   are parsed as a REGISTER's are, asynchronously.
 * - Without a usable tracefs (not mounted, read-only, no uprobe_events) the
 *   daemon starts and serves: REGISTER is answered with the reason's errno,
 *   the log says once what is wrong, nothing is written, and tracefs is
 *   tried again on demand (state.c, hd_tracefs_ready).
 * - exec: a pidfd does not fire when its process execs; once per --sweep
 *   seconds (default 30) every registered process's maps are read again and
 *   modules it no longer maps are dropped (scan.c).
 * - SIGTERM/SIGINT: every event we created is removed (EBUSY ones are left
 *   and stay in the state file for the next start); SIGKILL leaves them for
 *   the next start to adopt or remove.
 * - Test-only options (not in --help; kernel-helper/README.md):
 *   --test-worker-delay MS[:GLOB] makes the worker sleep first (a hung
 *   parser), for files mapped at paths matching GLOB if given;
 *   --test-no-seccomp runs the worker without its seccomp filter and
 *   address-space limit, which valgrind cannot run under;
 *   --test-hold-ms MS bounds a hold (WATCH) at MS instead of
 *   USDT_HOLD_MAX_MS, so that a test sees the bound in a second;
 *   --test-bulk-nice N runs the writer's and checker's bulk work at nice
 *   +N instead of +10 (0: not niced; bench/helper/loadtest.sh compares);
 *   --test-timing times each answer from its connection's accept and from
 *   its request's reading (serve.c) and prints the figures at exit;
 *   --test-sched none|slice|nice|both chooses the loop's and the lister's
 *   scheduling (loop.c; default both), for loadtest.sh's comparisons;
 *   --test-crash-after N makes the daemon SIGKILL itself right after its
 *   N-th write to uprobe_events (tests/crash/: a crash at a chosen point of
 *   a registration or a removal). Only the command line sets them, that is
 *   whoever starts the daemon (root); nothing a client sends can.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "protocol.h"

static int epfd;
/* The epoll batch being dispatched: objects freed meanwhile are struck out of it. */
static struct epoll_event *batch;
static int batch_n, batch_i;

/* Under a steady stream of clients, background work still gets a step this often. */
#define BACKGROUND_STARVE_MS 10

/* Whether there is work no client waits for: the spare worker, retirements, the state file. */
static bool background_pending(void)
{
	return hd_parse_spare_missing(&hd_cfg.worker) || hd_registry_background_pending();
}

/* One step: the spare first (the next new file's parse waits for it), then the rest. */
static void background_step(void)
{
	if (hd_parse_spare_missing(&hd_cfg.worker))
		hd_parse_spare(&hd_cfg.worker);
	else
		hd_registry_background();
}
/* --test-crash-after: writes to uprobe_events left before the daemon kills itself. */
static atomic_ulong crash_after;

static void crash_hook(void)
{
	/* (Called on the writer thread too: SIGKILL ends the whole process.) */
	if (atomic_fetch_sub(&crash_after, 1) == 1)
		kill(getpid(), SIGKILL);
}

static struct tagged signal_tag = {HD_TAG_SIGNAL}, none_tag = {HD_TAG_NONE};

/* The recovery's needs of the layers above persistence (helperd.h, struct hd_recovery). */
static unsigned recovery_scan(void)
{
	return hd_scan_all(false);
}

static bool recovery_known(uint64_t dev, uint64_t ino)
{
	return hd_mod_find(dev, ino) != NULL;
}

static const struct hd_recovery recovery = {.scan = recovery_scan, .known = recovery_known};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: usdtkit-helperd [-f] [--all [--only GLOB]] [--socket PATH] [--state PATH]\n"
		"                       [--debug]\n"
		"                       [--rescan SECONDS] [--sweep SECONDS] [--rate N]\n"
		"                       [--parse-timeout MS] [--linger SECONDS] [--linger-max N]\n"
		"                       [--no-board]\n"
		"                       [--max-procs-per-uid N] [--max-fds-per-uid N]\n");
}

static void forget(void *obj)
{
	for (int k = batch_i + 1; k < batch_n; k++)
		if (batch[k].data.ptr == obj) {
			batch[k].data.ptr = &none_tag;
			batch[k].events = 0;
		}
}

/* --- set-up --- */

/*
 * The socket file this daemon bound itself (not one systemd passed: that
 * one is systemd's to keep), by identity: at exit it is removed only if the
 * path still names it, so a stopped daemon leaves no stale socket behind
 * (drti would pay a refused connect for it at every start) and never
 * removes a successor's.
 */
static struct {
	bool ours;
	dev_t dev;
	ino_t ino;
} own_socket;

static void own_socket_remove(const char *path)
{
	struct stat st;

	if (own_socket.ours && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == own_socket.dev && st.st_ino == own_socket.ino)
		unlink(path);
	own_socket.ours = false;
}

static int listen_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *lfds = getenv("LISTEN_FDS"), *lpid = getenv("LISTEN_PID");
	int fd, ret;

	if (lfds && lpid && atoi(lpid) == (int)getpid() && atoi(lfds) >= 1) {
		/* systemd socket activation: our socket is fd 3. */
		fcntl(3, F_SETFD, FD_CLOEXEC);
		fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDNAMES");
		hd_info("listening on the socket systemd passed");
		return 3;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		hd_err("%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		/* A live daemon answers a connect; a stale socket file does not. */
		int probe;
		struct stat st;

		if (errno != EADDRINUSE)
			goto err;
		probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			close(fd);
			hd_err("%s: another daemon is listening there", path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
			/* Not ours to remove: somebody's file, maybe a mistake in --socket. */
			close(fd);
			hd_err("%s exists and is not a socket (%s): refusing to start. Remove or "
			       "rename it if it is a leftover, or give the daemon another path "
			       "(--socket, USDTKIT_HELPER_SOCKET); it is left untouched",
			       path,
			       S_ISREG(st.st_mode)   ? "a regular file"
			       : S_ISDIR(st.st_mode) ? "a directory"
						     : "not a socket");
			return -EADDRINUSE;
		}
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			goto err;
	}
	{
		struct stat st;

		if (lstat(path, &st) == 0) {
			own_socket.ours = true;
			own_socket.dev = st.st_dev;
			own_socket.ino = st.st_ino;
		}
	}
	/* Any user's processes register: the socket is 0666, the checks are ours. */
	if (chmod(path, 0666) != 0 || listen(fd, SOMAXCONN) != 0)
		goto err;
	hd_info("listening on %s", path);
	return fd;
err:
	ret = -errno;
	hd_err("%s: %s", path, strerror(errno));
	close(fd);
	own_socket_remove(path);
	return ret;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"only", required_argument, NULL, 'o'},
	    {"socket", required_argument, NULL, 's'},
	    {"state", required_argument, NULL, 'S'},
	    {"debug", no_argument, NULL, 'd'},
	    {"rescan", required_argument, NULL, 'r'},
	    {"sweep", required_argument, NULL, 'w'},
	    {"rate", required_argument, NULL, 'R'},
	    {"parse-timeout", required_argument, NULL, 'P'},
	    {"linger", required_argument, NULL, 'L'},
	    {"linger-max", required_argument, NULL, 'M'},
	    {"no-board", no_argument, NULL, 'B'},
	    {"max-procs-per-uid", required_argument, NULL, 'U'},
	    {"max-fds-per-uid", required_argument, NULL, 'F'},
	    {"test-worker-delay", required_argument, NULL, 'D'},
	    {"test-no-seccomp", no_argument, NULL, 'V'},
	    {"test-crash-after", required_argument, NULL, 'K'},
	    {"test-hold-ms", required_argument, NULL, 'H'},
	    {"test-bulk-nice", required_argument, NULL, 'N'},
	    {"test-timing", no_argument, NULL, 'T'},
	    {"test-sched", required_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct usdt_tracefs t = {.fd = -1};
	char state[4200];
	bool foreground = false, stop = false, no_board = false;
	uint64_t next_tick, next_rescan, next_parse = UINT64_MAX, next_hold = UINT64_MAX;
	uint64_t last_background = 0;
	const char *env = getenv(USDT_HELPER_SOCKET_ENV);
	sigset_t mask;
	int opt, lfd, sfd;
	struct epoll_event ev;

	/* Executed again as a parse worker (worker.c): that program, never the daemon. */
	hd_worker_main(argc, argv);
	hd_cfg.socket_path = env && env[0] ? env : USDT_HELPER_SOCKET_PATH;
	hd_cfg.rescan_s = 10;
	hd_cfg.sweep_s = 30;
	hd_cfg.linger_s = 60;
	hd_cfg.linger_max = 256;
	hd_cfg.rate_per_s = 10000;
	hd_cfg.new_modules_per_s = 20;
	hd_cfg.max_modules_per_uid = 256;
	hd_cfg.max_probes_per_uid = 65536;
	hd_cfg.max_procs_per_uid = 4096;
	/* the library's calls up (helperd.h): the protocol's and the loop's */
	hd_upcalls = (struct hd_upcalls){.hold_begin = serve_hold_begin,
					 .register_done = serve_register_done,
					 .list_done = serve_list_done,
					 .forget = forget};
	hd_cfg.max_fds_per_uid = 0; /* a quarter of the descriptor limit (below) */
	hd_cfg.worker.timeout_ms = 5000;
	hd_cfg.worker.cpu_seconds = 5;
	hd_cfg.worker.address_space = 2ull << 30;
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			foreground = true;
			break;
		case 'a':
			hd_cfg.all = true;
			break;
		case 'o':
			hd_cfg.only = optarg;
			break;
		case 's':
			hd_cfg.socket_path = optarg;
			break;
		case 'S':
			hd_cfg.state_path = optarg;
			break;
		case 'd':
			hd_debug = true;
			break;
		case 'r':
			hd_cfg.rescan_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			hd_cfg.sweep_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'R':
			hd_cfg.rate_per_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'P':
			hd_cfg.worker.timeout_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'B':
			no_board = true;
			break;
		case 'L':
		case 'M':
		case 'U':
		case 'F': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			const char *name = opt == 'L'	? "linger"
					   : opt == 'M' ? "linger-max"
					   : opt == 'U' ? "max-procs-per-uid"
							: "max-fds-per-uid";

			if (*end || end == optarg || v > 86400ul * 365 ||
			    ((opt == 'U' || opt == 'F') && v == 0)) {
				fprintf(stderr,
					"usdtkit-helperd: --%s wants a number%s, not '%s'\n", name,
					opt == 'U' || opt == 'F' ? " above 0" : "", optarg);
				return 2;
			}
			*(opt == 'L'   ? &hd_cfg.linger_s
			  : opt == 'M' ? &hd_cfg.linger_max
			  : opt == 'U' ? &hd_cfg.max_procs_per_uid
				       : &hd_cfg.max_fds_per_uid) = (unsigned)v;
			break;
		}
		case 'D': { /* tests only: MS[:GLOB], a parser that hangs (on files matching GLOB)
			     */
			char *end;

			hd_cfg.worker.test_delay_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end == ':')
				hd_cfg.worker.test_delay_glob = end + 1;
			break;
		}
		case 'V': /* tests only: the worker without its seccomp filter (valgrind) */
			hd_cfg.worker.test_no_seccomp = true;
			break;
		case 'T': /* tests only: answers timed in the daemon, printed at exit */
			conn_timing = hd_timing = true;
			break;
		case 'C': /* tests only: the answering threads' scheduling (loop.c) */
			if (strcmp(optarg, "none") == 0)
				hd_sched_mode = 0;
			else if (strcmp(optarg, "slice") == 0)
				hd_sched_mode = HD_SCHED_SLICE;
			else if (strcmp(optarg, "nice") == 0)
				hd_sched_mode = HD_SCHED_NICE;
			else if (strcmp(optarg, "both") == 0)
				hd_sched_mode = HD_SCHED_SLICE | HD_SCHED_NICE;
			else {
				fprintf(stderr,
					"usdtkit-helperd: --test-sched wants none, slice, "
					"nice or both, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'N': /* tests only: bulk work's nice value (0: as any other) */
			hd_writer_bulk_nice((int)strtol(optarg, NULL, 10));
			break;
		case 'H': /* tests only: the bound of a hold (at most USDT_HOLD_MAX_MS) */
			serve_hold_bound((unsigned)strtoul(optarg, NULL, 10));
			break;
		case 'K': /* tests only: SIGKILL after the N-th write to uprobe_events */
			crash_after = strtoul(optarg, NULL, 10);
			if (crash_after)
				usdt_tracefs_write_hook = crash_hook;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || hd_cfg.socket_path[0] != '/' || hd_cfg.rate_per_s == 0 ||
	    (hd_cfg.only && !hd_cfg.all) || hd_cfg.worker.timeout_ms == 0) {
		usage(stderr);
		return 2;
	}
	if (!hd_cfg.state_path) {
		/* Beside the socket: daemons on different sockets never share a state file. */
		if (strcmp(hd_cfg.socket_path, USDT_HELPER_SOCKET_PATH) == 0)
			snprintf(state, sizeof(state), "/run/usdtkit/helperd.state");
		else
			snprintf(state, sizeof(state), "%s.state", hd_cfg.socket_path);
		hd_cfg.state_path = state;
	}
	hd_log_init(foreground);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (!hd_cfg.max_fds_per_uid) {
		struct rlimit rl;

		hd_cfg.max_fds_per_uid = 64;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 > 64)
			hd_cfg.max_fds_per_uid =
			    rl.rlim_cur / 4 > 1u << 30 ? 1u << 30 : (unsigned)(rl.rlim_cur / 4);
	}
	/* tracefs is opened by the registry (hd_tracefs_ready): the daemon serves without it. */
	if (hd_dirs_prepare(hd_cfg.socket_path, hd_cfg.state_path) != 0 ||
	    (lfd = listen_socket(hd_cfg.socket_path)) < 0)
		return 1;
	/*
	 * The descriptor accept() takes back when there is none left (see
	 * shed()); after the socket, so that a daemon started by hand has its
	 * socket at descriptor 3, as systemd's is.
	 */
	conns_reserve_open();
	if (!foreground && daemonize() != 0)
		return 1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || epfd < 0) {
		hd_err("signalfd/epoll: %s", strerror(errno));
		own_socket_remove(hd_cfg.socket_path);
		return 1;
	}
	conns_init(epfd, lfd, serve_conn_closing);
	ev.events = EPOLLIN;
	ev.data.ptr = &signal_tag;
	epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);
	hd_loop_init(&t, epfd);
	/* The model's calls up (helperd.h, struct hd_model_hooks): lingering and retiring. */
	hd_model_hooks.idle = hd_mod_idle;
	hd_model_hooks.forget = hd_retire_forget;
	/*
	 * Before recovery, which publishes what it registers, and before its
	 * /proc scan: a process that found a crashed predecessor's board (no
	 * liveness lock: it asks nothing, core/protocol.h) read it before this
	 * one replaced it, so had mapped its file already, and the scan finds it.
	 */
	if (!no_board && (opt = hd_board_open(hd_cfg.socket_path)) != 0)
		hd_warn("cannot create the board %s%s: %s (going on: every process asks)",
			hd_cfg.socket_path, USDT_BOARD_SUFFIX, strerror(-opt));
	/* Recovery before serving: a restart answers only once it knows its events. */
	hd_recover(&recovery);
	/*
	 * From now on events are written by the writer thread (writer.c), off
	 * the loop; until now (recovery, the start-up scan) in line, before
	 * serving. After the signal mask: the thread inherits it.
	 */
	hd_model_hooks.removed = hd_parse_resume;
	/* The loop answers: a short slice, a raised priority (loop.c; the threads set their own).
	 */
	if ((opt = hd_sched_self(true)) != 0)
		hd_dbg("the loop's scheduling: %s", strerror(-opt));
	if ((opt = hd_writer_start(epfd)) != 0)
		hd_warn("cannot start the writer thread: %s (events are written in the loop)",
			strerror(-opt));
	hd_info("ready%s", hd_cfg.all ? " (--all)" : "");
	next_tick = hd_now_ms() + 1000;
	next_rescan = hd_now_ms() + hd_cfg.rescan_s * 1000ull;
	while (!stop) {
		struct epoll_event evs[64];
		uint64_t now = hd_now_ms(), wake = next_tick;
		bool accept_now = false, background = background_pending();
		/*
		 * Background work is done when nothing else is ready, except while
		 * a parse runs or the writer has jobs (a registration's answer is
		 * awaited; a worker's start, an exec, would compete with them for
		 * the CPU): then only once it has waited BACKGROUND_STARVE_MS, as
		 * under a steady stream of clients.
		 */
		bool eager = background && hd_parses_running() == 0 && hd_writer_queued() == 0;
		int n;

		/*
		 * Held back since it became pending, not since the last step: the
		 * spare taken by a REGISTER after a quiet spell is started once the
		 * parse it went to has answered, not during it (a worker's start,
		 * an exec, would compete with that parse for the CPU).
		 */
		if (!background)
			last_background = now;

		if (conns_next_wake() < wake)
			wake = conns_next_wake();
		if (next_parse < wake)
			wake = next_parse;
		if (next_hold < wake)
			wake = next_hold;
		if (eager)
			wake = now;
		else if (background && last_background + BACKGROUND_STARVE_MS < wake)
			wake = last_background + BACKGROUND_STARVE_MS;
		n = epoll_wait(epfd, evs, 64, wake > now ? (int)(wake - now) : 0);
		if (n < 0 && errno != EINTR) {
			hd_err("epoll_wait: %s", strerror(errno));
			break;
		}
		batch = evs;
		batch_n = n;
		for (batch_i = 0; batch_i < n; batch_i++) {
			struct tagged *tg = evs[batch_i].data.ptr;
			uint32_t events = evs[batch_i].events;

			switch (tg->tag) {
			case HD_TAG_LISTEN:
				/* After the batch's reads: see victim(). */
				accept_now = true;
				break;
			case HD_TAG_SIGNAL: {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si))
					if (si.ssi_signo != SIGHUP)
						stop = true;
				break;
			}
			case HD_TAG_CONN:
				serve_conn_event((struct conn *)tg, events);
				break;
			case HD_TAG_PROC:
				hd_process_exited(tg);
				break;
			case HD_TAG_PARSE:
				hd_parse_event(tg);
				break;
			case HD_TAG_WRITER:
				hd_writer_event();
				break;
			case HD_TAG_NONE:
				break;
			}
		}
		batch_n = 0;
		if (accept_now)
			for (int k = 0; k < 64 && conn_accept_one(lfd); k++)
				;
		conns_turn_end();
		serve_turn_end();
		now = hd_now_ms();
		conns_listen_resume(now);
		/* Idle, or held back long enough: one step of what nobody waits for. */
		if (background &&
		    ((eager && n == 0) || now - last_background >= BACKGROUND_STARVE_MS)) {
			last_background = now;
			background_step();
		}
		conns_expire(now);
		next_hold = serve_holds_expire(now);
		next_parse = hd_parses_expire(now);
		if (now >= next_tick) {
			hd_tick(now);
			next_tick = now + 1000;
		}
		if (hd_cfg.all && hd_cfg.rescan_s && now >= next_rescan) {
			hd_rescan();
			next_rescan = now + hd_cfg.rescan_s * 1000ull;
		}
	}
	serve_timing_report();
	hd_timing_report();
	hd_info("stopping: removing the events this daemon created");
	/*
	 * Before anything else: a process starting from now on finds no socket
	 * and pays one access(), not a connect nobody will answer. (Was
	 * `lfd != 3`, which also kept a socket we bound ourselves whenever the
	 * daemon was started with only 0, 1 and 2 open: by hand.)
	 */
	own_socket_remove(hd_cfg.socket_path);
	conns_close_all();
	/* First: a process starting now must not skip a registration we undo. */
	hd_board_close();
	/* Registrations under way cut short, removals finished: then all goes in line. */
	hd_stopping = true;
	hd_writer_stop();
	hd_procs_drop_all();
	hd_parses_cancel();
	hd_parse_reap(true);
	hd_registry_shutdown();
	hd_retire_stop();
	/* Without tracefs nothing was recovered: the previous state file stays as it was. */
	if (!hd_recovery_pending)
		hd_save_state();
	hd_registry_flush();
	hd_parse_spare_stop();
	usdt_tracefs_close(&t);
	return 0;
}
