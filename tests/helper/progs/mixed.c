/* One probe whose sites differ in argument size (int, then long), and one more. */
#include <sys/sdt.h>

#ifndef PROV
#define PROV hlpm
#endif

int main(int argc, char **argv)
{
	(void)argv;
	STAP_PROBE1(PROV, mixed, argc);
	STAP_PROBE1(PROV, mixed, (long)argc * 1000000000000L);
	STAP_PROBE1(PROV, taken, argc);
	return 0;
}
