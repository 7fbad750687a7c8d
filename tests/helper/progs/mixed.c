/* One probe whose sites differ in argument size (int, then long), and one more. */
#include <sys/sdt.h>

int main(int argc, char **argv)
{
	(void)argv;
	STAP_PROBE1(hlpm, mixed, argc);
	STAP_PROBE1(hlpm, mixed, (long)argc * 1000000000000L);
	STAP_PROBE1(hlpm, taken, argc);
	return 0;
}
