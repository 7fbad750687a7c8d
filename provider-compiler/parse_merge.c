/* SPDX-License-Identifier: MIT */
/*
 * How parsed providers and probes enter the model, across usdt_parse()
 * calls (the state is struct front's).
 *
 * A provider named again gains probes; one that a `#pragma D attributes`
 * named before it was declared gets the pending attributes, in their order,
 * when it is. Probes are indexed by (provider, header macro name) in an
 * open-addressing table, so that a new probe is compared only with those
 * whose macro could collide with its own: the same name in the same
 * `provider { }` block is redeclared, in another block it must have the
 * same signature (the first declaration is kept), and another name with
 * the same macro is an error, the probe still kept in the model. The
 * translated side of a probe is built here too: each translated argument
 * mapped by name to a native one, or a copy of the native list.
 */
#include "parse_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct usdt_provider *find_provider(struct usdt_program *prog, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < prog->nproviders; i++)
		if (strlen(prog->providers[i].name) == len &&
		    memcmp(prog->providers[i].name, name, len) == 0)
			return &prog->providers[i];
	return NULL;
}

void apply_attr(struct usdt_attr *dst, const struct usdt_attr *src, unsigned mask)
{
	if (mask & 1)
		dst->name_stab = src->name_stab;
	if (mask & 2)
		dst->data_stab = src->data_stab;
	if (mask & 4)
		dst->dep_class = src->dep_class;
}

void free_arg(struct usdt_arg *a)
{
	free(a->name);
	free(a->type.spelling);
	free(a->type.c_spelling);
}

/*
 * Two argument types are the same when spelled alike, or when C sees the
 * same type (`char const *` and `const char *`, a typedef and its base) -
 * except the catch-all for pointers to .d-only types, which says nothing.
 */
static bool same_type(const struct usdt_type *a, const struct usdt_type *b)
{
	if (strcmp(a->spelling, b->spelling) == 0)
		return true;
	return a->c_spelling && b->c_spelling && strcmp(a->c_spelling, b->c_spelling) == 0 &&
	       strcmp(a->c_spelling, "const volatile void *") != 0;
}

static bool same_signature(const struct usdt_probe *a, const struct usdt_probe *b)
{
	size_t i;

	if (a->nargs != b->nargs || a->nxargs != b->nxargs)
		return false;
	for (i = 0; i < a->nargs; i++)
		if (!same_type(&a->args[i].type, &b->args[i].type))
			return false;
	for (i = 0; i < a->nxargs; i++)
		if (!same_type(&a->xargs[i].type, &b->xargs[i].type) ||
		    a->argmap[i] != b->argmap[i])
			return false;
	return true;
}

/* Do two probe names give the same header macro (`a__b` and `A_B` do)? */
static bool same_macro(const char *a, const char *b)
{
	for (;;) {
		int ca = fe_macro_char(&a), cb = fe_macro_char(&b);

		if (ca != cb)
			return false;
		if (!ca)
			return true;
	}
}

void free_probe(struct usdt_probe *p)
{
	size_t i;

	free(p->name);
	for (i = 0; i < p->nargs; i++)
		free_arg(&p->args[i]);
	free(p->args);
	for (i = 0; i < p->nxargs; i++)
		free_arg(&p->xargs[i]);
	free(p->xargs);
	free(p->argmap);
}

static int copy_arg(struct usdt_arg *dst, const struct usdt_arg *src)
{
	*dst = *src;
	dst->name = src->name ? strdup(src->name) : NULL;
	dst->type.spelling = strdup(src->type.spelling);
	dst->type.c_spelling = src->type.c_spelling ? strdup(src->type.c_spelling) : NULL;
	if ((src->name && !dst->name) || !dst->type.spelling ||
	    (src->type.c_spelling && !dst->type.c_spelling)) {
		free_arg(dst);
		return -1;
	}
	return 0;
}

/*
 * Builds the translated side of a probe: by name from `xl`, or a copy of the
 * native list when there is none. Returns false after reporting errors.
 */
bool map_args(struct parser *ps, struct usdt_probe *p, struct arglist *xl, bool has_x)
{
	bool ok = true;
	size_t i, j, n = has_x ? xl->n : p->nargs;

	p->argmap = calloc(n ? n : 1, 1);
	if (!p->argmap) {
		oom(ps);
		return false;
	}
	if (!has_x) {
		p->xargs = calloc(n ? n : 1, sizeof(*p->xargs));
		if (!p->xargs) {
			oom(ps);
			return false;
		}
		for (i = 0; i < n; i++) {
			if (copy_arg(&p->xargs[i], &p->args[i])) {
				oom(ps);
				return false;
			}
			p->nxargs++;
			p->argmap[i] = (unsigned char)i;
		}
		return true;
	}
	for (i = 0; i < n; i++) {
		const struct usdt_arg *x = &xl->v[i];

		if (!x->name) {
			error_loc(ps, x->loc, xl->line_text[i],
				  "translated argument #%zu of probe '%s' has no name: translated "
				  "arguments are matched to native ones by name",
				  i + 1, p->name);
			ok = false;
			continue;
		}
		for (j = 0; j < p->nargs; j++)
			if (p->args[j].name && strcmp(p->args[j].name, x->name) == 0)
				break;
		if (j == p->nargs) {
			error_loc(ps, x->loc, xl->line_text[i],
				  "translated argument '%s' of probe '%s' is not declared in its "
				  "native argument list",
				  x->name, p->name);
			ok = false;
			continue;
		}
		p->argmap[i] = (unsigned char)j;
	}
	/* The list moves into the probe as it is. */
	p->xargs = xl->v;
	p->nxargs = xl->n;
	xl->v = NULL;
	xl->n = 0;
	return ok;
}

struct usdt_provider *add_provider(struct parser *ps, const struct token *name)
{
	struct usdt_program *prog = ps->prog;
	struct usdt_provider *pv;
	size_t i, k;

	if (fe_grow_pow2((void **)&prog->providers, prog->nproviders, sizeof(*prog->providers))) {
		oom(ps);
		return NULL;
	}
	pv = &prog->providers[prog->nproviders];
	memset(pv, 0, sizeof(*pv));
	pv->name = tok_dup(name);
	if (!pv->name) {
		oom(ps);
		return NULL;
	}
	pv->loc = name->loc;
	for (i = 0; i < USDT_ATTR_COUNT; i++) {
		pv->attr[i].name_stab = USDT_STAB_PRIVATE;
		pv->attr[i].data_stab = USDT_STAB_PRIVATE;
		pv->attr[i].dep_class = USDT_CLASS_UNKNOWN;
	}
	prog->nproviders++;
	/* Pragmas that named it before it existed, in their order. */
	for (i = k = 0; i < ps->fe->npending; i++) {
		struct pending_attr *pa = &ps->fe->pending[i];

		if (strcmp(pa->provider, pv->name) == 0) {
			apply_attr(&pv->attr[pa->which], &pa->attr, pa->mask);
			free(pa->provider);
		} else {
			ps->fe->pending[k++] = *pa;
		}
	}
	ps->fe->npending = k;
	return pv;
}

/* Hash of a probe's macro name within provider #pi ("a__b" and "A_B" hash alike). */
static unsigned long macro_hash(size_t pi, const char *name)
{
	unsigned long h = 2166136261u ^ (unsigned long)pi;
	int c;

	while ((c = fe_macro_char(&name)) != 0)
		h = (h ^ (unsigned long)c) * 16777619u;
	return h;
}

static int index_grow(struct front *fe)
{
	size_t n = fe->nslots ? fe->nslots * 2 : 64, i;
	struct probe_slot *slots = malloc(n * sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < n; i++)
		slots[i].probe = SIZE_MAX;
	for (i = 0; i < fe->nslots; i++) {
		size_t j = fe->slots[i].hash & (n - 1);

		if (fe->slots[i].probe == SIZE_MAX)
			continue;
		while (slots[j].probe != SIZE_MAX)
			j = (j + 1) & (n - 1);
		slots[j] = fe->slots[i];
	}
	free(fe->slots);
	fe->slots = slots;
	fe->nslots = n;
	return 0;
}

/* Adds a parsed probe to provider #pi, or checks it against its namesake. */
void add_probe(struct parser *ps, size_t pi, struct usdt_probe *p, const struct token *name)
{
	struct usdt_provider *pv = &ps->prog->providers[pi];
	struct front *fe = ps->fe;
	unsigned long h = macro_hash(pi, p->name);
	size_t j;

	if ((fe->nused + 1) * 2 > fe->nslots && index_grow(fe)) {
		free_probe(p);
		oom(ps);
		return;
	}
	for (j = h & (fe->nslots - 1); fe->slots[j].probe != SIZE_MAX;
	     j = (j + 1) & (fe->nslots - 1)) {
		struct usdt_probe *o;

		if (fe->slots[j].hash != h || fe->slots[j].provider != pi)
			continue;
		o = &pv->probes[fe->slots[j].probe];
		if (strcmp(o->name, p->name) == 0) {
			if (fe->slots[j].block == ps->block) {
				/* DTrace: "probe redeclared"; a slip, never a split file. */
				error_tok(ps, name,
					  "probe '%s' of provider '%s' redeclared in the same "
					  "provider block",
					  p->name, pv->name);
				note_loc(ps, fe->slots[j].block_loc,
					 "previous declaration of '%s' was here", o->name);
			} else if (!same_signature(o, p)) {
				error_tok(ps, name,
					  "probe '%s' of provider '%s' redeclared with another "
					  "signature",
					  p->name, pv->name);
				note_loc(ps, o->loc, "previous declaration of '%s' was here",
					 o->name);
			}
			fe->slots[j].block = ps->block;
			fe->slots[j].block_loc = p->loc;
			free_probe(p);
			return;
		}
		if (same_macro(o->name, p->name)) {
			error_tok(ps, name,
				  "probes '%s' and '%s' of provider '%s' would have the same macro "
				  "name in the header",
				  o->name, p->name, pv->name);
			note_loc(ps, o->loc, "'%s' was declared here", o->name);
			break;
		}
	}
	if (fe_grow_pow2((void **)&pv->probes, pv->nprobes, sizeof(*pv->probes))) {
		free_probe(p);
		oom(ps);
		return;
	}
	/* A colliding probe is kept in the model (never dropped) but not indexed twice. */
	if (fe->slots[j].probe == SIZE_MAX) {
		fe->slots[j].provider = pi;
		fe->slots[j].probe = pv->nprobes;
		fe->slots[j].hash = h;
		fe->slots[j].block = ps->block;
		fe->slots[j].block_loc = p->loc;
		fe->nused++;
	}
	pv->probes[pv->nprobes++] = *p;
}
