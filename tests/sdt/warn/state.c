/* SPDX-License-Identifier: MIT */
/* Enums and booleans: enum values and constants, bool, comparisons. */
#include <stdbool.h>
#include "probes.h"

enum wp_state { WP_IDLE, WP_BUSY = 4, WP_DONE };

void wp_state_change(enum wp_state from, enum wp_state to, bool forced)
{
	bool changed = from != to;

	WARNPAT_STATE(from, to, forced);
	WARNPAT_STATE(WP_DONE, changed, from == WP_IDLE && forced);
}
