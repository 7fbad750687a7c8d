/* SPDX-License-Identifier: MIT */
/*
 * Run-time errors (README.md, "Run-time errors"): an expression that can
 * fault (a division or modulo by zero) tests its operand; on a fault the
 * clause stops where it is (a jump to its end, FAULT_LABEL, which codegen.c
 * defines around each clause's body): its record is discarded and a fault
 * record written instead, {EG_FAULT_REC, CPU, fault site, fault, value}.
 * The reader prints DTrace's message for it and fires the ERROR probe: a
 * uprobe on a function of dtrace (eg_error_trigger), its arguments DTrace's.
 * A fault site is one faulting expression of one probe's clause; its number
 * (from 1) is what the message calls the "BPF pc".
 */
#include <string.h>

#include "cg.h"

static const char fault_functions[] =
    /*
     * The run's state, as DTrace's: once a clause calls exit() it is
     * draining, and no probe but END runs clauses (the records of firings
     * after it would be output DTrace never prints).
     */
    "struct { __uint(type, 2); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, __u32); } run_state SEC(\".maps\");\n"
    "INLINE int draining(void) {\n"
    "\t__u32 z = 0, *s = bpf_map_lookup_elem(&run_state, &z);\n"
    "\treturn s && *s;\n"
    "}\n"
    "INLINE void set_draining(void) {\n"
    "\t__u32 z = 0, *s = bpf_map_lookup_elem(&run_state, &z);\n"
    "\tif (s) *s = 1;\n"
    "}\n"
    "static void (*bpf_ringbuf_discard)(void *d, __u64 f) = (void *)133;\n"
    "INLINE void fault_rec(__u64 site, __u64 kind, __u64 val) {\n"
    "\t__u64 *r = bpf_ringbuf_reserve(&events, 32, 0);\n"
    "\tif (!r) { drop(); return; }\n"
    "\t*(__u32 *)r = 0xffffffffu;\n"
    "\t*((__u32 *)r + 1) = bpf_get_smp_processor_id();\n"
    "\tr[1] = site; r[2] = kind; r[3] = val;\n"
    "\tbpf_ringbuf_submit(r, 0);\n"
    "}\n"
    /* the clause's fault: its site, DTRACEFLT_*, the faulting value */
    "#define FAULT(s, k, v) do { flt_site = (s); flt_kind = (k); flt_val = (__u64)(v); "
    "goto FAULT_LABEL; } while (0)\n"
    /* ERROR's arguments: eg_error_trigger()'s, by the calling convention */
    "INLINE __s64 error_arg(struct pt_regs *r, int k) {\n"
#if defined(__x86_64__)
    "\treturn (__s64)(k == 0 ? r->di : k == 1 ? r->si : k == 2 ? r->dx : k == 3 ? r->cx : "
    "k == 4 ? r->r8 : k == 5 ? r->r9 : 0);\n"
#else
    "\treturn k >= 0 && k < 6 ? (__s64)r->regs[k & 7] : 0;\n"
#endif
    "}\n";

/* DTrace's fault codes (sys/dtrace.h's DTRACEFLT_*), D constants. */
static const struct {
	const char *name;
	int value;
} faults[] = {
    {"DTRACEFLT_UNKNOWN", 0},	 {"DTRACEFLT_BADADDR", 1},  {"DTRACEFLT_BADALIGN", 2},
    {"DTRACEFLT_ILLOP", 3},	 {"DTRACEFLT_DIVZERO", 4},  {"DTRACEFLT_NOSCRATCH", 5},
    {"DTRACEFLT_KPRIV", 6},	 {"DTRACEFLT_UPRIV", 7},    {"DTRACEFLT_TUPOFLOW", 8},
    {"DTRACEFLT_BADSTACK", 9},	 {"DTRACEFLT_BADSIZE", 10}, {"DTRACEFLT_BADINDEX", 11},
    {"DTRACEFLT_LIBRARY", 1000},
};

/*
 * chill(ns), DTrace's: a busy wait of ns nanoseconds, each CPU's chills
 * within a second (dtrace_chill_interval) at most 500 ms in all
 * (dtrace_chill_max); more is DTrace's illegal operation. BPF has no delay
 * helper, so it spins: bpf_loop()s of clock reads until the time is past
 * (1 << 23 steps a call, 16 calls: seconds at tens of ns a step).
 */
static const char chill_functions[] =
    "struct chill { __u64 start, spent; };\n"
    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
    "__type(value, struct chill); } chills SEC(\".maps\");\n"
    "static long (*chill_loop)(__u32 n, void *fn, void *ctx, __u64 f) = (void *)181;\n"
    "static __attribute__((noinline)) long chill_step(__u32 i, void *end) {\n"
    "\treturn bpf_ktime_get_ns() >= *(__u64 *)end;\n"
    "}\n"
    "INLINE int chill(__u64 ns) {\n"
    "\t__u32 z = 0; struct chill *c = bpf_map_lookup_elem(&chills, &z);\n"
    "\t__u64 now = bpf_ktime_get_ns(), end;\n"
    "\tif (!c) return 0;\n"
    "\tif (now - c->start > 1000000000ULL) { c->start = now; c->spent = 0; }\n"
    "\tif (ns > 500000000ULL || c->spent + ns > 500000000ULL) return -1;\n"
    "\tc->spent += ns;\n"
    "\tend = now + ns;\n"
    "\tfor (int k = 0; k < 16 && bpf_ktime_get_ns() < end; k++)\n"
    "\t\tchill_loop(1 << 23, chill_step, &end, 0);\n"
    "\treturn 0;\n"
    "}\n";

void cg_fault_functions(struct dt_buf *o)
{
	dt_buf_add(o, fault_functions, sizeof(fault_functions) - 1);
	dt_buf_add(o, chill_functions, sizeof(chill_functions) - 1);
}

/* chill(ns) as a statement: destructive (-w); past DTrace's limits, its illegal operation. */
void cg_chill(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	struct cv v = {0};
	size_t site;

	if (!cg_destructive(g, n) || n->nargs != 1)
		return;
	cg_int(g, n->args[0], &v);
	if (!g->failed) {
		site = g->scanning ? 0 : cg_fault_site(g);
		dt_buf_printf(o, "%sif (chill((__u64)(%s)) < 0)\n%s\tFAULT(%zu, 3, 0);\n", ind,
			      v.text, ind, site);
	}
	cv_free(&v);
}

bool cg_fault_const(const char *name, long long *value)
{
	size_t i;

	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (!strcmp(name, faults[i].name)) {
			*value = faults[i].value;
			return true;
		}
	return false;
}

const char *eg_fault_name(uint64_t kind)
{
	static const char *const names[] = {"unknown fault",
					    "invalid address",
					    "invalid alignment",
					    "illegal operation",
					    "divide-by-zero",
					    "out of scratch space",
					    "invalid kernel access",
					    "invalid user access",
					    "out of tuple stack space",
					    "bad stack",
					    "invalid size",
					    "index out of bounds"};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown fault";
}

/*
 * Buffers smaller than what the program writes (-x bufsize under a record,
 * aggsize under an aggregation's entry, dynvarsize under a thread variable's
 * or an array element's): DTrace refuses to enable, and so does this. A
 * program that enables ERROR needs room for DTrace for Linux's ERROR record
 * (48 bytes: its EPID and the fault's arguments) in a perf record (a 12-byte
 * header): -b59 is refused, -b64 runs (Oracle's options/err.b-too-low,
 * tst.b), while a program without ERROR runs in 40 (rates/tst.switchrate).
 */
int cg_fault_sizes(struct cg *g, const struct dt_probes *ps)
{
	const struct dt_consumer_opts *o = g->prog->o;
	unsigned rec = 0, agg = 0, dyn = 0, tup = 0, dv = 0;
	size_t i;

	for (i = 0; i < g->out->nrecs; i++) /* as DTrace counts them (codegen_buf.c) */
		if (g->out->recs[i].bsize > rec)
			rec = g->out->recs[i].bsize;
	for (i = 0; i < ps->n; i++)
		if (ps->v[i].kind == P_ERROR && rec < 48 + 12)
			rec = 48 + 12;
	for (i = 0; i < g->t->naggs; i++)
		if (g->out->aggs[i].key_size + g->out->aggs[i].val_size > agg)
			agg = g->out->aggs[i].key_size + g->out->aggs[i].val_size;
	/*
	 * DTrace's dynamic variables: dynvarsize over (the largest tuple + the
	 * largest value) elements, at least one (an int thread variable is 4
	 * bytes, a string strsize + 1, an array's tuple its keys and its ID)
	 */
	for (i = 0; i < g->narrays; i++) {
		unsigned v = g->arrays[i].is_str ? (unsigned)g->strsize + 1 : g->arrays[i].size;

		if (g->arrays[i].key_size + 8 > tup) /* a tuple holds its variable's ID too */
			tup = g->arrays[i].key_size + 8;
		if (v > dv)
			dv = v;
	}
	for (i = 0; i < g->nvars; i++) {
		unsigned v = g->vars[i].is_str ? (unsigned)g->strsize + 1 : g->vars[i].size;

		if (g->vars[i].kind == 's' && v > dv)
			dv = v;
	}
	dyn = dv ? tup + dv : 0;
	if ((o->bufsize > 0 && o->bufsize < (long)rec) ||
	    (o->aggsize > 0 && o->aggsize < (long)agg) ||
	    (o->dynvarsize > 0 && o->dynvarsize < (long)dyn)) {
		usdt_error(g->diag, "could not enable tracing: Enabling exceeds size of buffer");
		return -1;
	}
	return 0;
}

/* A new fault site of the clause being written: its number, from 1. */
static size_t new_site(struct cg *g)
{
	const struct dt_probe *p = g->probe;
	struct eg_fault_site s = {p->id, g->dclause, {0}};

	snprintf(s.desc, sizeof(s.desc), "%s:%s:%s:%s", p->prov ? p->prov : "",
		 p->mod ? p->mod : "", p->func ? p->func : "", p->name ? p->name : "");
	DT_PUSH(g->out->faults, g->out->nfaults, s);
	return g->out->nfaults;
}

size_t cg_fault_site(struct cg *g)
{
	return g->scanning ? 0 : new_site(g);
}

/*
 * A string read from an address (D's memory, the process's, the kernel's;
 * the kernel's alone where it is known to be: no user read tried first);
 * an address not readable faults (DTRACEFLT_BADADDR).
 */
void cg_fault_read_str(struct cg *g, const char *dst, const char *addr, bool kernel,
		       struct dt_buf *o, const char *ind)
{
	size_t site = g->scanning ? 0 : cg_fault_site(g);

	dt_buf_printf(o,
		      "%s{\n%s\t__u64 fa = (__u64)(%s);\n"
		      "%s\tif (%s(%s, %sfa) < 0)\n"
		      "%s\t\tFAULT(%zu, 1, fa);\n%s}\n",
		      ind, ind, addr, ind, kernel ? "bpf_probe_read_kernel_str" : "DREAD_STR", dst,
		      kernel ? "STRSIZE, (void *)" : "", ind, site, ind);
}

void cg_divide(struct cg *g, struct cv *v, const char *op, bool un, const char *a, const char *b)
{
	struct dt_buf o = {0};
	size_t site;

	site = g->scanning ? 0 : cg_fault_site(g);
	if (un)
		dt_buf_printf(
		    &o,
		    "({ __u64 dz_a = (__u64)(%s), dz_b = (__u64)(%s); if (!dz_b) FAULT(%zu, "
		    "4, 0); (__s64)(dz_a %s dz_b); })",
		    a, b, site, op);
	else
		dt_buf_printf(&o,
			      "({ __s64 dz_a = (%s), dz_b = (%s); if (!dz_b) FAULT(%zu, 4, 0); "
			      "s%s(dz_a, dz_b); })",
			      a, b, site, op[0] == '/' ? "div" : "mod");
	dt_free(v->text);
	v->text = o.s;
}
