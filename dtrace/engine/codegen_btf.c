/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own structures, for the builtins that read them (ppid:
 * task_struct.real_parent->tgid; vtimestamp: task_struct.se.
 * sum_exec_runtime; curpsinfo's members, codegen_procfs.c): a member's byte offset from the running
 * kernel's BTF, written into the program as a constant (no CO-RE relocation is needed: the program
 * runs on the kernel it was made on). The BTF is the consumer's one reader's
 * (dtrace/consumer/kbtf.c: loaded once a process, also the source of the kernel types a D program
 * names).
 */
#include "cg.h"
#include "kbtf.h"

int cg_btf_offset(struct cg *g, const char *strct, const char *path, unsigned *off)
{
	g->btf = dt_kbtf();
	return g->btf ? dt_kbtf_offset(strct, path, off) : -1;
}

void cg_btf_free(struct cg *g)
{
	g->btf = NULL; /* (kbtf.c's, kept for the process) */
}
