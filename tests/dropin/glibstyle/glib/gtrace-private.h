/* As GLib's: TRACE(probe) expands to the probe, or to nothing. */
#ifndef GTRACE_PRIVATE_H
#define GTRACE_PRIVATE_H

#ifdef HAVE_DTRACE
#include "glib_probes.h"
#define TRACE(probe) probe
#define TRACE_ENABLED(probe) probe ## _ENABLED()
#else
#define TRACE(probe)
#define TRACE_ENABLED(probe) 0
#endif

#endif
