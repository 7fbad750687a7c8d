#ifndef MINIGLIB_H
#define MINIGLIB_H
#include <stddef.h>

void *g_malloc(size_t n);
void g_free(void *p);
unsigned int g_quark_from_string(const char *s);
int g_main_dispatch(const char *source_name, int (*fn)(void *), void *data);
int g_trace_dispatch_enabled(void);
#endif
