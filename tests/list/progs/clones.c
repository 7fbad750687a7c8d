/*
 * Probe sites in the copies GCC makes of functions at -O2 (t-list-clones):
 * part_fn.part.N (the tail split off an early-return function),
 * isra_fn...isra.N and constprop_fn.constprop.N (copies with parameters
 * removed or constants propagated), cold_fn.cold (the blocks after a call
 * to a cold function), and label_fn.constprop.N under an asm name (DWARF
 * and the symbol then disagree about the name). Linked with clones_lto.c
 * built twice, whose two static helper()s -flto renames helper.lto_priv.N.
 * argv[1]: a file to create once every constructor has run; then it sleeps
 * until killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/sdt.h>

struct big {
	int a, b, c, d, e, f, g, h;
};
volatile int sink;
/* Cold and defined elsewhere: the block that calls it is moved to cold_fn.cold. */
extern void lt_report(int) __attribute__((cold));
int lt_entry_a(int), lt_entry_b(int);

static __attribute__((noinline)) int isra_fn(struct big *p, int unused)
{
	STAP_PROBE1(ltclone, isra__site, p->c);
	return p->c * 3;
}

static __attribute__((noinline)) int constprop_fn(int k, int x)
{
	STAP_PROBE2(ltclone, constprop__site, k, x);
	for (int i = 0; i < k; i++)
		sink += x * i;
	return sink;
}

static int label_fn(int k, int x) __asm__("lt_asm_named");
static __attribute__((noinline)) int label_fn(int k, int x)
{
	STAP_PROBE2(ltclone, label__site, k, x);
	for (int i = 0; i < k; i++)
		sink -= x * i;
	return sink;
}

static int part_fn(int x)
{
	char buf[64];

	if (__builtin_expect(x > 0, 1))
		return x;
	STAP_PROBE1(ltclone, part__site, x);
	for (int i = 0; i < 100; i++)
		sink += i * x;
	snprintf(buf, sizeof(buf), "%d", sink);
	sink += (int)strlen(buf);
	return sink;
}

__attribute__((noinline)) int cold_fn(int x)
{
	for (int i = 0; i < x; i++)
		sink += i;
	if (x == 12345) {
		lt_report(x);
		STAP_PROBE1(ltclone, cold__site, x);
	}
	return x + 1;
}

int main(int argc, char **argv)
{
	struct big b = {argc, argc, argc, argc, argc, argc, argc, argc};
	int fd;

	sink = isra_fn(&b, 3);
	sink += constprop_fn(7, argc) + constprop_fn(7, argc + 1);
	sink += label_fn(5, argc) + label_fn(5, argc + 2);
	sink += part_fn(argc - 5) + part_fn(argc - 4);
	sink += cold_fn(argc);
	sink += lt_entry_a(argc) + lt_entry_b(argc);
	if (argc < 2)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	for (;;)
		pause();
}
