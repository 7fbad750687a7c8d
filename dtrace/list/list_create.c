/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l -c CMD`: start a command, stop it where all its probes are
 * known, list it, end it.
 *
 * Theory. DTrace creates the process stopped, lets it run until its
 * run-time linker has run every initialiser (-x evaltime=postinit, the
 * default; its control thread also breaks at a.out`main), lists it, and
 * kills it when it closes the handle, so nothing of the program's main()
 * runs. With glibc the dynamic loader runs the libraries' constructors
 * before the program's entry point, and __libc_start_main runs the
 * program's own (its .init_array, where the constructor of a `dtrace -G`
 * object registers the probes) just before it calls main. So the first
 * instruction of main is where every constructor has run (a library they
 * dlopen()ed is mapped) and none of the program's own work has: dtrace
 * stops the process there, as DTrace's a.out`main breakpoint does.
 *
 * How, with ptrace:
 *  1. fork; the child asks to be traced (PTRACE_TRACEME) and to die with
 *     dtrace (PR_SET_PDEATHSIG, then PTRACE_O_EXITKILL), and execvp()s the
 *     command's words: split at white space as DTrace's make_argv() splits
 *     them, no shell, PATH searched. A failure comes back through a
 *     close-on-exec pipe as an errno.
 *  2. At the exec stop, a breakpoint at the entry point (AT_ENTRY of
 *     /proc/PID/auxv): there the libraries are mapped and initialised.
 *  3. There, a breakpoint at every __libc_start_main a mapped object
 *     defines (glibc's and musl's libc export it; a static program has it in
 *     .symtab). When one is hit, its first argument is main.
 *  4. A breakpoint at main. When it is hit, the process stays stopped there.
 * Breakpoints are written through /proc/PID/mem (int3 on x86, brk #0 on
 * aarch64) and removed, the pc put back, as each is hit. A program without
 * __libc_start_main (static and stripped; Go) is listed at its entry point.
 * Another exec on the way (a program that re-executes itself from a
 * constructor) starts again at 2 with the new image. Signals the program gets
 * on the way are delivered to it.
 *
 * Bounds: the exec, and then main, must each be reached within
 * START_TIMEOUT_MS (10 s). A program still not at main by then is stopped
 * where it is (SIGSTOP) and listed as it is, with a warning. One that exits
 * or dies on the way is an error worded as DTrace words it ("failed to
 * control pid N: process exited with status S"). The end: SIGKILL, and the
 * process is reaped (within REAP_TIMEOUT_MS), so no zombie is left.
 *
 * The command shares dtrace's standard input, output and error, as with
 * DTrace; since it is stopped before main, only what its constructors
 * write appears.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "elfsym.h"
#include "list_create.h"
#include "list_source.h"
#include "words.h"

#define START_TIMEOUT_MS 10000
#define REAP_TIMEOUT_MS 5000
#define STOP_TIMEOUT_MS 1000
#define MAX_START_MAIN 8 /* __libc_start_main definitions to break at */
#define MAX_EXECS 16	 /* execs before main: a program re-executing itself */

#if defined(__x86_64__) || defined(__i386__)
static const unsigned char bp_insn[] = {0xcc}; /* int3: the pc stops after it */
#define BP_PC_AFTER 1
#elif defined(__aarch64__)
static const unsigned char bp_insn[] = {0x00, 0x00, 0x20, 0xd4}; /* brk #0: the pc stays */
#define BP_PC_AFTER 0
#else
#define NO_BREAKPOINTS 1
#endif

struct bp {
	uint64_t addr;
	unsigned char saved[4];
	bool set;
};

struct tracee {
	int pid;
	int mem;    /* /proc/PID/mem of the current image, read-write */
	bool is64;  /* the program's ELF class */
	int status; /* the last wait status */
	bool gone;  /* it exited or died, and was reaped */
	int64_t deadline;
	const char *cmd;  /* as given, for messages */
	const char *file; /* its first word, DTrace's name for it when it cannot run */
	struct usdt_diag *diag;
};

enum { RUN_HIT = 0, RUN_EXEC = 1 };

/*
 * The next wait status of pid before the deadline: 0, -ETIMEDOUT, or
 * another negative errno. Polled (a child's stop raises SIGCHLD, but a
 * signal handler or mask would be state shared with the rest of dtrace).
 */
static int wait_until(int pid, int *status, int64_t deadline)
{
	long nap_ns = 20000;

	for (;;) {
		struct timespec nap;
		pid_t r = waitpid(pid, status, WNOHANG | __WALL);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (usdt_now_ms() >= deadline)
			return -ETIMEDOUT;
		nap.tv_sec = 0;
		nap.tv_nsec = nap_ns;
		nanosleep(&nap, NULL);
		if (nap_ns < 2000000)
			nap_ns *= 2;
	}
}

static int wait_tracee(struct tracee *t)
{
	int err = wait_until(t->pid, &t->status, t->deadline);

	if (!err && !WIFSTOPPED(t->status))
		t->gone = true;
	return err;
}

/* In the child: become traceable, exec; on failure send {step, errno}. */
_Noreturn static void child_exec(char **argv, int out, pid_t parent)
{
	int msg[2] = {0, 0};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent)
		_exit(127); /* dtrace is already gone */
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0) {
		msg[0] = 1;
		execvp(argv[0], argv);
	}
	msg[1] = errno;
	if (write(out, msg, sizeof(msg)) < 0)
		_exit(126);
	_exit(127);
}

/* DTrace's words for a process lost on the way. */
static void report_gone(struct tracee *t)
{
	if (WIFSIGNALED(t->status))
		fprintf(t->diag->out, "%s: failed to control pid %d: process died from signal %d\n",
			t->diag->progname, t->pid, WTERMSIG(t->status));
	else
		fprintf(t->diag->out,
			"%s: failed to control pid %d: process exited with status %d\n",
			t->diag->progname, t->pid, WEXITSTATUS(t->status));
	t->diag->errors++;
}

/*
 * The child's report after its exec attempt: 1 when the exec happened (the
 * pipe closed on exec), 0 when nothing came yet, -1 after reporting a
 * failure it sent.
 */
static int exec_result(struct tracee *t, int fd)
{
	int msg[2];
	ssize_t r = read(fd, msg, sizeof(msg));

	if (r == 0)
		return 1;
	if (r != (ssize_t)sizeof(msg))
		return 0;
	if (msg[0])
		fprintf(t->diag->out, "%s: failed to execute %s: %s\n", t->diag->progname, t->file,
			strerror(msg[1]));
	else
		fprintf(t->diag->out, "%s: failed to execute %s: cannot trace it (ptrace: %s)\n",
			t->diag->progname, t->file, strerror(msg[1]));
	t->diag->errors++;
	return -1;
}

/* Forks and execs; returns 0 with the child stopped after its exec, or -1 (reported). */
static int spawn(struct tracee *t, char **argv)
{
	pid_t parent = getpid();
	int p[2], rc = -1;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		usdt_error(t->diag, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	t->pid = fork();
	if (t->pid < 0) {
		usdt_error(t->diag, "cannot fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (t->pid == 0) {
		close(p[0]);
		child_exec(argv, p[1], parent);
	}
	close(p[1]);
	t->deadline = usdt_now_ms() + START_TIMEOUT_MS;
	for (;;) {
		int err = wait_tracee(t), sig, res;

		if (err) {
			usdt_error(t->diag, "%s (pid %d) was not started after %d s: %s", t->cmd,
				   t->pid, START_TIMEOUT_MS / 1000, strerror(-err));
			break;
		}
		res = exec_result(t, p[0]);
		if (res < 0)
			break;
		if (t->gone) {
			report_gone(t);
			break;
		}
		sig = WSTOPSIG(t->status);
		if (sig == SIGTRAP && res == 1) {
			rc = 0;
			break;
		}
		/* A signal before the exec: it is the program's. */
		ptrace(PTRACE_CONT, t->pid, NULL, (void *)(long)(sig == SIGTRAP ? 0 : sig));
	}
	close(p[0]);
	return rc;
}

/* ---- the program's image ---- */

static int open_image(struct tracee *t)
{
	unsigned char ident[EI_NIDENT];
	char path[64];
	int fd;

	if (t->mem >= 0)
		close(t->mem);
	snprintf(path, sizeof(path), "/proc/%d/mem", t->pid);
	t->mem = open(path, O_RDWR | O_CLOEXEC);
	if (t->mem < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/exe", t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG)) {
		close(fd);
		return -ENOEXEC;
	}
	close(fd);
	t->is64 = ident[EI_CLASS] == ELFCLASS64;
	return 0;
}

/* AT_ENTRY from /proc/PID/auxv, in the program's word size. */
static int entry_point(struct tracee *t, uint64_t *entry)
{
	char path[64], *buf;
	size_t len, off, w = t->is64 ? 8 : 4;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/auxv", t->pid);
	err = usdt_list_read_proc(path, &buf, &len);
	if (err)
		return err;
	err = -ENOENT;
	for (off = 0; off + 2 * w <= len; off += 2 * w) {
		uint64_t key = 0, val = 0;

		memcpy(&key, buf + off, w); /* little-endian hosts, like every breakpoint here */
		memcpy(&val, buf + off + w, w);
		if (key == AT_ENTRY) {
			*entry = val;
			err = 0;
			break;
		}
	}
	free(buf);
	return err;
}

#ifndef NO_BREAKPOINTS

static int bp_insert(struct tracee *t, struct bp *b)
{
	if (pread(t->mem, b->saved, sizeof(bp_insn), (off_t)b->addr) != (ssize_t)sizeof(bp_insn) ||
	    pwrite(t->mem, bp_insn, sizeof(bp_insn), (off_t)b->addr) != (ssize_t)sizeof(bp_insn))
		return -EFAULT;
	b->set = true;
	return 0;
}

static void bp_remove(struct tracee *t, struct bp *b)
{
	if (b->set &&
	    pwrite(t->mem, b->saved, sizeof(bp_insn), (off_t)b->addr) == (ssize_t)sizeof(bp_insn))
		b->set = false;
}

/* ---- registers: the pc, and the first argument at a function's entry ---- */

#if defined(__x86_64__) || defined(__i386__)
static int get_regs(struct tracee *t, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, t->pid, NULL, r) ? -errno : 0;
}

static int get_pc(struct tracee *t, uint64_t *pc)
{
	struct user_regs_struct r;
	int err = get_regs(t, &r);

#ifdef __x86_64__
	*pc = r.rip;
#else
	*pc = (uint32_t)r.eip;
#endif
	return err;
}

static int set_pc(struct tracee *t, uint64_t pc)
{
	struct user_regs_struct r;
	int err = get_regs(t, &r);

	if (err)
		return err;
#ifdef __x86_64__
	r.rip = pc;
#else
	r.eip = (long)pc;
#endif
	return ptrace(PTRACE_SETREGS, t->pid, NULL, &r) ? -errno : 0;
}

/* x86-64 passes it in rdi; i386 on the stack, above the return address. */
static int first_arg(struct tracee *t, uint64_t *arg)
{
	struct user_regs_struct r;
	uint32_t word = 0;
	uint64_t sp;
	int err = get_regs(t, &r);

	if (err)
		return err;
#ifdef __x86_64__
	if (t->is64) {
		*arg = r.rdi;
		return 0;
	}
	sp = (uint32_t)r.rsp;
#else
	sp = (uint32_t)r.esp;
#endif
	if (pread(t->mem, &word, sizeof(word), (off_t)(sp + 4)) != (ssize_t)sizeof(word))
		return -EFAULT;
	*arg = word;
	return 0;
}
#else /* aarch64 */
static int get_regs(struct tracee *t, struct user_regs_struct *r)
{
	struct iovec io = {r, sizeof(*r)};

	return ptrace(PTRACE_GETREGSET, t->pid, (void *)(long)NT_PRSTATUS, &io) ? -errno : 0;
}

static int get_pc(struct tracee *t, uint64_t *pc)
{
	struct user_regs_struct r;
	int err = get_regs(t, &r);

	*pc = r.pc;
	return err;
}

static int set_pc(struct tracee *t, uint64_t pc)
{
	(void)t;
	(void)pc;
	return 0; /* brk leaves the pc on the breakpoint */
}

static int first_arg(struct tracee *t, uint64_t *arg)
{
	struct user_regs_struct r;
	int err;

	if (!t->is64)
		return -ENOTSUP; /* an AArch32 program: registers of another shape */
	err = get_regs(t, &r);
	*arg = r.regs[0];
	return err;
}
#endif

/* A stop that is not a signal for the program: a group stop (PTRACE_GETSIGINFO fails). */
static bool group_stop(struct tracee *t)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, t->pid, NULL, &si) != 0 && errno == EINVAL;
}

/*
 * Runs the program until it hits one of bps (RUN_HIT, *hit its index, the
 * pc put back on the breakpoint), or execs again (RUN_EXEC); a negative
 * errno when it is gone (-ESRCH, t->status says how) or the deadline passed.
 */
static int run_to(struct tracee *t, const struct bp *bps, size_t n, size_t *hit)
{
	long sig = 0;

	for (;;) {
		uint64_t pc = 0;
		size_t i;
		int err;

		/* It may have been killed since it stopped: then collect how. */
		if (ptrace(PTRACE_CONT, t->pid, NULL, (void *)sig) && errno != ESRCH)
			return -errno;
		sig = 0;
		err = wait_tracee(t);
		if (err)
			return err;
		if (t->gone)
			return -ESRCH;
		if (t->status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return RUN_EXEC;
		if (WSTOPSIG(t->status) != SIGTRAP) {
			sig = group_stop(t) ? 0 : WSTOPSIG(t->status);
			continue;
		}
		err = get_pc(t, &pc);
		if (err)
			return err;
		for (i = 0; i < n; i++)
			if (bps[i].set && pc == bps[i].addr + BP_PC_AFTER)
				break;
		if (i == n) {
			sig = SIGTRAP; /* the program's own */
			continue;
		}
		*hit = i;
		return BP_PC_AFTER ? set_pc(t, bps[i].addr) : RUN_HIT;
	}
}

/* ---- where __libc_start_main is ---- */

struct lsm_search {
	int pid;
	struct usdt_mapping *maps; /* every mapping, paths owned */
	size_t nmaps;
	struct bp *found;
	size_t nfound;
	bool nomem;
};

static int keep_mapping(const struct usdt_mapping *m, void *arg)
{
	struct lsm_search *s = arg;
	struct usdt_mapping *nv = realloc(s->maps, (s->nmaps + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	s->maps = nv;
	nv[s->nmaps] = *m;
	nv[s->nmaps].path = strdup(m->path);
	if (!nv[s->nmaps].path)
		return -ENOMEM;
	s->nmaps++;
	return 0;
}

/* The address of file offset `off` of file k's executable mapping; 0 when unmapped. */
static uint64_t runtime_address(const struct lsm_search *s, size_t k, uint64_t off)
{
	size_t i;

	for (i = 0; i < s->nmaps; i++) {
		const struct usdt_mapping *m = &s->maps[i];

		if (m->dev == s->maps[k].dev && m->ino == s->maps[k].ino && strchr(m->perms, 'x') &&
		    off >= m->offset && off - m->offset < m->end - m->start)
			return m->start + (off - m->offset);
	}
	return 0;
}

/* File offset of the virtual address v, through the program headers; false when unloaded. */
static bool file_offset(Elf *elf, uint64_t v, uint64_t *off)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && v >= ph.p_vaddr &&
		    v - ph.p_vaddr < ph.p_filesz) {
			*off = v - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

static void add_found(struct lsm_search *s, uint64_t addr)
{
	size_t i;

	if (!addr)
		return;
	for (i = 0; i < s->nfound; i++)
		if (s->found[i].addr == addr)
			return;
	if (s->nfound < MAX_START_MAIN)
		s->found[s->nfound++].addr = addr;
}

/* The search in mapping k's file, open as elf. */
struct lsm_file {
	struct lsm_search *s;
	size_t k;
	Elf *elf;
};

/* One symbol of a table (core/elfsym.h's walk): a defined function __libc_start_main is found. */
static int is_start_main(const struct usdt_elf_sym *sym, void *arg)
{
	struct lsm_file *f = arg;
	uint64_t off;

	if (sym->type == STT_FUNC && sym->sym.st_shndx != SHN_UNDEF &&
	    !strcmp(sym->name, "__libc_start_main") && file_offset(f->elf, sym->sym.st_value, &off))
		add_found(f->s, runtime_address(f->s, f->k, off));
	return 0;
}

/* Every defined __libc_start_main of mapping k's file (.dynsym and .symtab). */
static void search_file(struct lsm_search *s, size_t k)
{
	struct lsm_file f = {s, k, NULL};
	int fd = usdt_list_open_mapping(s->pid, &s->maps[k]);

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	f.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f.elf && elf_kind(f.elf) == ELF_K_ELF) {
		usdt_elf_symbols(f.elf, SHT_DYNSYM, is_start_main, &f);
		usdt_elf_symbols(f.elf, SHT_SYMTAB, is_start_main, &f);
	}
	if (f.elf)
		elf_end(f.elf);
	close(fd);
}

/* Breakpoints for every __libc_start_main mapped now; returns how many. */
static size_t find_start_main(struct tracee *t, struct bp *found)
{
	struct lsm_search s = {.pid = t->pid, .found = found};
	size_t i, k;

	if (usdt_list_proc_maps(t->pid, keep_mapping, &s) == 0)
		for (i = 0; i < s.nmaps; i++) {
			for (k = 0; k < i; k++)
				if (s.maps[k].dev == s.maps[i].dev &&
				    s.maps[k].ino == s.maps[i].ino)
					break;
			if (k == i)
				search_file(&s, i);
		}
	for (i = 0; i < s.nmaps; i++)
		free((char *)s.maps[i].path);
	free(s.maps);
	return s.nfound;
}

/*
 * From an exec stop to main (see the head comment). Returns 0 at main or at
 * the entry point of a program without __libc_start_main; RUN_EXEC when
 * the program exec'd again; a negative errno otherwise.
 */
static int image_to_main(struct tracee *t)
{
	struct bp entry = {0}, lsm[MAX_START_MAIN] = {{0}}, main_bp = {0};
	size_t n, i, hit = 0;
	uint64_t main_addr = 0;
	int err;

	err = open_image(t);
	if (!err)
		err = entry_point(t, &entry.addr);
	if (!err)
		err = bp_insert(t, &entry);
	if (!err)
		err = run_to(t, &entry, 1, &hit);
	bp_remove(t, &entry);
	if (err)
		return err;
	n = find_start_main(t, lsm);
	if (!n)
		return 0;
	for (i = 0; i < n && !err; i++)
		err = bp_insert(t, &lsm[i]);
	if (!err)
		err = run_to(t, lsm, n, &hit);
	if (!err)
		err = first_arg(t, &main_addr);
	for (i = 0; i < n; i++)
		bp_remove(t, &lsm[i]);
	if (err)
		return err;
	main_bp.addr = main_addr;
	err = bp_insert(t, &main_bp);
	if (!err)
		err = run_to(t, &main_bp, 1, &hit);
	bp_remove(t, &main_bp);
	return err;
}
#endif /* !NO_BREAKPOINTS */

/* Stops a program that did not reach main in time, to list it as it is. */
static void stop_where_it_is(struct tracee *t)
{
	kill(t->pid, SIGSTOP);
	t->deadline = usdt_now_ms() + STOP_TIMEOUT_MS;
	while (wait_tracee(t) == 0 && WIFSTOPPED(t->status) && WSTOPSIG(t->status) != SIGSTOP)
		ptrace(PTRACE_CONT, t->pid, NULL, NULL);
	usdt_warning(t->diag, "%s (pid %d) did not reach main within %d s: listed as it is", t->cmd,
		     t->pid, START_TIMEOUT_MS / 1000);
}

static int run_to_main(struct tracee *t)
{
#ifdef NO_BREAKPOINTS
	usdt_warning(t->diag,
		     "%s (pid %d): -c cannot run a program to main on this machine: "
		     "listed right after its exec",
		     t->cmd, t->pid);
	return 0;
#else
	int err = RUN_EXEC, execs;

	for (execs = 0; err == RUN_EXEC && execs < MAX_EXECS; execs++) {
		t->deadline = usdt_now_ms() + START_TIMEOUT_MS;
		err = image_to_main(t);
	}
	if (t->gone) {
		report_gone(t);
		return -1;
	}
	if (err == -ETIMEDOUT || err == RUN_EXEC) {
		stop_where_it_is(t);
		return 0;
	}
	if (err) {
		usdt_error(t->diag, "cannot run %s (pid %d) to main: %s", t->cmd, t->pid,
			   strerror(-err));
		return -1;
	}
	return 0;
#endif
}

int usdt_list_create(const char *cmd, struct usdt_diag *diag)
{
	struct tracee t = {.mem = -1, .cmd = cmd, .diag = diag};
	char *buf = NULL, **argv = usdt_split_words(cmd, 0, &buf); /* DTrace's make_argv() */
	int rc = -1;

	if (!argv) {
		usdt_error(diag, "out of memory");
		return -1;
	}
	if (!argv[0]) {
		usdt_error(diag, "-c names no command");
		goto out;
	}
	t.file = argv[0];
	if (spawn(&t, argv))
		goto out;
	if (ptrace(PTRACE_SETOPTIONS, t.pid, NULL,
		   (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC))) {
		usdt_error(diag, "cannot trace %s (pid %d): %s", cmd, t.pid, strerror(errno));
		goto out;
	}
	if (run_to_main(&t) == 0)
		rc = t.pid;
out:
	if (rc < 0 && t.pid > 0 && !t.gone)
		usdt_list_destroy(t.pid, diag);
	if (t.mem >= 0)
		close(t.mem);
	free(argv);
	free(buf);
	return rc;
}

void usdt_list_destroy(int pid, struct usdt_diag *diag)
{
	int status;

	kill(pid, SIGKILL);
	for (;;) {
		int err = wait_until(pid, &status, usdt_now_ms() + REAP_TIMEOUT_MS);

		if (err) {
			usdt_warning(diag, "pid %d, which -c started, was not reaped: %s", pid,
				     strerror(-err));
			return;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return;
	}
}

/*
 * Lets a process usdt_list_create() stopped at main run on (the consumer's
 * -c, once tracing is enabled): the breakpoint is already removed and the pc
 * put back, so detaching resumes it at main's first instruction. It stays
 * dtrace's child (waitpid() reaps it) and still dies with dtrace
 * (PR_SET_PDEATHSIG), as a -c process does with DTrace.
 */
int usdt_list_release(int pid)
{
	return ptrace(PTRACE_DETACH, pid, NULL, NULL) ? -errno : 0;
}
