/* SPDX-License-Identifier: MIT */
/*
 * ustack([n]), jstack([n]) and stack([n]) as BPF: where DTrace allows
 * them (an action, an aggregation's key, printf's %k argument), a value of
 * kind SV_STACK that cg_store_str() writes as {pid, bytes, n return
 * addresses} (bpf_get_stack, with BPF_F_USER_STACK but for stack(), whose
 * pid word is EG_KERNEL_PID). sym(), func(), mod() of a kernel address and
 * usym(), ufunc(), umod(), uaddr() of the process's are one such frame,
 * {pid, 8, address}, named by the reader (ksyms.c) as DTrace prints them. The reader (ustack.c)
 * names each address in the process's maps when it reads the record or the key, so a key read after
 * its process exited shows addresses.
 */
#include <string.h>

#include "cg.h"

/* DTrace's ustackframes; the kernel's perf_event_max_stack is 127 by default. */
#define EG_USTACK_DEFAULT 100
#define EG_USTACK_MAX 127

static const char *const symfns[] = {"sym", "func", "mod", "usym", "ufunc", "umod", "uaddr"};

/* sym(a), func(a), mod(a) (a kernel address), usym, ufunc, umod, uaddr (the process's) */
static bool symfn(struct cg *g, const struct dt_node *n, struct cv *v)
{
	size_t k;
	struct cv a;

	for (k = 0; k < sizeof(symfns) / sizeof(symfns[0]); k++)
		if (!strcmp(n->name, symfns[k]))
			break;
	if (k == sizeof(symfns) / sizeof(symfns[0]))
		return false;
	if (n->nargs != 1) {
		cg_fail(g, n, "this function takes one address");
		return true;
	}
	cg_int(g, n->args[0], &a);
	if (g->failed) {
		cv_free(&a);
		return true;
	}
	v->type = TY_STR;
	v->skind = SV_STACK;
	v->size = 1;
	v->symfn = (unsigned char)(EG_SYM_SYM + k);
	v->text = a.text;
	a.text = NULL;
	cv_free(&a);
	return true;
}

bool cg_is_stack_call(const struct dt_node *n)
{
	size_t k;

	if (n->kind != N_CALL)
		return false;
	for (k = 0; k < sizeof(symfns) / sizeof(symfns[0]); k++)
		if (!strcmp(n->name, symfns[k]))
			return true;
	return !strcmp(n->name, "ustack") || !strcmp(n->name, "jstack") ||
	       !strcmp(n->name, "stack");
}

bool cg_ustack(struct cg *g, const struct dt_node *n, struct cv *v)
{
	int64_t frames = EG_USTACK_DEFAULT;

	if (n->kind != N_CALL)
		return false;
	memset(v, 0, sizeof(*v));
	if (symfn(g, n, v))
		return true;
	if (strcmp(n->name, "ustack") && strcmp(n->name, "jstack") && strcmp(n->name, "stack"))
		return false;
	if (n->nargs > 2 || (n->nargs && n->args[0]->kind != N_INT)) {
		cg_fail(g, n, "a stack takes a constant number of frames (and a string size)");
		return true;
	}
	if (n->nargs)
		frames = n->args[0]->ival;
	if (frames < 1)
		frames = 1;
	if (frames > EG_USTACK_MAX)
		frames = EG_USTACK_MAX;
	v->type = TY_STR;
	v->skind = SV_STACK;
	v->size = (unsigned)frames;
	v->symfn = n->name[0] == 's' ? EG_SYM_KSTACK : EG_SYM_NONE;
	v->text = dt_xstrdup("");
	return true;
}

unsigned cg_stack_bytes(const struct cv *v)
{
	return 8 + 8 * v->size;
}
