/* SPDX-License-Identifier: MIT */
/*
 * The renderer's values (render.h's layers: the bottom one): a record's
 * fields made D values by the recipes translate.c and the BPF engine's
 * code generator leave in the tables, and the string functions the
 * bpftrace backend leaves to the renderer (basename, dirname, substr...).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "json.h"
#include "render.h"

/* ---- values ---- */

char *dtr_vstr(const struct val *v)
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

/* A recipe's value as a string (a field is read as one) or an integer. */
static char *eval_str(const struct dt_recipe *rc, char **fields, size_t nfields)
{
	struct val a;
	char *s;

	if (rc->op == R_FIELD)
		return dt_xstrdup(rc->field < nfields ? fields[rc->field] : "");
	dtr_eval(rc, NULL, fields, nfields, &a);
	s = dtr_vstr(&a);
	dtr_val_free(&a);
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

void dtr_eval(const struct dt_recipe *rc, const struct dt_value *dv, char **fields, size_t nfields,
	      struct val *out)
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
			out->is_float = dv && dv->is_float;
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

		dtr_eval(rc->a, NULL, fields, nfields, &a);
		dtr_eval(rc->b, NULL, fields, nfields, &b);
		if (rc->a->op == R_FIELD)
			a.is_str = true, a.s = dt_xstrdup(fields[rc->a->field]);
		if (rc->b->op == R_FIELD)
			b.is_str = true, b.s = dt_xstrdup(fields[rc->b->field]);
		x = dtr_vstr(&a);
		y = dtr_vstr(&b);
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

		dtr_eval(rc->a, NULL, fields, nfields, &a);
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

		dtr_eval(rc->a, NULL, fields, nfields, &a);
		out->is_str = true;
		out->s = dtr_vstr(&a);
		dt_free(a.s);
		return;
	}
	}
}

/*
 * DTrace's -x rawbytes for trace() of a string: its strsize + 1 bytes (the
 * string, then NULs) as a hex dump, 16 a row, after a header of offsets.
 */
void dtr_print_rawbytes(FILE *out, const char *s, long strsize)
{
	size_t n = (size_t)(strsize > 0 ? strsize : 256) + 1, len = strlen(s), i, j;

	if (len > n - 1)
		len = n - 1; /* a constant, not cut yet */

	fprintf(out, "\n%*s      ", 5, "");
	for (i = 0; i < 16; i++)
		fprintf(out, "  %c", "0123456789abcdef"[i]);
	fprintf(out, "  0123456789abcdef\n");
	for (i = 0; i < n; i += 16) {
		fprintf(out, "%*s%5zx:", 5, "", i);
		for (j = i; j < i + 16 && j < n; j++)
			fprintf(out, " %02x", j < len ? (unsigned char)s[j] : 0);
		for (; j % 16; j++)
			fputs("   ", out);
		fputs("  ", out);
		for (j = i; j < i + 16 && j < n; j++) {
			unsigned char c = j < len ? (unsigned char)s[j] : 0;

			fputc(c < ' ' || c > '~' ? '.' : c, out);
		}
		fputc('\n', out);
	}
}

void dtr_val_free(struct val *v)
{
	if (v->is_str)
		dt_free(v->s);
}
