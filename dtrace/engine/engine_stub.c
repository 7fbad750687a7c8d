/* SPDX-License-Identifier: MIT */
/* The BPF engine where dtrace was built without libbpf: one clear error. */
#include "engine.h"
#include "list_create.h"

int dt_engine_run(struct dt_consumer_opts *o, struct dt_program *prog, struct dt_probes *ps,
		  int created, struct usdt_diag *diag)
{
	(void)o;
	(void)prog;
	(void)ps;
	usdt_error(diag, "tracing needs libbpf: this dtrace was built without it (install "
			 "libbpf-dev and build again)");
	if (created > 0)
		usdt_list_destroy(created, diag);
	return 1;
}
