/* SPDX-License-Identifier: MIT */
/*
 * A module's state-file lines made from no sites at all (a registration
 * whose every site the kernel refused, or cut short before its first):
 * nothing written, and the hash of nothing. The buffer is then still
 * unallocated; under the sanitizer build, hashing it used to offset a NULL
 * pointer, which stopped the daemon (UBSan, t-sec-load-fair in CI).
 */
#include <stdio.h>

#include "helperd.h"
#include "strbuf.h"

int main(void)
{
	struct usdt_sbuf b = {0};
	uint64_t h0 = hd_state_lines(&b, 1, 2, "/nowhere", NULL, 0);
	uint64_t h1;

	if (b.len != 0 || b.oom) {
		fprintf(stderr, "state_lines: %zu bytes made from no sites\n", b.len);
		return 1;
	}
	h1 = hd_state_lines(&b, 3, 4, "/elsewhere", NULL, 0);
	if (h0 != h1 || b.len != 0) {
		fprintf(stderr, "state_lines: no sites hashed differently (%llx, %llx)\n",
			(unsigned long long)h0, (unsigned long long)h1);
		return 1;
	}
	usdt_sb_free(&b);
	puts("ok: no sites, no lines, the hash of nothing");
	return 0;
}
