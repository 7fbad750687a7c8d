/* SPDX-License-Identifier: MIT */
/*
 * llquantize()'s buckets, as DTrace for Linux lays them out: symmetric
 * about a middle bucket. With P the positive buckets (the overflow one
 * included), there are 2P + 1: bucket P holds the values whose magnitude
 * is below factor^lmag (0 alone when lmag is 0), bucket P + k the positive
 * values from lb[k] up to the next bound, bucket P - k the negative ones
 * whose magnitude is in that range, bucket 2P those at or past
 * factor^(hmag + 1) and bucket 0 those at or below its negation.
 *
 * Each magnitude m from lmag to hmag is cut into `steps` equal parts of
 * factor^(m + 1), the parts below factor^m left out (they belong to the
 * magnitude below): steps - steps/factor buckets a magnitude. When lmag is
 * 0 and steps exceed the factor, the parts of magnitude 0 are fractions:
 * only the integers 1 .. factor - 1 start a bucket, and the buckets between
 * them (ghosts) never hold a value; they keep the next integer as their
 * bound, so "the last bound at or below the value" is never a ghost.
 *
 * The engine's code generator buckets values with these bounds and the
 * renderer labels and weighs the buckets with them: one layout for both.
 */
#include <stdbool.h>
#include <stdint.h>

#include "d.h"

static uint64_t upow(uint64_t f, int64_t e)
{
	uint64_t r = 1;

	while (e-- > 0)
		r = r > UINT64_MAX / f ? UINT64_MAX : r * f;
	return r;
}

size_t dt_llq_layout(const int64_t p[4], uint64_t *lb, bool *ghost, size_t max)
{
	int64_t factor = p[0], lmag = p[1], hmag = p[2], steps = p[3], sf, mag, step, i = 1;
	uint64_t scale;
	size_t np, k;

	if (factor < 2 || lmag < 0 || hmag < lmag || steps <= 0)
		return 0;
	sf = steps / factor;
	np = (size_t)((hmag - lmag + 1) * (steps - sf) + 1);
	if (np + 1 > max || np > 4096)
		return 0;
	for (k = 0; k <= np; k++)
		ghost[k] = false;
	lb[1] = upow((uint64_t)factor, lmag);
	mag = lmag;
	if (lmag == 0 && steps > factor) {
		for (step = 2; step <= factor; step++) {
			for (k = (size_t)i + 1; k < (size_t)(i + sf) && k <= np; k++) {
				ghost[k] = true;
				lb[k] = (uint64_t)step;
			}
			i += sf;
			if ((size_t)i <= np)
				lb[i] = (uint64_t)step;
		}
		mag++;
	}
	scale = upow((uint64_t)factor, mag + 1) / (uint64_t)steps;
	for (; mag <= hmag; mag++) {
		for (step = sf + 1; step <= steps; step++)
			if ((size_t)++i <= np)
				lb[i] = scale > UINT64_MAX / (uint64_t)step
					    ? UINT64_MAX
					    : (uint64_t)step * scale;
		scale =
		    scale > UINT64_MAX / (uint64_t)factor ? UINT64_MAX : scale * (uint64_t)factor;
	}
	lb[np] = upow((uint64_t)factor, hmag + 1);
	return np;
}
