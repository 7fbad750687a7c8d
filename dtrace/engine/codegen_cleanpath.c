/* SPDX-License-Identifier: MIT */
/*
 * cleanpath() as BPF: a path with its redundant parts removed, as
 * DTrace's: repeated '/' are one, a "." element goes, a ".." element
 * takes the element before it away (at the root it stays the root; a
 * relative path keeps the ".." it cannot resolve), a trailing '/' goes,
 * and a path that comes to nothing is "." ("" stays ""). The cleaning is
 * one bpf_loop over steps, its state (where it reads, where it writes,
 * what it is doing: at an element's start, copying an element, backing up
 * over the element a ".." removes) in a per-CPU map: the callback is
 * verified once for any step. The string function's slot (codegen_strfn.c)
 * holds the argument in its first area and the result in its second.
 */
#include "cg.h"

static const char functions[] =
    "struct cpst { long r, w, dotdot, rooted, mode, n; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct cpst); } cpsts SEC(\".maps\");\n"
    "struct cpctx { const __u8 *p; __u8 *o; struct cpst *s; };\n"
    "INLINE __u8 cpat(const __u8 *p, long i) {\n"
    "\t__u64 x = (__u64)i;\n"
    "\tBOUNDED(x);\n"
    "\treturn x < STRSIZE ? p[x] : 0;\n"
    "}\n"
    "INLINE void cpput(__u8 *o, struct cpst *s, __u8 c) {\n"
    "\t__u64 x = (__u64)s->w;\n"
    "\tBOUNDED(x);\n"
    "\tif (x < STRSIZE - 1) { o[x] = c; s->w = x + 1; }\n"
    "}\n"
    "static __attribute__((noinline)) long cp_cb(__u32 i, void *arg) {\n"
    "\tstruct cpctx *p = arg;\n"
    "\tstruct cpst *s = p->s;\n"
    "\t__u8 c = cpat(p->p, s->r), c1, c2;\n"
    "\tif (s->mode == 1) {\n" /* copying an element */
    "\t\tif (c && c != '/') { cpput(p->o, s, c); s->r++; } else s->mode = 0;\n"
    "\t\treturn 0;\n"
    "\t}\n"
    "\tif (s->mode == 2) {\n" /* backing up over the element ".." removes */
    "\t\tif (s->w > s->dotdot && cpat(p->o, s->w) != '/') s->w--; else s->mode = 0;\n"
    "\t\treturn 0;\n"
    "\t}\n"
    "\tif (!c || s->r >= s->n) return 1;\n"
    "\tc1 = cpat(p->p, s->r + 1);\n"
    "\tc2 = cpat(p->p, s->r + 2);\n"
    "\tif (c == '/') { s->r++; return 0; }\n"
    "\tif (c == '.' && (!c1 || c1 == '/')) { s->r++; return 0; }\n"
    "\tif (c == '.' && c1 == '.' && (!c2 || c2 == '/')) {\n"
    "\t\ts->r += 2;\n"
    "\t\tif (s->w > s->dotdot) { s->w--; s->mode = 2; }\n"
    "\t\telse if (!s->rooted) {\n"
    "\t\t\tif (s->w > 0) cpput(p->o, s, '/');\n"
    "\t\t\tcpput(p->o, s, '.'); cpput(p->o, s, '.');\n"
    "\t\t\ts->dotdot = s->w;\n"
    "\t\t}\n"
    "\t\treturn 0;\n"
    "\t}\n"
    "\tif (s->w != s->rooted) cpput(p->o, s, '/');\n"
    "\ts->mode = 1;\n"
    "\treturn 0;\n"
    "}\n"
    "INLINE void dcleanpath(const __u8 *t, __u8 *r) {\n"
    "\t__u32 z = 0; struct cpst *s = bpf_map_lookup_elem(&cpsts, &z);\n"
    "\tif (!s) return;\n"
    "\ts->r = s->w = s->dotdot = s->mode = 0;\n"
    "\ts->n = dlen(t);\n"
    "\ts->rooted = t[0] == '/';\n"
    "\tif (s->rooted) { r[0] = '/'; s->w = s->dotdot = 1; }\n"
    "\tstruct cpctx p = {t, r, s};\n"
    "\tbpf_loop(4 * STRSIZE, cp_cb, &p, 0);\n"
    "\tif (!s->w && s->n) { r[0] = '.'; s->w = 1; }\n"
    "\t__u64 x = (__u64)s->w;\n"
    "\tBOUNDED(x);\n"
    "\tif (x < STRSIZE) r[x] = 0;\n"
    "}\n";

void cg_cleanpath_functions(struct dt_buf *o)
{
	dt_buf_add(o, functions, sizeof(functions) - 1);
}
