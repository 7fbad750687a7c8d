/* SPDX-License-Identifier: MIT */
/*
 * The probe test program. It fires every probe of provider "sdttest" once, in a fixed order,
 * and before each one appends to the expectations file (argv[1]) one line
 *
 *   NAME KIND SIZE=VALUE ...
 *
 * saying what a consumer must read: KIND i (signed integer), u (unsigned integer, also
 * pointers), f (a float or double argument: VALUE is its raw bits, as unsigned; SystemTap's
 * header marks such an argument SIZEf@, ours passes the bits) or s (a string pointer: VALUE
 * is ADDRESS:TEXT). The kinds and sizes come from this file's own types, not from
 * <sys/sdt.h>, so the test scripts can check the notes (readelf), gdb ($_probe_argN) and
 * bpftrace (argN, str()) against them.
 *
 * Values come from volatile objects (so the compiler keeps them in registers), from literals
 * (immediates), from globals and from the stack. Built as an executable (with main.c) or as a
 * shared library loaded by main.c.
 */
#include <sys/sdt.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int sdttest_main(int argc, char **argv);
unsigned short sdttest_guarded_state(void);
int sdttest_fire_guarded(long value);

static FILE *out;

static void expect_begin(const char *name)
{
	fprintf(out, "%s", name);
}

static void expect_i(size_t size, long long v)
{
	fprintf(out, " i%zu=%lld", size, v);
}

static void expect_u(size_t size, unsigned long long v)
{
	fprintf(out, " u%zu=%llu", size, v);
}

static void expect_f(size_t size, unsigned long long bits)
{
	fprintf(out, " f%zu=%llu", size, bits);
}

/* Printing the text also touches its page, which bpftrace's str() cannot fault in. */
static void expect_s(const char *s)
{
	fprintf(out, " s%zu=%llu:%s", sizeof(s), (unsigned long long)(uintptr_t)s, s);
}

static void expect_end(void)
{
	fputc('\n', out);
	fflush(out);
}

/* The signedness is written by hand (EI/EU) and checked against the type here. */
#define IS_SIGNED(x) ((__typeof__(x))-1 < (__typeof__(x))1)
#define EI(x) (IS_SIGNED(x) ? expect_i(sizeof(x), (long long)(x)) : (void)bad_kind(#x))
#define EU(x) (!IS_SIGNED(x) ? expect_u(sizeof(x), (unsigned long long)(x)) : (void)bad_kind(#x))
#define EP(x) expect_u(sizeof(void *), (unsigned long long)(uintptr_t)(x))

static int bad_kinds;
static void bad_kind(const char *what)
{
	fprintf(stderr, "probes.c: wrong kind for %s\n", what);
	bad_kinds++;
}

static uint64_t double_bits(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof(b));
	return b;
}

static uint32_t float_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* Globals: the argument SystemTap's header leaves as symbol(%rip). */
int g_int = -123456;
long long g_ll = -9876543210LL;
uint16_t g_u16 = 54321;
const char *g_str = "global-string";
static int8_t g_s8 = -100;

volatile int8_t v_s1 = -5;
volatile uint8_t v_u1 = 200;
volatile int16_t v_s2 = -300;
volatile uint16_t v_u2 = 65000;
volatile int32_t v_s4 = -70000;
volatile uint32_t v_u4 = 4294967280u;
volatile int64_t v_s8 = -5000000000LL;
volatile uint64_t v_u8 = 0xfedcba9876543210ULL;
volatile double v_d = -1234.5;
volatile float v_f = 3.25f;

static void probe_zero(void)
{
	expect_begin("zero");
	expect_end();
	STAP_PROBE(sdttest, zero);
}

static void probe_ints(void)
{
	int8_t s1 = v_s1;
	uint8_t u1 = v_u1;
	int16_t s2 = v_s2;
	uint16_t u2 = v_u2;
	int32_t s4 = v_s4;
	uint32_t u4 = v_u4;

	expect_begin("ints");
	EI(s1), EU(u1), EI(s2), EU(u2), EI(s4), EU(u4);
	expect_end();
	STAP_PROBE6(sdttest, ints, s1, u1, s2, u2, s4, u4);
}

static void probe_wide(void)
{
	int64_t s8 = v_s8;
	uint64_t u8 = v_u8;
	long l = -1;
	unsigned long ul = (unsigned long)v_u8;
	int local = 17;
	int *p = &local;

	l += v_s1; /* -6, from a register */
	expect_begin("wide");
	EI(s8), EU(u8), EI(l), EU(ul), EP(p);
	expect_end();
	STAP_PROBE5(sdttest, wide, s8, u8, l, ul, p);
	local++;
}

static void probe_consts(void)
{
	expect_begin("consts");
	EI(-5), EU((uint8_t)250), EI((int16_t)-30000), EU(4294967280u), EI(-70000LL),
	    EU(18446744073709551615ULL);
	expect_end();
	STAP_PROBE6(sdttest, consts, -5, (uint8_t)250, (int16_t)-30000, 4294967280u, -70000LL,
		    18446744073709551615ULL);
}

static void probe_strings(void)
{
	char buf[32];
	const char *lit = "alpha";

	strcpy(buf, "stack-buffer");
	expect_begin("strings");
	expect_s(lit), expect_s(buf), expect_s(g_str);
	expect_end();
	STAP_PROBE3(sdttest, strings, lit, buf, g_str);
}

static void probe_globals(void)
{
	expect_begin("globals");
	EI(g_int), EI(g_ll), EU(g_u16), EI(g_s8), EP(&g_int);
	expect_end();
	STAP_PROBE5(sdttest, globals, g_int, g_ll, g_u16, g_s8, &g_int);
}

static void probe_stack(int depth)
{
	int arr[4];
	long sum = 0;
	int i;

	for (i = 0; i < 4; i++) {
		arr[i] = (depth + i) * -7;
		sum += arr[i];
	}
	expect_begin("stack");
	EI(arr[0]), EI(arr[3]), EI(sum), EP(&arr[1]), EP(arr);
	expect_end();
	STAP_PROBE5(sdttest, stack, arr[0], arr[3], sum, &arr[1], arr);
}

static void probe_twelve(void)
{
	int8_t a = v_s1;
	uint8_t b = v_u1;
	int16_t c = v_s2;
	uint16_t d = v_u2;
	int32_t e = v_s4;
	uint32_t f = v_u4;
	int64_t g = v_s8;
	uint64_t h = v_u8;
	int i = g_int;
	const char *j = g_str;
	long k = -42;
	unsigned short l = 7;

	expect_begin("twelve");
	EI(a), EU(b), EI(c), EU(d), EI(e), EU(f), EI(g), EU(h), EI(i), expect_s(j), EI(k), EU(l);
	expect_end();
	STAP_PROBE12(sdttest, twelve, a, b, c, d, e, f, g, h, i, j, k, l);
}

static void probe_floats(void)
{
	double d = v_d;
	float f = v_f;

	expect_begin("floats");
	expect_f(sizeof(d), double_bits(d)), expect_f(sizeof(f), float_bits(f));
	expect_f(sizeof(double), double_bits(1.5));
	expect_end();
	STAP_PROBE3(sdttest, floats, d, f, 1.5);
}

static void probe_dtrace(void)
{
	uint8_t u = v_u1;
	int32_t s = v_s4;

	expect_begin("dtrace");
	EU(u), EI(s);
	expect_end();
	DTRACE_PROBE2(sdttest, dtrace, u, s);
}

/*
 * argv[1]: expectations file. argv[2] (optional): "guarded" also fires the guarded probe
 * once, recording the semaphore it saw; "wait-semaphore" waits for a tracer to enable the
 * guarded probe, fires it, waits for the tracer to go, and reports both semaphore values.
 */
int sdttest_main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "";

	if (argc < 2 || !(out = fopen(argv[1], "w"))) {
		fprintf(stderr, "usage: %s EXPECTATIONS-FILE [guarded|wait-semaphore]\n", argv[0]);
		return 2;
	}
	if (!strcmp(mode, "wait-semaphore")) {
		int i, on = 0, off = 0, initial = sdttest_guarded_state();

		/* Up to 30 s for the tracer to attach, then up to 30 s for it to leave. */
		for (i = 0; i < 3000 && !sdttest_guarded_state(); i++)
			sdttest_fire_guarded(-1);
		if (sdttest_guarded_state()) {
			on = sdttest_guarded_state();
			while (sdttest_guarded_state() && i++ < 6000)
				sdttest_fire_guarded(4242);
			off = !sdttest_guarded_state();
		}
		fprintf(out,
			"semaphore-initial %d\nsemaphore-on %d\nsemaphore-off-after-detach %d\n",
			initial, on, off);
		fclose(out);
		return !initial && on && off ? 0 : 1;
	}
	probe_zero();
	probe_ints();
	probe_wide();
	probe_consts();
	probe_strings();
	probe_globals();
	probe_stack(3);
	probe_twelve();
	probe_floats();
	probe_dtrace();
	if (!strcmp(mode, "guarded")) {
		expect_begin("guarded");
		expect_i(sizeof(long), 777);
		expect_end();
		fprintf(out, "#semaphore %u fired %d\n", sdttest_guarded_state(),
			sdttest_fire_guarded(777));
	}
	fclose(out);
	return bad_kinds ? 3 : 0;
}
