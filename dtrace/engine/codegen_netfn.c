/* SPDX-License-Identifier: MIT */
/*
 * D's network and device subroutines as BPF: htons(), htonl(), htonll(),
 * ntohs(), ntohl(), ntohll() (byte swaps: the hosts are little-endian),
 * getmajor() and getminor() (Linux's dev_t: the major above the low 20
 * bits), and the ones that write an address as text into a string slot
 * (codegen_strfn.c's): inet_ntoa(), inet_ntoa6(), inet_ntop() and
 * link_ntop().
 *
 * Theory. The address's bytes are loaded first (dload(): D's memory, the
 * process's, the kernel's; an address nothing answers for faults,
 * DTRACEFLT_BADADDR) into a per-CPU state in a map, then written by
 * bpf_loop callbacks, one group, byte or octet a call, each verified once
 * for any index: a character's place depends on how many digits came
 * before, and straight-line code would make the verifier follow every
 * count. The cases are DTrace's: IPv6's longest run of two or more zero
 * groups is "::" (the first of equal runs), an IPv4-mapped (::ffff:a.b.c.d)
 * or -compatible (::a.b.c.d, not :: or ::1) address is its dotted quad
 * alone for inet_ntoa6(a) and inet_ntoa6(a, 0), with its prefix for
 * inet_ntoa6(a, non-zero) and inet_ntop(AF_INET6, a); link_ntop() writes
 * each byte as two hex digits with ':' between, 6 of ARPHRD_ETHER, 20 of
 * ARPHRD_INFINIBAND. An address family or link type it does not know is
 * an illegal operation (DTRACEFLT_ILLOP), as in DTrace. The text is cut at
 * strsize, as every string is.
 */
#include <string.h>

#include "cg.h"

static const char functions[] =
    "struct nst { __u8 a[24]; long k, zs, zl, cs, cl, off, n; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct nst); } nsts SEC(\".maps\");\n"
    "struct nctx { __u8 *t; struct nst *s; };\n"
    "INLINE struct nst *nstate(void) {\n"
    "\t__u32 z = 0; struct nst *s = bpf_map_lookup_elem(&nsts, &z);\n"
    "\tif (s) { s->k = s->zs = s->zl = s->cs = s->cl = s->off = s->n = 0; }\n"
    "\treturn s;\n"
    "}\n"
    /* one character at the end, if strsize has room */
    "INLINE void nemit(__u8 *t, struct nst *s, __u8 c) {\n"
    "\t__u64 k = (__u64)s->k;\n"
    "\tBOUNDED(k);\n"
    "\tif (k < STRSIZE - 1) { t[k] = c; s->k = k + 1; }\n"
    "}\n"
    "INLINE __u8 nhexd(__u32 d) { d &= 15; return d < 10 ? '0' + d : 'a' + d - 10; }\n"
    /* the longest run of two or more zero groups (the first of equal ones) */
    "static __attribute__((noinline)) long nzero_cb(__u32 i, void *arg) {\n"
    "\tstruct nctx *p = arg;\n"
    "\tstruct nst *s = p->s;\n"
    "\t__u64 x = 2 * (__u64)i;\n"
    "\tBOUNDED(x);\n"
    "\tif (x >= 15) return 1;\n"
    "\tif (s->a[x] || s->a[x + 1]) { s->cl = 0; return 0; }\n"
    "\tif (!s->cl) s->cs = i;\n"
    "\ts->cl++;\n"
    "\tif (s->cl >= 2 && s->cl > s->zl) { s->zl = s->cl; s->zs = s->cs; }\n"
    "\treturn 0;\n"
    "}\n"
    "static __attribute__((noinline)) long ngroup_cb(__u32 i, void *arg) {\n"
    "\tstruct nctx *p = arg;\n"
    "\tstruct nst *s = p->s;\n"
    "\tlong zs = s->zs, zl = s->zl;\n"
    "\tif (i >= 8) return 1;\n"
    "\tif (zl && i >= zs && i < zs + zl) {\n"
    "\t\tif (i == zs) { nemit(p->t, s, ':'); nemit(p->t, s, ':'); }\n"
    "\t\treturn 0;\n"
    "\t}\n"
    "\tif (i && !(zl && i == zs + zl)) nemit(p->t, s, ':');\n"
    "\t__u64 x = 2 * (__u64)i;\n"
    "\tBOUNDED(x);\n"
    "\tif (x >= 15) return 1;\n"
    "\t__u32 v = ((__u32)s->a[x] << 8) | s->a[x + 1];\n"
    "\tif (v >= 0x1000) nemit(p->t, s, nhexd(v >> 12));\n"
    "\tif (v >= 0x100) nemit(p->t, s, nhexd(v >> 8));\n"
    "\tif (v >= 0x10) nemit(p->t, s, nhexd(v >> 4));\n"
    "\tnemit(p->t, s, nhexd(v));\n"
    "\treturn 0;\n"
    "}\n"
    /* the dotted quad of a[off..off+3] */
    "static __attribute__((noinline)) long nquad_cb(__u32 i, void *arg) {\n"
    "\tstruct nctx *p = arg;\n"
    "\tstruct nst *s = p->s;\n"
    "\t__u64 j = (__u64)s->off + i;\n"
    "\tif (i >= 4) return 1;\n"
    "\tBOUNDED(j);\n"
    "\tif (j >= 20) return 1;\n"
    "\t__u32 v = s->a[j];\n"
    "\tif (i) nemit(p->t, s, '.');\n"
    "\tif (v >= 100) nemit(p->t, s, '0' + v / 100);\n"
    "\tif (v >= 10) nemit(p->t, s, '0' + (v / 10) % 10);\n"
    "\tnemit(p->t, s, '0' + v % 10);\n"
    "\treturn 0;\n"
    "}\n"
    /* link_ntop(): n bytes as hex pairs */
    "static __attribute__((noinline)) long nlink_cb(__u32 i, void *arg) {\n"
    "\tstruct nctx *p = arg;\n"
    "\tstruct nst *s = p->s;\n"
    "\t__u64 x = i;\n"
    "\tBOUNDED(x);\n"
    "\tif (x >= 20 || x >= (__u64)s->n) return 1;\n"
    "\tif (x) nemit(p->t, s, ':');\n"
    "\tnemit(p->t, s, nhexd(s->a[x] >> 4));\n"
    "\tnemit(p->t, s, nhexd(s->a[x]));\n"
    "\treturn 0;\n"
    "}\n"
    "INLINE __u8 *nend(__u8 *t, struct nst *s) {\n"
    "\t__u64 k = (__u64)s->k;\n"
    "\tBOUNDED(k);\n"
    "\tif (k < STRSIZE) t[k] = 0;\n"
    "\treturn t;\n"
    "}\n"
    "INLINE __u8 *dinet4(__u8 *t, struct nst *s) {\n"
    "\tstruct nctx p = {t, s};\n"
    "\ts->off = 0;\n"
    "\tbpf_loop(4, nquad_cb, &p, 0);\n"
    "\treturn nend(t, s);\n"
    "}\n"
    "INLINE __u8 *dinet6(__u8 *t, struct nst *s, int strict) {\n"
    "\tstruct nctx p = {t, s};\n"
    "\t__u64 hi = 0; __u32 w5, v4;\n"
    "\t__builtin_memcpy(&hi, s->a, 8);\n"
    "\tw5 = ((__u32)s->a[10] << 8) | s->a[11];\n"
    "\tv4 = ((__u32)s->a[12] << 24) | ((__u32)s->a[13] << 16) | ((__u32)s->a[14] << 8) | "
    "s->a[15];\n"
    "\tif (!hi && !s->a[8] && !s->a[9] && (w5 == 0xffff || (!w5 && v4 > 1))) {\n"
    "\t\tif (strict) {\n"
    "\t\t\tnemit(t, s, ':'); nemit(t, s, ':');\n"
    "\t\t\tif (w5) { nemit(t, s, 'f'); nemit(t, s, 'f'); nemit(t, s, 'f'); "
    "nemit(t, s, 'f'); nemit(t, s, ':'); }\n"
    "\t\t}\n"
    "\t\ts->off = 12;\n"
    "\t\tbpf_loop(4, nquad_cb, &p, 0);\n"
    "\t\treturn nend(t, s);\n"
    "\t}\n"
    "\tbpf_loop(8, nzero_cb, &p, 0);\n"
    "\tbpf_loop(8, ngroup_cb, &p, 0);\n"
    "\treturn nend(t, s);\n"
    "}\n"
    "INLINE __u8 *dlink(__u8 *t, struct nst *s, long n) {\n"
    "\tstruct nctx p = {t, s};\n"
    "\ts->n = n;\n"
    "\tbpf_loop(20, nlink_cb, &p, 0);\n"
    "\treturn nend(t, s);\n"
    "}\n";

void cg_netfn_functions(struct dt_buf *o)
{
	dt_buf_add(o, functions, sizeof(functions) - 1);
}

enum {
	F_HTONS,
	F_HTONL,
	F_HTONLL,
	F_NTOHS,
	F_NTOHL,
	F_NTOHLL,
	F_MAJOR,
	F_MINOR,
	F_NTOA,
	F_NTOA6,
	F_NTOP,
	F_LINK
};

static int which(const char *f)
{
	static const char *const names[] = {
	    "htons",	"htonl",     "htonll",	   "ntohs",	"ntohl",     "ntohll", "getmajor",
	    "getminor", "inet_ntoa", "inet_ntoa6", "inet_ntop", "link_ntop", NULL};
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(f, names[i]))
			return i;
	return -1;
}

bool cg_is_netfn(const char *f)
{
	return which(f) >= 0;
}

bool cg_netfn_has_slot(const char *f)
{
	return which(f) >= F_NTOA;
}

/* The integer ones: a swap of the value's low bytes, the device number's halves. */
static void int_fn(int f, const struct cv *a, struct cv *v)
{
	static const char *const fn[] = {"__builtin_bswap16", "__builtin_bswap32",
					 "__builtin_bswap64", "__builtin_bswap16",
					 "__builtin_bswap32", "__builtin_bswap64"};
	static const unsigned size[] = {2, 4, 8, 2, 4, 8, 4, 4};
	struct dt_buf b = {0};

	if (f == F_MAJOR || f == F_MINOR)
		dt_buf_printf(&b,
			      f == F_MAJOR ? "((__u64)((__u32)(%s) >> 20))"
					   : "((__u64)((__u32)(%s) & 0xfffff))",
			      a->text);
	else
		dt_buf_printf(&b, "((__u64)%s((%s)(%s)))", fn[f],
			      size[f] == 2   ? "unsigned short"
			      : size[f] == 4 ? "__u32"
					     : "__u64",
			      a->text);
	v->text = b.s;
	v->type = TY_INT;
	v->size = size[f];
	v->is_unsigned = true;
}

/* n bytes at the address into the state (two loads for more than 15: dload's limit) */
static void load(struct cg *g, struct dt_buf *o, unsigned n)
{
	size_t site = g->scanning ? 0 : cg_fault_site(g);

	g->dmem = true;
	if (n <= 15)
		dt_buf_printf(o, "\t\t\tif (dload(ns->a, %u, na)) FAULT(%zu, 1, na);\n", n, site);
	else
		dt_buf_printf(o,
			      "\t\t\tif (dload(ns->a, %u, na) || dload(ns->a + %u, %u, na + %u))"
			      " FAULT(%zu, 1, na);\n",
			      n / 2, n / 2, n - n / 2, n / 2, site);
}

void cg_netfn(struct cg *g, const struct dt_node *n, struct cv *v, unsigned j)
{
	int f = which(n->name);
	unsigned want = f == F_NTOP || f == F_LINK ? 2 : 1;
	struct cv a = {0}, b = {0};
	struct dt_buf o = {0};
	int64_t strict = 0;
	size_t site;

	if (n->nargs < want || n->nargs > (f == F_NTOA6 ? 2u : want)) {
		cg_fail(g, n, "this function is given a wrong number of arguments");
		return;
	}
	cg_int(g, n->args[0], &a);
	if (f < F_NTOA) {
		if (!g->failed)
			int_fn(f, &a, v);
		cv_free(&a);
		return;
	}
	if (n->nargs > 1)
		cg_int(g, n->args[1], &b);
	if (f == F_NTOA6 && n->nargs > 1 && !g->failed && !cg_const(g, n->args[1], &strict))
		strict = 1; /* DTrace wants a constant (D_PROTO_ARG); any other value is strict */
	if (g->failed)
		goto out;
	site = g->scanning ? 0 : cg_fault_site(g);
	dt_buf_printf(&o,
		      "({ __u8 *t = strfn_slot(%u, 0), *res = 0; struct nst *ns = nstate();\n"
		      "\t\tif (t && ns) {\n\t\t\t__u64 na = (__u64)(%s);\n",
		      j, want == 2 ? b.text : a.text);
	switch (f) {
	case F_NTOA:
		load(g, &o, 4);
		dt_buf_printf(&o, "\t\t\tres = dinet4(t, ns);\n");
		break;
	case F_NTOA6:
		load(g, &o, 16);
		dt_buf_printf(&o, "\t\t\tres = dinet6(t, ns, %d);\n", strict != 0);
		break;
	case F_NTOP:
		dt_buf_printf(&o, "\t\t\t__s64 af = (__s64)(%s);\n\t\t\tif (af == 2) {\n", a.text);
		load(g, &o, 4);
		dt_buf_printf(&o, "\t\t\t\tres = dinet4(t, ns);\n\t\t\t} else if (af == 10) {\n");
		load(g, &o, 16);
		dt_buf_printf(&o,
			      "\t\t\t\tres = dinet6(t, ns, 1);\n"
			      "\t\t\t} else FAULT(%zu, 3, 0);\n",
			      site);
		break;
	case F_LINK:
		dt_buf_printf(&o, "\t\t\t__s64 ht = (__s64)(%s);\n\t\t\tif (ht == 1) {\n", a.text);
		load(g, &o, 6);
		dt_buf_printf(&o, "\t\t\t\tres = dlink(t, ns, 6);\n\t\t\t} else if (ht == 32) {\n");
		load(g, &o, 20);
		dt_buf_printf(&o,
			      "\t\t\t\tres = dlink(t, ns, 20);\n"
			      "\t\t\t} else FAULT(%zu, 3, 0);\n",
			      site);
		break;
	}
	dt_buf_printf(&o, "\t\t}\n\t\tres; })");
	v->text = o.s;
	v->type = TY_STR;
	v->skind = SV_MEM;
out:
	cv_free(&a);
	cv_free(&b);
}
