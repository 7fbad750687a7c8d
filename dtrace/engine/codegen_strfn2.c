/* SPDX-License-Identifier: MIT */
/*
 * D's searching and cutting string functions as BPF: strstr(), index(),
 * rindex(), substr(), toupper(), tolower(), lltostr(), strtok(), and copyin() (its
 * bytes NUL-terminated: stringof() makes it a string). Like
 * codegen_strfn.c's, each call has a slot of two STRSIZE areas in the
 * per-CPU `strfns` map: the first argument is copied into the first, a
 * second string argument into the second. Lengths and searches are
 * bpf_loop callbacks (verified once for any index, not once per exit);
 * results that are part of the first argument (strstr, substr) are a
 * pointer into its copy, so no third area is needed. strstr()'s value is
 * a null pointer when the string is not found: `strstr(a, b) != NULL`.
 * The cases follow DTrace's (illumos dtrace.c's DIF_SUBR_*): a negative
 * substr() index counts from the end, a negative length leaves that many
 * characters off the end, index() and rindex() answer -1 when not found.
 */
#include <stdio.h>
#include <string.h>

#include "cg.h"

static const char functions[] =
    "struct slen { const __u8 *s; long n; };\n"
    "static __attribute__((noinline)) long slen_cb(__u32 i, void *arg) {\n"
    "\tstruct slen *p = arg;\n"
    "\tif (i >= STRSIZE - 1 || !p->s[i]) { p->n = i; return 1; }\n"
    "\treturn 0;\n"
    "}\n"
    "INLINE long dlen(const __u8 *s) {\n"
    "\tstruct slen p = {s, STRSIZE - 1};\n"
    "\tbpf_loop(STRSIZE, slen_cb, &p, 0);\n"
    "\treturn p.n;\n"
    "}\n"
    /*
     * b in a at from, from + step, ...: the first place it is, or -1. One
     * flat loop over (place, k) pairs, not a loop in a loop, its state in
     * a map (values the verifier does not track, so the callback's
     * verification converges instead of following every constant).
     */
    "struct sfst { long la, lb, at, step, k, res; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct sfst); } sfsts SEC(\".maps\");\n"
    "struct sfind { const __u8 *a, *b; struct sfst *s; };\n"
    "static __attribute__((noinline)) long sfind_cb(__u32 i, void *arg) {\n"
    "\tstruct sfind *p = arg;\n"
    "\tstruct sfst *s = p->s;\n"
    "\tif (s->at < 0 || s->at > s->la - s->lb) return 1;\n"
    "\tif (s->k >= s->lb) { s->res = s->at; return 1; }\n"
    "\t__u64 x = (__u64)s->at + (__u64)s->k, k = (__u64)s->k;\n"
    "\tBOUNDED(x);\n"
    "\tif (x >= STRSIZE) return 1;\n"
    "\tBOUNDED(k);\n"
    "\tif (k >= STRSIZE) return 1;\n"
    "\tif (p->a[x] == p->b[k]) { s->k++; return 0; }\n"
    "\ts->k = 0;\n"
    "\ts->at += s->step;\n"
    "\treturn 0;\n"
    "}\n"
    "INLINE long dfind(const __u8 *a, const __u8 *b, long la, long lb, long from, long step) {\n"
    "\t__u32 z = 0; struct sfst *s = bpf_map_lookup_elem(&sfsts, &z);\n"
    "\tif (!s) return -1;\n"
    "\ts->la = la; s->lb = lb; s->at = from; s->step = step; s->k = 0; s->res = -1;\n"
    "\tstruct sfind p = {a, b, s};\n"
    "\tbpf_loop(STRSIZE * STRSIZE + 1, sfind_cb, &p, 0);\n"
    "\treturn s->res;\n"
    "}\n"
    "struct scase { __u8 *s; long up; };\n"
    "static __attribute__((noinline)) long scase_cb(__u32 i, void *arg) {\n"
    "\tstruct scase *p = arg;\n"
    "\tif (i >= STRSIZE) return 1;\n"
    "\t__u8 c = p->s[i];\n"
    "\tif (!c) return 1;\n"
    "\tif (p->up && c >= 'a' && c <= 'z') p->s[i] = c - 32;\n"
    "\tif (!p->up && c >= 'A' && c <= 'Z') p->s[i] = c + 32;\n"
    "\treturn 0;\n"
    "}\n"
    /* DTrace's substr(): where the result starts in s, its end cut there */
    "INLINE __u8 *dsubstr(__u8 *s, long i, long n, int has_n) {\n"
    "\tlong len = dlen(s), rem = has_n ? n : STRSIZE;\n"
    "\tif (i < 0) {\n"
    "\t\ti += len;\n"
    "\t\tif (i < 0) {\n"
    "\t\t\tif (has_n && rem + i <= 0) rem = 0; else rem += i;\n"
    "\t\t\ti = 0;\n"
    "\t\t}\n"
    "\t}\n"
    "\tif (i >= len) rem = 0;\n"
    "\telse if (rem < 0) rem += len - i;\n"
    "\tif (rem < 0) rem = 0;\n"
    "\tif (i > STRSIZE - 1) i = STRSIZE - 1;\n"
    "\tif (i < 0) i = 0;\n"
    "\tif (rem > STRSIZE - 1) rem = STRSIZE - 1;\n"
    "\tput(s, (__u32)(i + rem), 0);\n"
    "\treturn s + i;\n"
    "}\n"
    /* the digits written backwards on the stack, then copied into r cut at strsize */
    "INLINE __u8 *dlltostr(__u8 *r, __s64 v) {\n"
    "\t__u8 b[24];\n"
    "\t__u64 u = v < 0 ? -(__u64)v : (__u64)v;\n"
    "\t__u32 k = 23;\n"
    "\tb[23] = 0;\n"
    "\tfor (int i = 0; i < 20; i++) {\n"
    "\t\tb[--k] = '0' + u % 10;\n"
    "\t\tu /= 10;\n"
    "\t\tif (!u) break;\n"
    "\t}\n"
    "\tif (v < 0) b[--k] = '-';\n"
    "\tbpf_probe_read_kernel_str(r, STRSIZE, b + k);\n"
    "\treturn r;\n"
    "}\n";

static const char tok_functions[] =
    /*
     * strtok(): the string being cut and where it is (per CPU, a map: it
     * outlives the call), the delimiters as a 256-bit set, and a scan that
     * skips delimiters, then finds the token's end.
     */
    "struct tokst { __u8 s[(STRSIZE + 7) & ~7]; __u64 bits[4]; long pos, cur, start, end, phase, "
    "valid, stamp; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct tokst); } toks SEC(\".maps\");\n"
    "struct tokc { const __u8 *d; struct tokst *st; };\n"
    "static __attribute__((noinline)) long tokset_cb(__u32 i, void *arg) {\n"
    "\tstruct tokc *p = arg;\n"
    "\tif (i >= STRSIZE) return 1;\n"
    "\t__u8 c = p->d[i];\n"
    "\tif (!c) return 1;\n"
    "\tp->st->bits[(c >> 6) & 3] |= 1ULL << (c & 63);\n"
    "\treturn 0;\n"
    "}\n"
    "static __attribute__((noinline)) long tokscan_cb(__u32 i, void *arg) {\n"
    "\tstruct tokc *p = arg;\n"
    "\tstruct tokst *st = p->st;\n"
    "\t__u64 at = (__u64)st->cur;\n"
    "\tBOUNDED(at);\n"
    "\tif (at >= STRSIZE) { st->end = STRSIZE - 1; if (!st->phase) st->start = -1; return 1; }\n"
    "\t__u8 c = st->s[at];\n"
    "\tint delim = (st->bits[(c >> 6) & 3] >> (c & 63)) & 1;\n"
    "\tif (!st->phase) {\n"
    "\t\tif (!c) { st->start = -1; st->end = at; return 1; }\n"
    "\t\tif (!delim) { st->start = at; st->phase = 1; }\n"
    "\t} else if (!c || delim) {\n"
    "\t\tst->end = at;\n"
    "\t\treturn 1;\n"
    "\t}\n"
    "\tst->cur++;\n"
    "\treturn 0;\n"
    "}\n"
    /* the next token into t, or null; from s when fresh (s copied into the state first) */
    "INLINE __u8 *dstrtok(__u8 *t, const __u8 *d, long stamp) {\n"
    "\t__u32 z = 0; struct tokst *st = bpf_map_lookup_elem(&toks, &z);\n"
    "\tif (!st) return 0;\n"
    "\tst->bits[0] = st->bits[1] = st->bits[2] = st->bits[3] = 0;\n"
    "\tstruct tokc p = {d, st};\n"
    "\tbpf_loop(STRSIZE, tokset_cb, &p, 0);\n"
    "\tst->bits[0] &= ~1ULL;\n"
    "\tst->cur = st->pos; st->phase = 0; st->start = -1; st->end = st->pos;\n"
    "\tbpf_loop(STRSIZE, tokscan_cb, &p, 0);\n"
    "\tst->pos = st->end;\n"
    "\tlong b = st->start, e = st->end;\n"
    "\tst->stamp = stamp;\n"
    "\tif (b < 0 || b >= STRSIZE || e < b) return 0;\n"
    "\tbpf_probe_read_kernel_str(t, STRSIZE, st->s + b);\n"
    "\tput(t, (__u32)(e - b), 0);\n"
    "\treturn t;\n"
    "}\n"
    "INLINE __u8 *tokstate(void) {\n"
    "\t__u32 z = 0; struct tokst *st = bpf_map_lookup_elem(&toks, &z);\n"
    "\tif (!st) return 0;\n"
    "\tst->pos = 0;\n"
    "\tst->valid = 1;\n"
    "\treturn st->s;\n"
    "}\n"
    /*
     * DTrace's strtok(NULL, d) faults with no string given yet, or in another
     * clause once the string is used up (in the clause that used it up: NULL)
     */
    "INLINE int tokvalid(long stamp) {\n"
    "\t__u32 z = 0; struct tokst *st = bpf_map_lookup_elem(&toks, &z);\n"
    "\tif (!st || !st->valid) return 0;\n"
    "\t__u64 p = (__u64)st->pos;\n"
    "\tBOUNDED(p);\n"
    "\treturn st->stamp == stamp || (p < STRSIZE && st->s[p]);\n"
    "}\n";

void cg_strfn2_functions(struct dt_buf *o)
{
	dt_buf_add(o, functions, sizeof(functions) - 1);
	dt_buf_add(o, tok_functions, sizeof(tok_functions) - 1);
}

static int which(const char *f)
{
	static const char *const names[] = {"strstr",  "index",	  "rindex", "substr", "toupper",
					    "tolower", "lltostr", "copyin", "strtok", "copyinstr",
					    "strchr",  "strrchr", NULL};
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(f, names[i]))
			return i;
	return -1;
}

enum {
	F_STRSTR,
	F_INDEX,
	F_RINDEX,
	F_SUBSTR,
	F_TOUPPER,
	F_TOLOWER,
	F_LLTOSTR,
	F_COPYIN,
	F_STRTOK,
	F_COPYINSTR,
	F_STRCHR,
	F_STRRCHR
};

/* A string stored at dst; DTrace's NULL (a search's null result, a variable's marker) faults. */
static void store_nonnull(struct cg *g, const struct cv *v, const char *dst, size_t site,
			  struct dt_buf *o, const char *ind)
{
	struct cv p = *v;
	char in[64];

	if (v->skind != SV_MEM || v->marked) {
		cg_store_str_fault(g, v, dst, "0", o, ind);
		return;
	}
	snprintf(in, sizeof(in), "%s\t", ind);
	dt_buf_printf(o, "%s{\n%s\tconst __u8 *np_ = (const __u8 *)(%s);\n", ind, ind, v->text);
	dt_buf_printf(o, "%s\tif (!np_)\n%s\t\tFAULT(%zu, 1, 0);\n", ind, ind, site);
	p.text = "np_";
	p.sub = NULL;
	cg_store_str(g, &p, dst, false, o, in);
	dt_buf_printf(o, "%s}\n", ind);
}

bool cg_strfn2(struct cg *g, const struct dt_node *n, struct cv *v, unsigned j)
{
	int f = which(n->name);
	bool chr = f == F_STRCHR || f == F_STRRCHR;
	size_t lo = f == F_STRSTR || f == F_INDEX || f == F_RINDEX || f == F_SUBSTR ||
			    f == F_COPYIN || f == F_STRTOK || chr
			? 2
			: 1;
	size_t hi = f == F_STRSTR || f == F_COPYIN || f == F_STRTOK || f == F_COPYINSTR || chr ? 2
		    : lo == 2								       ? 3
											       : 1;
	const struct dt_node *a0 = n->nargs ? n->args[0] : NULL;
	bool tok_next = f == F_STRTOK && a0 &&
			((a0->kind == N_IDENT && !strcmp(a0->name, "NULL")) ||
			 (a0->kind == N_INT && a0->ival == 0));
	bool del_null = f == F_STRTOK && n->nargs == 2 && cg_is_null(n->args[1]);
	bool two_str =
	    f == F_STRSTR || f == F_INDEX || f == F_RINDEX || (f == F_STRTOK && !del_null);
	struct cv a = {0}, b = {0}, c = {0};
	struct dt_buf o = {0};

	if (n->nargs < lo || n->nargs > hi) {
		cg_fail(g, n, "this function is given a wrong number of arguments");
		return true;
	}
	/* DTrace's copyin() allocates its bytes as alloca() does */
	if (f == F_COPYIN && cg_dmem_refuse_size(g, n, n->args[1]))
		return true;
	if (f == F_STRTOK) {
		if (n->nargs == 2 && !tok_next)
			cg_strval(g, a0, &a);
		if (!g->failed && n->nargs == 2 && !tok_next && a.type != TY_STR)
			cg_fail(g, n, "a string function's argument is not a string");
	} else if (f == F_LLTOSTR || f == F_COPYIN || f == F_COPYINSTR) {
		cg_int(g, n->args[0], &a);
	} else {
		cg_strval(g, n->args[0], &a);
		if (!g->failed && a.type != TY_STR)
			cg_fail(g, n, "a string function's argument is not a string");
	}
	if (!g->failed && n->nargs > 1 && !del_null) {
		if (two_str) {
			cg_strval(g, n->args[1], &b);
			if (!g->failed && b.type != TY_STR)
				cg_fail(g, n, "a string function's argument is not a string");
		} else {
			cg_int(g, n->args[1], &b);
		}
	}
	if (!g->failed && n->nargs > 2)
		cg_int(g, n->args[2], &c);
	if (g->failed)
		goto out;
	dt_buf_printf(&o, "({ __u8 *t = strfn_slot(%u, 0), *r = strfn_slot(%u, 1); %s res = %s;\n",
		      j, j, f == F_INDEX || f == F_RINDEX ? "__s64" : "__u8 *",
		      f == F_INDEX || f == F_RINDEX ? "-1" : "0");
	dt_buf_printf(&o, "\t\tif (t && r) {\n");
	if (f == F_STRTOK) {
		/* strtok(s, d): s into the state first; strtok(NULL, d): where it was */
		/* DTrace's: a NULL string or delimiters, or nothing to continue, fault */
		size_t site = g->scanning ? 0 : cg_fault_site(g);

		if (!tok_next) {
			dt_buf_printf(&o, "\t\t\t__u8 *ts = tokstate();\n\t\t\tif (ts) {\n");
			store_nonnull(g, &a, "ts", site, &o, "\t\t\t\t");
			dt_buf_printf(&o, "\t\t\t}\n");
		} else {
			dt_buf_printf(&o, "\t\t\tif (!tokvalid(%zu))\n\t\t\t\tFAULT(%zu, 1, 0);\n",
				      g->clause, site);
		}
		if (del_null)
			dt_buf_printf(&o, "\t\t\tFAULT(%zu, 1, 0);\n", site);
		else
			store_nonnull(g, &b, "r", site, &o, "\t\t\t");
		dt_buf_printf(&o, "\t\t\tres = dstrtok(t, r, %zu);\n", g->clause);
	} else if (f != F_LLTOSTR && f != F_COPYIN && f != F_COPYINSTR) {
		cg_store_str(g, &a, "t", false, &o, "\t\t\t");
	}
	if (two_str && f != F_STRTOK) {
		cg_store_str(g, &b, "r", false, &o, "\t\t\t");
		dt_buf_printf(&o, "\t\t\tlong la = dlen(t), lb = dlen(r);\n");
	}
	switch (f) {
	case F_STRSTR:
		dt_buf_printf(&o, "\t\t\tlong at = dfind(t, r, la, lb, 0, 1);\n"
				  "\t\t\tif (at >= 0 && at < STRSIZE) res = t + at;\n");
		break;
	case F_INDEX:
		dt_buf_printf(&o, "\t\t\tlong from = %s;\n", n->nargs > 2 ? c.text : "0");
		/* an empty string is found where the search starts, within the string */
		dt_buf_printf(&o, "\t\t\tif (from < 0) from = 0;\n"
				  "\t\t\tif (!lb) res = from > la ? la : from;\n"
				  "\t\t\telse if (from >= la) res = -1;\n"
				  "\t\t\telse res = dfind(t, r, la, lb, from, 1);\n");
		break;
	case F_RINDEX:
		dt_buf_printf(&o, "\t\t\tlong from = %s;\n", n->nargs > 2 ? c.text : "la");
		dt_buf_printf(&o,
			      "\t\t\tif (from > la - lb) from = la - lb;\n"
			      "\t\t\tif (!lb) res = from < 0 ? 0 : from;\n"
			      "\t\t\telse res = from < 0 ? -1 : dfind(t, r, la, lb, from, -1);\n");
		break;
	case F_SUBSTR:
		dt_buf_printf(&o, "\t\t\tres = dsubstr(t, %s, %s, %d);\n", b.text,
			      n->nargs > 2 ? c.text : "0", n->nargs > 2);
		break;
	case F_TOUPPER:
	case F_TOLOWER:
		dt_buf_printf(&o,
			      "\t\t\tstruct scase p = {t, %d};\n"
			      "\t\t\tbpf_loop(STRSIZE, scase_cb, &p, 0);\n\t\t\tres = t;\n",
			      f == F_TOUPPER);
		break;
	case F_COPYIN:
		/* the bytes, NUL-terminated (for stringof), cut at STRSIZE - 1 */
		dt_buf_printf(&o,
			      "\t\t\t__u64 n = (__u64)(%s);\n"
			      "\t\t\tif (n > STRSIZE - 1) n = STRSIZE - 1;\n"
			      "\t\t\tBOUNDED(n);\n\t\t\tif (n < STRSIZE) {\n"
			      "\t\t\t\tif (n && bpf_probe_read_user(t, n, (void *)(%s)))\n"
			      "\t\t\t\t\tFAULT(%zu, 1, (%s));\n"
			      "\t\t\t\tput(t, n, 0);\n\t\t\t}\n\t\t\tres = t;\n",
			      b.text, a.text, cg_fault_site(g), a.text);
		break;
	case F_COPYINSTR:
		/* copyinstr(addr, maxlength): at most maxlength bytes of the string */
		dt_buf_printf(
		    &o,
		    "\t\t\tif (bpf_probe_read_user_str(t, STRSIZE, (void *)(%s)) < 0)\n"
		    "\t\t\t\tFAULT(%zu, 1, (%s));\n"
		    "\t\t\t__s64 n = (__s64)(%s);\n"
		    "\t\t\tput(t, n < 0 ? 0 : n > STRSIZE - 1 ? STRSIZE - 1 : (__u32)n, 0);\n"
		    "\t\t\tres = t;\n",
		    a.text, cg_fault_site(g), a.text, b.text);
		break;
	case F_STRCHR:
	case F_STRRCHR:
		/* the character as a one-byte string; '\0' is found at the end, as DTrace's */
		dt_buf_printf(&o,
			      "\t\t\tr[0] = (__u8)(%s); r[1] = 0;\n"
			      "\t\t\tlong la = dlen(t), at = !r[0] ? la : "
			      "dfind(t, r, la, 1, %s, %d);\n"
			      "\t\t\t__u64 ua = (__u64)at;\n\t\t\tBOUNDED(ua);\n"
			      "\t\t\tif (ua < STRSIZE) res = t + ua;\n",
			      b.text, f == F_STRCHR ? "0" : "la - 1", f == F_STRCHR ? 1 : -1);
		break;
	case F_STRTOK: /* written above */
		break;
	case F_LLTOSTR:
		dt_buf_printf(&o, "\t\t\tres = dlltostr(r, %s);\n", a.text);
		break;
	}
	dt_buf_printf(&o, "\t\t}\n\t\tres; })");
	v->text = o.s;
	if (f == F_INDEX || f == F_RINDEX) {
		v->type = TY_INT;
		v->size = 4;
		v->is_unsigned = false;
	} else {
		v->type = TY_STR;
		v->skind = SV_MEM;
	}
out:
	cv_free(&a);
	cv_free(&b);
	cv_free(&c);
	return true;
}

bool cg_is_strfn2(const char *f)
{
	return which(f) >= 0;
}
