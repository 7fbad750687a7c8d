/* SPDX-License-Identifier: MIT */
/* The probe model's declarations: their lifetime and names (model.h). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

void usdt_program_init(struct usdt_program *prog)
{
	memset(prog, 0, sizeof(*prog));
}

static void free_args(struct usdt_arg *args, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(args[i].name);
		free(args[i].type.spelling);
		free(args[i].type.c_spelling);
	}
	free(args);
}

void usdt_program_free(struct usdt_program *prog)
{
	size_t i, j;

	for (i = 0; i < prog->nproviders; i++) {
		struct usdt_provider *pv = &prog->providers[i];

		for (j = 0; j < pv->nprobes; j++) {
			struct usdt_probe *p = &pv->probes[j];

			free(p->name);
			free_args(p->args, p->nargs);
			free_args(p->xargs, p->nxargs);
			free(p->argmap);
		}
		free(pv->probes);
		free(pv->name);
	}
	free(prog->providers);
	/* Last: locations in the model point at file names it owns. */
	if (prog->priv_free)
		prog->priv_free(prog->priv);
	memset(prog, 0, sizeof(*prog));
}

char *usdt_probe_dtrace_name(const char *name)
{
	size_t i, j, n = strlen(name);
	char *s = malloc(n + 1);

	if (!s)
		return NULL;
	for (i = j = 0; i < n; i++) {
		if (name[i] == '_' && name[i + 1] == '_') {
			s[j++] = '-';
			i++;
		} else {
			s[j++] = name[i];
		}
	}
	s[j] = '\0';
	return s;
}

const char *usdt_stability_name(enum usdt_stability s)
{
	static const char *const names[] = {
	    "Internal", "Private",  "Obsolete", "External",
	    "Unstable", "Evolving", "Stable",	"Standard",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "Unknown";
}

const char *usdt_depclass_name(enum usdt_depclass c)
{
	static const char *const names[] = {
	    "Unknown", "CPU", "Platform", "Group", "ISA", "Common",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "Unknown";
}
