/* SPDX-License-Identifier: MIT */
/* The provider model's lifetime and its name spellings (see usdt_provider.h). */
#include "usdt_provider.h"
#include "front.h"

#include <ctype.h>
#include <stdio.h>
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
	fe_free(prog->priv);
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

int fe_macro_char(const char **p)
{
	const char *s = *p;

	if (s[0] == '_' && s[1] == '_') {
		*p += 2;
		return '_';
	}
	if (*s)
		(*p)++;
	return (*s >= 'a' && *s <= 'z') ? *s - 'a' + 'A' : *s;
}

char *usdt_probe_macro_name(const char *provider, const char *probe)
{
	char *s = malloc(strlen(provider) + strlen(probe) + 2), *q = s;
	int c;

	if (!s)
		return NULL;
	/* The provider upper-cased as it stands; only the probe's "__" fold. */
	for (; *provider; provider++)
		*q++ = (char)toupper((unsigned char)*provider);
	*q++ = '_';
	while ((c = fe_macro_char(&probe)) != 0)
		*q++ = (char)c;
	*q = '\0';
	return s;
}

char *usdt_probe_semaphore_name(const char *provider, const char *probe)
{
	size_t n = strlen(provider) + strlen(probe) + sizeof("__semaphore");
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s_%s_semaphore", provider, probe);
	return s;
}

const char *usdt_stability_name(enum usdt_stability s)
{
	static const char *const names[] = {
		"Internal", "Private", "Obsolete", "External",
		"Unstable", "Evolving", "Stable", "Standard",
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
