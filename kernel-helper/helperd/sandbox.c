// SPDX-License-Identifier: MIT
/*
 * The parser worker's confinement (worker.c starts the worker,
 * worker_child.c is its program; this is what it does to itself before it
 * touches a file): RLIMIT_CPU, RLIMIT_AS (not
 * under AddressSanitizer, whose shadow exceeds any limit), RLIMIT_FSIZE=0,
 * no core; then a seccomp filter (no_new_privs) that allows reading,
 * seeking and stat on any fd it has, receiving and writing on its socket
 * (fd 3) only, naming itself, anonymous non-executable memory, and exit;
 * anything else kills the process.
 *
 * libseccomp generates the filter once, in the daemon before its first
 * worker (hd_sandbox_prepare: seccomp_export_bpf into a memfd, sealed), and
 * each worker, given the memfd as its fd 4, only reads the program, sets
 * no_new_privs and loads it, as seccomp_load would with the default
 * attributes: no kernel probing nor BPF generation per parse (measured: 40
 * µs of a ~430 µs parse). The seals (no write, grow or shrink) keep what
 * one worker could do to the shared file from the next worker's filter.
 * Should the export fail, each worker builds and loads its own.
 *
 * Built with -Dseccomp=disabled, the limits stay and there is no filter;
 * the daemon says so once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#if USDTKIT_HAVE_SECCOMP
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#endif

#include "helperd.h"

/* An AddressSanitizer build (gcc says so with __SANITIZE_ADDRESS__, clang with __has_feature). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USDT_HELPERD_ASAN 1
#endif
#endif

#if USDTKIT_HAVE_SECCOMP
/* A rule with one argument comparison, spelt out (the SCMP_Ax macros leave fields implicit). */
static int allow_if(scmp_filter_ctx ctx, int nr, unsigned argn, enum scmp_compare op, uint64_t a,
		    uint64_t b)
{
	struct scmp_arg_cmp c = {.arg = argn, .op = op, .datum_a = a, .datum_b = b};

	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &c);
}

/*
 * The filter's rules: every syscall the parser may make. NULL when
 * libseccomp fails (out of memory, or a rule it refuses).
 */
static scmp_filter_ctx filter_rules(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int ret = 0;

	if (!ctx)
		return NULL;
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pread64), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(lseek), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fstat), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 0);
	/* The socket to the daemon (fd 3): the file arrives on it, the answer leaves by it. */
	ret |= allow_if(ctx, SCMP_SYS(recvmsg), 0, SCMP_CMP_EQ, 3, 0);
	ret |= allow_if(ctx, SCMP_SYS(write), 0, SCMP_CMP_EQ, 3, 0);
	/* Its name in ps once it has a file to read (comm only). */
	ret |= allow_if(ctx, SCMP_SYS(prctl), 0, SCMP_CMP_EQ, PR_SET_NAME, 0);
	/* libelf asks for the descriptor's flags; it may change none. */
	ret |= allow_if(ctx, SCMP_SYS(fcntl), 1, SCMP_CMP_EQ, F_GETFD, 0);
	ret |= allow_if(ctx, SCMP_SYS(fcntl), 1, SCMP_CMP_EQ, F_GETFL, 0);
	{
		/* Memory: anonymous and never executable. */
		struct scmp_arg_cmp c[2] = {
		    {.arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = PROT_EXEC, .datum_b = 0},
		    {.arg = 3,
		     .op = SCMP_CMP_MASKED_EQ,
		     .datum_a = MAP_ANONYMOUS,
		     .datum_b = MAP_ANONYMOUS},
		};

		ret |= seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 2, c);
	}
	ret |= allow_if(ctx, SCMP_SYS(mprotect), 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(munmap), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mremap), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(brk), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getrandom), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit_group), 0);
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigreturn), 0);
	/* Sanitizer runtimes tear their signal stack down at exit; harmless anyway. */
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack), 0);
	if (ret != 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * The filter as a BPF program, generated once by libseccomp in the daemon
 * (hd_sandbox_prepare, before the first worker) into a memfd, sealed, that
 * every worker is given as its fd 4 and only loads: the memfd, or
 * PREPARE_FAILED (each worker then builds and loads its own with libseccomp,
 * as seccomp_load does), or PREPARE_UNTRIED.
 */
#define PREPARE_UNTRIED (-2)
#define PREPARE_FAILED (-1)
static int prepared = PREPARE_UNTRIED;

/* A program's size in bytes is whole instructions, one at least, at most BPF_MAXINSNS. */
static bool prog_size_ok(off_t size)
{
	return size > 0 && size % (off_t)sizeof(struct sock_filter) == 0 &&
	       size / (off_t)sizeof(struct sock_filter) <= BPF_MAXINSNS;
}

/* Exports the rules' program into a sealed memfd (libseccomp 2.5 writes it only to a descriptor).
 */
static int filter_export(void)
{
	scmp_filter_ctx ctx = filter_rules();
	struct stat st;
	int fd, ret = -EIO;

	if (!ctx)
		return -ENOMEM;
	fd = memfd_create("usdtkit-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (seccomp_export_bpf(ctx, fd) != 0 || fstat(fd, &st) != 0 || !prog_size_ok(st.st_size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
		goto out;
	ret = fd;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return ret;
}

/* Once, in the daemon before the first worker: the program every worker will load. */
void hd_sandbox_prepare(void)
{
	if (prepared != PREPARE_UNTRIED)
		return;
	prepared = filter_export();
	if (prepared < 0) {
		hd_warn("seccomp filter export failed (%s): each worker builds its own",
			strerror(-prepared));
		prepared = PREPARE_FAILED;
	}
}

int hd_sandbox_filter_fd(void)
{
	return prepared >= 0 ? prepared : -1;
}

/* In the worker: the prepared program from fd (closed here), loaded. 0, or -errno. */
static int load_from(int fd)
{
	struct sock_fprog prog;
	struct stat st;
	int ret = -EINVAL;

	if (fstat(fd, &st) != 0 || !prog_size_ok(st.st_size)) {
		close(fd);
		return ret;
	}
	prog.len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	prog.filter = malloc((size_t)st.st_size);
	if (prog.filter && pread(fd, prog.filter, (size_t)st.st_size, 0) == st.st_size)
		ret = 0;
	close(fd); /* (before the filter, which allows no close) */
	/* What seccomp_load does with the default attributes: no_new_privs, no flags. */
	if (ret == 0 && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
			 prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0))
		ret = -errno;
	free(prog.filter);
	return ret;
}

#else /* !USDTKIT_HAVE_SECCOMP: built with -Dseccomp=disabled */

/* Once, in the daemon: says that the workers run without a syscall filter. */
void hd_sandbox_prepare(void)
{
	static bool said;

	if (!said)
		hd_warn("built without libseccomp (-Dseccomp=disabled): the parser worker runs "
			"with resource limits only, without its syscall filter");
	said = true;
}

int hd_sandbox_filter_fd(void)
{
	return -1;
}

#endif /* USDTKIT_HAVE_SECCOMP */

int hd_sandbox(const struct hd_worker_limits *lim, int filter_fd)
{
	struct rlimit rl;
#if USDTKIT_HAVE_SECCOMP
	scmp_filter_ctx ctx;
	int ret;
#endif

	rl.rlim_cur = lim->cpu_seconds;
	rl.rlim_max = lim->cpu_seconds + 1;
	setrlimit(RLIMIT_CPU, &rl);
#if !defined(__SANITIZE_ADDRESS__) && !defined(USDT_HELPERD_ASAN)
	/* (AddressSanitizer builds reserve terabytes of shadow: no address-space limit there.) */
	if (!lim->test_no_seccomp) {
		rl.rlim_cur = rl.rlim_max = lim->address_space;
		setrlimit(RLIMIT_AS, &rl);
	}
#endif
	rl.rlim_cur = rl.rlim_max = 0;
	setrlimit(RLIMIT_FSIZE, &rl);
	setrlimit(RLIMIT_CORE, &rl);
	/*
	 * Tests under valgrind only: its core cannot run a process once a
	 * seccomp filter is loaded, nor within a 2 GiB address space. Nothing
	 * else changes: the same worker, limits and re-checks of its answer.
	 */
	if (lim->test_no_seccomp) {
		if (filter_fd >= 0)
			close(filter_fd);
		return 0;
	}
#if USDTKIT_HAVE_SECCOMP
	if (filter_fd >= 0)
		return load_from(filter_fd);
	ctx = filter_rules();
	if (!ctx)
		return -ENOMEM;
	ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
#else
	if (filter_fd >= 0)
		close(filter_fd);
	return 0;
#endif
}
