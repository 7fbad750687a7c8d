/* SPDX-License-Identifier: MIT */
/*
 * The built-in variables a BPF helper gives (README.md, "Built-in
 * variables"), as DTrace on Linux gives them: stackdepth and ustackdepth
 * the frames bpf_get_stack() writes (the kernel's: none at a uprobe,
 * whose registers are the user's; the user's), caller and ucaller the
 * second of them, curthread the task (bpf_get_current_task: a `struct
 * task_struct *`, its type the kernel's BTF's, kbtf.c), curcpu the
 * address of this CPU's element of a per-CPU map (DTrace's cpuinfo_t
 * pointer: its members are not readable here), errno the failed return of
 * a syscall:: return probe and 0 elsewhere. ipl, which Linux has no BPF
 * helper for, is DTrace's illegal operation at run time (its ERROR).
 */
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
		if (dt_kbtf_decl('S', "struct task_struct")) /* DTrace's type, from BTF (kbtf.c) */
			v->ptr = dt_xstrdup("struct task_struct");
	} else if (!strcmp(s, "curcpu")) {
		g->bvar_maps |= 2;
		/* the address kept in the element and read back: a number to the verifier */
		set(v, 8, true,
		    "({ __u32 z = 0; __u64 *ci = bpf_map_lookup_elem(&bvar_cpuinfo, &z); "
		    "if (ci) *ci = (__u64)(unsigned long)ci; "
		    "(__s64)(ci ? *(volatile __u64 *)ci : 0); })");
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
		snprintf(t, sizeof(t), "({ FAULT(%zu, 3, 0); 0LL; })", cg_fault_site(g));
		set(v, 4, true, t);
	} else {
		return false;
	}
	return true;
}

void cg_bvar_maps(const struct cg *g, struct dt_buf *o)
{
	if (g->bvar_maps & 1)
		dt_buf_printf(
		    o,
		    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
		    "__type(value, __u64[%d]); } bvar_stack SEC(\".maps\");\n",
		    BVAR_FRAMES);
	if (g->bvar_maps & 2)
		dt_buf_printf(o, "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, "
				 "__u32); __type(value, __u64); } bvar_cpuinfo SEC(\".maps\");\n");
}
