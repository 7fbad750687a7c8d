/* SPDX-License-Identifier: MIT */
/*
 * The histograms: quantize's power-of-two buckets, lquantize's and
 * llquantize's, as the engine hands them, and drawn as DTrace draws them (libdtrace
 * dt_print_quantize and friends).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "render.h"

/* ---- aggregations ---- */

static int64_t quantize_value(size_t i)
{
	if (i == QZERO)
		return 0;
	if (i > QZERO)
		return i - QZERO - 1 >= 63 ? INT64_MAX : INT64_C(1) << (i - QZERO - 1);
	return QZERO - i - 1 >= 63 ? INT64_MIN : -(INT64_C(1) << (QZERO - i - 1));
}

static size_t lq_levels(const struct dt_agg *a)
{
	return a->lq[2] > 0 ? (size_t)((a->lq[1] - a->lq[0]) / a->lq[2]) : 0;
}

/* The value a histogram's entries are sorted by: DTrace sums bucket * count. */
void dtr_bucket_sum(const struct dt_agg *a, struct dt_entry *e)
{
	size_t i, nb = e->nbuckets;

	e->v = 0;
	for (i = 0; i < nb; i++) {
		int64_t bv = a->fn == F_QUANTIZE ? quantize_value(i)
			     : i == 0		 ? a->lq[0] - 1
						 : a->lq[0] + (int64_t)(i - 1) * a->lq[2];

		int64_t prod, sum;

		if (!e->buckets[i])
			continue;
		/* saturated: only the order of entries depends on it */
		if (__builtin_mul_overflow(e->buckets[i], bv, &prod))
			prod = (e->buckets[i] < 0) != (bv < 0) ? INT64_MIN : INT64_MAX;
		if (__builtin_add_overflow(e->v, prod, &sum))
			sum = prod < 0 ? INT64_MIN : INT64_MAX;
		e->v = sum;
	}
}

void dtr_print_quantize(FILE *out, const struct dt_agg *a, const struct dt_entry *e)
{
	static const char ats[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";
	static const char spaces[] = "                                        ";
	int64_t normal = a->normal ? a->normal : 1;
	size_t first = 0, last, i, nb = e->nbuckets, levels = lq_levels(a);
	long double total = 0;
	int64_t llb[1024] = {0};

	if (a->fn == F_LLQUANTIZE)
		dt_llq_bounds(a->llq, llb, sizeof(llb) / sizeof(llb[0]));

	if (!nb)
		return;
	last = nb - 1;
	for (i = 0; i < nb; i++)
		total += (long double)(e->buckets[i] < 0 ? -e->buckets[i] : e->buckets[i]) / normal;
	while (first < nb - 1 && e->buckets[first] == 0)
		first++;
	if (first == nb - 1 && e->buckets[first] == 0) {
		/* nothing: dt_print_quantize, _lquantize, _llquantize's choices */
		if (a->fn == F_QUANTIZE)
			first = QZERO - 1, last = QZERO + 1;
		else if (a->fn == F_LQUANTIZE)
			first = 0, last = nb > 2 ? 2 : nb - 1;
		else
			first = 0, last = nb > 1 ? 1 : 0;
	} else {
		if (first > 0)
			first--;
		while (last > 0 && e->buckets[last] == 0)
			last--;
		if (last < nb - 1)
			last++;
	}
	fprintf(out, "\n%16s %41s %-9s\n", "value", "------------- Distribution -------------",
		"count");
	for (i = first; i <= last; i++) {
		int64_t cnt = e->buckets[i] / normal;
		unsigned depth = 0;

		if (a->fn == F_QUANTIZE) {
			fprintf(out, "%16lld ", (long long)quantize_value(i));
		} else if (a->fn == F_LLQUANTIZE) {
			char c[48];

			if (i == 0)
				snprintf(c, sizeof(c), "< %lld", (long long)llb[1]);
			else if (i == nb - 1)
				snprintf(c, sizeof(c), ">= %lld", (long long)llb[i]);
			else
				snprintf(c, sizeof(c), "%lld", (long long)llb[i]);
			fprintf(out, "%16s ", c);
		} else {
			char c[48];

			if (i == 0)
				snprintf(c, sizeof(c), "< %lld", (long long)a->lq[0]);
			else if (i == levels + 1)
				snprintf(c, sizeof(c), ">= %lld",
					 (long long)(a->lq[0] + (int64_t)levels * a->lq[2]));
			else
				snprintf(c, sizeof(c), "%lld",
					 (long long)(a->lq[0] + (int64_t)(i - 1) * a->lq[2]));
			fprintf(out, "%16s ", c);
		}
		if (total > 0)
			depth = (unsigned)((long double)(cnt < 0 ? -cnt : cnt) * 40 / total + 0.5);
		if (depth > 40)
			depth = 40;
		fprintf(out, "|%s%s %-9lld\n", ats + 40 - depth, spaces + depth, (long long)cnt);
	}
}

/*
 * llquantize(): DTrace's log-linear buckets (its bucket function's walk):
 * bucket 0 below factor^low; then each order of magnitude [last, this)
 * up to high is cut in min(this, nsteps) buckets of this / that width,
 * of which the first 1/factor lie in the magnitude below and are not
 * counted again; then one for what is above. Their lower bounds, into
 * lb[1..]; returns the number of buckets, or 0 for parameters DTrace
 * refuses (or more buckets than max).
 */
size_t dt_llq_bounds(const int64_t p[4], int64_t *lb, size_t max)
{
	int64_t factor = p[0], low = p[1], high = p[2], nsteps = p[3], this = 1, last, next = 0;
	size_t bin = 1;
	int64_t order, j;

	if (factor < 2 || low < 0 || high > 64 || low > high || nsteps <= 0)
		return 0;
	for (order = 0; order < low; order++)
		if (__builtin_mul_overflow(this, factor, &this))
			return 0;
	last = this;
	if (__builtin_mul_overflow(this, factor, &this))
		return 0;
	for (; order <= high; order++) {
		int64_t nb = this > nsteps ? nsteps : this, width = this / nb;

		for (j = 0; j < nb - nb / factor; j++) {
			if (bin >= max)
				return 0;
			lb[bin++] = last + j * width;
		}
		last = this;
		if (order < high && __builtin_mul_overflow(this, factor, &next))
			break; /* the magnitudes end where 64 bits do */
		this = next;
	}
	if (bin >= max)
		return 0;
	lb[bin] = last; /* ">= last" */
	return bin + 1;
}
