/* SPDX-License-Identifier: MIT */
/*
 * The renderer's values (render.h's layers: the bottom one): a record's
 * fields made D values by the recipes the engine's code generator leaves
 * in the tables (a field, typed; a constant; a user stack).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
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
	case R_SYM:
		out->is_str = out->is_sym = true;
		out->s = dt_xstrdup(rc->field < nfields ? fields[rc->field] : "");
		return;
	case R_USTACK:
		out->is_str = out->is_stack = true;
		out->s = dt_xstrdup(rc->field < nfields ? fields[rc->field] : "");
		return;
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
