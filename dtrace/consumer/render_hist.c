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

/*
 * Bucket i's value as DTrace weighs it when it sorts: quantize's power of
 * two; lquantize's level, base - 1 below the range and the limit + 1
 * above it.
 */
static int64_t bucket_value(const struct dt_agg *a, size_t i, size_t nb)
{
	if (a->fn == F_QUANTIZE)
		return quantize_value(i);
	if (i == 0)
		return a->lq[0] - 1;
	if (i == nb - 1)
		return a->lq[0] + (int64_t)lq_levels(a) * a->lq[2] + 1;
	return a->lq[0] + (int64_t)(i - 1) * a->lq[2];
}

/*
 * The order of a histogram's entries (dt_aggregate_quantizedcmp and its
 * kin): the sum of value * count over the buckets, in long double (no
 * overflow), then the count of the bucket whose value is 0.
 */
void dtr_hist_order(const struct dt_agg *a, struct dt_entry *e)
{
	uint64_t lb[4097];
	bool ghost[4097];
	size_t i, k, np, nb = e->nbuckets;

	e->hist = true;
	e->hsum = 0;
	e->hzero = 0;
	if (a->fn == F_LLQUANTIZE) {
		/* each bucket weighs its bound (negated below the middle), the ghosts nothing */
		np = dt_llq_layout(a->llq, lb, ghost, sizeof(lb) / sizeof(lb[0]));
		if (!np || nb != 2 * np + 1)
			return;
		for (k = 1; k <= np; k++)
			if (!ghost[k])
				e->hsum += (long double)lb[k] *
					   ((long double)e->buckets[np + k] - e->buckets[np - k]);
		e->hzero = e->buckets[np];
		return;
	}
	for (i = 0; i < nb; i++) {
		int64_t bv = bucket_value(a, i, nb);

		e->hsum += (long double)e->buckets[i] * (long double)bv;
		if (bv == 0)
			e->hzero = e->buckets[i];
	}
}

/* How many buckets an entry of aggregation a has (an empty one's, for a join). */
size_t dtr_nbuckets(const struct dt_agg *a)
{
	uint64_t lb[4097];
	bool ghost[4097];
	size_t np;

	if (a->fn == F_QUANTIZE)
		return NQ;
	if (a->fn == F_LQUANTIZE)
		return lq_levels(a) + 2;
	if (a->fn != F_LLQUANTIZE)
		return 0;
	np = dt_llq_layout(a->llq, lb, ghost, sizeof(lb) / sizeof(lb[0]));
	return np ? 2 * np + 1 : 0;
}

long double dt_hist_rank(const struct dt_agg *a, const int64_t *buckets, size_t nb, int64_t *zero)
{
	struct dt_entry e = {.buckets = (int64_t *)buckets, .nbuckets = nb};

	dtr_hist_order(a, &e);
	*zero = e.hzero;
	return e.hsum;
}

/* The value of a histogram's entry as a number: its sum, saturated. */
void dtr_bucket_sum(const struct dt_agg *a, struct dt_entry *e)
{
	dtr_hist_order(a, e);
	e->v = e->hsum >= (long double)INT64_MAX   ? INT64_MAX
	       : e->hsum <= (long double)INT64_MIN ? INT64_MIN
						   : (int64_t)e->hsum;
}

/*
 * One bucket's line, as dt_print_quantline draws it: the bar's depth is the
 * raw count's share of the total of the raw counts' magnitudes; with
 * negative counts only, the bar grows left to the axis; with both signs,
 * two half-length bars either side of a centre line.
 */
static void quantline(FILE *out, int64_t val, int64_t normal, long double total, bool pos, bool neg)
{
	static const char ats[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";
	static const char spaces[] = "                                        ";
	unsigned len = 40, depth = 0;
	long double mag = val < 0 ? -(long double)val : (long double)val;

	if (pos || neg)
		depth = total > 0 ? (unsigned)(mag * len / total + 0.5) : 0;
	if (!neg) {
		fprintf(out, "|%s%s %-9lld\n", ats + len - depth, spaces + depth,
			(long long)(val / normal));
	} else if (!pos) {
		fprintf(out, "%s%s| %-9lld\n", spaces + depth, ats + len - depth,
			(long long)(val / normal));
	} else {
		len /= 2;
		depth = total > 0 ? (unsigned)(mag * len / total + 0.5) : 0;
		if (val <= 0)
			fprintf(out, "%s%s|%*s %-9lld\n", spaces + 40 - len + depth,
				ats + 40 - depth, (int)len, "", (long long)(val / normal));
		else
			fprintf(out, "%20s|%s%s %-9lld\n", "", ats + 40 - depth,
				spaces + 40 - len + depth, (long long)(val / normal));
	}
}

/*
 * llquantize's histogram (dt_llq_layout()): the buckets from the first to
 * the last with a count, one more either side; a ghost bucket is not
 * printed, unless it is the first or last row, then under its labelled
 * neighbour's label (below it for the first, above for the last).
 */
static void llq_label(char *c, size_t n, const uint64_t *lb, size_t np, size_t i, size_t first)
{
	if (i == np)
		snprintf(c, n,
			 lb[1] == 1    ? "0"
			 : first >= np ? "< %llu"
				       : "abs() < %llu",
			 (unsigned long long)lb[1]);
	else if (i == 0)
		snprintf(c, n, "<= -%llu", (unsigned long long)lb[np]);
	else if (i == 2 * np)
		snprintf(c, n, ">= %llu", (unsigned long long)lb[np]);
	else if (i > np)
		snprintf(c, n, "%llu", (unsigned long long)lb[i - np]);
	else
		snprintf(c, n, "-%llu", (unsigned long long)lb[np - i]);
}

static bool llq_ghost(const bool *ghost, size_t np, size_t i)
{
	return i != np && ghost[i > np ? i - np : np - i];
}

static void print_llquantize(FILE *out, const struct dt_agg *a, const struct dt_entry *e)
{
	uint64_t lb[4097];
	bool ghost[4097], pos = false, neg = false;
	int64_t normal = a->normal ? a->normal : 1;
	size_t np = dt_llq_layout(a->llq, lb, ghost, sizeof(lb) / sizeof(lb[0]));
	size_t nb = 2 * np + 1, first = 0, last = nb - 1, i;
	long double total = 0;

	if (!np || e->nbuckets != nb)
		return;
	while (first <= last && e->buckets[first] == 0)
		first++;
	if (first > last)
		first = last = np + 1;
	else
		while (e->buckets[last] == 0)
			last--;
	for (i = first; i <= last; i++) {
		pos |= e->buckets[i] > 0;
		neg |= e->buckets[i] < 0;
		total +=
		    e->buckets[i] < 0 ? -(long double)e->buckets[i] : (long double)e->buckets[i];
	}
	fprintf(out, "\n%16s %41s %-9s\n", "value", "------------- Distribution -------------",
		"count");
	if (first > 0)
		first--;
	if (last < nb - 1)
		last++;
	for (i = first; i <= last; i++) {
		char c[48];
		size_t j = i;

		if (llq_ghost(ghost, np, i)) {
			if (i != first && i != last)
				continue;
			while (llq_ghost(ghost, np, j))
				j = i == first ? j - 1 : j + 1;
		}
		llq_label(c, sizeof(c), lb, np, j, first);
		fprintf(out, "%16s ", c);
		quantline(out, e->buckets[i], normal, total, pos, neg);
	}
}

void dtr_print_quantize(FILE *out, const struct dt_agg *a, const struct dt_entry *e)
{
	int64_t normal = a->normal ? a->normal : 1;
	size_t first = 0, last, i, nb = e->nbuckets, levels = lq_levels(a);
	long double total = 0;
	bool pos = false, neg = false;

	if (a->fn == F_LLQUANTIZE) {
		print_llquantize(out, a, e);
		return;
	}
	if (!nb)
		return;
	last = nb - 1;
	for (i = 0; i < nb; i++) {
		total +=
		    e->buckets[i] < 0 ? -(long double)e->buckets[i] : (long double)e->buckets[i];
		pos |= e->buckets[i] > 0;
		neg |= e->buckets[i] < 0;
	}
	while (first < nb - 1 && e->buckets[first] == 0)
		first++;
	if (first == nb - 1 && e->buckets[first] == 0) {
		/* nothing: dt_print_quantize and _lquantize's choices */
		if (a->fn == F_QUANTIZE)
			first = QZERO - 1, last = QZERO + 1;
		else
			first = 0, last = nb > 2 ? 2 : nb - 1;
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
		if (a->fn == F_QUANTIZE) {
			fprintf(out, "%16lld ", (long long)quantize_value(i));
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
		quantline(out, e->buckets[i], normal, total, pos, neg);
	}
}
