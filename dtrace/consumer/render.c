/* SPDX-License-Identifier: MIT */
/*
 * DTrace's output, byte for byte, from bpftrace's -f json stream.
 *
 * Theory. Every byte on our stdout is written here, in DTrace's formats
 * (illumos libdtrace dt_consume.c, dt_printf.c, dt_aggregate.c): the
 * record prefix `"%3d %6d %32s "` under a `"%3s %6s %32s\n"` header and the
 * record's closing newline (unless quiet), printf with DTrace's conversions
 * (`%Y`, `%@d`, `%*s`, `%i`, `%S`, any width on any integer), trace()'s
 * widths by the value's size, printa() and the exit dump (entries sorted by
 * value, then key; keys `"  %-50s"` for strings and `" %16lld"`/`" %8d"`
 * by size; values `" %16lld"`, stddev's `" %16llu"`), the quantize,
 * lquantize and llquantize histograms, user stacks, the newline at the end
 * of the run. bpftrace only carries values: records of
 * `\036<action>\037<field>...` (translate.c; a record's fields may come
 * before it, one event each, `\035<cpu>\037<field>`, kept per CPU) and its
 * map dumps, which arrive between a printa's two records (stddev's three
 * maps, llquantize's count per bucket, merged here into entries).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "json.h"

#define NQ 128 /* quantize buckets: index 64 is 0, 64+k is 2^(k-1), 64-k is -2^(k-1) */
#define QZERO 64

struct val {
	bool is_str;
	bool is_stack; /* s is bpftrace's ustack(perf) text */
	char *s;       /* owned when is_str */
	int64_t i;
	unsigned size;
	bool is_unsigned;
};

struct dt_entry {
	struct val *keys;
	size_t nkeys;
	int64_t v;
	int64_t *buckets; /* quantize: NQ; lquantize: levels + 2; llquantize: its buckets */
	size_t nbuckets;
	int64_t st[3]; /* stddev: count, sum, sum of squares */
};

void dt_render_init(struct dt_render *r, const struct dt_consumer_opts *o, struct dt_tables *t,
		    FILE *out)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->t = t;
	r->out = out;
	r->printa_agg = -1;
}

/* ---- values ---- */

static char *vstr(const struct val *v)
{
	char buf[32];

	if (v->is_str)
		return dt_xstrdup(v->s);
	snprintf(buf, sizeof(buf), "%" PRId64, v->i);
	return dt_xstrdup(buf);
}

static void dbasename(const char *s, struct val *out, bool dir)
{
	size_t n = strlen(s);
	char *r;

	while (n > 1 && s[n - 1] == '/')
		n--;
	if (!n) {
		out->s = dt_xstrdup(".");
		return;
	}
	if (!dir) {
		size_t b = n;

		while (b > 0 && s[b - 1] != '/')
			b--;
		if (b == n) { /* "/" */
			out->s = dt_xstrdup("/");
			return;
		}
		r = dt_xmalloc(n - b + 1);
		memcpy(r, s + b, n - b);
		r[n - b] = '\0';
		out->s = r;
		return;
	}
	while (n > 0 && s[n - 1] != '/')
		n--;
	if (!n) {
		out->s = dt_xstrdup(".");
		return;
	}
	while (n > 1 && s[n - 1] == '/')
		n--;
	r = dt_xmalloc(n + 1);
	memcpy(r, s, n);
	r[n] = '\0';
	out->s = r;
}

static void eval(const struct dt_recipe *rc, const struct dt_value *dv, char **fields,
		 size_t nfields, struct val *out);
static void val_free(struct val *v);

/* A recipe's value as a string (a field is read as one) or an integer. */
static char *eval_str(const struct dt_recipe *rc, char **fields, size_t nfields)
{
	struct val a;
	char *s;

	if (rc->op == R_FIELD)
		return dt_xstrdup(rc->field < nfields ? fields[rc->field] : "");
	eval(rc, NULL, fields, nfields, &a);
	s = vstr(&a);
	val_free(&a);
	return s;
}

static int64_t eval_int(const struct dt_recipe *rc, char **fields, size_t nfields)
{
	char *s = eval_str(rc, fields, nfields);
	int64_t v = strtoll(s, NULL, 10);

	dt_free(s);
	return v;
}

/* DTrace's substr(s, index[, length]) (illumos dtrace_dif_subr), s cut at strsize. */
static char *dsubstr(const char *s, int64_t index, int64_t remaining, bool has_len, int64_t size)
{
	int64_t len = (int64_t)strlen(s), i;
	char *d;

	if (len > size - 1)
		len = size - 1 < 0 ? 0 : size - 1;
	if (!has_len)
		remaining = size;
	if (index < 0) {
		index += len;
		if (index < 0 && index + remaining > 0) {
			remaining += index;
			index = 0;
		}
	}
	if (index >= len || index < 0)
		remaining = 0;
	else if (remaining < 0)
		remaining += len - index;
	else if (index + remaining > size)
		remaining = size - index;
	if (remaining < 0)
		remaining = 0;
	d = dt_xmalloc((size_t)remaining + 1);
	for (i = 0; i < remaining && s[index + i]; i++)
		d[i] = s[index + i];
	d[i] = '\0';
	return d;
}

static void eval(const struct dt_recipe *rc, const struct dt_value *dv, char **fields,
		 size_t nfields, struct val *out)
{
	memset(out, 0, sizeof(*out));
	switch (rc->op) {
	case R_FIELD: {
		const char *f = rc->field < nfields ? fields[rc->field] : "";

		if (dv && dv->type == TY_STR) {
			out->is_str = true;
			out->s = dt_xstrdup(f);
		} else {
			out->i = (int64_t)strtoll(f, NULL, 10);
			out->size = dv && dv->size ? dv->size : 8;
			out->is_unsigned = dv && dv->is_unsigned;
		}
		return;
	}
	case R_CONST:
		out->is_str = true;
		out->s = dt_xstrdup(rc->str ? rc->str : "");
		return;
	case R_JOIN: {
		struct val a, b;
		char *x, *y;
		size_t n;

		eval(rc->a, NULL, fields, nfields, &a);
		eval(rc->b, NULL, fields, nfields, &b);
		if (rc->a->op == R_FIELD)
			a.is_str = true, a.s = dt_xstrdup(fields[rc->a->field]);
		if (rc->b->op == R_FIELD)
			b.is_str = true, b.s = dt_xstrdup(fields[rc->b->field]);
		x = vstr(&a);
		y = vstr(&b);
		n = strlen(x) + strlen(y) + 1;
		out->is_str = true;
		out->s = dt_xmalloc(n);
		snprintf(out->s, n, "%s%s", x, y);
		dt_free(x), dt_free(y), dt_free(a.s), dt_free(b.s);
		return;
	}
	case R_BASENAME:
	case R_DIRNAME: {
		struct val a;

		eval(rc->a, NULL, fields, nfields, &a);
		if (rc->a->op == R_FIELD)
			dt_free(a.s), a.s = dt_xstrdup(fields[rc->a->field]);
		out->is_str = true;
		dbasename(a.s ? a.s : "", out, rc->op == R_DIRNAME);
		dt_free(a.s);
		return;
	}
	case R_USTACK:
		out->is_str = out->is_stack = true;
		out->s = dt_xstrdup(rc->field < nfields ? fields[rc->field] : "");
		return;
	case R_STRLEN: {
		char *a = eval_str(rc->a, fields, nfields);

		out->i = (int64_t)strlen(a);
		out->size = 8;
		out->is_unsigned = true;
		dt_free(a);
		return;
	}
	case R_STRSTR: {
		/* not found: DTrace's NULL, printed here as "" */
		char *a = eval_str(rc->a, fields, nfields), *b = eval_str(rc->b, fields, nfields);
		const char *at = strstr(a, b);

		out->is_str = true;
		out->s = dt_xstrdup(at ? at : "");
		dt_free(a), dt_free(b);
		return;
	}
	case R_SUBSTR: {
		char *a = eval_str(rc->a, fields, nfields);

		out->is_str = true;
		out->s = dsubstr(a, eval_int(rc->b, fields, nfields),
				 rc->c ? eval_int(rc->c, fields, nfields) : 0, rc->c != NULL,
				 (int64_t)rc->max);
		dt_free(a);
		return;
	}
	case R_CHUNKS: {
		/* a chunk shorter than asked for ended the string */
		struct dt_buf b = {0};
		size_t k, max = rc->max;

		if (rc->limit < nfields) {
			long long lim = strtoll(fields[rc->limit], NULL, 10);

			if (lim < 0)
				lim = 0;
			if ((unsigned long long)lim < max)
				max = (size_t)lim;
		}
		dt_buf_add(&b, "", 0);
		for (k = 0; k < rc->nchunks && rc->field + k < nfields && k * rc->chunk < max;
		     k++) {
			const char *f = fields[rc->field + k];
			size_t want = max - k * rc->chunk, n = strlen(f);

			if (want > rc->chunk)
				want = rc->chunk;
			dt_buf_add(&b, f, n < want ? n : want);
			if (n < want)
				break;
		}
		out->is_str = true;
		out->s = b.s;
		return;
	}
	case R_ITOA: {
		struct val a;

		eval(rc->a, NULL, fields, nfields, &a);
		out->is_str = true;
		out->s = vstr(&a);
		dt_free(a.s);
		return;
	}
	}
}

static void val_free(struct val *v)
{
	if (v->is_str)
		dt_free(v->s);
}

/* ---- DTrace's printf ---- */

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\\')
			fputs("\\\\", out);
		else if (c == '"')
			fputs("\\\"", out);
		else if (c < ' ' || c >= 0x7f)
			fprintf(out, "\\%03o", c);
		else
			fputc(c, out);
	}
}

static void fmt_walltime(char *buf, size_t n, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;

	localtime_r(&s, &tm);
	strftime(buf, n, "%Y %b %e %T", &tm);
}

static int64_t as_int(const struct val *v)
{
	return v->is_str ? strtoll(v->s, NULL, 10) : v->i;
}

static uint64_t as_unsigned(const struct val *v)
{
	uint64_t u = (uint64_t)as_int(v);

	switch (v->size) {
	case 1:
		return u & 0xff;
	case 2:
		return u & 0xffff;
	case 4:
		return u & 0xffffffffu;
	default:
		return u;
	}
}

static void print_quantize(FILE *out, const struct dt_agg *a, const struct dt_entry *e);
static void bucket_sum(const struct dt_agg *a, struct dt_entry *e);

/*
 * A user stack as DTrace prints it (libdtrace dt_print_ustack): a newline,
 * then each frame on a line of its own after 14 blanks (stackindent),
 * `module`function+0xoffset` (no offset at the function's start),
 * `module`0xaddress` without a symbol, `0xaddress` without a module. From
 * bpftrace's ustack(perf) text: "\t<hex address> <symbol>+<decimal offset>
 * (<path>)" per frame, the symbol the address itself when unknown.
 */
static void print_ustack(FILE *out, const char *text)
{
	const char *p = text;

	fputc('\n', out);
	while (*p) {
		const char *e = strchr(p, '\n'), *sp, *paren;
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[1024], *sym, *mod = NULL, *plus;
		unsigned long long addr;

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		p += n + (e ? 1 : 0);
		sym = line;
		while (*sym == '\t' || *sym == ' ')
			sym++;
		if (!*sym)
			continue;
		addr = strtoull(sym, NULL, 16);
		sp = strchr(sym, ' ');
		sym = sp ? (char *)sp + 1 : sym + strlen(sym);
		paren = strrchr(sym, '(');
		if (paren && paren > sym && paren[-1] == ' ' && line[strlen(line) - 1] == ')') {
			mod = (char *)paren + 1;
			line[strlen(line) - 1] = '\0';
			((char *)paren)[-1] = '\0';
			if (!strcmp(mod, "[unknown]") || !*mod)
				mod = NULL;
			else if (strrchr(mod, '/'))
				mod = strrchr(mod, '/') + 1;
		}
		fprintf(out, "%14s", "");
		if (!*sym || !strncmp(sym, "0x", 2) || !strcmp(sym, "[unknown]")) {
			if (mod)
				fprintf(out, "%s`0x%llx\n", mod, addr);
			else
				fprintf(out, "0x%llx\n", addr);
			continue;
		}
		plus = strrchr(sym, '+');
		if (plus && plus[1] >= '0' && plus[1] <= '9') {
			unsigned long long off = strtoull(plus + 1, NULL, 10);

			*plus = '\0';
			if (off)
				fprintf(out, "%s%s%s+0x%llx\n", mod ? mod : "", mod ? "`" : "", sym,
					off);
			else
				fprintf(out, "%s%s%s\n", mod ? mod : "", mod ? "`" : "", sym);
		} else {
			fprintf(out, "%s%s%s\n", mod ? mod : "", mod ? "`" : "", sym);
		}
	}
}

/*
 * The conversions are the script's: each spec is rebuilt from checked parts
 * (flags, width, precision) and a conversion chosen here for the value's
 * type, so the format is not a literal but is never the user's raw text.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/*
 * Formats `fmt` with the values (printa: `aggv` is the entry for %@).
 * Conversions past the values print nothing, as DTrace refuses such a
 * program at compile time; translate.c counts them.
 */
static void dformat(FILE *out, const char *fmt, struct val *v, size_t nv, const struct dt_agg *a,
		    const struct dt_entry *aggv)
{
	size_t vi = 0;
	const char *p = fmt;

	while (*p) {
		char spec[64], conv;
		size_t sn = 0;
		bool at = false;
		int width = -1, prec = -1;
		bool star_w = false, star_p = false;
		char flags[8] = "";
		size_t fl = 0;

		if (*p != '%') {
			fputc(*p++, out);
			continue;
		}
		p++;
		if (*p == '%') {
			fputc('%', out);
			p++;
			continue;
		}
		while (*p && strchr("-+ #0@", *p)) {
			if (*p == '@')
				at = true;
			else if (fl < sizeof(flags) - 1)
				flags[fl++] = *p;
			p++;
		}
		flags[fl] = '\0';
		if (*p == '*') {
			star_w = true;
			p++;
		} else {
			while (*p >= '0' && *p <= '9')
				width = (width < 0 ? 0 : width * 10) + (*p++ - '0');
		}
		if (*p == '.') {
			p++;
			prec = 0;
			if (*p == '*') {
				star_p = true;
				p++;
			} else {
				while (*p >= '0' && *p <= '9')
					prec = prec * 10 + (*p++ - '0');
			}
		}
		if (*p == '@')
			at = true, p++;
		while (*p && strchr("hlLjzt", *p))
			p++;
		conv = *p ? *p++ : 's';
		if (star_w)
			width = vi < nv ? (int)as_int(&v[vi++]) : 0;
		if (star_p)
			prec = vi < nv ? (int)as_int(&v[vi++]) : 0;
		if (width < -1) { /* a negative * width left-justifies, as in C */
			width = -width;
			if (fl < sizeof(flags) - 1)
				flags[fl++] = '-', flags[fl] = '\0';
		}
		sn = (size_t)snprintf(spec, sizeof(spec), "%%%s", flags);
		if (width >= 0)
			sn += (size_t)snprintf(spec + sn, sizeof(spec) - sn, "%d", width);
		if (prec >= 0)
			sn += (size_t)snprintf(spec + sn, sizeof(spec) - sn, ".%d", prec);
		if (at) {
			if (!aggv || !a)
				continue;
			if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE) {
				print_quantize(out, a, aggv);
				continue;
			}
			if (a->fn == F_STDDEV) { /* normalized already */
				snprintf(spec + sn, sizeof(spec) - sn, "ll%c",
					 conv == 'i' || conv == 's' ? 'u' : conv);
				fprintf(out, spec, (unsigned long long)aggv->v);
				continue;
			}
			snprintf(spec + sn, sizeof(spec) - sn, "ll%c",
				 conv == 'i'   ? 'd'
				 : conv == 's' ? 'd'
					       : conv);
			fprintf(out, spec, (long long)(aggv->v / (a->normal ? a->normal : 1)));
			continue;
		}
		if (vi >= nv)
			continue;
		{
			struct val *x = &v[vi++];

			switch (conv) {
			case 'd':
			case 'i':
				snprintf(spec + sn, sizeof(spec) - sn, "lld");
				fprintf(out, spec, (long long)as_int(x));
				break;
			case 'u':
			case 'o':
			case 'x':
			case 'X':
				snprintf(spec + sn, sizeof(spec) - sn, "ll%c", conv);
				fprintf(out, spec, (unsigned long long)as_unsigned(x));
				break;
			case 'c':
				snprintf(spec + sn, sizeof(spec) - sn, "c");
				fprintf(out, spec, (int)(char)as_int(x));
				break;
			case 'p':
				snprintf(spec + sn, sizeof(spec) - sn, "s");
				{
					char b[32];

					snprintf(b, sizeof(b), "%" PRIx64, (uint64_t)as_int(x));
					fprintf(out, spec, b);
				}
				break;
			case 'Y':
			case 'T': {
				char b[64];

				fmt_walltime(b, sizeof(b), as_int(x));
				snprintf(spec + sn, sizeof(spec) - sn, "s");
				fprintf(out, spec, b);
				break;
			}
			case 'k':
				if (x->is_stack) {
					print_ustack(out, x->s);
					break;
				}
				/* fallthrough */
			case 'S':
				if (x->is_str) {
					put_escaped(out, x->s);
					break;
				}
				/* fallthrough */
			case 's':
			case 'a':
			case 'A':
			default: {
				char *s = vstr(x);

				if (conv == 'a' || conv == 'A') {
					dt_free(s);
					s = dt_xmalloc(32);
					snprintf(s, 32, "0x%" PRIx64, (uint64_t)as_int(x));
				}
				snprintf(spec + sn, sizeof(spec) - sn, "s");
				fprintf(out, spec, s);
				dt_free(s);
				break;
			}
			}
		}
	}
}

#pragma GCC diagnostic pop

/* ---- aggregations ---- */

static size_t quantize_index(int64_t v)
{
	int k = 0;

	if (v == 0)
		return QZERO;
	if (v > 0) {
		while (k < 62 && (INT64_C(1) << (k + 1)) <= v)
			k++;
		return QZERO + 1 + (size_t)k;
	}
	while (k < 62 && -(INT64_C(1) << (k + 1)) >= v)
		k++;
	return QZERO - 1 - (size_t)k;
}

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

/* Buckets from bpftrace's hist/lhist array. */
static void read_buckets(const struct dt_agg *a, const struct dt_json *arr, struct dt_entry *e)
{
	size_t i, nb = a->fn == F_QUANTIZE ? NQ : lq_levels(a) + 2;

	e->buckets = dt_xmalloc(nb * sizeof(int64_t));
	memset(e->buckets, 0, nb * sizeof(int64_t));
	e->nbuckets = nb;
	for (i = 0; arr && arr->kind == J_ARRAY && i < arr->n; i++) {
		const struct dt_json *b = arr->v[i], *mn = dt_json_get(b, "min"),
				     *mx = dt_json_get(b, "max"), *c = dt_json_get(b, "count");
		int64_t cnt = c ? c->i : 0;
		size_t k;

		if (a->fn == F_QUANTIZE) {
			k = quantize_index(mn ? mn->i : mx ? mx->i : 0);
		} else if (!mn) {
			k = 0;
		} else if (!mx) {
			k = nb - 1;
		} else {
			int64_t l = (mn->i - a->lq[0]) / (a->lq[2] ? a->lq[2] : 1) + 1;

			k = l < 1 ? 1 : l > (int64_t)nb - 2 ? nb - 2 : (size_t)l;
		}
		if (k < nb)
			e->buckets[k] += cnt;
	}
	bucket_sum(a, e);
}

/* The value a histogram's entries are sorted by: DTrace sums bucket * count. */
static void bucket_sum(const struct dt_agg *a, struct dt_entry *e)
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

static void print_quantize(FILE *out, const struct dt_agg *a, const struct dt_entry *e)
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
 * bpftrace's joined key ("a,3") into the aggregation's key fields. A string
 * key holding commas makes more parts than fields: the first string field
 * takes the extra ones back.
 */
static char **split_key(const struct dt_agg *a, const char *key)
{
	char **parts = NULL, **f = dt_xmalloc((a->nfields + 1) * sizeof(*f));
	size_t np = 0, i, idx = 0, extra, strf = a->nfields;
	const char *p = key;

	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char *s = dt_xmalloc(n + 1);

		memcpy(s, p, n);
		s[n] = '\0';
		DT_PUSH(parts, np, s);
		if (!c)
			break;
		p = c + 1;
	}
	extra = np > a->nfields ? np - a->nfields : 0;
	for (i = 0; i < a->nfields; i++)
		if (a->field_type[i] == TY_STR) {
			strf = i;
			break;
		}
	for (i = 0; i < a->nfields; i++) {
		size_t take = i == strf ? extra + 1 : 1, k;
		struct dt_buf b = {0};

		dt_buf_add(&b, "", 0);
		for (k = 0; k < take && idx < np; k++, idx++) {
			if (k)
				dt_buf_add(&b, ",", 1);
			dt_buf_add(&b, parts[idx], strlen(parts[idx]));
		}
		f[i] = b.s;
	}
	for (i = 0; i < np; i++)
		dt_free(parts[i]);
	dt_free(parts);
	return f;
}

static int cmp_val(const struct val *a, const struct val *b)
{
	if (a->is_str && b->is_str)
		return strcmp(a->s, b->s);
	if (a->is_str != b->is_str)
		return a->is_str ? 1 : -1;
	return (a->i > b->i) - (a->i < b->i);
}

static int cmp_keys(const struct dt_entry *x, const struct dt_entry *y)
{
	size_t i;

	for (i = 0; i < x->nkeys && i < y->nkeys; i++) {
		int c = cmp_val(&x->keys[i], &y->keys[i]);

		if (c)
			return c;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct dt_entry *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return cmp_keys(x, y);
}

static void entry_free(struct dt_entry *e)
{
	size_t i;

	for (i = 0; i < e->nkeys; i++)
		val_free(&e->keys[i]);
	dt_free(e->keys);
	dt_free(e->buckets);
}

/*
 * Adds e to the entries (taking it): a new key is pushed, an existing one's
 * value merged as DTrace merges per-CPU data (count, sum add; min, max;
 * histograms bucket by bucket; avg keeps the first: bpftrace's carries no
 * count to weigh it by). `push` pushes without looking for the key.
 */
static void add_entry(struct dt_entry **ents, size_t *nents, const struct dt_agg *a,
		      struct dt_entry *e, bool push)
{
	size_t j, k;

	for (j = 0; !push && j < *nents; j++)
		if ((*ents)[j].nkeys == e->nkeys && !cmp_keys(&(*ents)[j], e))
			break;
	if (!push && j < *nents) {
		struct dt_entry *o = &(*ents)[j];

		if (a->fn == F_MIN)
			o->v = e->v < o->v ? e->v : o->v;
		else if (a->fn == F_MAX)
			o->v = e->v > o->v ? e->v : o->v;
		else if (a->fn != F_AVG)
			o->v += e->v;
		for (k = 0; k < 3; k++)
			o->st[k] += e->st[k];
		for (k = 0; k < o->nbuckets && k < e->nbuckets; k++)
			o->buckets[k] += e->buckets[k];
		entry_free(e);
		return;
	}
	DT_PUSH(*ents, *nents, *e);
}

/*
 * Retained instances' exit dumps, by aggregation name: added to the first
 * instance's entries at each of its printa()s and its exit dump.
 */
struct dt_merged_agg {
	const struct dt_agg *a; /* the instance's own (its recipes printed the keys) */
	struct dt_entry *ents;
	size_t nents;
	bool printed; /* by the first instance */
};

struct dt_merged {
	struct dt_merged_agg *v;
	size_t n;
};

struct dt_merged *dt_merged_new(void)
{
	struct dt_merged *m = dt_xmalloc(sizeof(*m));

	memset(m, 0, sizeof(*m));
	return m;
}

static struct dt_merged_agg *merged_find(struct dt_merged *m, const char *name)
{
	size_t i;

	for (i = 0; m && i < m->n; i++)
		if (!strcmp(m->v[i].a->name, name))
			return &m->v[i];
	return NULL;
}

/* A retained instance's dump of a: its entries move into the merge. */
static void merged_take(struct dt_render *r, const struct dt_agg *a)
{
	struct dt_merged_agg *x = merged_find(r->merged, a->name), nx = {a, NULL, 0, false};
	size_t i;

	if (!r->merged)
		return;
	if (!x) {
		DT_PUSH(r->merged->v, r->merged->n, nx);
		x = &r->merged->v[r->merged->n - 1];
	}
	for (i = 0; i < r->nents; i++)
		add_entry(&x->ents, &x->nents, a, &r->ents[i], false);
	r->nents = 0;
}

/* The first instance prints a: the retained instances' entries join its own. */
static void merged_add(struct dt_render *r, const struct dt_agg *a)
{
	struct dt_merged_agg *x = merged_find(r->merged, a->name);
	size_t i, k;

	if (!x)
		return;
	x->printed = true;
	for (i = 0; i < x->nents; i++) {
		const struct dt_entry *f = &x->ents[i];
		struct dt_entry e = *f;

		e.keys = dt_xmalloc((f->nkeys + 1) * sizeof(*e.keys));
		for (k = 0; k < f->nkeys; k++) {
			e.keys[k] = f->keys[k];
			if (f->keys[k].is_str)
				e.keys[k].s = dt_xstrdup(f->keys[k].s);
		}
		e.buckets = f->nbuckets ? dt_xmalloc(f->nbuckets * sizeof(int64_t)) : NULL;
		if (f->nbuckets)
			memcpy(e.buckets, f->buckets, f->nbuckets * sizeof(int64_t));
		add_entry(&r->ents, &r->nents, a, &e, false);
	}
}

/* clear() zeroes the retained instances' share too (keys kept); trunc() drops it. */
static void merged_clear(struct dt_render *r, const struct dt_agg *a, bool drop)
{
	struct dt_merged_agg *x = merged_find(r->merged, a->name);
	size_t i;

	for (i = 0; x && i < x->nents; i++) {
		if (drop) {
			entry_free(&x->ents[i]);
			continue;
		}
		x->ents[i].v = 0;
		if (x->ents[i].nbuckets)
			memset(x->ents[i].buckets, 0, x->ents[i].nbuckets * sizeof(int64_t));
	}
	if (x && drop)
		x->nents = 0;
}

/* One map/hist/stats event's entries (the printa's aggregation). */
static void gather(struct dt_render *r, const struct dt_json *data)
{
	struct dt_agg *a = &r->t->aggs[r->printa_agg];
	const struct dt_json *m;
	size_t i;

	struct dt_agg fa = *a; /* the map's key fields: llquantize's bucket is the last */
	const char *part;
	size_t comp = 0, ln = strlen(a->name);
	bool mapped = a->keyed || a->fn == F_LLQUANTIZE;

	if (!data || data->kind != J_OBJECT || data->n != 1)
		return;
	m = data->v[0];
	if (strncmp(m->key, "@a_", 3) || strncmp(m->key + 3, a->name, ln))
		return;
	/* stddev(): three maps, count, sum (__s) and sum of squares (__q) */
	part = m->key + 3 + ln;
	if (*part && (a->fn != F_STDDEV || (strcmp(part, "__s") && strcmp(part, "__q"))))
		return;
	if (*part)
		comp = part[2] == 's' ? 1 : 2;
	if (a->fn == F_LLQUANTIZE)
		fa.nfields++;
	for (i = 0; i < (mapped ? m->n : 1); i++) {
		const struct dt_json *ev = mapped ? m->v[i] : m;
		int64_t n = ev->kind == J_NUMBER ? ev->i : 0;
		struct dt_entry e;
		char **fields = NULL;
		size_t k;

		if (mapped && m->kind != J_OBJECT)
			return;
		memset(&e, 0, sizeof(e));
		if (mapped)
			fields = split_key(&fa, ev->key);
		if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE) {
			read_buckets(a, ev, &e);
		} else if (a->fn == F_LLQUANTIZE) {
			int64_t lb[1024];
			size_t b = (size_t)strtoull(fields[a->nfields], NULL, 10);

			e.nbuckets = dt_llq_bounds(a->llq, lb, sizeof(lb) / sizeof(lb[0]));
			e.buckets = dt_xmalloc((e.nbuckets + 1) * sizeof(int64_t));
			memset(e.buckets, 0, (e.nbuckets + 1) * sizeof(int64_t));
			if (b < e.nbuckets)
				e.buckets[b] = n;
		} else if (a->fn == F_STDDEV) {
			e.st[comp] = n;
		} else {
			e.v = n;
		}
		if (a->keyed) {
			e.nkeys = a->nkeys;
			e.keys = dt_xmalloc((a->nkeys + 1) * sizeof(*e.keys));
			for (k = 0; k < a->nkeys; k++)
				eval(a->keys[k].r, &a->keys[k], fields, a->nfields, &e.keys[k]);
		}
		for (k = 0; fields && k < fa.nfields; k++)
			dt_free(fields[k]);
		dt_free(fields);
		/*
		 * keys rebuilt by the renderer (basename()) may meet, and so do
		 * an llquantize's buckets and a stddev's three parts: merge them
		 */
		add_entry(&r->ents, &r->nents, a, &e,
			  !(a->keyed || a->fn == F_LLQUANTIZE || a->fn == F_STDDEV));
	}
}

/*
 * DTrace's stddev (libdtrace dt_stddev): the integer square root of the
 * average of the squares less the square of the average, both normalized,
 * in 128 bits.
 */
static uint64_t dstddev(const int64_t st[3], int64_t normal)
{
	__extension__ typedef unsigned __int128 u128;
	u128 sq, x, res = 0, bit = (u128)1 << 126;
	int64_t avg;

	if (st[0] == 0 || normal <= 0)
		return 0;
	sq = (u128)(uint64_t)st[2] / (uint64_t)normal / (uint64_t)normal / (uint64_t)st[0];
	avg = st[1] / normal / st[0];
	if (avg < 0)
		avg = -avg;
	x = sq - (u128)(uint64_t)avg * (uint64_t)avg;
	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= res + bit) {
			x -= res + bit;
			res = (res >> 1) + bit;
		} else {
			res >>= 1;
		}
		bit >>= 2;
	}
	return (uint64_t)res;
}

/* The value entries are sorted by, for what is not a plain number. */
static void entry_value(const struct dt_agg *a, struct dt_entry *e)
{
	if (a->fn == F_STDDEV) {
		e->v = (int64_t)dstddev(e->st, a->normal ? a->normal : 1);
	} else if (a->fn == F_LLQUANTIZE) {
		int64_t lb[1024], sum = 0, prod;
		size_t n = dt_llq_bounds(a->llq, lb, sizeof(lb) / sizeof(lb[0])), i;

		lb[0] = n ? lb[1] - 1 : 0;
		for (i = 0; i < n && i < e->nbuckets; i++) {
			if (__builtin_mul_overflow(e->buckets[i], lb[i], &prod) ||
			    __builtin_add_overflow(sum, prod, &sum))
				sum = INT64_MAX;
		}
		e->v = sum;
	}
}

static void print_key(FILE *out, const struct val *k)
{
	if (k->is_stack) {
		print_ustack(out, k->s);
		return;
	}
	if (k->is_str) {
		fprintf(out, "  %-50s", k->s);
		return;
	}
	switch (k->size) {
	case 1:
		fprintf(out, " %3d", (int)(int8_t)k->i);
		break;
	case 2:
		fprintf(out, " %5d", (int)(int16_t)k->i);
		break;
	case 4:
		fprintf(out, " %8d", (int)k->i);
		break;
	default:
		fprintf(out, " %16lld", (long long)k->i);
		break;
	}
}

static void print_agg(struct dt_render *r, const struct dt_action *act, const struct dt_agg *a)
{
	int64_t normal = a->normal ? a->normal : 1;
	size_t i, from = 0;

	for (i = 0; i < r->nents; i++)
		entry_value(a, &r->ents[i]);
	if (r->nents)
		qsort(r->ents, r->nents, sizeof(*r->ents), cmp_entry);
	if (a->has_trunc) {
		size_t keep = (size_t)(a->trunc < 0 ? -a->trunc : a->trunc);

		if (a->trunc >= 0 && r->nents > keep)
			from = r->nents - keep;
		else if (a->trunc < 0 && r->nents > keep)
			r->nents = keep;
	}
	for (i = from; i < r->nents; i++) {
		struct dt_entry *e = &r->ents[i];
		size_t k;

		if (act->fmt) {
			dformat(r->out, act->fmt, e->keys, e->nkeys, a, e);
			continue;
		}
		for (k = 0; k < e->nkeys; k++)
			print_key(r->out, &e->keys[k]);
		if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE)
			print_quantize(r->out, a, e);
		else if (a->fn == F_STDDEV)
			fprintf(r->out, " %16llu", (unsigned long long)e->v);
		else
			fprintf(r->out, " %16lld", (long long)(e->v / normal));
		fputc('\n', r->out);
	}
}

/* ---- records ---- */

static void end_record(struct dt_render *r)
{
	if (r->in_record)
		fputc('\n', r->out);
	r->in_record = false;
}

static void trace_value(struct dt_render *r, const struct val *v)
{
	if (v->is_stack) {
		print_ustack(r->out, v->s);
		return;
	}
	if (r->o->quiet) {
		if (v->is_str)
			fputs(v->s, r->out);
		else
			fprintf(r->out, "%lld", (long long)v->i);
		return;
	}
	if (v->is_str) {
		fprintf(r->out, "  %-33s", v->s);
		return;
	}
	switch (v->size) {
	case 1:
		fprintf(r->out, " %3d", (int)(int8_t)v->i);
		break;
	case 2:
		fprintf(r->out, " %5d", (int)(int16_t)v->i);
		break;
	case 4:
		fprintf(r->out, " %8d", (int)v->i);
		break;
	default:
		fprintf(r->out, " %16lld", (long long)v->i);
		break;
	}
}

static void record(struct dt_render *r, size_t id, char **f, size_t nf)
{
	const struct dt_action *act;
	struct dt_agg *a;
	size_t i;

	if (id >= r->t->nacts || r->done)
		return;
	act = &r->t->acts[id];
	a = ((act->kind >= A_PRINTA && act->kind <= A_TRUNC) || act->kind == A_CLEAR) &&
		    act->agg < r->t->naggs
		? &r->t->aggs[act->agg]
		: NULL;
	switch (act->kind) {
	case A_CLAUSE: {
		char fn[600];

		end_record(r);
		if (!r->header_done)
			fprintf(r->out, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME");
		r->header_done = true;
		snprintf(fn, sizeof(fn), "%s:%s", act->probe->func, act->probe->name);
		fprintf(r->out, "%3d %6u %32s ", nf ? atoi(f[0]) : 0, act->probe->id, fn);
		r->in_record = true;
		return;
	}
	case A_PRINTF:
	case A_TRACE: {
		struct val *v = dt_xmalloc((act->nargs + 1) * sizeof(*v));

		for (i = 0; i < act->nargs; i++)
			eval(act->args[i].r, &act->args[i], f, nf, &v[i]);
		if (act->kind == A_PRINTF)
			dformat(r->out, act->fmt, v, act->nargs, NULL, NULL);
		else if (act->nargs)
			trace_value(r, &v[0]);
		for (i = 0; i < act->nargs; i++)
			val_free(&v[i]);
		dt_free(v);
		return;
	}
	case A_PRINTA:
		r->printa_agg = (long)act->agg;
		r->printa_act = id;
		r->nents = 0;
		return;
	case A_PRINTA_END: {
		const struct dt_action *start = &r->t->acts[r->printa_act];

		if (r->printa_agg < 0)
			return;
		if (r->retained && start->clause == (size_t)-1) {
			merged_take(r, a); /* printed by the first instance */
		} else if (start->clause != (size_t)-1) {
			merged_add(r, a);
			print_agg(r, start, a);
			a->printed = true;
		} else if (!a->printed) {
			merged_add(r, a);
			print_agg(r, start, a); /* the exit dump: what no printa printed */
		}
		for (i = 0; i < r->nents; i++)
			entry_free(&r->ents[i]);
		r->nents = 0;
		r->printa_agg = -1;
		return;
	}
	case A_EXIT:
		r->have_exit = true;
		r->exit_status = nf ? atoi(f[0]) : 0;
		return;
	case A_NORMALIZE:
		a->normal = nf ? strtoll(f[0], NULL, 10) : 1;
		if (a->normal <= 0)
			a->normal = 1;
		return;
	case A_DENORMALIZE:
		a->normal = 1;
		return;
	case A_TRUNC:
		a->has_trunc = true;
		a->trunc = nf ? strtoll(f[0], NULL, 10) : 0;
		return;
	case A_CLAUSE_END:
		end_record(r);
		return;
	case A_STARTED:
		r->started = true;
		return;
	case A_USTACK:
		print_ustack(r->out, nf ? f[0] : "");
		return;
	case A_CLEAR:
		if (a)
			merged_clear(r, a, nf && atoi(f[0]));
		return;
	case A_DUMP:
		end_record(r);
		if (!r->retained)
			fputc('\n', r->out);
		r->dumping = true;
		return;
	}
}

static struct dt_pending *pending(struct dt_render *r, long cpu)
{
	struct dt_pending p = {.cpu = cpu};
	size_t i;

	for (i = 0; i < r->npend; i++)
		if (r->pend[i].cpu == cpu)
			return &r->pend[i];
	DT_PUSH(r->pend, r->npend, p);
	return &r->pend[r->npend - 1];
}

int dt_render_line(struct dt_render *r, const char *line, struct usdt_diag *diag)
{
	struct dt_json *j = dt_json_parse(line);
	const struct dt_json *type, *data;
	int rc = 0;

	(void)diag;
	if (!j)
		return -1;
	type = dt_json_get(j, "type");
	data = dt_json_get(j, "data");
	if (!type || type->kind != J_STRING) {
		rc = -1;
	} else if (!strcmp(type->s, "printf") && data && data->kind == J_STRING) {
		const char *s = data->s;

		if (s[0] == '\035') {
			/* "\035cpu\037field": a field sent alone, the CPU's next record's */
			char *end;
			struct dt_pending *pd = pending(r, strtol(s + 1, &end, 10));

			DT_PUSH(pd->f, pd->n, dt_xstrdup(*end == '\037' ? end + 1 : end));
		} else if (s[0] == '\036') {
			char **f = NULL, *end;
			size_t nf = 0, id = strtoul(s + 1, &end, 10);
			const char *p = end;

			if (*p == '\035') { /* "\036act\035cpu": its fields came alone */
				struct dt_pending *pd = pending(r, strtol(p + 1, &end, 10));

				f = pd->f, nf = pd->n;
				pd->f = NULL, pd->n = 0;
				p = end;
			}

			while (*p == '\037') {
				const char *e = strchr(p + 1, '\037');
				size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
				char *field = dt_xmalloc(n + 1);

				memcpy(field, p + 1, n);
				field[n] = '\0';
				DT_PUSH(f, nf, field);
				p += n + 1;
			}
			record(r, id, f, nf);
			while (nf)
				dt_free(f[--nf]);
			dt_free(f);
		}
	} else if (!strcmp(type->s, "attached_probes")) {
		const struct dt_json *n = dt_json_get(data, "probes");

		r->attached = n ? (unsigned long)n->i : 0;
		r->attached_seen = true;
	} else if ((!strcmp(type->s, "map") || !strcmp(type->s, "hist") ||
		    !strcmp(type->s, "stats")) &&
		   r->printa_agg >= 0) {
		gather(r, data);
	} else if (!strcmp(type->s, "lost_events")) {
		const struct dt_json *n = dt_json_get(data, "events");

		fprintf(stderr, "dtrace: %lld drops\n", n ? (long long)n->i : 0LL);
	}
	fflush(r->out);
	dt_json_free(j);
	return rc;
}

void dt_render_finish(struct dt_render *r)
{
	size_t i;

	end_record(r);
	/* aggregations only retained instances had (no probe of the first's used them) */
	for (i = 0; !r->retained && r->merged && i < r->merged->n; i++) {
		struct dt_merged_agg *x = &r->merged->v[i];
		struct dt_action dump = {.kind = A_PRINTA, .clause = (size_t)-1};

		if (x->printed || !x->nents)
			continue;
		r->ents = x->ents;
		r->nents = x->nents;
		print_agg(r, &dump, x->a);
		x->printed = true;
	}
	fflush(r->out);
}

/* ---- the BPF engine's values (dtrace/engine/records.c) ---- */

/* (The caller flushes r->out: after each batch of records, not each record.) */
void dt_render_record(struct dt_render *r, size_t act, char **f, size_t nf)
{
	record(r, act, f, nf);
}

void dt_render_agg_entry(struct dt_render *r, char **keys, size_t nkeys, int64_t v,
			 const int64_t *buckets, size_t nbuckets)
{
	const struct dt_agg *a;
	struct dt_entry e;
	size_t k;

	if (r->printa_agg < 0)
		return;
	a = &r->t->aggs[r->printa_agg];
	memset(&e, 0, sizeof(e));
	e.v = v;
	if (a->fn == F_STDDEV && nbuckets == 2) { /* v the sum, then count, sum of squares */
		e.st[0] = buckets[0];
		e.st[1] = v;
		e.st[2] = buckets[1];
		nbuckets = 0;
	}
	if (nbuckets) {
		e.buckets = dt_xmalloc(nbuckets * sizeof(int64_t));
		memcpy(e.buckets, buckets, nbuckets * sizeof(int64_t));
		e.nbuckets = nbuckets;
		bucket_sum(a, &e);
	}
	if (a->keyed) {
		e.nkeys = a->nkeys;
		e.keys = dt_xmalloc((a->nkeys + 1) * sizeof(*e.keys));
		for (k = 0; k < a->nkeys; k++)
			eval(a->keys[k].r, &a->keys[k], keys, nkeys, &e.keys[k]);
	}
	add_entry(&r->ents, &r->nents, a, &e, !a->keyed);
}
