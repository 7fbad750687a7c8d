/* SPDX-License-Identifier: MIT */
/* The dtrace command: not written yet. */
#include <stdio.h>

int main(void)
{
	fputs("dtrace: not implemented yet\n", stderr);
	return 2;
}
