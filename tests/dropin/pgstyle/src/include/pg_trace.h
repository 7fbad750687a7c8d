/* The probes a backend file sees: the generated header, or nothing. */
#ifndef PG_TRACE_H
#define PG_TRACE_H

#include "utils/probes.h"

#endif
