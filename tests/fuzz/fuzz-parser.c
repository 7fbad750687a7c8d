/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for usdt_parse(). The input is one or more D sources
 * separated by NUL bytes, parsed into one program as `dtrace -s a -s b`
 * would (so the merging of providers across calls is fuzzed too). The
 * model is walked afterwards so that a half-built model is caught by ASan.
 * usdt_needs_cpp(), which the command runs over each file first, is fuzzed
 * on the same sources.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usdt_provider.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk(const struct usdt_program *prog)
{
	size_t i, j, k, sum = 0;

	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *pv = &prog->providers[i];

		sum += strlen(pv->name) + strlen(pv->loc.file);
		for (j = 0; j < pv->nprobes; j++) {
			const struct usdt_probe *p = &pv->probes[j];
			char *m = usdt_probe_macro_name(pv->name, p->name);
			char *d = usdt_probe_dtrace_name(p->name);

			sum += strlen(m) + strlen(d) + strlen(p->loc.file);
			free(m);
			free(d);
			for (k = 0; k < p->nargs; k++)
				sum +=
				    strlen(p->args[k].type.spelling) +
				    (p->args[k].type.c_spelling ? strlen(p->args[k].type.c_spelling)
								: 0) +
				    (p->args[k].name ? strlen(p->args[k].name) : 0);
			for (k = 0; k < p->nxargs; k++) {
				/* argmap must point into the native list. */
				if (p->nargs && p->argmap[k] >= p->nargs)
					abort();
				sum += strlen(p->xargs[k].type.spelling) + p->argmap[k];
			}
		}
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct usdt_program prog;
	struct usdt_diag diag;
	const char *p = (const char *)data, *end = p + size;
	volatile size_t sink;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		return 0;
	usdt_program_init(&prog);
	usdt_diag_init(&diag, devnull, "fuzz");
	while (p <= end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);

		struct usdt_cpp_need need;

		/* What dtrace asks first of every file given without -C. */
		if (usdt_needs_cpp(p, n, &need) && (!need.line || !need.col || !need.directive))
			abort();
		usdt_parse(&prog, "fuzz.d", p, n, &diag);
		if (!nul)
			break;
		p = nul + 1;
	}
	sink = walk(&prog);
	(void)sink;
	usdt_program_free(&prog);
	return 0;
}
