// SPDX-License-Identifier: MIT
/*
 * The file of the path-swap attack (tests/security): 256 sites of one
 * probe PROV:hit, so that the daemon's registration of it writes 256
 * definition lines, the window the attack needs. Run as "many N", it
 * fires hit N times at each site.
 */
#include <stdlib.h>
#include <sys/sdt.h>

#define S DTRACE_PROBE1(PROV, hit, i);
#define S8 S S S S S S S S
#define S64 S8 S8 S8 S8 S8 S8 S8 S8

__attribute__((noinline)) static void fire(volatile int i)
{
	S64 S64 S64 S64
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;

	for (int i = 0; i < n; i++)
		fire(i);
	return 0;
}
