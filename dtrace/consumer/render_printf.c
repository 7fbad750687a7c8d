/* SPDX-License-Identifier: MIT */
/*
 * DTrace's printf (libdtrace dt_printf.c): every conversion, widths on
 * every integer, %Y, %@d over an aggregation's value, %k's user stacks
 * as DTrace prints them (dt_print_ustack), strings escaped as %S does.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "d.h"
#include "render.h"

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

/*
 * A user stack as DTrace prints it (libdtrace dt_print_ustack): a newline,
 * then each frame on a line of its own after 14 blanks (stackindent),
 * `module`function+0xoffset` (no offset at the function's start),
 * `module`0xaddress` without a symbol, `0xaddress` without a module.  From
 * the engine's text (dtrace/engine/ustack.c, the form of bpftrace's
 * ustack(perf)): "\t<hex address> <symbol>+<decimal offset>
 * (<path>)" per frame, the symbol the address itself when unknown.
 */
void dtr_print_ustack(FILE *out, const char *text)
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
 * program at compile time (check_fmt.c counts them).
 */
void dtr_dformat(FILE *out, const char *fmt, struct val *v, size_t nv, const struct dt_agg *a,
		 const struct dt_entry *aggv)
{
	dtr_dformat_join(out, fmt, v, nv, &a, &aggv, a ? 1 : 0);
}

/*
 * The same for printa() of several aggregations joined by key: the k-th
 * %@ is the k-th aggregation's entry (with one aggregation, every %@ is
 * its entry).
 */
void dtr_dformat_join(FILE *out, const char *fmt, struct val *v, size_t nv,
		      const struct dt_agg *const *aggs, const struct dt_entry *const *ents,
		      size_t nagg)
{
	size_t vi = 0, ai = 0;
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
		if (*p == '?') { /* DTrace's: the width of a pointer in hex */
			width = (int)sizeof(void *) * 2;
			p++;
		} else if (*p == '*') {
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
		if (prec == 0 && (conv == 's' || conv == 'S'))
			prec = -1; /* DTrace's %.0s, %.*s of 0: the whole string */
		sn = (size_t)snprintf(spec, sizeof(spec), "%%%s", flags);
		if (width >= 0)
			sn += (size_t)snprintf(spec + sn, sizeof(spec) - sn, "%d", width);
		if (prec >= 0)
			sn += (size_t)snprintf(spec + sn, sizeof(spec) - sn, ".%d", prec);
		if (at) {
			const struct dt_agg *a = nagg ? aggs[ai < nagg ? ai : nagg - 1] : NULL;
			const struct dt_entry *aggv = nagg ? ents[ai < nagg ? ai : nagg - 1] : NULL;

			ai++;
			if (!aggv || !a)
				continue;
			if (a->fn == F_QUANTIZE || a->fn == F_LQUANTIZE || a->fn == F_LLQUANTIZE) {
				dtr_print_quantize(out, a, aggv);
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
			case 'e':
			case 'E':
			case 'f':
			case 'F':
			case 'g':
			case 'G':
				if (x->is_float) { /* the value's bits as its type's */
					uint32_t b32 = (uint32_t)x->i;
					uint64_t b64 = (uint64_t)x->i;
					float f;
					double d;

					memcpy(&f, &b32, sizeof(f));
					memcpy(&d, &b64, sizeof(d));
					snprintf(spec + sn, sizeof(spec) - sn, "%c", conv);
					fprintf(out, spec, x->size == 4 ? (double)f : d);
					break;
				}
				goto other;
			case 'd':
			case 'i':
				/* DTrace's %d of a 64-bit unsigned value: the unsigned number */
				if (!x->is_str && x->is_unsigned && x->size == 8) {
					snprintf(spec + sn, sizeof(spec) - sn, "llu");
					fprintf(out, spec, (unsigned long long)x->i);
					break;
				}
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
					dtr_print_ustack(out, x->s);
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
			default:
			other : {
				char *s = dtr_vstr(x);

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

/*
 * DTrace's dump of raw bytes (its consumer's dt_print_bytes() for
 * tracemem(), at a margin of 5): a header of the 16 columns, then each row
 * of 16 bytes at its offset, in hex, padded, then as characters ('.' for
 * what is not printable). No bytes print nothing.
 */
void dtr_print_bytes(FILE *out, const char *hex, size_t n)
{
	size_t i, j, have = strlen(hex) / 2;
	unsigned c[16];

	if (n > have)
		n = have;
	if (!n)
		return;
	fprintf(out, "\n%5s      ", "");
	for (i = 0; i < 16; i++)
		fprintf(out, "  %c", "0123456789abcdef"[i]);
	fprintf(out, "  0123456789abcdef\n");
	for (i = 0; i < n; i += 16) {
		fprintf(out, "%5s%5zx:", "", i);
		for (j = i; j < i + 16 && j < n; j++) {
			sscanf(hex + 2 * j, "%2x", &c[j - i]);
			fprintf(out, " %02x", c[j - i]);
		}
		for (; j % 16; j++)
			fprintf(out, "   ");
		fprintf(out, "  ");
		for (j = i; j < i + 16 && j < n; j++)
			fputc(c[j - i] < ' ' || c[j - i] > '~' ? '.' : (int)c[j - i], out);
		fputc('\n', out);
	}
}
