/* SPDX-License-Identifier: MIT */
/*
 * Built as C89..C2x and C++98..C++2b with -Wall -Wextra -Wpedantic -Werror (t-std-matrix.sh):
 * the numbered and DTRACE macros up to 12 arguments, STAP_PROBEV, the in-asm macros where the
 * language has variadic macros, and semaphores. Plain C89 / C++98 code around them.
 */
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>

#ifdef __cplusplus
extern "C" {
#endif
int std_probed(int a, long b, const char *s, unsigned char c, double d);
extern unsigned short stdp_guarded_semaphore;
#ifdef __cplusplus
}
#endif

unsigned short stdp_guarded_semaphore __attribute__((section(".probes")));
static int counter;
char buffer[8];

static void guarded(int a)
{
	/* semaphores are all-or-nothing per file in SystemTap's API; reference it by hand here */
	if (__builtin_expect(stdp_guarded_semaphore, 0))
		STAP_PROBE1(stdp, guarded_hand, a);
}

int std_probed(int a, long b, const char *s, unsigned char c, double d)
{
	short sh = (short)a;
	unsigned long ul = (unsigned long)b;
	float f = (float)d;
	int arr[2];

	arr[0] = a;
	arr[1] = (int)b;
	STAP_PROBE(stdp, p0);
	STAP_PROBE1(stdp, p1, a);
	STAP_PROBE2(stdp, p2, a, b);
	STAP_PROBE3(stdp, p3, a, b, s);
	STAP_PROBE4(stdp, p4, a, b, s, c);
	STAP_PROBE6(stdp, p6, a, b, s, c, sh, ul);
	STAP_PROBE8(stdp, p8, a, b, s, c, sh, ul, d, f);
	STAP_PROBE12(stdp, p12, a, b, s, c, sh, ul, d, f, arr, counter, buffer, 42);
	DTRACE_PROBE(stdp, d0);
	DTRACE_PROBE3(stdp, d3, -1, buffer, &counter);
	DTRACE_PROBE12(stdp, d12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
	STAP_PROBEV(stdp, v0);
	STAP_PROBEV(stdp, v2, a, s);
	STAP_PROBEV(stdp, v12, a, b, s, c, sh, ul, d, f, arr, counter, buffer, 42);
#ifdef STAP_PROBE_ASM_OPERANDS
	/* The operands laid out as users write them. */
	/* clang-format off */
	__asm__ __volatile__(STAP_PROBE_ASM(stdp, inasm, STAP_PROBE_ASM_TEMPLATE(2))
			     :: STAP_PROBE_ASM_OPERANDS(2, a, b));
	/* clang-format on */
#endif
#if defined __cplusplus && __cplusplus >= 201103L
	{
		enum class level : short { low = -3, high = 3 };
		STAP_PROBE3(stdp, cxx11, nullptr, level::low, true);
	}
#endif
	guarded(a);
	counter++;
	return arr[1] + sh;
}
