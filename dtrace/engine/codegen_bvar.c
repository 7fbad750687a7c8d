/* SPDX-License-Identifier: MIT */
/*
 * The built-in variables a BPF helper gives (README.md, "Built-in
 * variables"), as DTrace on Linux gives them: stackdepth and ustackdepth
 * the frames bpf_get_stack() writes (the kernel's: none at a uprobe,
 * whose registers are the user's; the user's), caller and ucaller the
 * second of them, curthread the task (bpf_get_current_task: a `struct
 * task_struct *`, its type the kernel's BTF's, kbtf.c), curcpu the
 * address of this CPU's element of a per-CPU map, DTrace's cpuinfo_t
 * (dtrace/consumer/dlib.c), filled when curcpu is read: cpu_id the CPU,
 * cpu_pset 0 (Linux has no processor sets), cpu_chip its physical package
 * (sysfs's topology, read when the program is made: a switch in the
 * program), cpu_lgrp its NUMA node (bpf_get_numa_node_id); chip, lgrp and
 * pset are those of this CPU, as DTrace's sched.d defines them. errno the
 * failed return of a syscall:: return probe and 0 elsewhere. ipl, which
 * Linux has no BPF helper for, is 0 where the probe fires in a thread's
 * context (a uprobe: BEGIN, END, ERROR, USDT; a syscall), where no
 * interrupt is being handled; at tick- and profile- (an interrupt) DTrace's
 * illegal operation at run time (its ERROR), as DTrace for Linux's. uregs[R_*] (cg_uregs) is a
 * register of the thread's user mode: the kernel's saved pt_regs of the task (bpf_task_pt_regs,
 * Linux 5.15; at a uprobe, its own registers), past them DTrace's x86-64 extras from the task's
 * thread_struct (ds, es, fsbase, gsbase, trap_nr); the index a constant, as DTrace requires.
 */
#include <stdio.h>
#include <string.h>

#include "cg.h"
#include "kbtf.h"

/* bpf_get_stack's most frames (the kernel's perf_event_max_stack default) */
#define BVAR_FRAMES 127

static void set(struct cv *v, unsigned size, bool is_unsigned, const char *text)
{
	v->type = TY_INT;
	v->size = size;
	v->is_unsigned = is_unsigned;
	v->text = dt_xstrdup(text);
}

bool cg_bvar(struct cg *g, const struct dt_node *n, struct cv *v)
{
	const char *s = n->name;
	const struct dt_probe *p = g->probe;
	char t[400];

	if (!strcmp(s, "stackdepth") || !strcmp(s, "ustackdepth")) {
		g->bvar_maps |= 1;
		snprintf(t, sizeof(t),
			 "({ __u32 z = 0; void *b = bpf_map_lookup_elem(&bvar_stack, &z); "
			 "long sn = b ? bpf_get_stack(ctx, b, %d, %s) : 0; "
			 "(__s64)(sn > 0 ? sn / 8 : 0); })",
			 BVAR_FRAMES * 8, s[0] == 'u' ? "256" : "0");
		set(v, 4, true, t);
	} else if (!strcmp(s, "caller") || !strcmp(s, "ucaller")) {
		snprintf(
		    t, sizeof(t),
		    "({ __u64 cb[2] = {0, 0}; bpf_get_stack(ctx, cb, 16, %s); (__s64)cb[1]; })",
		    s[0] == 'u' ? "256" : "0");
		set(v, 8, true, t);
	} else if (!strcmp(s, "curthread")) {
		set(v, 8, true, "(__s64)bpf_get_current_task()");
		v->kernel = true;
		if (dt_kbtf_decl('S', "struct task_struct")) /* DTrace's type, from BTF (kbtf.c) */
			v->ptr = dt_xstrdup("struct task_struct");
	} else if (!strcmp(s, "curcpu")) {
		g->bvar_maps |= 2;
		/* the address kept in the element and read back: a number to the verifier */
		set(v, 8, true,
		    "({ __u32 z = 0; struct bvar_ci *ci = bpf_map_lookup_elem(&bvar_cpuinfo, &z); "
		    "if (ci) { ci->self = (__u64)(unsigned long)ci; ci->id = "
		    "bpf_get_smp_processor_id(); ci->pset = 0; ci->chip = BVAR_CHIP(ci->id); "
		    "ci->lgrp = bpf_get_numa_node_id(); } "
		    "(__s64)(ci ? *(volatile __u64 *)&ci->self : 0); })");
		v->ptr = dt_xstrdup("struct cpuinfo");
	} else if (!strcmp(s, "chip")) {
		g->bvar_maps |= 2;
		set(v, 4, false, "(__s64)BVAR_CHIP(bpf_get_smp_processor_id())");
	} else if (!strcmp(s, "lgrp")) {
		g->bvar_maps |= 4;
		set(v, 4, false, "(__s64)bpf_get_numa_node_id()");
	} else if (!strcmp(s, "pset")) {
		set(v, 4, false, "0LL");
	} else if (!strcmp(s, "errno")) {
		bool ret = p && p->kind == P_TRACEPOINT && p->prov && !strcmp(p->prov, "syscall") &&
			   p->name && !strcmp(p->name, "return");

		if (ret) {
			cg_use_arg(g, n, 0);
			set(v, 4, false, "({ __s64 e = ARG(0); e < 0 && e >= -4095 ? -e : 0; })");
		} else {
			set(v, 4, false, "0LL");
		}
	} else if (!strcmp(s, "ipl")) {
		/* a uprobe's or a syscall's: a thread's context, no interrupt handled */
		bool thread =
		    p && (p->kind == P_BEGIN || p->kind == P_END || p->kind == P_ERROR ||
			  p->kind == P_USDT ||
			  (p->kind == P_TRACEPOINT && p->prov && !strcmp(p->prov, "syscall")));

		if (thread)
			snprintf(t, sizeof(t), "0LL");
		else
			snprintf(t, sizeof(t), "({ FAULT(%zu, 3, 0); 0LL; })", cg_fault_site(g));
		set(v, 4, true, t);
	} else {
		return false;
	}
	return true;
}

static void chips(struct dt_buf *o);

void cg_bvar_maps(const struct cg *g, struct dt_buf *o)
{
	if (g->bvar_maps & 1)
		dt_buf_printf(
		    o,
		    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
		    "__type(value, __u64[%d]); } bvar_stack SEC(\".maps\");\n",
		    BVAR_FRAMES);
	if (g->bvar_maps & 6)
		dt_buf_printf(o, "static long (*bpf_get_numa_node_id)(void) = (void *)42;\n");
	if (g->bvar_maps & 2) {
		dt_buf_printf(o, "struct bvar_ci { int id, pset, chip, lgrp; __u64 self; };\n"
				 "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, "
				 "__u32); __type(value, struct bvar_ci); } bvar_cpuinfo "
				 "SEC(\".maps\");\n");
		chips(o);
	}
}

/*
 * The physical package of each possible CPU, as sysfs says (0 where it
 * does not), a switch: BVAR_CHIP(cpu).
 */
static void chips(struct dt_buf *o)
{
	char path[96];
	int cpu, chip;

	dt_buf_printf(o, "static __attribute__((always_inline)) int bvar_chip(__u32 c)\n{\n"
			 "\tswitch (c) {\n");
	for (cpu = 0; cpu < 4096; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &chip) == 1 && chip)
			dt_buf_printf(o, "\tcase %d: return %d;\n", cpu, chip);
		fclose(f);
	}
	dt_buf_printf(o, "\tdefault: return 0;\n\t}\n}\n#define BVAR_CHIP(c) bvar_chip(c)\n");
}

bool cg_uregs(struct cg *g, const struct dt_node *n, struct cv *v)
{
#if defined(__aarch64__)
	static const unsigned nregs = 34, nptregs = 34;
#else
	static const unsigned nregs = 26, nptregs = 21;
	static const char *const extra[] = {"thread.ds", "thread.es", "thread.fsbase",
					    "thread.gsbase", "thread.trap_nr"};
	static const unsigned extra_size[] = {2, 2, 8, 8, 8};
#endif
	int64_t k;
	char t[400], msg[200];

	if (n->kind != N_INDEX || !n->name || strcmp(n->name, "uregs") || n->a)
		return false;
	if (n->nargs != 1 || !cg_const(g, n->args[0], &k)) {
		struct cv ix = {0};

		if (n->nargs == 1)
			cg_int(g, n->args[0], &ix); /* an undefined name: D_IDENT_UNDEF first */
		cv_free(&ix);
		if (g->failed)
			return true;
		cg_refuse(g, n, "D_PROTO_ARG",
			  "uregs[ ] argument #1 is incompatible with prototype:\n"
			  "\tprototype: integer constant\n\t argument: int");
		return true;
	}
	if (k < 0 || (uint64_t)k >= nregs) {
		snprintf(msg, sizeof(msg), "uregs[]: index out of bounds (%lld)", (long long)k);
		cg_refuse(g, n, "D_UNKNOWN", msg);
		return true;
	}
	if ((unsigned)k < nptregs) {
		/* bpf_task_pt_regs(bpf_get_current_task_btf()): helpers 175 and 158 */
		snprintf(
		    t, sizeof(t),
		    "({ __u64 ur_ = 0; void *rg_ = ((void *(*)(void *))175)(((void "
		    "*(*)(void))158)()); if (rg_) bpf_probe_read_kernel(&ur_, 8, (char *)rg_ + "
		    "%u); (__s64)ur_; })",
		    8 * (unsigned)k);
	} else {
#if !defined(__aarch64__)
		unsigned o;

		if (cg_btf_offset(g, "task_struct", extra[k - nptregs], &o)) {
			cg_fail(g, n, "the kernel's BTF does not say where a task's registers are");
			return true;
		}
		snprintf(t, sizeof(t),
			 "({ __u64 ur_ = 0; bpf_probe_read_kernel(&ur_, %u, (void "
			 "*)(bpf_get_current_task() + %u)); (__s64)ur_; })",
			 extra_size[k - nptregs], o);
#endif
	}
	set(v, 8, true, t);
	return true;
}
