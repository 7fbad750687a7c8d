/* The probes, or inline no-ops when built without dtrace (as CPython's). */
#ifndef PYDTRACE_H
#define PYDTRACE_H

#ifdef WITH_DTRACE
#include "pydtrace_probes.h"
#else
static inline void PyDTrace_FUNCTION_ENTRY(const char *f, const char *n, int l) { (void)f; (void)n; (void)l; }
static inline void PyDTrace_FUNCTION_RETURN(const char *f, const char *n, int l) { (void)f; (void)n; (void)l; }
static inline void PyDTrace_LINE(const char *f, const char *n, int l) { (void)f; (void)n; (void)l; }
static inline void PyDTrace_GC_START(int g) { (void)g; }
static inline void PyDTrace_GC_DONE(long c) { (void)c; }
static inline void PyDTrace_AUDIT(const char *e, void *a) { (void)e; (void)a; }
static inline int PyDTrace_FUNCTION_ENTRY_ENABLED(void) { return 0; }
static inline int PyDTrace_FUNCTION_RETURN_ENABLED(void) { return 0; }
static inline int PyDTrace_LINE_ENABLED(void) { return 0; }
static inline int PyDTrace_GC_START_ENABLED(void) { return 0; }
static inline int PyDTrace_GC_DONE_ENABLED(void) { return 0; }
static inline int PyDTrace_AUDIT_ENABLED(void) { return 0; }
#endif

#endif
