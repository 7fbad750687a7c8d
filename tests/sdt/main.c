/* SPDX-License-Identifier: MIT */
/* The host program: the probes live in probes.c, linked in or in a shared library. */
int sdttest_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return sdttest_main(argc, argv);
}
