/* SPDX-License-Identifier: MIT */
/*
 * The kernel's text addresses named, for stack() and sym(), func(), mod():
 * /proc/kallsyms read once a run (its text symbols, t and T, and those of
 * modules, "[module]"), sorted; an address is the symbol at or below it.
 * Data symbols are not listed there (no CONFIG_KALLSYMS_ALL here), and an
 * address past the last symbol of its area, or a run not allowed to read
 * the addresses (they read 0), is not named: DTrace's `0x...`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct ksym {
	uint64_t addr;
	char *name, *mod;
};

static struct ksym *ks;
static size_t nks;
static bool ks_read;

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ksyms_read(void)
{
	FILE *f;
	char line[512];

	ks_read = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256], mod[128] = "vmlinux";
		struct ksym k;

		if (sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, name, mod) < 3 || !a)
			continue;
		if (type != 't' && type != 'T')
			continue;
		k.addr = a;
		k.name = dt_xstrdup(name);
		k.mod = dt_xstrdup(mod);
		DT_PUSH(ks, nks, k);
	}
	fclose(f);
	if (nks)
		qsort(ks, nks, sizeof(*ks), by_addr);
}

int eg_ksym_name(uint64_t a, const char **mod, const char **sym, uint64_t *into)
{
	size_t lo = 0, hi;

	if (!ks_read)
		ksyms_read();
	hi = nks;
	if (!nks || a < ks[0].addr)
		return -1;
	while (hi - lo > 1) { /* the last symbol at or below a */
		size_t mid = lo + (hi - lo) / 2;

		if (ks[mid].addr <= a)
			lo = mid;
		else
			hi = mid;
	}
	if (a - ks[lo].addr > (1u << 20)) /* past any function: not named */
		return -1;
	*mod = ks[lo].mod;
	*sym = ks[lo].name;
	*into = a - ks[lo].addr;
	return 0;
}

char *eg_kstack_text(const unsigned char *p, size_t size)
{
	struct dt_buf o = {0};
	uint32_t bytes;
	size_t i, n;

	memcpy(&bytes, p + 4, 4);
	n = bytes / 8;
	if (n > (size - 8) / 8)
		n = (size - 8) / 8;
	for (i = 0; i < n; i++) {
		uint64_t a, into;
		const char *mod, *sym;

		memcpy(&a, p + 8 + 8 * i, 8);
		if (!a)
			break;
		if (eg_ksym_name(a, &mod, &sym, &into))
			dt_buf_printf(&o, "\t%" PRIx64 " [unknown] ([unknown])\n", a);
		else
			dt_buf_printf(&o, "\t%" PRIx64 " %s+%" PRIu64 " (%s)\n", a, sym, into, mod);
	}
	return o.s ? o.s : dt_xstrdup("");
}
