/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own structures, for the builtins that read them (ppid:
 * task_struct.real_parent->tgid; vtimestamp: task_struct.se.
 * sum_exec_runtime; curpsinfo's members, codegen_procfs.c): a member's byte
 * offset from the running kernel's BTF (/sys/kernel/btf/vmlinux), loaded
 * once a program, written into the program as a constant (no CO-RE
 * relocation is needed: the program runs on the kernel it was made on). A
 * member of an unnamed struct or union member is found as C finds it.
 */
#include <string.h>

#include <bpf/btf.h>

#include "cg.h"

/* The member `name` of the struct or union `id`: its bit offset and type, or -1. */
static int member(const struct btf *btf, __u32 id, const char *name, __u32 *bits, __u32 *type)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	unsigned i, n;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	n = btf_vlen(t);
	for (i = 0; i < n; i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		__s32 anon;

		if (mn && !strcmp(mn, name)) {
			*bits = btf_member_bit_offset(t, i);
			*type = m->type;
			return 0;
		}
		/* a member of an unnamed struct or union member: the kernel's mm_struct's */
		if ((!mn || !*mn) && (anon = btf__resolve_type(btf, m->type)) >= 0 &&
		    !member(btf, (__u32)anon, name, bits, type)) {
			*bits += btf_member_bit_offset(t, i);
			return 0;
		}
	}
	return -1;
}

int cg_btf_offset(struct cg *g, const char *strct, const char *path, unsigned *off)
{
	char part[64];
	const char *p = path;
	__s32 id;
	__u32 tid, bits, total = 0;

	if (!g->btf) {
		g->btf = btf__load_vmlinux_btf();
		if (!g->btf) {
			g->btf = NULL;
			return -1;
		}
	}
	id = btf__find_by_name_kind(g->btf, strct, BTF_KIND_STRUCT);
	if (id < 0)
		return -1;
	tid = (__u32)id;
	while (*p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(part))
			return -1;
		memcpy(part, p, n);
		part[n] = '\0';
		if (member(g->btf, tid, part, &bits, &tid) || bits % 8)
			return -1;
		total += bits / 8;
		id = btf__resolve_type(g->btf, tid);
		if (id < 0)
			return -1;
		tid = (__u32)id;
		p += n + (p[n] == '.');
	}
	*off = total;
	return 0;
}

void cg_btf_free(struct cg *g)
{
	btf__free(g->btf);
	g->btf = NULL;
}
