/* SPDX-License-Identifier: MIT */
/* The header's spellings of a probe: its macro and SystemTap's semaphore (usdt_provider.h). */
#include "usdt_provider.h"
#include "front.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
