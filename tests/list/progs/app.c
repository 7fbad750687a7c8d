/*
 * The listed program: probes in two ordinary functions, one probe in both,
 * one probe inside a static inline function (inlined twice at -O2), and a
 * call into a shared library with probes. argv[1]: a file to create once
 * every constructor has run (the test waits for it); then it sleeps until
 * killed.
 */
#include <fcntl.h>
#include <unistd.h>

#include "app.h"
#include "lib.h"

static inline void inlined_helper(unsigned n)
{
	LTAPP_INLINED_SITE(n);
}

__attribute__((noinline)) int handle_request(int id, const char *path)
{
	LTAPP_REQUEST_START(id, path);
	inlined_helper((unsigned)id);
	LTAPP_REQUEST_DONE(id, 200L);
	return id;
}

__attribute__((noinline)) int other_entry(int id)
{
	LTAPP_REQUEST_START(id, "other");
	LTAPP_NO_ARGS();
	inlined_helper((unsigned)id + 1u);
	return id;
}

int main(int argc, char **argv)
{
	volatile int sink = handle_request(argc, argv[0]) + other_entry(argc) + lib_work(argc);
	int fd;

	(void)sink;
	if (argc < 2)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	for (;;)
		pause();
}
