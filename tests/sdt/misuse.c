/* SPDX-License-Identifier: MIT */
/* One misuse per -DBAD=N; each must fail to compile with a message naming the probe. */
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>

struct pair {
	int a, b, c;
} g_pair;
union either {
	int i;
	double d;
} g_either;
struct flags {
	unsigned ready : 3;
} g_flags;

void misuse(void);
void misuse(void)
{
#if BAD == 1
	STAP_PROBE2(badprov, structprobe, 1, g_pair);
#elif BAD == 2
	STAP_PROBE1(badprov, unionprobe, g_either);
#elif BAD == 3
	STAP_PROBE1(badprov, bitfieldprobe, g_flags.ready);
#elif BAD == 4
	__extension__ __int128 wide = 3;
	STAP_PROBE3(badprov, int128probe, 1, 2, wide);
#elif BAD == 5
	long double ld = 1;
	STAP_PROBE1(badprov, longdoubleprobe, ld);
#elif BAD == 6
	STAP_PROBE13(badprov, thirteenprobe, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
#elif BAD == 7
	DTRACE_PROBE13(badprov, dthirteenprobe, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
#elif BAD == 8
	STAP_PROBEV(badprov, vthirteenprobe, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
#elif BAD == 0
	STAP_PROBE2(badprov, fineprobe, 1, g_pair.a);
#endif
}
