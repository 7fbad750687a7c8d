/* SPDX-License-Identifier: MIT */
/*
 * The daemon's library (libusdthelperd: everything but main.c, conn.c and
 * serve.c) linked whole, on its own (issue 33, item 6): a call from it up
 * into the protocol or the loop that is not one of helperd.h's callbacks
 * (struct hd_upcalls) leaves an undefined symbol, and this link, so the
 * build, fails. Run, it checks that the callbacks left unset do nothing.
 */
#include <stdio.h>

#include "helperd.h"

int main(void)
{
	uint64_t t = hd_now_ms();

	hd_forget(&t);
	hd_register_done(&t, 0, 0, 0);
	if (hd_hold_begin(1, 0, 0) != 0) {
		fprintf(stderr, "lib_alone: an unset hold_begin held\n");
		return 1;
	}
	if (hd_now_ms() < t) {
		fprintf(stderr, "lib_alone: the clock went back\n");
		return 1;
	}
	puts("ok: libusdthelperd links whole without main.c, conn.c, serve.c");
	return 0;
}
