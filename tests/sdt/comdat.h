/* SPDX-License-Identifier: MIT */
/* A probe in a C++ inline function: each file that uses it gets a copy in a COMDAT group. */
#include <sys/sdt.h>
inline int comdat_inl(int x)
{
	STAP_PROBE1(cx, inl, x);
	return x * 3;
}
int comdat_a(int);
