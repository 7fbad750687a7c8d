/* SPDX-License-Identifier: MIT */
/*
 * An aggregating function's constant parameters: lquantize()'s base,
 * limit, step and llquantize()'s factor, magnitudes and steps, read as
 * constants and checked as DTrace checks them (the buckets' bounds from
 * the renderer's dt_llq_bounds(), so both agree). Below codegen.c's
 * aggregations; it calls only the value layer's errors.
 */
#include <stdint.h>

#include "cg.h"

/* llquantize(x, factor, low, high, nsteps): constants DTrace accepts. */
bool cg_llq_params(struct cg *g, const struct dt_node *fn, int64_t llq[4])
{
	int64_t lb[1024];
	size_t i;

	if (fn->nargs != 5 && fn->nargs != 6) {
		cg_err(g, fn, "these arguments of llquantize()");
		return false;
	}
	for (i = 1; i < 5; i++) {
		if (!dt_check_const(fn->args[i], &llq[i - 1])) {
			cg_err(g, fn->args[i], "a parameter of llquantize() other than a constant");
			return false;
		}
	}
	if (!dt_llq_bounds(llq, lb, sizeof(lb) / sizeof(lb[0]))) {
		cg_fail(
		    g, fn,
		    "llquantize(): the factor must be at least 2, the low magnitude below the high "
		    "one, the steps a multiple of the factor that divides each power of it");
		return false;
	}
	return true;
}

/* lquantize(x, base, limit[, step[, increment]]): constants, as DTrace wants them. */
bool cg_lq_params(struct cg *g, const struct dt_node *fn, int64_t lq[3])
{
	size_t i;

	lq[2] = 1;
	if (fn->nargs < 3 || fn->nargs > 5) {
		cg_err(g, fn, "these arguments of lquantize()");
		return false;
	}
	for (i = 1; i < fn->nargs && i < 4; i++)
		if (!dt_check_const(fn->args[i], &lq[i - 1])) {
			cg_err(g, fn->args[i], "a parameter of lquantize() other than a constant");
			return false;
		}
	if (lq[2] <= 0 || lq[1] <= lq[0] || (lq[1] - lq[0]) / lq[2] > 4096) {
		cg_err(g, fn, "these lquantize() parameters");
		return false;
	}
	return true;
}
