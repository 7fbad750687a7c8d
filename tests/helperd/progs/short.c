/* A probed program that exits at once: for the many-short-lived-processes test. */
#include "names.h"

int main(int argc, char **argv)
{
	(void)argv;
	APP_TICK(argc);
	return 0;
}
