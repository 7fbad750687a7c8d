/*
 * A plugin: a shared library with its own USDT provider, loaded by host.c
 * with dlopen. Its probes are in the library, so tracers name the library
 * (bpftrace usdt:./libplugin.so:plugin:item).
 */
#include <stdio.h>
#include <string.h>

#include "plugin_probes.h"

#define PLUGIN_VERSION 3

int plugin_init(void);
unsigned long plugin_process(const char *const *items, int n);

int plugin_init(void)
{
	PLUGIN_LOADED("example-plugin", PLUGIN_VERSION);
	return PLUGIN_VERSION;
}

/* The "work": a cost that depends on the item, so probes have varied values. */
static unsigned long cost_of(const char *s)
{
	unsigned long c = 0;

	while (*s)
		c = c * 31 + (unsigned char)*s++;
	return c % 1000;
}

unsigned long plugin_process(const char *const *items, int n)
{
	unsigned long total = 0;
	int i;

	for (i = 0; i < n; i++) {
		unsigned long c = cost_of(items[i]);

		/* The string is the caller's: the probe passes the pointer. */
		PLUGIN_ITEM((char *)items[i], i, c);
		total += c;
	}
	if (PLUGIN_BATCH_DIGEST_ENABLED()) {
		char hex[32];

		snprintf(hex, sizeof(hex), "%08lx-%d", total * 2654435761UL % 0xffffffffUL, n);
		PLUGIN_BATCH_DIGEST(hex);
	}
	return total;
}
