/* How the emulator calls its probes: the lower-cased macros of the header. */
#ifndef DTRACE_WRAPPER_H
#define DTRACE_WRAPPER_H

#include <stdio.h>

#ifdef USE_DYNAMIC_TRACE
#include "dtrace-probes.h"
#define DTRACE_ENABLED(name) erlang_##name##_enabled()
#define DTRACE2(name, a0, a1) erlang_##name(a0, a1)
#define DTRACE3(name, a0, a1, a2) erlang_##name(a0, a1, a2)
#define DTRACE4(name, a0, a1, a2, a3) erlang_##name(a0, a1, a2, a3)
#else
#define DTRACE_ENABLED(name) 0
#define DTRACE2(name, a0, a1) do {} while (0)
#define DTRACE3(name, a0, a1, a2) do {} while (0)
#define DTRACE4(name, a0, a1, a2, a3) do {} while (0)
#endif

#define DTRACE_CHARBUF(name, size) char name##_BUFFER[size], *name = name##_BUFFER

static inline void dtrace_pid_str(unsigned pid, char *buf)
{
	snprintf(buf, 32, "<0.%u.0>", pid);
}

#endif
