/* SPDX-License-Identifier: MIT */
/*
 * The running kernel's types from its BTF (kbtf.h), as DTrace has them
 * from the kernel's CTF: `struct task_struct`, `struct sk_buff`, the
 * typedefs (`__u8`, `pid_t`), each converted into the consumer's one type
 * model (struct dt_decl: a type is its words) the first time a program
 * names it, and only what it names: a struct's members are words
 * ("struct mm_struct *", "char [16]"), each resolved here again when it is
 * used. The conversions live for the process (the kernel's types do not
 * change under it), in memory of their own (not the parser's arena).
 *
 * A member's place is BTF's (its bit offset, boff; the struct's size,
 * ksize): the kernel's layout, not the one the engine computes for a
 * struct the program declares. An unnamed member (C11's anonymous struct
 * or union, everywhere in the kernel) has no name and the type
 * "struct <kernel ID>", which this resolves by its BTF id: the engine
 * looks a member up through it, as C does. A name scoped by a module
 * (``struct vmlinux`task_struct``, ``struct tun`tun_page``) is looked up in
 * that module's BTF (/sys/kernel/btf/MODULE, split on vmlinux's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "d.h"
#include "kbtf.h"

#if __has_include(<bpf/btf.h>)
#include <bpf/btf.h>
#include <bpf/libbpf.h>

static struct btf *vmlinux;
static bool loaded;

/* a module's BTF, split on vmlinux's */
static struct kmod {
	char *name;
	struct btf *btf;
} * mods;
static size_t nmods;

/* every conversion made: stable addresses (each its own allocation) */
static struct conv {
	char kind;
	const struct btf *btf;
	char *name;
	struct dt_decl *d;
} * convs;
static size_t nconvs;

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fprintf(stderr, "dtrace: out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

/*
 * vmlinux's named structs, unions, enums and typedefs by (kind, name): an
 * open-addressed table of their ids, made at the first lookup (libbpf's
 * btf__find_by_name_kind() reads every type, 0.7 ms a miss here, and the
 * parser asks of many words).
 */
static __u32 *names;
static size_t names_cap;

static size_t name_hash(const char *s, unsigned kind)
{
	size_t h = 1469598103934665603ULL ^ kind;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static void names_build(void)
{
	__u32 n = btf__type_cnt(vmlinux), id;

	names_cap = 1;
	while (names_cap < 2 * (size_t)n)
		names_cap <<= 1;
	names = xmalloc(names_cap * sizeof(*names));
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, id);
		const char *nm = btf__name_by_offset(vmlinux, t->name_off);
		unsigned k = btf_kind(t);
		size_t h;

		if (!nm || !*nm ||
		    (k != BTF_KIND_STRUCT && k != BTF_KIND_UNION && k != BTF_KIND_ENUM &&
		     k != BTF_KIND_TYPEDEF))
			continue;
		for (h = name_hash(nm, k) & (names_cap - 1); names[h];
		     h = (h + 1) & (names_cap - 1)) {
			const struct btf_type *o = btf__type_by_id(vmlinux, names[h]);

			if (btf_kind(o) == k &&
			    !strcmp(btf__name_by_offset(vmlinux, o->name_off), nm))
				break; /* the first of a name stays, as libbpf finds it */
		}
		if (!names[h])
			names[h] = id;
	}
}

/* The id of vmlinux's type `name` of BTF kind `kind`, else -1 (libbpf's for a module's). */
static __s32 find(const struct btf *b, const char *name, unsigned kind)
{
	size_t h;

	if (b != vmlinux)
		return btf__find_by_name_kind(b, name, kind);
	if (!names)
		names_build();
	for (h = name_hash(name, kind) & (names_cap - 1); names[h]; h = (h + 1) & (names_cap - 1)) {
		const struct btf_type *t = btf__type_by_id(vmlinux, names[h]);

		if (btf_kind(t) == kind && !strcmp(btf__name_by_offset(vmlinux, t->name_off), name))
			return (__s32)names[h];
	}
	return -1;
}

struct btf *dt_kbtf(void)
{
	if (!loaded) {
		libbpf_print_fn_t old = libbpf_set_print(quiet);

		loaded = true;
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux)
			vmlinux = NULL; /* (libbpf's error pointer, as NULL) */
		libbpf_set_print(old);
	}
	return vmlinux;
}

/* The BTF of module `mod` ("vmlinux": the kernel's own), else NULL. */
static struct btf *module_btf(const char *mod, size_t n)
{
	char path[300];
	struct btf *b;
	size_t i;

	if (!dt_kbtf())
		return NULL;
	if (n == 7 && !strncmp(mod, "vmlinux", 7))
		return vmlinux;
	for (i = 0; i < nmods; i++)
		if (strlen(mods[i].name) == n && !strncmp(mods[i].name, mod, n))
			return mods[i].btf;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%.*s", (int)n, mod);
	if (strchr(path + 16, '/'))
		return NULL;
	{
		libbpf_print_fn_t old = libbpf_set_print(quiet);

		b = btf__parse_split(path, vmlinux);
		libbpf_set_print(old);
	}
	if (!b || libbpf_get_error(b))
		b = NULL;
	mods = realloc(mods, (nmods + 1) * sizeof(*mods));
	if (!mods)
		exit(1);
	mods[nmods].name = xmalloc(n + 1);
	memcpy(mods[nmods].name, mod, n);
	mods[nmods++].btf = b;
	return b;
}

/* *s with " *" (n 0) or " [n]" appended */
static void add(char **s, unsigned long n, bool array)
{
	char buf[512];

	if (array)
		snprintf(buf, sizeof(buf), "%s [%lu]", *s, n);
	else
		snprintf(buf, sizeof(buf), "%s *", *s);
	free(*s);
	*s = xstrdup(buf);
}

/* A BTF type's words, as the parser writes a type ("unsigned int", "struct rq *", "char [16]"). */
static char *words(const struct btf *b, __u32 id, int depth)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	const char *nm;
	char *s = NULL;

	if (!id || !t || depth > 32)
		return xstrdup("void");
	nm = btf__name_by_offset(b, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPEDEF:
		return xstrdup(nm && *nm ? nm : "int");
	case BTF_KIND_PTR: {
		const struct btf_type *p = btf__type_by_id(b, t->type);

		if (p && btf_is_func_proto(p))
			return xstrdup("void *");
		s = words(b, t->type, depth + 1);
		add(&s, 0, false);
		return s;
	}
	case BTF_KIND_ARRAY:
		s = words(b, btf_array(t)->type, depth + 1);
		add(&s, btf_array(t)->nelems, true);
		return s;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_FWD: {
		bool uni = btf_is_union(t) || (btf_is_fwd(t) && btf_kflag(t));
		char buf[300];

		if (nm && *nm)
			snprintf(buf, sizeof(buf), "%s %s", uni ? "union" : "struct", nm);
		else
			snprintf(buf, sizeof(buf), "%s <kernel %u>", uni ? "union" : "struct", id);
		return xstrdup(buf);
	}
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: {
		char buf[300];

		if (nm && *nm && t->size == 4) {
			snprintf(buf, sizeof(buf), "enum %s", nm);
			return xstrdup(buf);
		}
		return xstrdup(t->size == 1   ? "unsigned char"
			       : t->size == 2 ? "short"
			       : t->size == 8 ? "long"
					      : "int");
	}
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return words(b, t->type, depth + 1);
	default:
		return xstrdup("void");
	}
}

static struct dt_decl *convert(const struct btf *b, __u32 id, char kind, const char *name)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	struct dt_decl *d = xmalloc(sizeof(*d));
	unsigned i;

	d->kind = kind;
	d->name = xstrdup(name);
	if (kind == 'T') {
		d->type = words(b, t->type, 0);
	} else if (kind == 'E') { /* the enumerators, each's value as its type (d.h) */
		d->nmembers = btf_vlen(t);
		d->members = xmalloc(d->nmembers * sizeof(*d->members));
		for (i = 0; i < d->nmembers; i++) {
			char val[32];

			snprintf(val, sizeof(val), "%lld",
				 btf_is_enum(t) ? (long long)btf_enum(t)[i].val
						: (long long)btf_enum64_value(btf_enum64(t) + i));
			d->members[i].kind = 'm';
			d->members[i].name = xstrdup(
			    btf__name_by_offset(b, btf_is_enum(t) ? btf_enum(t)[i].name_off
								  : btf_enum64(t)[i].name_off));
			d->members[i].type = xstrdup(val);
		}
	} else {
		const struct btf_member *m = btf_members(t);

		d->ksize = t->size;
		d->nmembers = btf_vlen(t);
		d->members = xmalloc(d->nmembers * sizeof(*d->members));
		for (i = 0; i < d->nmembers; i++, m++) {
			const char *mn = btf__name_by_offset(b, m->name_off);
			struct dt_decl *x = &d->members[i];

			x->kind = 'm';
			x->name = mn && *mn ? xstrdup(mn) : NULL;
			x->type = words(b, m->type, 0);
			x->bits = btf_member_bitfield_size(t, i);
			x->boff = btf_member_bit_offset(t, i);
		}
	}
	convs = realloc(convs, (nconvs + 1) * sizeof(*convs));
	if (!convs)
		exit(1);
	convs[nconvs++] = (struct conv){kind, b, d->name, d};
	return d;
}

const struct dt_decl *dt_kbtf_decl(char kind, const char *name)
{
	const char *tag = name, *bq;
	struct btf *b;
	__s32 id = -1;
	size_t i;

	if (!name || (kind != 'S' && kind != 'U' && kind != 'T' && kind != 'E'))
		return NULL;
	for (i = 0; i < nconvs; i++)
		if (convs[i].kind == kind && !strcmp(convs[i].name, name))
			return convs[i].d;
	if (kind != 'T') {
		const char *kw = kind == 'S' ? "struct " : kind == 'U' ? "union " : "enum ";

		if (strncmp(name, kw, strlen(kw)))
			return NULL;
		tag = name + strlen(kw);
	}
	b = dt_kbtf();
	if ((bq = strchr(tag, '`')) != NULL) {
		b = module_btf(tag, (size_t)(bq - tag));
		tag = bq + 1;
	}
	if (!b)
		return NULL;
	if (!strncmp(tag, "<kernel ", 8)) {
		unsigned long n = strtoul(tag + 8, NULL, 10);
		const struct btf_type *t = n ? btf__type_by_id(b, (__u32)n) : NULL;

		if (t && (kind == 'S' ? btf_is_struct(t) : btf_is_union(t)))
			id = (__s32)n;
	} else {
		id = find(b, tag,
			  kind == 'S'	? BTF_KIND_STRUCT
			  : kind == 'U' ? BTF_KIND_UNION
			  : kind == 'E' ? BTF_KIND_ENUM
					: BTF_KIND_TYPEDEF);
	}
	if (id <= 0)
		return NULL;
	return convert(b, (__u32)id, kind, name);
}

bool dt_kbtf_typedef(const char *name)
{
	struct btf *b = dt_kbtf();

	return b && find(b, name, BTF_KIND_TYPEDEF) > 0;
}

/* The member `name` of the struct or union `id`: its bit offset and type, or -1. */
static int member(const struct btf *b, __u32 id, const char *name, __u32 *bits, __u32 *type)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	const struct btf_member *m;
	unsigned i, n;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	n = btf_vlen(t);
	for (i = 0; i < n; i++, m++) {
		const char *mn = btf__name_by_offset(b, m->name_off);
		__s32 anon;

		if (mn && !strcmp(mn, name)) {
			*bits = btf_member_bit_offset(t, i);
			*type = m->type;
			return 0;
		}
		/* a member of an unnamed struct or union member, as C finds it (mm_struct's) */
		if ((!mn || !*mn) && (anon = btf__resolve_type(b, m->type)) >= 0 &&
		    !member(b, (__u32)anon, name, bits, type)) {
			*bits += btf_member_bit_offset(t, i);
			return 0;
		}
	}
	return -1;
}

int dt_kbtf_offset(const char *strct, const char *path, unsigned *off)
{
	struct btf *b = dt_kbtf();
	char part[64];
	const char *p = path;
	__s32 id;
	__u32 tid, bits, total = 0;

	if (!b)
		return -1;
	id = find(b, strct, BTF_KIND_STRUCT);
	if (id < 0)
		return -1;
	tid = (__u32)id;
	while (*p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(part))
			return -1;
		memcpy(part, p, n);
		part[n] = '\0';
		if (member(b, tid, part, &bits, &tid) || bits % 8)
			return -1;
		total += bits / 8;
		id = btf__resolve_type(b, tid);
		if (id < 0)
			return -1;
		tid = (__u32)id;
		p += n + (p[n] == '.');
	}
	*off = total;
	return 0;
}

#else /* no libbpf: no kernel types */

struct btf *dt_kbtf(void)
{
	return NULL;
}

bool dt_kbtf_typedef(const char *name)
{
	(void)name;
	return false;
}

const struct dt_decl *dt_kbtf_decl(char kind, const char *name)
{
	(void)kind;
	(void)name;
	return NULL;
}

int dt_kbtf_offset(const char *strct, const char *path, unsigned *off)
{
	(void)strct;
	(void)path;
	(void)off;
	return -1;
}

#endif
