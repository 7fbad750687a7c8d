/* SPDX-License-Identifier: MIT */
/* Function pointers (GLib's source dispatch): a variable, a function name, its address. */
#include "probes.h"

typedef void (*handler_t)(int);

struct wp_source {
	handler_t dispatch;
	void *user_data;
};

static void wp_on_signal(int sig)
{
	(void)sig;
}

void wp_dispatch(struct wp_source *s, int sig)
{
	handler_t h = s->dispatch ? s->dispatch : wp_on_signal;

	WARNPAT_CALLBACK(h, s->user_data, sig);
#ifndef __cplusplus /* sizeof refuses a function in C++, with SystemTap's header too */
	WARNPAT_CALLBACK(wp_on_signal, (void *)0, 0);
#endif
	WARNPAT_CALLBACK(&wp_on_signal, s, 1);
	h(sig);
}
