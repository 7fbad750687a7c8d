/* SPDX-License-Identifier: MIT */
/*
 * dump-model FILE...: parses the D files into one program (as `dtrace -s A
 * -s B` would) and prints the provider model in a stable text form that the
 * provider tests compare with expectations written by hand from the .d.
 * Diagnostics go to stderr; the exit status is 1 when parsing failed (the
 * model is printed anyway, to show that no probe was dropped).
 *
 *   provider NAME @FILE:LINE:COL
 *     attr provider=Name/Data/Class module=... function=... name=... args=...
 *     probe NAME @FILE:LINE:COL dtrace=NAME-X macro=MACRO nargs=N
 *       arg0 NAME "spelling" c="c spelling" CLASS SIZE signed|unsigned
 *       xlate nxargs=M            (only when the translated list differs)
 *       xarg0 NAME "spelling" c=... CLASS SIZE SIGN <- argK
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usdt_provider.h"

static const char *class_name(enum usdt_type_class c)
{
	switch (c) {
	case USDT_T_INTEGER:
		return "integer";
	case USDT_T_POINTER:
		return "pointer";
	case USDT_T_STRING:
		return "string";
	case USDT_T_FLOAT:
		return "float";
	case USDT_T_OTHER:
		return "other";
	}
	return "?";
}

static void print_arg(const char *what, size_t i, const struct usdt_arg *a)
{
	printf("    %s%zu %s \"%s\" c=", what, i, a->name ? a->name : "-", a->type.spelling);
	if (a->type.c_spelling)
		printf("\"%s\"", a->type.c_spelling);
	else
		printf("-");
	printf(" %s %u %s", class_name(a->type.cls), a->type.size,
	       a->type.is_signed ? "signed" : "unsigned");
}

static int translated(const struct usdt_probe *p)
{
	size_t i;

	if (p->nxargs != p->nargs)
		return 1;
	for (i = 0; i < p->nargs; i++) {
		if (p->argmap[i] != i ||
		    strcmp(p->args[i].type.spelling, p->xargs[i].type.spelling))
			return 1;
		if ((p->args[i].name == NULL) != (p->xargs[i].name == NULL) ||
		    (p->args[i].name && strcmp(p->args[i].name, p->xargs[i].name)))
			return 1;
	}
	return 0;
}

static void print_program(const struct usdt_program *prog)
{
	size_t i, j, k;

	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *pv = &prog->providers[i];
		static const char *const which[] = {"provider", "module", "function", "name",
						    "args"};

		printf("provider %s @%s:%u:%u\n", pv->name, pv->loc.file, pv->loc.line,
		       pv->loc.col);
		printf("  attr");
		for (k = 0; k < USDT_ATTR_COUNT; k++)
			printf(" %s=%s/%s/%s", which[k], usdt_stability_name(pv->attr[k].name_stab),
			       usdt_stability_name(pv->attr[k].data_stab),
			       usdt_depclass_name(pv->attr[k].dep_class));
		printf("\n");
		for (j = 0; j < pv->nprobes; j++) {
			const struct usdt_probe *p = &pv->probes[j];
			char *dn = usdt_probe_dtrace_name(p->name);
			char *mn = usdt_probe_macro_name(pv->name, p->name);

			printf("  probe %s @%s:%u:%u dtrace=%s macro=%s nargs=%zu\n", p->name,
			       p->loc.file, p->loc.line, p->loc.col, dn, mn, p->nargs);
			free(dn);
			free(mn);
			for (k = 0; k < p->nargs; k++) {
				print_arg("arg", k, &p->args[k]);
				printf("\n");
			}
			if (!translated(p))
				continue;
			printf("    xlate nxargs=%zu\n", p->nxargs);
			for (k = 0; k < p->nxargs; k++) {
				print_arg("xarg", k, &p->xargs[k]);
				printf(" <- arg%u\n", p->argmap[k]);
			}
		}
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			char *nb = realloc(buf, cap = (cap + 4096) * 2);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	struct usdt_program prog;
	struct usdt_diag diag;
	int i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: dump-model FILE.d...\n");
		return 2;
	}
	usdt_program_init(&prog);
	usdt_diag_init(&diag, stderr, "dump-model");
	for (i = 1; i < argc; i++) {
		size_t len = 0;
		char *text = slurp(argv[i], &len);

		if (!text) {
			perror(argv[i]);
			rc = 2;
			continue;
		}
		if (usdt_parse(&prog, argv[i], text, len, &diag) != 0)
			rc = 1;
		free(text);
	}
	print_program(&prog);
	usdt_program_free(&prog);
	if (rc == 0 && diag.errors)
		rc = 1;
	return rc;
}
