/* SPDX-License-Identifier: MIT */
/*
 * ustack([n]) as BPF: where DTrace allows it (an action, an aggregation's
 * key, printf's %k argument), a value of kind SV_STACK that cg_store_str()
 * writes as {pid, bytes, n return addresses} (bpf_get_stack with
 * BPF_F_USER_STACK). The reader (ustack.c) names each address in the
 * process's maps when it reads the record or the key, so a key read after
 * its process exited shows addresses.
 */
#include <string.h>

#include "cg.h"

/* DTrace's ustackframes; the kernel's perf_event_max_stack is 127 by default. */
#define EG_USTACK_DEFAULT 100
#define EG_USTACK_MAX 127

bool cg_ustack(struct cg *g, const struct dt_node *n, struct cv *v)
{
	int64_t frames = EG_USTACK_DEFAULT;

	if (n->kind != N_CALL || strcmp(n->name, "ustack"))
		return false;
	memset(v, 0, sizeof(*v));
	if (n->nargs > 2 || (n->nargs && n->args[0]->kind != N_INT)) {
		cg_fail(g, n, "ustack() takes a constant number of frames (and a string size)");
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
	v->text = dt_xstrdup("");
	return true;
}

unsigned cg_stack_bytes(const struct cv *v)
{
	return 8 + 8 * v->size;
}
