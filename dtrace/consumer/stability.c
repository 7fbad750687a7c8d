/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -v -n/-s`: DTrace's stability report of a program (under run.c,
 * over the tree of d.h).
 *
 * Theory. DTrace gives every name a program can use three attributes: the
 * stability of the name, the stability of the data it stands for (each
 * Internal < Private < Obsolete < External < Unstable < Evolving < Stable <
 * Standard) and its dependency class (Unknown < CPU < Platform < Group <
 * ISA < Common). A program is as stable as the least stable thing it uses,
 * attribute by attribute, and -v prints two minimums, as DTrace prints
 * them: of its probe descriptions and of its statements.
 *
 * A probe description is as stable as its provider's attributes for the
 * fields it names: the provider, and the module, function and name when
 * given without a glob; a description without a provider, or with a
 * glob in it, could match any provider's probes, and is Unstable/Unstable/
 * Common (DTrace's rule). dtrace, profile (tick-), syscall and proc have
 * DTrace's attributes; a USDT provider, whose .d here declares none, has
 * the Unstable ones DTrace gives a provider declared without #pragma D
 * attributes.
 *
 * A statement is as stable as the names in it: D's operators, constants,
 * variables and functions are Stable/Stable/Common; curthread is
 * Stable/Private/Common (its data is the kernel's own structure), a kernel
 * symbol (`name) Private/Private/Unknown. The statements' minimum starts
 * at Standard/Standard/Common (a program without statements).
 */
#include <stdio.h>
#include <string.h>

#include "consumer.h"
#include "d.h"
#include "stability.h"

struct attr {
	int name, data, cls;
};

static const char *const stab_names[] = {"Internal", "Private",	 "Obsolete", "External",
					 "Unstable", "Evolving", "Stable",   "Standard"};
static const char *const class_names[] = {"Unknown", "CPU", "Platform", "Group", "ISA", "Common"};

enum { INTERNAL, PRIVATE, OBSOLETE, EXTERNAL, UNSTABLE, EVOLVING, STABLE, STANDARD };
enum { C_UNKNOWN, C_CPU, C_PLATFORM, C_GROUP, C_ISA, C_COMMON };

static const struct attr stable_common = {STABLE, STABLE, C_COMMON};
static const struct attr unstable_common = {UNSTABLE, UNSTABLE, C_COMMON};
static const struct attr private_unknown = {PRIVATE, PRIVATE, C_UNKNOWN};

/* A provider's attributes for its provider, module, function and name fields. */
struct prov_attr {
	const char *prov;
	struct attr field[4];
};

static const struct prov_attr providers[] = {
    {"dtrace",
     {{STABLE, STABLE, C_COMMON},
      {PRIVATE, PRIVATE, C_UNKNOWN},
      {PRIVATE, PRIVATE, C_UNKNOWN},
      {STABLE, STABLE, C_COMMON}}},
    {"profile",
     {{EVOLVING, EVOLVING, C_COMMON},
      {UNSTABLE, UNSTABLE, C_COMMON},
      {PRIVATE, PRIVATE, C_UNKNOWN},
      {EVOLVING, EVOLVING, C_COMMON}}},
    {"syscall",
     {{EVOLVING, EVOLVING, C_COMMON},
      {PRIVATE, PRIVATE, C_UNKNOWN},
      {PRIVATE, PRIVATE, C_ISA},
      {EVOLVING, EVOLVING, C_COMMON}}},
    {"proc",
     {{STABLE, STABLE, C_COMMON},
      {PRIVATE, PRIVATE, C_UNKNOWN},
      {PRIVATE, PRIVATE, C_UNKNOWN},
      {STABLE, STABLE, C_COMMON}}},
};

static int imin(int a, int b)
{
	return a < b ? a : b;
}

static struct attr attr_min(struct attr a, struct attr b)
{
	struct attr m = {imin(a.name, b.name), imin(a.data, b.data), imin(a.cls, b.cls)};

	return m;
}

static bool is_glob(const char *f)
{
	return !f || !*f || strpbrk(f, "*?[\\") != NULL;
}

static struct attr desc_attr(const struct dt_pdesc *d)
{
	const struct attr *field = NULL;
	struct attr a;
	size_t i;

	if (is_glob(d->field[0]))
		return unstable_common;
	for (i = 0; i < sizeof(providers) / sizeof(providers[0]); i++)
		if (!strcmp(d->field[0], providers[i].prov))
			field = providers[i].field;
	if (!field)
		return unstable_common; /* a USDT provider: no attributes declared */
	a = field[0];
	for (i = 1; i < 4; i++)
		if (!is_glob(d->field[i]))
			a = attr_min(a, field[i]);
	return a;
}

static struct attr node_attr(const struct dt_node *n)
{
	struct attr a = stable_common;
	size_t i;

	if (!n)
		return a;
	if (n->kind == N_IDENT && n->name && !strcmp(n->name, "curthread"))
		a.data = PRIVATE;
	if (n->kind == N_IDENT && n->name && strchr(n->name, '`'))
		a = private_unknown;
	a = attr_min(a, node_attr(n->a));
	a = attr_min(a, node_attr(n->b));
	a = attr_min(a, node_attr(n->c));
	for (i = 0; i < n->nargs; i++)
		a = attr_min(a, node_attr(n->args[i]));
	return a;
}

static struct attr stmts_attr(struct dt_stmt *const *v, size_t n, struct attr a)
{
	size_t i;

	for (i = 0; i < n; i++) {
		a = attr_min(a, node_attr(v[i]->e));
		a = stmts_attr(v[i]->then, v[i]->nthen, a);
		a = stmts_attr(v[i]->els, v[i]->nels, a);
	}
	return a;
}

static void print_attr(FILE *out, const char *title, struct attr a)
{
	fprintf(out,
		"\n\t%s\n\t\tIdentifier Names: %s\n\t\tData Semantics:   %s\n"
		"\t\tDependency Class: %s\n",
		title, stab_names[a.name], stab_names[a.data], class_names[a.cls]);
}

void dt_stability_report(const struct dt_program *prog, size_t source, bool script,
			 const char *name, FILE *out)
{
	struct attr desc = {STANDARD, STANDARD, C_COMMON}, stmt = desc;
	size_t i, j;

	for (i = 0; i < prog->nclauses; i++) {
		const struct dt_clause *c = prog->clauses[i];

		if (c->source != source)
			continue;
		for (j = 0; j < c->ndescs; j++)
			desc = attr_min(desc, desc_attr(&c->descs[j]));
		stmt = attr_min(stmt, node_attr(c->pred));
		stmt = stmts_attr(c->body, c->nbody, stmt);
	}
	fprintf(out, "\nStability attributes for %s %s:\n", script ? "script" : "description",
		name);
	print_attr(out, "Minimum Probe Description Attributes", desc);
	print_attr(out, "Minimum Statement Attributes", stmt);
	fprintf(out, "\n");
	fflush(out);
}

static bool below(struct attr a, const unsigned char *amin)
{
	return a.name < amin[0] || a.data < amin[1] || a.cls < amin[2];
}

int dt_stability_amin(const struct dt_program *prog, const struct dt_consumer_opts *o,
		      bool statements, struct usdt_diag *diag)
{
	size_t i, j;

	for (i = 0; o->amin_set && i < prog->nclauses; i++) {
		const struct dt_clause *c = prog->clauses[i];
		struct attr a = {STANDARD, STANDARD, C_COMMON};

		for (j = 0; j < c->ndescs; j++)
			a = attr_min(a, desc_attr(&c->descs[j]));
		if (statements) {
			a = attr_min(a, node_attr(c->pred));
			a = stmts_attr(c->body, c->nbody, a);
		}
		if (below(a, o->amin)) {
			dt_error_at(diag, c->ndescs ? &c->descs[0].pos : &c->pos, "D_ATTR_MIN",
				    "attributes for clause (%s/%s/%s) are less than predefined "
				    "minimum",
				    stab_names[a.name], stab_names[a.data], class_names[a.cls]);
			return -1;
		}
	}
	return 0;
}
