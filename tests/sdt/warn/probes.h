/* SPDX-License-Identifier: MIT */
/* The probe macros of a pattern: the generated header (-DWP_GENERATED) or bare.h. */
#ifdef WP_GENERATED
#include "warnpat.h"
#else
#include "bare.h"
#endif
