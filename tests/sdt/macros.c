/* SPDX-License-Identifier: MIT */
/*
 * Every public macro of SystemTap's <sys/sdt.h>, used the way real programs use them. Built
 * once with usdtkit's header and once with SystemTap's; t-macros.sh compares the notes
 * (provider, name, argument count, sizes and signs, semaphore or not). No floating-point
 * arguments: SystemTap marks them "f", usdtkit deliberately does not. SystemTap's header has
 * no STAP_PROBE_ASM_OPERANDS in C++ (it tests __STDC_VERSION__): -DNO_ASM_MACROS leaves the
 * in-asm probes out for that comparison.
 */
#define SDT_USE_VARIADIC 1 /* STAP_PROBEV, as QEMU's trace backend does */
#include <sys/sdt.h>

#include <stddef.h>
#include <stdint.h>

/* Macros that programs test for or call directly; each header must define them all. */
#if !defined _SYS_SDT_H || !defined STAP_PROBE || !defined STAP_PROBE1 || !defined STAP_PROBE12 || \
    !defined DTRACE_PROBE || !defined DTRACE_PROBE1 || !defined DTRACE_PROBE12 ||                  \
    !defined STAP_PROBEV || !defined STAP_PROBE_ASM || !defined STAP_PROBE_ASM_TEMPLATE ||         \
    (!defined STAP_PROBE_ASM_OPERANDS && !defined NO_ASM_MACROS) || !defined _SDT_NARG ||          \
    !defined _SDT_PROBE || !defined _SDT_PROBE_N || !defined _SDT_ARGARRAY ||                      \
    !defined _SDT_ASM_BODY || !defined _SDT_ASM_BASE || !defined _SDT_ARG ||                       \
    !defined _SDT_ASM_TEMPLATE_3 || !defined _SDT_ASM_OPERANDS_3 || !defined _SDT_ASM_ADDR ||      \
    !defined _SDT_NOP || !defined _SDT_NOTE_NAME || !defined _SDT_NOTE_TYPE ||                     \
    !defined _SDT_ASM_AUTOGROUP || !defined _SDT_ASM_SECTION_AUTOGROUP_SUPPORT ||                  \
    !defined _SDT_ASM_1 || !defined _SDT_ASM_STRING || !defined _SDT_ASM_SUBSTR ||                 \
    !defined _SDT_ARGSIGNED || !defined _SDT_ARGSIZE || !defined _SDT_ARGVAL ||                    \
    !defined _SDT_SEMAPHORE || !defined _SDT_NOTE_SEMAPHORE_USE || !defined _SDT_S
#error "a macro of SystemTap's sys/sdt.h is missing"
#endif

/* glibc's wrappers (include/stap-probe.h): the provider is a macro, the count is pasted. */
#define MODULE_NAME libc
#define LIBC_PROBE(name, n, ...) DTRACE_PROBE##n(MODULE_NAME, name, ##__VA_ARGS__)
#define LIBC_PROBE_ASM(name, template) STAP_PROBE_ASM(MODULE_NAME, name, template)
#define LIBC_PROBE_ASM_OPERANDS(n, ...) STAP_PROBE_ASM_OPERANDS(n, __VA_ARGS__)

int macros_run(int a, long b, const char *s, unsigned char c);

int g_counter = 5;
char g_name[16] = "name";

int macros_run(int a, long b, const char *s, unsigned char c)
{
	short sh = (short)a;
	unsigned short ush = (unsigned short)b;
	long long ll = b * 3;
	unsigned long long ull = (unsigned long long)ll;
	int8_t i8 = (int8_t)a;
	size_t sz = (size_t)b;
	void *vp = &sh;
	int arr[3] = {a, a + 1, a + 2};

	STAP_PROBE(mac, p0);
	STAP_PROBE1(mac, p1, a);
	STAP_PROBE2(mac, p2, a, b);
	STAP_PROBE3(mac, p3, a, b, s);
	STAP_PROBE4(mac, p4, a, b, s, c);
	STAP_PROBE5(mac, p5, a, b, s, c, sh);
	STAP_PROBE6(mac, p6, a, b, s, c, sh, ush);
	STAP_PROBE7(mac, p7, a, b, s, c, sh, ush, ll);
	STAP_PROBE8(mac, p8, a, b, s, c, sh, ush, ll, ull);
	STAP_PROBE9(mac, p9, a, b, s, c, sh, ush, ll, ull, i8);
	STAP_PROBE10(mac, p10, a, b, s, c, sh, ush, ll, ull, i8, sz);
	STAP_PROBE11(mac, p11, a, b, s, c, sh, ush, ll, ull, i8, sz, vp);
	STAP_PROBE12(mac, p12, a, b, s, c, sh, ush, ll, ull, i8, sz, vp, arr);

	DTRACE_PROBE(dt, p0);
	DTRACE_PROBE1(dt, p1, g_counter);
	DTRACE_PROBE2(dt, p2, g_counter, g_name);
	DTRACE_PROBE3(dt, p3, 1, -2, 3u);
	DTRACE_PROBE4(dt, p4, a, b, s, c);
	DTRACE_PROBE5(dt, p5, a, b, s, c, sh);
	DTRACE_PROBE6(dt, p6, a, b, s, c, sh, ush);
	DTRACE_PROBE7(dt, p7, a, b, s, c, sh, ush, ll);
	DTRACE_PROBE8(dt, p8, a, b, s, c, sh, ush, ll, ull);
	DTRACE_PROBE9(dt, p9, a, b, s, c, sh, ush, ll, ull, i8);
	DTRACE_PROBE10(dt, p10, a, b, s, c, sh, ush, ll, ull, i8, sz);
	DTRACE_PROBE11(dt, p11, a, b, s, c, sh, ush, ll, ull, i8, sz, vp);
	DTRACE_PROBE12(dt, p12, a, b, s, c, sh, ush, ll, ull, i8, sz, vp, arr);

	STAP_PROBEV(var, v0);
	STAP_PROBEV(var, v1, a);
	STAP_PROBEV(var, v3, a, b, s);
	STAP_PROBEV(var, v12, a, b, s, c, sh, ush, ll, ull, i8, sz, vp, g_counter);

	LIBC_PROBE(setjmp, 3, vp, a, b);
	LIBC_PROBE(memory_free, 1, vp);

#ifndef NO_ASM_MACROS
	/* Inside an extended asm: literal operand text (note the %%) and the template form. */
	/* The operand text as users write it, which clang-format would split. */
	/* clang-format off */
	__asm__ __volatile__("nop\n" STAP_PROBE_ASM(inasm, literal, -4@%%eax 8@8(%%rsp)) "nop\n");
	__asm__ __volatile__("nop\n" STAP_PROBE_ASM(inasm, tmpl, STAP_PROBE_ASM_TEMPLATE(3)) "nop\n"
			     :: STAP_PROBE_ASM_OPERANDS(3, a, b, c));
	__asm__ __volatile__(LIBC_PROBE_ASM(lll_lock, STAP_PROBE_ASM_TEMPLATE(1))
			     :: LIBC_PROBE_ASM_OPERANDS(1, vp));
	/* clang-format on */
#endif
	/* Through the internals, as SystemTap spells them. */
	_SDT_PROBE(inner, direct, 2, (a, b));
	return arr[1] + (int)sh;
}
