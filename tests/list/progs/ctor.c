/*
 * For dtrace -l -c (t-list-create): the program's own constructor loads the
 * library named by $LT_PLUGIN with dlopen() (its probes appear only once
 * the constructors have run) and, with $LT_CTOR_MARK set, creates that
 * file; main() creates argv[1] (which must never happen: -c lists the
 * program stopped at main) and exits. With $LT_CTOR_EXIT set the
 * constructor exits with status 7; with $LT_CTOR_SIGNAL, it raises SIGSEGV;
 * with $LT_CTOR_SLEEP, it first sleeps that many seconds; with
 * $LT_CTOR_REEXEC, it first execs itself again (without that variable).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sdt.h>

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

/* glibc passes constructors main's arguments. */
__attribute__((constructor)) static void lt_ctor(int argc, char **argv)
{
	const char *plugin = getenv("LT_PLUGIN"), *mark = getenv("LT_CTOR_MARK");
	const char *nap = getenv("LT_CTOR_SLEEP");

	(void)argc;
	if (getenv("LT_CTOR_REEXEC")) {
		unsetenv("LT_CTOR_REEXEC");
		execv("/proc/self/exe", argv);
		_exit(4);
	}

	if (nap)
		sleep((unsigned)atoi(nap));
	if (getenv("LT_CTOR_EXIT"))
		_exit(7);
	if (getenv("LT_CTOR_SIGNAL"))
		raise(SIGSEGV);
	if (plugin && !dlopen(plugin, RTLD_NOW))
		_exit(3);
	if (mark)
		touch(mark);
}

int main(int argc, char **argv)
{
	STAP_PROBE1(ltctor, main__entry, argc);
	if (argc > 1)
		touch(argv[1]);
	return 0;
}
