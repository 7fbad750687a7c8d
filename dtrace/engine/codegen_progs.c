/* SPDX-License-Identifier: MIT */
/*
 * The programs of the probes that are not USDT sites (codegen_args.c has
 * those): BEGIN and END (uprobes on two functions of dtrace itself),
 * tick-N (a CPU clock on CPU 0) and profile-N (on every CPU), syscall::
 * (the syscalls tracepoints: argN is the event's Nth field after
 * __syscall_nr, read from the tracepoint's record at the offset its
 * tracefs format gives, bpftrace's `args->field`) and
 * proc::: (sched's process tracepoints, match.c's: no argument).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg.h"

/* match.c's "interval:UNIT:N" as nanoseconds. */
static uint64_t tick_period(const char *attach)
{
	const char *unit = strchr(attach, ':'), *num = unit ? strchr(unit + 1, ':') : NULL;
	uint64_t n = num ? strtoull(num + 1, NULL, 10) : 1;

	if (!unit || !num || !n)
		return 1000000000ull;
	unit++;
	if (!strncmp(unit, "hz", 2))
		return 1000000000ull / n;
	if (!strncmp(unit, "ms", 2))
		return n * 1000000ull;
	if (!strncmp(unit, "us", 2))
		return n * 1000ull;
	if (!strncmp(unit, "ns", 2))
		return n;
	return n * 1000000000ull;
}

/*
 * A syscall tracepoint's arguments: ARG(k) as a function of the record's
 * fields past __syscall_nr (common_* and the number itself are not
 * arguments). A field the format does not give reads 0.
 */
static int tp_args(struct cg *g, size_t pi, const char *event, struct dt_buf *o)
{
	char path[512], line[512];
	bool past_nr = false;
	unsigned k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/format", event);
	f = fopen(path, "re");
	if (!f) {
		usdt_error(g->diag, "%s: cannot read its format (%s)", event, path);
		return -1;
	}
	dt_buf_printf(o, "INLINE __s64 tparg_%zu(void *ctx, int k)\n{\n\tswitch (k) {\n", pi);
	while (fgets(line, sizeof(line), f)) {
		char *field = strstr(line, "field:"), *semi, *name;
		unsigned off, size;
		int sgn;
		const char *rest;

		if (!field || !(semi = strchr(field, ';')))
			continue;
		rest = semi + 1;
		*semi = '\0';
		name = strrchr(field, ' ');
		name = name ? name + 1 : field + 6;
		if (!strncmp(name, "common_", 7))
			continue;
		if (!strcmp(name, "__syscall_nr")) {
			past_nr = true;
			continue;
		}
		if (!past_nr ||
		    sscanf(rest, " offset:%u; size:%u; signed:%d;", &off, &size, &sgn) != 3)
			continue;
		if (size == 1 || size == 2 || size == 4 || size == 8)
			dt_buf_printf(o,
				      "\tcase %u: { __u64 v = 0; bpf_probe_read_kernel(&v, %u, "
				      "(char *)ctx + %u); return %s(v, %u); }\n",
				      k, size, off, sgn ? "sx" : "zx", size);
		k++;
	}
	fclose(f);
	dt_buf_printf(o, "\t}\n\treturn 0;\n}\n");
	return 0;
}

/*
 * A tick- or profile- program runs in NMI context, where a hash map that
 * allocates its elements as keys come (BPF_F_NO_PREALLOC) has only the few
 * its per-CPU cache holds: a firing that makes more loses the rest
 * (measured: one string array element, four integers, one aggregation
 * key). So in a program with such a probe every map a firing adds to
 * (arrays, aggregations, self-> variables) is allocated beforehand, a
 * quarter as many elements where one is over 64 bytes (its memory is taken
 * at once). The one rule: the map's flags and its size.
 */
static bool in_nmi(const struct cg *g)
{
	size_t i;

	for (i = 0; i < g->out->nprobes; i++)
		if (g->out->probes[i]->kind == P_TICK || g->out->probes[i]->kind == P_PROFILE)
			return true;
	return false;
}

int cg_map_flags(const struct cg *g)
{
	return in_nmi(g) ? 0 : 1;
}

unsigned cg_map_entries(const struct cg *g, unsigned n, unsigned elem)
{
	return in_nmi(g) && elem > 64 ? n / 4 : n;
}

int cg_other_program(struct cg *g, size_t pi, const char *body, struct dt_buf *o)
{
	const struct dt_probe *p = g->probe;

	if (p->kind == P_TICK || p->kind == P_PROFILE) {
		struct eg_timer tm = {{0}, tick_period(p->attach), p->kind == P_PROFILE};

		snprintf(tm.prog, sizeof(tm.prog), "tick_%zu", pi);
		DT_PUSH(g->out->timers, g->out->ntimers, tm);
		/* tick's and profile's arg0: the kernel's pc (0 in user mode); arg1: the user's */
		dt_buf_printf(o, "#define ARG(k) %s\nSEC(\"perf_event\") int %s(void *ctx)\n{\n%s",
			      "profile_arg((struct pt_regs *)ctx, k)", tm.prog, body);
		dt_buf_printf(o, "\treturn 0;\n}\n#undef ARG\n");
	} else if (p->kind == P_TRACEPOINT) {
		/* "tracepoint:syscalls:sys_enter_read" */
		struct eg_tracepoint tp = {{0}, {0}, {0}};
		const char *cat = p->attach + 11, *name = strchr(cat, ':');
		char event[200];

		if (!name)
			return -1;
		snprintf(tp.prog, sizeof(tp.prog), "tp_%zu", pi);
		snprintf(tp.category, sizeof(tp.category), "%.*s", (int)(name - cat), cat);
		snprintf(tp.name, sizeof(tp.name), "%s", name + 1);
		snprintf(event, sizeof(event), "%s/%s", tp.category, tp.name);
		/* proc::: (sched's process events): no argument */
		if (!strcmp(tp.category, "syscalls") && tp_args(g, pi, event, o))
			return -1;
		if (strcmp(tp.category, "syscalls"))
			dt_buf_printf(o,
				      "INLINE __s64 tparg_%zu(void *ctx, int k)\n{\n"
				      "\t(void)ctx;\n\t(void)k;\n\treturn 0;\n}\n",
				      pi);
		DT_PUSH(g->out->tps, g->out->ntps, tp);
		dt_buf_printf(
		    o,
		    "#define ARG(k) tparg_%zu(ctx, k)\nSEC(\"tracepoint\") int %s(void *ctx)\n"
		    "{\n%s\treturn 0;\n}\n#undef ARG\n",
		    pi, tp.prog, body);
	} else {
		bool begin = p->kind == P_BEGIN, error = p->kind == P_ERROR;

		/* ERROR's arguments are eg_error_trigger()'s (codegen_fault.c) */
		dt_buf_printf(o,
			      "#define ARG(k) %s\nSEC(\"uprobe\") int %s(struct pt_regs *ctx)\n{\n",
			      error ? "error_arg(ctx, k)" : "0LL",
			      begin   ? "dt_begin"
			      : error ? "dt_error"
				      : "dt_end");
		dt_buf_printf(o, "%s\treturn 0;\n}\n#undef ARG\n", body);
		if (begin)
			g->out->has_begin = true;
		else if (error)
			g->out->has_error = true;
		else
			g->out->has_end = true;
	}
	return 0;
}
