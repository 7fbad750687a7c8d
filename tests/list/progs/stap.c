/*
 * Probes from SystemTap's <sys/sdt.h> macros alone: no .d, no dtrace -h or
 * -G, so no metadata note. `dtrace -l -v` falls back to integer types of
 * the sizes the notes give. argv[1]: the ready file, as in app.c.
 */
#include <fcntl.h>
#include <sys/sdt.h>
#include <unistd.h>

__attribute__((noinline)) void stap_fn(int a, unsigned long b, signed char c, unsigned short d)
{
	STAP_PROBE4(ltstap, event__four, a, b, c, d);
	STAP_PROBE(ltstap, event__none);
}

int main(int argc, char **argv)
{
	int fd;

	stap_fn(argc, (unsigned long)argc * 3ul, (signed char)-argc, (unsigned short)argc);
	if (argc < 2)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	for (;;)
		pause();
}
