/* SPDX-License-Identifier: MIT */
/*
 * The provider metadata note: writer (model -> words + string table) and
 * validating reader. Format: METADATA-NOTE.md.
 *
 * The writer lays the desc out as header, provider records, probe records,
 * argument records, string table, in that order, and the reader insists on
 * exactly that order with no overlap. Every check the reader makes is done
 * once, in usdt_meta_open(); the accessors after it only index.
 */
#include "metadata.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- writer ---- */

struct strtab {
	char *buf;
	size_t len, cap;
	/* open-addressed set of offsets, keyed by string contents */
	uint32_t *slots;
	size_t nslots, used;
};

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int strtab_grow_slots(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 256, i;
	uint32_t *s = malloc(n * sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s[i] = USDT_META_NONE;
	for (i = 0; i < t->nslots; i++) {
		uint32_t off = t->slots[i];
		size_t j;

		if (off == USDT_META_NONE)
			continue;
		for (j = hash_str(t->buf + off) & (n - 1); s[j] != USDT_META_NONE;
		     j = (j + 1) & (n - 1))
			;
		s[j] = off;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

/* Interns s; returns its offset, or USDT_META_NONE for NULL. *err on failure. */
static uint32_t strtab_add(struct strtab *t, const char *s, int *err)
{
	size_t n, j;

	if (!s)
		return USDT_META_NONE;
	if (*err)
		return 0;
	if ((t->used + 1) * 2 > t->nslots && (*err = strtab_grow_slots(t)))
		return 0;
	for (j = hash_str(s) & (t->nslots - 1); t->slots[j] != USDT_META_NONE;
	     j = (j + 1) & (t->nslots - 1))
		if (strcmp(t->buf + t->slots[j], s) == 0)
			return t->slots[j];
	n = strlen(s) + 1;
	if (t->len + n + 4 > UINT32_MAX / 2) {
		*err = -E2BIG;
		return 0;
	}
	if (t->len + n + 4 > t->cap) { /* +4: room for the final padding */
		size_t cap = (t->cap ? t->cap * 2 : 1024) + n;
		char *b = realloc(t->buf, cap);

		if (!b) {
			*err = -ENOMEM;
			return 0;
		}
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n);
	t->slots[j] = (uint32_t)t->len;
	t->used++;
	t->len += n;
	return t->slots[j];
}

static uint32_t pack_attr(const struct usdt_attr *a)
{
	return (uint32_t)a->name_stab | (uint32_t)a->data_stab << 8 | (uint32_t)a->dep_class << 16;
}

static uint32_t pack_info(const struct usdt_type *t)
{
	unsigned size = t->size > 255 ? 0 : t->size;

	return (uint32_t)t->cls | (uint32_t)size << 8 | (uint32_t)(t->is_signed ? 1 : 0) << 16;
}

static void put_arg(uint32_t *w, struct strtab *t, const struct usdt_arg *a, uint32_t source,
		    int *err)
{
	w[0] = strtab_add(t, a->name, err);
	w[1] = strtab_add(t, a->type.spelling ? a->type.spelling : "", err);
	w[2] = strtab_add(t, a->type.c_spelling, err);
	w[3] = pack_info(&a->type);
	w[4] = source;
}

/*
 * The argument table holds each distinct argument list once: a probe whose
 * list (names, types, mapping: all its words, strings being interned) equals
 * one already written points at that run, and a probe's translated list
 * equal to its native one points at the native run. Version 1 readers never
 * assumed a record is referenced once (METADATA-NOTE.md), so this is the
 * same format, only smaller: Erlang's 951 user_trace__nN probes with the
 * same 10 arguments now share 10 records instead of carrying 19,020.
 */
struct runs {
	uint32_t *slots; /* first record of a run + 1, 0 when empty */
	uint32_t *lens;
	size_t nslots;
};

static uint32_t hash_words(const uint32_t *w, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ w[i]) * 16777619u;
	return h ^ (uint32_t)n;
}

/*
 * The run of `n` records at *next (just written) becomes the probe's list:
 * when an equal run exists, its index is returned and *next is left
 * alone (the records written are overwritten by the next list); else the
 * run is kept and *next advances.
 */
static uint32_t intern_run(struct runs *r, uint32_t *args, uint32_t *next, uint32_t n)
{
	const uint32_t *w = args + (size_t)*next * USDT_META_ARG_WORDS;
	size_t nw = (size_t)n * USDT_META_ARG_WORDS, j;
	uint32_t first = *next;

	if (!n)
		return 0;
	for (j = hash_words(w, nw) & (r->nslots - 1); r->slots[j]; j = (j + 1) & (r->nslots - 1))
		if (r->lens[j] == n &&
		    !memcmp(args + (size_t)(r->slots[j] - 1) * USDT_META_ARG_WORDS, w, nw * 4))
			return r->slots[j] - 1;
	r->slots[j] = first + 1;
	r->lens[j] = n;
	*next += n;
	return first;
}

int usdt_meta_build(const struct usdt_program *prog, struct usdt_meta_blob *blob)
{
	size_t nprobes = 0, nargs = 0, i, j, k, nwords;
	size_t prov_w, probe_w, arg_w;
	uint32_t *w, *args, probe_i = 0, arg_i = 0;
	struct strtab t = {0};
	struct runs runs = {0};
	int err = 0;

	memset(blob, 0, sizeof(*blob));
	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *p = &prog->providers[i];

		nprobes += p->nprobes;
		for (j = 0; j < p->nprobes; j++)
			nargs += p->probes[j].nargs + p->probes[j].nxargs;
	}
	prov_w = USDT_MH_WORDS;
	probe_w = prov_w + prog->nproviders * USDT_META_PROVIDER_WORDS;
	arg_w = probe_w + nprobes * USDT_META_PROBE_WORDS;
	nwords = arg_w + nargs * USDT_META_ARG_WORDS; /* at most: runs are shared */
	if (nwords > UINT32_MAX / 8)
		return -E2BIG;
	w = calloc(nwords, sizeof(*w));
	/* a power of two at least twice the number of runs (two per probe) */
	for (runs.nslots = 16; runs.nslots < nprobes * 4; runs.nslots *= 2)
		;
	runs.slots = calloc(runs.nslots, sizeof(*runs.slots));
	runs.lens = calloc(runs.nslots, sizeof(*runs.lens));
	if (!w || !runs.slots || !runs.lens) {
		err = -ENOMEM;
		goto fail;
	}
	args = w + arg_w;
	strtab_add(&t, "", &err); /* offset 0 is the empty string */

	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *p = &prog->providers[i];
		uint32_t *pw = w + prov_w + i * USDT_META_PROVIDER_WORDS;

		pw[0] = strtab_add(&t, p->name, &err);
		pw[1] = probe_i;
		pw[2] = (uint32_t)p->nprobes;
		for (k = 0; k < USDT_ATTR_COUNT; k++)
			pw[3 + k] = pack_attr(&p->attr[k]);
		for (j = 0; j < p->nprobes; j++, probe_i++) {
			const struct usdt_probe *pr = &p->probes[j];
			uint32_t *rw = w + probe_w + probe_i * USDT_META_PROBE_WORDS;
			size_t nw = pr->nargs * USDT_META_ARG_WORDS;
			uint32_t *xw;

			rw[0] = strtab_add(&t, pr->name, &err);
			rw[1] = (uint32_t)pr->nargs;
			for (k = 0; k < pr->nargs; k++)
				put_arg(args + (arg_i + k) * USDT_META_ARG_WORDS, &t, &pr->args[k],
					(uint32_t)k, &err);
			rw[2] = intern_run(&runs, args, &arg_i, (uint32_t)pr->nargs);
			rw[3] = (uint32_t)pr->nxargs;
			xw = args + (size_t)arg_i * USDT_META_ARG_WORDS;
			for (k = 0; k < pr->nxargs; k++)
				put_arg(xw + k * USDT_META_ARG_WORDS, &t, &pr->xargs[k],
					pr->argmap ? pr->argmap[k] : (uint32_t)k, &err);
			/* untranslated (the usual case): the native run itself */
			if (pr->nxargs == pr->nargs &&
			    !memcmp(xw, args + (size_t)rw[2] * USDT_META_ARG_WORDS, nw * 4))
				rw[4] = rw[2];
			else
				rw[4] = intern_run(&runs, args, &arg_i, (uint32_t)pr->nxargs);
		}
	}
	/* Pad the string table to a word: the note's desc size stays 4-aligned. */
	while (!err && t.len % 4)
		t.buf[t.len++] = '\0';
	if (err)
		goto fail;
	free(runs.slots);
	free(runs.lens);
	nargs = arg_i;
	nwords = arg_w + nargs * USDT_META_ARG_WORDS;
	w[USDT_MH_VERSION] = USDT_META_VERSION;
	w[USDT_MH_HEADER_WORDS] = USDT_MH_WORDS;
	w[USDT_MH_FLAGS] = 0;
	w[USDT_MH_DESC_SIZE] = (uint32_t)(nwords * 4 + t.len);
	w[USDT_MH_NPROVIDERS] = (uint32_t)prog->nproviders;
	w[USDT_MH_PROVIDERS_OFF] = (uint32_t)(prov_w * 4);
	w[USDT_MH_NPROBES] = (uint32_t)nprobes;
	w[USDT_MH_PROBES_OFF] = (uint32_t)(probe_w * 4);
	w[USDT_MH_NARGS] = (uint32_t)nargs;
	w[USDT_MH_ARGS_OFF] = (uint32_t)(arg_w * 4);
	w[USDT_MH_STRTAB_OFF] = (uint32_t)(nwords * 4);
	w[USDT_MH_STRTAB_SIZE] = (uint32_t)t.len;
	free(t.slots);
	blob->words = w;
	blob->nwords = nwords;
	blob->strtab = t.buf;
	blob->strsize = t.len;
	return 0;
fail:
	free(w);
	free(runs.slots);
	free(runs.lens);
	free(t.buf);
	free(t.slots);
	return err;
}

void usdt_meta_blob_free(struct usdt_meta_blob *blob)
{
	free(blob->words);
	free(blob->strtab);
	memset(blob, 0, sizeof(*blob));
}

/* ---- reader ---- */

/* Generous caps: a desc beyond them is not something our writer produces. */
#define META_MAX_SIZE (64u << 20)

static uint32_t word_at(const struct usdt_meta_view *v, size_t off)
{
	uint32_t x;

	memcpy(&x, v->desc + off, 4);
	return v->swap ? __builtin_bswap32(x) : x;
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 0;
}

/* A string offset: inside the table (whose last byte is NUL, checked). */
static bool str_ok(const struct usdt_meta_view *v, uint32_t off, bool optional)
{
	if (off == USDT_META_NONE)
		return optional;
	return off < v->strtab_size;
}

static const char *str_at(const struct usdt_meta_view *v, uint32_t off)
{
	if (off == USDT_META_NONE)
		return NULL;
	return (const char *)v->desc + v->strtab_off + off;
}

/* Provider, probe and parameter names become tracefs and C names: identifiers. */
static bool ident_ok(const char *s)
{
	size_t n;

	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (n = 0; s[n]; n++)
		if (!((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '_') ||
		    n >= USDT_MAX_NAME)
			return false;
	return true;
}

/* [off, off + count * rec_bytes) must lie within [lo, hi), 4-aligned. */
static bool table_ok(uint32_t off, uint32_t count, uint32_t rec_bytes, uint64_t lo, uint64_t hi)
{
	return off % 4 == 0 && off >= lo && (uint64_t)off + (uint64_t)count * rec_bytes <= hi;
}

static bool attr_ok(uint32_t a)
{
	return (a & 0xff) <= USDT_STAB_STANDARD && (a >> 8 & 0xff) <= USDT_STAB_STANDARD &&
	       (a >> 16 & 0xff) <= USDT_CLASS_COMMON && (a >> 24) == 0;
}

static const char *check_arg(const struct usdt_meta_view *v, uint32_t i, uint32_t want_source,
			     uint32_t nnative)
{
	size_t o = v->args_off + (size_t)i * USDT_META_ARG_WORDS * 4;
	uint32_t name = word_at(v, o), type = word_at(v, o + 4), ctype = word_at(v, o + 8);
	uint32_t info = word_at(v, o + 12), source = word_at(v, o + 16);

	if (!str_ok(v, name, true) || !str_ok(v, type, false) || !str_ok(v, ctype, true))
		return "argument string offset out of range";
	if (name != USDT_META_NONE && !ident_ok(str_at(v, name)))
		return "argument name is not an identifier";
	if (*str_at(v, type) == '\0')
		return "argument type is empty";
	if ((info & 0xff) > USDT_T_OTHER || (info >> 16) > 1)
		return "argument type information out of range";
	if (want_source != USDT_META_NONE ? source != want_source : source >= nnative)
		return "argument mapping out of range";
	return NULL;
}

static const char *check_probe(const struct usdt_meta_view *v, uint32_t i)
{
	size_t o = v->probes_off + (size_t)i * USDT_META_PROBE_WORDS * 4;
	uint32_t name = word_at(v, o), nargs = word_at(v, o + 4), first = word_at(v, o + 8);
	uint32_t nx = word_at(v, o + 12), firstx = word_at(v, o + 16), k;
	const char *why;

	if (!str_ok(v, name, false) || !ident_ok(str_at(v, name)))
		return "probe name is not an identifier of at most 63 characters";
	if (nargs > USDT_MAX_ARGS || nx > USDT_MAX_ARGS)
		return "probe has more than 255 arguments";
	if ((uint64_t)first + nargs > v->nargs || (uint64_t)firstx + nx > v->nargs)
		return "probe argument range out of range";
	if (nx && !nargs)
		return "translated arguments without native arguments";
	for (k = 0; k < nargs; k++)
		if ((why = check_arg(v, first + k, k, nargs)))
			return why;
	for (k = 0; k < nx; k++)
		if ((why = check_arg(v, firstx + k, USDT_META_NONE, nargs)))
			return why;
	return NULL;
}

static const char *check_provider(const struct usdt_meta_view *v, uint32_t i)
{
	size_t o = v->providers_off + (size_t)i * USDT_META_PROVIDER_WORDS * 4;
	uint32_t name = word_at(v, o), first = word_at(v, o + 4), n = word_at(v, o + 8), k;

	if (!str_ok(v, name, false) || !ident_ok(str_at(v, name)))
		return "provider name is not an identifier of at most 63 characters";
	if ((uint64_t)first + n > v->nprobes)
		return "provider probe range out of range";
	for (k = 0; k < USDT_ATTR_COUNT; k++)
		if (!attr_ok(word_at(v, o + 12 + k * 4)))
			return "provider attribute out of range";
	return NULL;
}

int usdt_meta_open(struct usdt_meta_view *v, const void *desc, size_t size, bool big_endian,
		   const char **why)
{
	uint32_t hdr_words, i;
	uint64_t end;
	const char *w = NULL;

	memset(v, 0, sizeof(*v));
	v->desc = desc;
	v->size = size;
	v->swap = big_endian != host_big_endian();
	if (size < USDT_MH_WORDS * 4 || size % 4 || size > META_MAX_SIZE) {
		w = "desc size is not a multiple of 4 between 48 bytes and 64 MiB";
		goto bad;
	}
	if (word_at(v, USDT_MH_VERSION * 4) != USDT_META_VERSION) {
		w = "unknown metadata version";
		goto bad;
	}
	hdr_words = word_at(v, USDT_MH_HEADER_WORDS * 4);
	if (hdr_words < USDT_MH_WORDS || hdr_words > size / 4) {
		w = "header size out of range";
		goto bad;
	}
	if (word_at(v, USDT_MH_FLAGS * 4) != 0) {
		w = "unknown flags";
		goto bad;
	}
	if (word_at(v, USDT_MH_DESC_SIZE * 4) != size) {
		w = "recorded desc size differs from the note's";
		goto bad;
	}
	v->nproviders = word_at(v, USDT_MH_NPROVIDERS * 4);
	v->providers_off = word_at(v, USDT_MH_PROVIDERS_OFF * 4);
	v->nprobes = word_at(v, USDT_MH_NPROBES * 4);
	v->probes_off = word_at(v, USDT_MH_PROBES_OFF * 4);
	v->nargs = word_at(v, USDT_MH_NARGS * 4);
	v->args_off = word_at(v, USDT_MH_ARGS_OFF * 4);
	v->strtab_off = word_at(v, USDT_MH_STRTAB_OFF * 4);
	v->strtab_size = word_at(v, USDT_MH_STRTAB_SIZE * 4);

	/* Header, providers, probes, arguments, strings: in order, no overlap. */
	if (!table_ok(v->providers_off, v->nproviders, USDT_META_PROVIDER_WORDS * 4,
		      (uint64_t)hdr_words * 4, size)) {
		w = "provider table out of range";
		goto bad;
	}
	end = (uint64_t)v->providers_off + (uint64_t)v->nproviders * USDT_META_PROVIDER_WORDS * 4;
	if (!table_ok(v->probes_off, v->nprobes, USDT_META_PROBE_WORDS * 4, end, size)) {
		w = "probe table out of range";
		goto bad;
	}
	end = (uint64_t)v->probes_off + (uint64_t)v->nprobes * USDT_META_PROBE_WORDS * 4;
	if (!table_ok(v->args_off, v->nargs, USDT_META_ARG_WORDS * 4, end, size)) {
		w = "argument table out of range";
		goto bad;
	}
	end = (uint64_t)v->args_off + (uint64_t)v->nargs * USDT_META_ARG_WORDS * 4;
	if (v->strtab_off < end || (uint64_t)v->strtab_off + v->strtab_size > size ||
	    v->strtab_size == 0 || v->desc[v->strtab_off + v->strtab_size - 1] != '\0') {
		w = "string table out of range or not NUL-terminated";
		goto bad;
	}
	for (i = 0; i < v->nproviders && !w; i++)
		w = check_provider(v, i);
	for (i = 0; i < v->nprobes && !w; i++)
		w = check_probe(v, i);
	if (w)
		goto bad;
	return 0;
bad:
	if (why)
		*why = w;
	return -EINVAL;
}

void usdt_meta_provider(const struct usdt_meta_view *v, uint32_t i, struct usdt_meta_provider *p)
{
	size_t o = v->providers_off + (size_t)i * USDT_META_PROVIDER_WORDS * 4;
	unsigned k;

	p->name = str_at(v, word_at(v, o));
	p->first_probe = word_at(v, o + 4);
	p->nprobes = word_at(v, o + 8);
	for (k = 0; k < USDT_ATTR_COUNT; k++) {
		uint32_t a = word_at(v, o + 12 + k * 4);

		p->attr[k].name_stab = (enum usdt_stability)(a & 0xff);
		p->attr[k].data_stab = (enum usdt_stability)(a >> 8 & 0xff);
		p->attr[k].dep_class = (enum usdt_depclass)(a >> 16 & 0xff);
	}
}

void usdt_meta_probe(const struct usdt_meta_view *v, uint32_t i, struct usdt_meta_probe *p)
{
	size_t o = v->probes_off + (size_t)i * USDT_META_PROBE_WORDS * 4;

	p->name = str_at(v, word_at(v, o));
	p->nargs = word_at(v, o + 4);
	p->first_arg = word_at(v, o + 8);
	p->nxargs = word_at(v, o + 12);
	p->first_xarg = word_at(v, o + 16);
}

void usdt_meta_arg(const struct usdt_meta_view *v, uint32_t i, struct usdt_meta_arg *a)
{
	size_t o = v->args_off + (size_t)i * USDT_META_ARG_WORDS * 4;
	uint32_t info = word_at(v, o + 12);

	a->name = str_at(v, word_at(v, o));
	a->type = str_at(v, word_at(v, o + 4));
	a->c_type = str_at(v, word_at(v, o + 8));
	a->cls = (enum usdt_type_class)(info & 0xff);
	a->size = info >> 8 & 0xff;
	a->is_signed = (info >> 16) & 1;
	a->source = word_at(v, o + 16);
}

static const char *class_name(enum usdt_type_class c)
{
	static const char *const names[] = {"integer", "pointer", "string", "float", "other"};

	return (unsigned)c < 5 ? names[c] : "?";
}

static void dump_arg(const struct usdt_meta_view *v, FILE *out, const char *kind, uint32_t k,
		     uint32_t i)
{
	struct usdt_meta_arg a;

	usdt_meta_arg(v, i, &a);
	fprintf(out, "    %s %u from %u \"%s\" c \"%s\" %s size %u %s name %s\n", kind, k, a.source,
		a.type, a.c_type ? a.c_type : "-", class_name(a.cls), a.size,
		a.is_signed ? "signed" : "unsigned", a.name ? a.name : "-");
}

void usdt_meta_dump(const struct usdt_meta_view *v, FILE *out)
{
	static const char *const which[] = {"provider", "module", "function", "name", "args"};
	uint32_t i, j, k;

	for (i = 0; i < v->nproviders; i++) {
		struct usdt_meta_provider p;

		usdt_meta_provider(v, i, &p);
		fprintf(out, "provider %s\n", p.name);
		for (k = 0; k < USDT_ATTR_COUNT; k++)
			fprintf(out, "  attributes %s %s/%s/%s\n", which[k],
				usdt_stability_name(p.attr[k].name_stab),
				usdt_stability_name(p.attr[k].data_stab),
				usdt_depclass_name(p.attr[k].dep_class));
		for (j = 0; j < p.nprobes; j++) {
			struct usdt_meta_probe pr;

			usdt_meta_probe(v, p.first_probe + j, &pr);
			fprintf(out, "  probe %s args %u xargs %u\n", pr.name, pr.nargs, pr.nxargs);
			for (k = 0; k < pr.nargs; k++)
				dump_arg(v, out, "arg", k, pr.first_arg + k);
			for (k = 0; k < pr.nxargs; k++)
				dump_arg(v, out, "xarg", k, pr.first_xarg + k);
		}
	}
}

void usdt_meta_default_attrs(struct usdt_attr attr[USDT_ATTR_COUNT])
{
	unsigned i;

	for (i = 0; i < USDT_ATTR_COUNT; i++) {
		attr[i].name_stab = USDT_STAB_PRIVATE;
		attr[i].data_stab = USDT_STAB_PRIVATE;
		attr[i].dep_class = USDT_CLASS_UNKNOWN;
	}
}

static bool same_types(const struct usdt_meta_info *p)
{
	unsigned i;

	if (p->nargs != p->nxargs)
		return false;
	for (i = 0; i < p->nargs; i++)
		if (strcmp(p->native[i], p->xlated[i]))
			return false;
	return true;
}

/* (provider, probe) in one validated note: true and *out filled when there. */
static bool find_in(const struct usdt_meta_view *v, const char *provider, const char *probe,
		    struct usdt_meta_info *out)
{
	uint32_t i, j, k;

	for (i = 0; i < v->nproviders; i++) {
		struct usdt_meta_provider pv;

		usdt_meta_provider(v, i, &pv);
		if (strcmp(pv.name, provider))
			continue;
		for (j = 0; j < pv.nprobes; j++) {
			struct usdt_meta_probe pr;
			struct usdt_meta_arg a;
			bool identity = true;

			usdt_meta_probe(v, pv.first_probe + j, &pr);
			if (strcmp(pr.name, probe))
				continue;
			memcpy(out->attr, pv.attr, sizeof(out->attr));
			out->nargs = pr.nargs;
			out->nxargs = pr.nxargs;
			for (k = 0; k < pr.nargs && k < USDT_MAX_ARGS; k++) {
				usdt_meta_arg(v, pr.first_arg + k, &a);
				out->native[k] = a.type;
			}
			for (k = 0; k < pr.nxargs && k < USDT_MAX_ARGS; k++) {
				usdt_meta_arg(v, pr.first_xarg + k, &a);
				out->xlated[k] = a.type;
				if (a.source != k)
					identity = false;
			}
			out->translated = !identity || !same_types(out);
			return true;
		}
	}
	return false;
}

bool usdt_meta_find(const struct usdt_notes *n, const char *provider, const char *probe,
		    struct usdt_meta_info *out, const char **why)
{
	size_t i;

	for (i = 0; i < n->nmeta; i++) {
		struct usdt_meta_view v;
		const char *bad = NULL;

		if (usdt_meta_open(&v, n->meta[i].desc, n->meta[i].size, n->meta[i].big_endian,
				   &bad)) {
			if (why && bad)
				*why = bad;
			continue;
		}
		if (find_in(&v, provider, probe, out))
			return true;
	}
	return false;
}

int usdt_meta_apply_hints(struct usdt_notes *n, size_t m, const char **why)
{
	struct usdt_meta_view v;
	uint32_t i, j, a;

	if (usdt_meta_open(&v, n->meta[m].desc, n->meta[m].size, n->meta[m].big_endian, why) != 0)
		return -1;
	for (i = 0; i < v.nproviders; i++) {
		struct usdt_meta_provider mp;

		usdt_meta_provider(&v, i, &mp);
		for (j = mp.first_probe; j < mp.first_probe + mp.nprobes; j++) {
			struct usdt_meta_probe pr;

			usdt_meta_probe(&v, j, &pr);
			for (a = 0; a < pr.nargs; a++) {
				struct usdt_meta_arg ma;

				usdt_meta_arg(&v, pr.first_arg + a, &ma);
				usdt_notes_apply_arg_hint(n, mp.name, pr.name, a, ma.name,
							  ma.cls == USDT_T_STRING);
			}
		}
	}
	return 0;
}
