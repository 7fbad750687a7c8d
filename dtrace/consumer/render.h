/* SPDX-License-Identifier: MIT */
/*
 * Between the renderer's files, each calling only the ones below it:
 *
 *   render.c         records, the run's end, the engine's way in (d.h)
 *   render_agg.c     aggregations: gathered, sorted, printed
 *   render_printf.c  DTrace's printf, trace's values, user stacks
 *   render_hist.c    quantize, lquantize, llquantize
 *   render_value.c   values: the recipes over a record's fields
 */
#ifndef DT_RENDER_H
#define DT_RENDER_H

#include <stdio.h>

#include "d.h"

#define NQ 128 /* quantize buckets: index 64 is 0, 64+k is 2^(k-1), 64-k is -2^(k-1) */
#define QZERO 64

struct val {
	bool is_str;
	bool is_stack; /* s is a user stack's frames as text (dtrace/engine/ustack.c) */
	bool is_sym;   /* s is sym(), usym(), uaddr()...'s text */
	char *s;       /* owned when is_str */
	int64_t i;
	unsigned size;
	bool is_unsigned;
	bool is_float; /* the bits of a float (size 4) or a double */
};

struct dt_entry {
	struct val *keys;
	size_t nkeys;
	int64_t v;
	int64_t *buckets; /* quantize: NQ; lquantize: levels + 2; llquantize: its buckets */
	size_t nbuckets;
	int64_t st[4];	  /* stddev: count, sum, sum of squares (128 bits: low, high) */
	bool hist;	  /* sorted by hsum, then hzero (dtr_hist_order()) */
	long double hsum; /* a histogram's sum of bucket value * count, unsaturated */
	int64_t hzero;	  /* the count of its bucket whose value is 0 */
};

/* render_value.c: values */
char *dtr_vstr(const struct val *v);
void dtr_eval(const struct dt_recipe *rc, const struct dt_value *dv, char **fields, size_t nfields,
	      struct val *out);
void dtr_val_free(struct val *v);
void dtr_print_rawbytes(FILE *out, const char *s, long strsize);

/* render_hist.c: histograms */
void dtr_bucket_sum(const struct dt_agg *a, struct dt_entry *e);
void dtr_hist_order(const struct dt_agg *a, struct dt_entry *e);
size_t dtr_nbuckets(const struct dt_agg *a);
void dtr_print_quantize(FILE *out, const struct dt_agg *a, const struct dt_entry *e);

/* render_printf.c: printf, stacks */
void dtr_print_ustack(FILE *out, const char *text);
/* tracemem()'s dump, DTrace's: n of the bytes `hex` spells, 16 a row with their characters. */
void dtr_print_bytes(FILE *out, const char *hex, size_t n);
/* print()'s object (render_print.c): layout from the engine, the pointer, the bytes in hex */
void dt_render_print(FILE *out, const char *layout, const char *ptr, const char *hex,
		     long printsize);
void dtr_dformat(FILE *out, const char *fmt, struct val *v, size_t nv, const struct dt_agg *a,
		 const struct dt_entry *aggv);
void dtr_dformat_join(FILE *out, const char *fmt, struct val *v, size_t nv,
		      const struct dt_agg *const *aggs, const struct dt_entry *const *ents,
		      size_t nagg);

/* render_agg.c: aggregations */
void dtr_entry_free(struct dt_entry *e);
void dtr_add_entry(struct dt_entry **ents, size_t *nents, const struct dt_agg *a,
		   struct dt_entry *e, bool push);
void dtr_print_agg(struct dt_render *r, const struct dt_action *act, const struct dt_agg *a);
void dtr_entry_value(const struct dt_agg *a, struct dt_entry *e);
int dtr_cmp_keys(const struct dt_entry *x, const struct dt_entry *y);

/* render_join.c: printa() of several aggregations */
void dtr_print_joined(struct dt_render *r, const struct dt_action *act);

#endif /* DT_RENDER_H */
