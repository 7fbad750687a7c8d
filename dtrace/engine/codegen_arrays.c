/* SPDX-License-Identifier: MIT */
/*
 * D's associative arrays: `name[k, ...]` (global) and `self->name[k, ...]`
 * (a thread's: the thread ID leads the key), each a hash map whose key is
 * built as an aggregation's is (integers in 8 bytes, strings in STRSIZE),
 * in a per-CPU area of its own (`akeys`, cleared first), so that an array
 * read inside an aggregation's key does not disturb that key. Assigning 0
 * (or "") deletes the element, as D does; reading a missing one gives 0 or
 * "". The value is computed before the key is built (in area 1, a string
 * value's). A key that reads another array (`a[b[k]]`) builds the inner
 * key in an area of its own, one per depth (2, 3, ...), so the outer key,
 * half built, is left alone; an assignment inside a key is refused. Types
 * come from the first assignment in script order (cg_vars_scan()).
 */
#include <string.h>

#include "cg.h"

#define ROUND8(n) (((n) + 7u) & ~7u)

static char akind(const struct dt_node *ix)
{
	return !ix->a ? 'g' : ix->a->kind == N_SELF ? 's' : 0;
}

static struct cg_array *find(struct cg *g, char kind, const char *name)
{
	size_t i;

	for (i = 0; i < g->narrays; i++)
		if (g->arrays[i].kind == kind && !strcmp(g->arrays[i].name, name))
			return &g->arrays[i];
	return NULL;
}

/* cg_vars_scan(): an assignment to an array element types the array. */
void cg_array_scan(struct cg *g, const struct dt_node *n)
{
	const struct dt_node *ix = n->a;
	struct cg_array a, *x;
	size_t k;
	char kind = akind(ix);

	if (!kind || find(g, kind, ix->name) || ix->nargs > 8)
		return;
	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.name = dt_xstrdup(ix->name);
	a.nkeys = ix->nargs;
	a.key_size = kind == 's' ? 8 : 0;
	for (k = 0; k < ix->nargs; k++) {
		struct cv t;

		cg_value(g, ix->args[k], &t);
		a.ktype[k] = g->failed ? TY_INT : t.type;
		if (!g->failed && t.skind == SV_BYTES)
			a.kname[k] = t.ptr; /* a struct's bytes: keys of its type only */
		a.off[k] = a.key_size;
		a.key_size += a.ktype[k] == TY_STR ? ROUND8((unsigned)g->strsize) : 8;
		cv_free(&t);
		g->failed = false;
	}
	if (!a.key_size)
		a.key_size = 8;
	if (n->kind == N_ASSIGN && n->b) {
		struct cv t;

		cg_value(g, n->b, &t);
		a.is_str = !g->failed && t.type == TY_STR;
		if (!g->failed && t.type == TY_INT)
			a.size = t.size < 4 ? 4 : t.size, a.is_unsigned = t.is_unsigned;
		cv_free(&t);
		g->failed = false;
	}
	if (kind == 'g' && cg_decl_type(g, 'a', a.name)) {
		/* declared (`short s[int]`): its values are of that type */
		struct cg_type t;

		if (!cg_type(g, cg_decl_type(g, 'a', a.name), &t) && !t.is_aggr && !t.is_void) {
			a.is_str = t.is_str;
			a.size = t.is_str ? 0 : t.size > 8 || !t.size ? 8 : t.size;
			a.is_unsigned = t.is_unsigned;
		}
	}
	if (!a.size)
		a.size = 8;
	DT_PUSH(g->arrays, g->narrays, a);
	x = &g->arrays[g->narrays - 1];
	if (x->key_size > g->scratch)
		g->scratch = x->key_size; /* the key area is cleared from the zeroes map */
}

/*
 * -x dynvarsize: how many elements of array a it holds, at the bytes of its
 * key and its value (Oracle's DTrace: its dynamic variables are a BPF
 * map's elements), at least one. Without the option, 16384.
 */
static unsigned array_entries(const struct cg *g, const struct cg_array *a)
{
	long dyn = g->prog->o->dynvarsize;
	unsigned v = a->is_str ? ROUND8((unsigned)g->strsize) : 8;
	long n;

	if (dyn <= 0)
		return 16384;
	n = dyn / (long)(a->key_size + v);
	return n < 1 ? 1 : n > 16384 ? 16384 : (unsigned)n;
}

void cg_arrays_maps(const struct cg *g, struct dt_buf *o)
{
	unsigned most = 8;
	size_t i;

	for (i = 0; i < g->narrays; i++) {
		const struct cg_array *a = &g->arrays[i];

		most = a->key_size > most ? a->key_size : most;
		dt_buf_printf(o, "struct ak_%zu { __u8 b[%u]; };\n", i, a->key_size);
		if (a->is_str)
			dt_buf_printf(o, "struct av_%zu { __u8 s[%u]; };\n", i,
				      ROUND8((unsigned)g->strsize));
		dt_buf_printf(
		    o,
		    "struct { __uint(type, 1); __uint(max_entries, %u); "
		    "__uint(map_flags, %d); __type(key, struct ak_%zu); __type(value, ",
		    cg_map_entries(g, array_entries(g, a),
				   a->is_str ? (unsigned)g->strsize + a->key_size : a->key_size),
		    cg_map_flags(g), i);
		if (a->is_str)
			dt_buf_printf(o, "struct av_%zu", i);
		else
			dt_buf_printf(o, "__s64");
		dt_buf_printf(o, "); } arr_%zu SEC(\".maps\");\n", i);
		if (a->is_str && ROUND8((unsigned)g->strsize) > most)
			most = ROUND8((unsigned)g->strsize); /* akey(1): a string value's area */
	}
	dt_buf_printf(o,
		      "struct akey { __u8 b[%u]; };\n"
		      "struct { __uint(type, 6); __uint(max_entries, %u); __type(key, __u32); "
		      "__type(value, struct akey); } akeys SEC(\".maps\");\n"
		      "static __attribute__((noinline)) __u8 *akey(__u32 i, int zeroed) {\n"
		      "\tvoid *s = bpf_map_lookup_elem(&akeys, &i), *zs = zero_value();\n"
		      "\tif (s && zs && zeroed) bpf_probe_read_kernel(s, %u, zs);\n"
		      "\treturn s;\n}\n",
		      most, 2 + g->key_depth_max, most);
}

/* The element's key, built into k (a C byte pointer) from ix's arguments. */
static void fill_key(struct cg *g, const struct cg_array *a, const struct dt_node *ix,
		     struct dt_buf *o, const char *ind)
{
	size_t i;

	if (ix->nargs != a->nkeys) {
		cg_fail(g, ix, "an array's element named with another number of keys");
		return;
	}
	if (a->kind == 's')
		dt_buf_printf(o, "%s*(__u64 *)k = (__u32)bpf_get_current_pid_tgid();\n", ind);
	g->key_depth++;
	for (i = 0; i < a->nkeys && !g->failed; i++) {
		struct cv v;
		char dst[48];

		cg_value(g, ix->args[i], &v);
		if (!g->failed && v.type != a->ktype[i])
			cg_fail(g, ix->args[i], "an array's key of another type than before");
		if (!g->failed && (a->kname[i] || v.skind == SV_BYTES) &&
		    (!a->kname[i] || v.skind != SV_BYTES || strcmp(a->kname[i], v.ptr))) {
			char msg[300];

			snprintf(msg, sizeof(msg),
				 "%s[ ] key #%zu is incompatible with prototype:\n\tprototype: "
				 "%s\n\t      key: %s",
				 ix->name, i + 1, a->kname[i] ? a->kname[i] : "string",
				 v.skind == SV_BYTES ? v.ptr : "string");
			cg_refuse(g, ix->args[i], "D_PROTO_ARG", msg);
		}
		if (!g->failed && v.skind == SV_BYTES && v.size > ROUND8((unsigned)g->strsize))
			cg_fail(g, ix->args[i], "a key of a struct larger than strsize");
		snprintf(dst, sizeof(dst), "(k + %u)", a->off[i]);
		if (!g->failed && v.type == TY_STR)
			cg_store_str(g, &v, dst, true, o, ind);
		else if (!g->failed)
			dt_buf_printf(o, "%s*(__s64 *)%s = %s;\n", ind, dst, v.text);
		cv_free(&v);
	}
	g->key_depth--;
}

bool cg_array_read(struct cg *g, const struct dt_node *n, struct cv *v)
{
	const struct cg_array *a;
	struct dt_buf o = {0};
	unsigned area;
	char kind;

	if (n->kind != N_INDEX)
		return false;
	kind = akind(n);
	a = kind ? find(g, kind, n->name) : NULL;
	if (!a && kind == 's') { /* a thread's array no clause assigns: D reads 0 */
		v->type = TY_INT;
		v->size = 8;
		v->text = dt_xstrdup("0LL");
		return true;
	}
	if (!a && kind == 'g' && cg_decl_type(g, 'a', n->name)) {
		/* declared, and no clause assigns it: every element is D's zero of its type */
		struct cg_type t;

		if (!cg_type(g, cg_decl_type(g, 'a', n->name), &t) && t.is_str) {
			cg_null_str(v);
			v->marked = true; /* DTrace's NULL: recording it faults */
		} else {
			v->type = TY_INT;
			v->size = t.size && t.size < 8 ? t.size : 8;
			v->is_unsigned = t.is_unsigned;
			v->text = dt_xstrdup("0LL");
		}
		return true;
	}
	if (!a && kind == 'g') { /* no clause assigns it: D knows no such name */
		cg_refuse_undef(g, n);
		return true;
	}
	if (!a) {
		cg_err(g, n, "this-> arrays");
		return true;
	}
	/* the outermost key in area 0; one read inside a key at depth d, in area 1 + d */
	area = g->key_depth ? 1 + g->key_depth : 0;
	if (g->key_depth > g->key_depth_max)
		g->key_depth_max = g->key_depth;
	dt_buf_printf(&o, "({ %s r = %s; __u8 *k = akey(%u, 1);\n\t\tif (k) {\n",
		      a->is_str ? "void *" : "__s64", a->is_str ? "zero_value()" : "0", area);
	fill_key(g, a, n, &o, "\t\t\t");
	dt_buf_printf(&o, "\t\t\tvoid *e = bpf_map_lookup_elem(&arr_%zu, k);\n", a - g->arrays);
	dt_buf_printf(&o, "\t\t\tif (e)\n\t\t\t\tr = %s;\n\t\t}\n\t\tr; })",
		      a->is_str ? "e" : "*(__s64 *)e");
	v->text = o.s;
	v->type = a->is_str ? TY_STR : TY_INT;
	v->skind = SV_MEM;
	v->marked = a->is_str;
	v->size = a->size;
	v->is_unsigned = a->is_unsigned;
	return true;
}

bool cg_array_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	const struct dt_node *ix = n->a;
	const struct cg_array *a;
	struct cv val = {0};
	bool del0;
	char kind;

	if ((n->kind != N_ASSIGN && n->kind != N_INCDEC) || !ix || ix->kind != N_INDEX)
		return false;
	kind = akind(ix);
	a = kind ? find(g, kind, ix->name) : NULL;
	if (!a) {
		cg_err(g, ix, kind ? "this array" : "this-> arrays");
		return true;
	}
	if (g->key_depth) { /* areas 0 and 1 hold the key being built */
		cg_err(g, n, "an array assigned inside another array's key");
		return true;
	}
	if (n->kind == N_ASSIGN)
		cg_value(g, n->b, &val);
	del0 = n->kind == N_ASSIGN && n->b->kind == N_INT && n->b->ival == 0;
	if (!g->failed && n->kind == N_ASSIGN && a->is_str && cg_is_null(n->b)) {
		cg_null_str(&val); /* DTrace's NULL, kept: a[k] == NULL */
		del0 = false;
	}
	if (!g->failed && n->kind == N_ASSIGN && !del0 && (val.type == TY_STR) != a->is_str)
		cg_fail(g, n, "an array is given a string and an integer");
	if (!g->failed && a->is_str && (n->kind != N_ASSIGN || strcmp(n->op, "=")))
		cg_fail(g, n, "this operator does not apply to a string");
	if (g->failed) {
		cv_free(&val);
		return true;
	}
	dt_buf_printf(o, "%s{\n", ind);
	/* the value first: it may read arrays, whose key area the key below takes */
	if (a->is_str && !del0) {
		dt_buf_printf(o, "%s\t__u8 *x = akey(1, 0);\n%s\tif (x) {\n", ind, ind);
		cg_store_strvar(g, &val, "x", o, "\t\t\t\t");
		dt_buf_printf(o, "%s\t}\n", ind);
	} else if (!a->is_str) {
		dt_buf_printf(o, "%s\t__s64 x = %s;\n", ind,
			      n->kind == N_INCDEC ? "1"
			      : del0		  ? "0"
						  : val.text);
	}
	dt_buf_printf(o, "%s\t__u8 *k = akey(0, 1);\n%s\tif (k) {\n", ind, ind);
	fill_key(g, a, ix, o, "\t\t\t\t");
	if (!a->is_str && (n->kind == N_INCDEC || strcmp(n->op, "="))) {
		const char *op = n->kind == N_INCDEC ? (n->op[0] == '+' ? "+" : "-") : n->op;
		char opc[4] = {0};

		memcpy(opc, op, strlen(op) - (n->kind == N_INCDEC ? 0 : 1)); /* "+=" -> "+" */
		dt_buf_printf(
		    o, "%s\t\t__s64 *e = bpf_map_lookup_elem(&arr_%zu, k), old = e ? *e : 0;\n",
		    ind, a - g->arrays);
		if (!strcmp(opc, "/") || !strcmp(opc, "%"))
			dt_buf_printf(o, "%s\t\tx = s%s(old, x);\n", ind,
				      opc[0] == '/' ? "div" : "mod");
		else
			dt_buf_printf(o, "%s\t\tx = old %s x;\n", ind, opc);
	}
	if (!a->is_str && a->size < 8) /* what the value's type holds */
		dt_buf_printf(o, "%s\t\tx = %s((__u64)x, %u);\n", ind, a->is_unsigned ? "zx" : "sx",
			      a->size);
	if (a->is_str && !del0)
		dt_buf_printf(
		    o,
		    "%s\t\tif (x && bpf_map_update_elem(&arr_%zu, k, x, 0))\n%s\t\t\tDYN_DROP();\n",
		    ind, a - g->arrays, ind);
	else if (a->is_str)
		dt_buf_printf(o, "%s\t\tbpf_map_delete_elem(&arr_%zu, k);\n", ind, a - g->arrays);
	else
		dt_buf_printf(o,
			      "%s\t\tif (x) {\n%s\t\t\tif (bpf_map_update_elem(&arr_%zu, k, &x, "
			      "0)) DYN_DROP();\n%s\t\t}"
			      " else\n%s\t\t\tbpf_map_delete_elem(&arr_%zu, k);\n",
			      ind, ind, a - g->arrays, ind, ind, a - g->arrays);
	dt_buf_printf(o, "%s\t}\n%s}\n", ind, ind);
	cv_free(&val);
	return true;
}
