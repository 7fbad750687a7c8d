/* SPDX-License-Identifier: MIT */
/*
 * print()'s output, as DTrace writes it: the address, then the object at
 * a 44-column indent, one member a line, one column deeper a level:
 *
 *     0xffff... = *
 *                                                 (struct sk_buff) {
 *                                                  .len = (unsigned int)123,
 *                                                 }
 *
 * The object is its bytes and its type's layout, which the engine writes
 * into the action (dtrace/engine/codegen_print.c: a line a node, in the
 * order they print). As DTrace prints it: a member whose bytes are all
 * zero is left out, a char array ends at its first NUL, an enum is its
 * enumerator's name, an unnamed struct or union is `(struct)`. Past
 * -x printsize bytes a member is `...` and the rest is closed; a nested
 * struct's `}` waits for what follows it, so the `...` of its next
 * sibling comes before it, DTrace's order.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

#define PRINT_INDENT 44

struct pnode {
	unsigned depth, off, size, bits, boff;
	char kind;
	char *name, *type, *enums;
};

struct pr {
	FILE *out;
	const unsigned char *b;
	size_t n; /* the bytes that may be printed */
	bool trunc;
	struct pnode *v;
	size_t nv;
	char **pending; /* closing lines not yet printed */
	size_t npending;
};

static void flush(struct pr *p)
{
	size_t i;

	for (i = 0; i < p->npending; i++) {
		fputs(p->pending[i], p->out);
		free(p->pending[i]);
	}
	p->npending = 0;
}

static void line(struct pr *p, unsigned ind, const char *s)
{
	flush(p);
	fprintf(p->out, "%*s%s\n", (int)ind, "", s);
}

static void later(struct pr *p, unsigned ind, const char *s)
{
	char *l = malloc(ind + strlen(s) + 2);
	char **np = realloc(p->pending, (p->npending + 1) * sizeof(*np));

	if (!l || !np) {
		free(l);
		free(np ? np : p->pending);
		p->pending = NULL;
		p->npending = 0;
		return;
	}
	p->pending = np;
	sprintf(l, "%*s%s\n", (int)ind, "", s);
	p->pending[p->npending++] = l;
}

/* A type's words as printed: an unnamed struct's "<unnamed N>" left out. */
static void shown(const char *ty, char *buf, size_t n)
{
	const char *lt = strchr(ty, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt && gt && lt > ty)
		snprintf(buf, n, "%.*s%s", (int)(lt - ty - 1), ty, gt + 1);
	else
		snprintf(buf, n, "%s", ty);
}

static uint64_t bytes_le(const struct pr *p, size_t off, unsigned size)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < size && i < 8 && off + i < p->n; i++)
		v |= (uint64_t)p->b[off + i] << (8 * i);
	return v;
}

/* A scalar's bits: sign-extended for a signed type. */
static uint64_t scalar(const struct pr *p, const struct pnode *nd, size_t off, bool *neg)
{
	unsigned w = nd->bits ? nd->bits : nd->size * 8;
	uint64_t v = nd->bits ? bytes_le(p, off, 8) >> nd->boff : bytes_le(p, off, nd->size);

	if (w < 64)
		v &= (1ULL << w) - 1;
	*neg = nd->kind == 'i' && w < 65 && w && (v >> (w - 1)) & 1;
	if (*neg && w < 64)
		v |= ~((1ULL << w) - 1);
	return v;
}

static bool zero(const struct pr *p, const struct pnode *nd, size_t off)
{
	size_t i;
	bool neg;

	if (nd->bits)
		return !scalar(p, nd, off, &neg);
	for (i = off; i < off + nd->size && i < p->n; i++)
		if (p->b[i])
			return false;
	return true;
}

static size_t subtree_end(const struct pr *p, size_t i)
{
	size_t j = i + 1;

	while (j < p->nv && p->v[j].depth > p->v[i].depth)
		j++;
	return j;
}

static void value(const struct pr *p, const struct pnode *nd, size_t off, char *buf, size_t n)
{
	bool neg;
	uint64_t v = scalar(p, nd, off, &neg);

	if (nd->kind == 'p') {
		snprintf(buf, n, "0x%" PRIx64, v);
	} else if (nd->kind == 'c') {
		if (isprint((int)(v & 0xff)))
			snprintf(buf, n, "'%c'", (int)(v & 0xff));
		else
			snprintf(buf, n, "%d", (int)(signed char)(v & 0xff));
	} else if (nd->kind == 'e') {
		const char *e = nd->enums;

		snprintf(buf, n, "%" PRId64, (int64_t)v);
		while (e && *e) { /* "\tNAME=VALUE" each */
			const char *eq = strchr(e, '='), *end = strchr(e + 1, '\t');

			if (eq && (int64_t)strtoll(eq + 1, NULL, 10) == (int64_t)(int32_t)v) {
				snprintf(buf, n, "%.*s", (int)(eq - e - 1), e + 1);
				break;
			}
			e = end;
		}
	} else if (nd->kind == 'i') {
		snprintf(buf, n, "%" PRId64, (int64_t)v);
	} else {
		snprintf(buf, n, "%" PRIu64, v);
	}
}

/* Node i at delta bytes further in, at indent ind: the next node after its subtree. */
static size_t node(struct pr *p, size_t i, size_t delta, unsigned ind, bool top, bool elem)
{
	const struct pnode *nd = &p->v[i];
	size_t end = subtree_end(p, i), off = nd->off + delta;
	bool aggr = nd->kind == 's' || nd->kind == 'a' || nd->kind == 'A';
	char ty[300], pre[300], buf[1000], val[200];

	if (p->trunc)
		return end;
	if (aggr ? off >= p->n
		 : off + (nd->bits ? (nd->boff + nd->bits + 7) / 8 : nd->size) > p->n) {
		if (!elem) {
			fprintf(p->out, "%*s...\n", (int)ind, "");
			p->trunc = true;
		}
		return end;
	}
	if (!top && zero(p, nd, off))
		return end;
	shown(nd->type, ty, sizeof(ty));
	snprintf(pre, sizeof(pre), "%s%s%s", nd->name ? "." : "", nd->name ? nd->name : "",
		 nd->name ? " = " : "");
	if (nd->kind == 's') {
		size_t j = i + 1;

		snprintf(buf, sizeof(buf), "%s(%s) {", pre, ty);
		line(p, ind, buf);
		while (j < end)
			j = node(p, j, delta, ind + 1, false, false);
		later(p, ind, top ? "}" : "},");
	} else if (aggr) {
		unsigned es = i + 1 < end && p->v[i + 1].size ? p->v[i + 1].size : 1, k;

		snprintf(buf, sizeof(buf), "%s(%s) [", pre, ty);
		line(p, ind, buf);
		for (k = 0; i + 1 < end && k < nd->size / es && !p->trunc; k++) {
			size_t eo = off + (size_t)k * es;

			if (p->v[i + 1].kind != 's' ? eo + es > p->n : eo >= p->n)
				break;
			if (nd->kind == 'A' && !p->b[eo])
				break;
			node(p, i + 1, delta + (size_t)k * es, ind + 1, false, true);
		}
		line(p, ind, top ? "]" : "],");
	} else {
		value(p, nd, off, val, sizeof(val));
		snprintf(buf, sizeof(buf), "%s(%s)%s%s", pre, ty, val, top ? "" : ",");
		line(p, ind, buf);
	}
	return end;
}

/* The layout's lines as nodes (codegen_print.c's format). */
static void parse(struct pr *p, char *lay)
{
	char *save = NULL, *l;

	for (l = strtok_r(lay, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		struct pnode nd = {0};
		char *tab, *sp;
		int used = 0;

		if (sscanf(l, "%u %c %u %u %u %u%n", &nd.depth, &nd.kind, &nd.off, &nd.size,
			   &nd.bits, &nd.boff, &used) < 6 ||
		    l[used] != ' ')
			continue;
		sp = l + used + 1; /* (the name, maybe empty, up to the tab) */
		tab = strchr(sp, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		nd.name = *sp ? sp : NULL;
		nd.type = tab + 1;
		if ((tab = strchr(nd.type, '\t')) != NULL) {
			nd.enums = strdup(tab);
			*tab = '\0';
		}
		p->v = realloc(p->v, (p->nv + 1) * sizeof(*p->v));
		if (!p->v)
			return;
		p->v[p->nv++] = nd;
	}
}

static int hexval(char c)
{
	return c >= 'a' ? c - 'a' + 10 : c - '0';
}

void dt_render_print(FILE *out, const char *layout, const char *ptr, const char *hex,
		     long printsize)
{
	struct pr p = {.out = out};
	char *lay = strdup(layout ? layout : "");
	size_t n = strlen(hex) / 2, i;
	unsigned char *b = malloc(n ? n : 1);

	if (!lay || !b) {
		free(lay);
		free(b);
		return;
	}
	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	parse(&p, lay);
	p.b = b;
	p.n = p.nv && p.v[0].size < n ? p.v[0].size : n;
	if (printsize > 0 && (size_t)printsize < p.n)
		p.n = (size_t)printsize;
	fprintf(out, "0x%llx = *\n", (unsigned long long)strtoull(ptr, NULL, 10));
	if (p.nv)
		node(&p, 0, 0, PRINT_INDENT, true, false);
	flush(&p);
	for (i = 0; i < p.nv; i++)
		free(p.v[i].enums);
	free(p.v);
	free(p.pending);
	free(lay);
	free(b);
}
