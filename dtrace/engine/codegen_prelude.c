/* SPDX-License-Identifier: MIT */
/*
 * The head of every generated BPF C file: no system header is needed. The
 * kernel's view of a uprobe's registers (struct pt_regs, per architecture),
 * the helpers by number (include/uapi/linux/bpf.h's fixed numbering), the
 * BTF-style map definitions libbpf reads, and the maps every program has:
 * the ring buffer of records, per-CPU drop counters, a per-CPU scratch
 * area for aggregation keys (never the 512-byte stack) and a zeroed area
 * to clear it from.
 */
#include "engine.h"

static const char prelude[] =
    "typedef unsigned char __u8;\n"
    "typedef unsigned int __u32;\n"
    "typedef long long __s64;\n"
    "typedef unsigned long long __u64;\n"
#if defined(__x86_64__)
    "struct pt_regs {\n"
    "\tunsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di;\n"
    "\tunsigned long orig_ax, ip, cs, flags, sp, ss;\n"
    "};\n"
#elif defined(__aarch64__)
    "struct pt_regs {\n"
    "\tunsigned long regs[31], sp, pc, pstate;\n"
    "};\n"
#else
#error "the BPF engine knows the registers of x86-64 and arm64"
#endif
    "#define SEC(n) __attribute__((section(n), used))\n"
    "#define INLINE static inline __attribute__((always_inline))\n"
    /*
     * An index clang knows to be in range still needs its test for the
     * verifier: this hides the range from clang, so the test stays.
     */
    "#define BOUNDED(x) __asm__ volatile(\"\" : \"+r\"(x))\n"
    "#define __uint(n, v) int (*n)[v]\n"
    "#define __type(n, v) typeof(v) *n\n"
    "static void *(*bpf_map_lookup_elem)(void *m, const void *k) = (void *)1;\n"
    "static long (*bpf_map_delete_elem)(void *m, const void *k) = (void *)3;\n"
    "static long (*bpf_map_update_elem)(void *m, const void *k, const void *v, __u64 f) = "
    "(void *)2;\n"
    "static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;\n"
    "static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;\n"
    "static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;\n"
    "static __u64 (*bpf_get_current_uid_gid)(void) = (void *)15;\n"
    "static long (*bpf_get_current_comm)(void *b, __u32 n) = (void *)16;\n"
    "static __u64 (*bpf_get_current_task)(void) = (void *)35;\n"
    "static __u32 (*bpf_get_prandom_u32)(void) = (void *)7;\n"
    "static long (*bpf_get_stack)(void *c, void *b, __u32 n, __u64 f) = (void *)67;\n"
    "static long (*bpf_probe_read_user)(void *d, __u32 n, const void *s) = (void *)112;\n"
    "static long (*bpf_probe_read_kernel)(void *d, __u32 n, const void *s) = (void *)113;\n"
    "static long (*bpf_probe_read_user_str)(void *d, __u32 n, const void *s) = (void *)114;\n"
    "static long (*bpf_probe_read_kernel_str)(void *d, __u32 n, const void *s) = (void *)115;\n"
    "static void *(*bpf_ringbuf_reserve)(void *rb, __u64 n, __u64 f) = (void *)131;\n"
    "static void (*bpf_ringbuf_submit)(void *d, __u64 f) = (void *)132;\n"
    "char LICENSE[] SEC(\"license\") = \"GPL\";\n"
    "#define STRSIZE %ld\n"
    "#define SCRATCH %u\n"
    "struct { __uint(type, 27); __uint(max_entries, RINGBUF_SIZE); } events SEC(\".maps\");\n"
    /* drops per CPU: 0 records, 1 dynamic variables (arrays, self->), 2 aggregations */
    "struct { __uint(type, 6); __uint(max_entries, 3); __type(key, __u32); "
    "__type(value, __u64); } drops SEC(\".maps\");\n"
    "struct scratch { __u8 b[SCRATCH]; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct scratch); } scratch SEC(\".maps\");\n"
    "struct { __uint(type, 2); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct scratch); } zeroes SEC(\".maps\");\n"
    "";

/* The functions every program may call (no format: written as they are). */
static const char functions[] =
    /* A record could not be written: counted per CPU, reported by dtrace. */
    "INLINE void drop_n(__u32 z) {\n"
    "\t__u64 *d = bpf_map_lookup_elem(&drops, &z);\n"
    "\tif (d) (*d)++;\n"
    "}\n"
    "INLINE void drop(void) { drop_n(0); }\n"
    /* an element a map had no room for (full, or none to take in NMI) */
    "#define DYN_DROP() drop_n(1)\n"
    "#define AGG_DROP() drop_n(2)\n"
    "INLINE __s64 sx(__u64 v, int size) {\n"
    "\treturn size == 1 ? (__s64)(signed char)v : size == 2 ? (__s64)(short)v\n"
    "\t     : size == 4 ? (__s64)(int)v : (__s64)v;\n"
    "}\n"
    "INLINE __s64 zx(__u64 v, int size) {\n"
    "\treturn size == 1 ? (__s64)(__u8)v : size == 2 ? (__s64)(unsigned short)v\n"
    "\t     : size == 4 ? (__s64)(__u32)v : (__s64)v;\n"
    "}\n"
    "INLINE __s64 umem(__u64 addr, int size, int sign) {\n"
    "\t__u64 v = 0; bpf_probe_read_user(&v, size & 15, (void *)addr);\n"
    "\treturn sign ? sx(v, size) : zx(v, size);\n"
    "}\n"
    /* profile-N's arg0 (the kernel's pc, 0 in user mode) and arg1 (the user's pc) */
    "INLINE __s64 profile_arg(struct pt_regs *r, int k) {\n"
#if defined(__x86_64__)
    "\tint user = (r->cs & 3) != 0; __s64 ip = (__s64)r->ip;\n"
#else
    "\tint user = (r->pstate & 0xf) == 0; __s64 ip = (__s64)r->pc;\n"
#endif
    "\treturn k == 0 ? (user ? 0 : ip) : k == 1 ? (user ? ip : 0) : 0;\n"
    "}\n"
    /*
     * BPF before v4 divides unsigned only; D divides signed, and x/0 is 0 here.
     * DTrace's signed % negates the magnitudes' remainder when the signs differ.
     */
    "INLINE __s64 sdiv(__s64 a, __s64 b) {\n"
    "\tif (!b) return 0;\n"
    "\t__u64 q = (__u64)(a < 0 ? -a : a) / (__u64)(b < 0 ? -b : b);\n"
    "\treturn (a < 0) != (b < 0) ? -(__s64)q : (__s64)q;\n"
    "}\n"
    "INLINE __s64 smod(__s64 a, __s64 b) {\n"
    "\tif (!b) return 0;\n"
    "\t__u64 r = (__u64)(a < 0 ? -a : a) % (__u64)(b < 0 ? -b : b);\n"
    "\treturn (a < 0) != (b < 0) ? -(__s64)r : (__s64)r;\n"
    "}\n"
    /* DTrace's quantize bucket: 64 is 0, 64+1+k holds [2^k, 2^(k+1)). */
    "INLINE __u32 qlog(__u64 v) {\n"
    "\t__u32 k = 0;\n"
    "\tif (v >> 32) { k += 32; v >>= 32; }\n"
    "\tif (v >> 16) { k += 16; v >>= 16; }\n"
    "\tif (v >> 8) { k += 8; v >>= 8; }\n"
    "\tif (v >> 4) { k += 4; v >>= 4; }\n"
    "\tif (v >> 2) { k += 2; v >>= 2; }\n"
    "\tif (v >> 1) { k += 1; }\n"
    "\treturn k;\n"
    "}\n"
    "INLINE __u32 qidx(__s64 v) {\n"
    "\tif (!v) return 64;\n"
    "\tif (v > 0) { __u32 k = qlog(v); return 65 + (k > 62 ? 62 : k); }\n"
    "\t__u32 k = v == (-9223372036854775807LL - 1) ? 63 : qlog(-v);\n"
    "\treturn 63 - (k > 62 ? 62 : k);\n"
    "}\n"
    /* stddev's sum of squares in 128 bits (b[0] low, b[1] high): x*x by 32-bit halves */
    "INLINE void sq128_add(__s64 *b, __s64 x) {\n"
    "\t__u64 u = x < 0 ? -(__u64)x : (__u64)x, h = u >> 32, l = u & 0xffffffffULL;\n"
    "\t__u64 m = h * l, lo = l * l, lo2 = lo + (m << 33);\n"
    "\t__u64 hi = h * h + (m >> 31) + (lo2 < lo);\n"
    "\t__u64 nlo = (__u64)b[0] + lo2;\n"
    "\tb[1] = (__s64)((__u64)b[1] + hi + (nlo < lo2));\n"
    "\tb[0] = (__s64)nlo;\n"
    "}\n"
    /* A string area (a key's, a record's) cleared: equal strings, equal bytes. */
    "INLINE void *scratch_zeroed(void) {\n"
    "\t__u32 z = 0; void *s = bpf_map_lookup_elem(&scratch, &z);\n"
    "\tvoid *zs = bpf_map_lookup_elem(&zeroes, &z);\n"
    "\tif (!s || !zs) return 0;\n"
    "\tbpf_probe_read_kernel(s, SCRATCH, zs);\n"
    "\treturn s;\n"
    "}\n"
    /* Two strings to compare, per CPU (not the stack). */
    "struct strtmp { __u8 s[2][(STRSIZE + 7) & ~7]; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct strtmp); } strtmps SEC(\".maps\");\n"
    "INLINE __u8 *strtmp(int i) {\n"
    "\t__u32 z = 0; struct strtmp *t = bpf_map_lookup_elem(&strtmps, &z);\n"
    "\treturn t ? t->s[i & 1] : 0;\n"
    "}\n"
    /*
     * strcmp() over at most STRSIZE bytes, by bpf_loop (kernel 5.17): its
     * callback is verified once, where a bounded loop's ~30 instructions a
     * byte are walked at every comparison (54 of them passed the verifier's
     * limit of 8192 jumps). The answer is the bytes' difference (a number
     * the verifier does not know, so the callback's states converge).
     */
    "static long (*bpf_loop_cmp)(__u32 n, void *fn, void *ctx, __u64 f) = (void *)181;\n"
    "struct scmp { const __u8 *a, *b; long r; };\n"
    "static __attribute__((noinline)) long scmp_cb(__u32 i, void *arg) {\n"
    "\tstruct scmp *c = arg;\n"
    "\tif (i >= STRSIZE) return 1;\n"
    "\t__u8 x = c->a[i], y = c->b[i];\n"
    "\tif (x != y) { c->r = (long)x - (long)y; return 1; }\n"
    "\treturn !x;\n"
    "}\n"
    "INLINE int dstrcmp(const __u8 *a, const __u8 *b) {\n"
    "\tstruct scmp c = {a, b, 0};\n"
    "\tbpf_loop_cmp(STRSIZE, scmp_cb, &c, 0);\n"
    "\treturn c.r < 0 ? -1 : c.r > 0;\n"
    "}\n"
    /* A variable's string is null (DTrace's NULL kept): its first byte 0, its last 1. */
    "INLINE int strnull(const __u8 *p) {\n"
    "\tint r = !p || (!p[0] && p[STRSIZE - 1] == 1);\n"
    /* a barrier: clang would merge the tests into arithmetic on the pointer */
    "\tasm volatile(\"\" : \"+r\"(r));\n"
    "\treturn r;\n"
    "}\n"
    "INLINE void *zero_value(void) {\n"
    "\t__u32 z = 0; return bpf_map_lookup_elem(&zeroes, &z);\n"
    "}\n";

void eg_prelude(struct dt_buf *o, long strsize, unsigned scratch_size)
{
	dt_buf_printf(o, prelude, strsize, scratch_size);
	dt_buf_add(o, functions, sizeof(functions) - 1);
}
