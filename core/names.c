// SPDX-License-Identifier: MIT
/*
 * Names that end up in tracefs: groups `sdt_<provider>`, events `<probe>`,
 * argument names. The kernel takes C identifiers of at most 63 characters
 * (the kernel's MAX_EVENT_NAME_LEN is 64 with the NUL; measured on Linux 6.18).
 *
 * Policy: a provider or probe name that is not a C identifier is REJECTED,
 * not sanitised. Sanitising ("a.b" -> "a_b") could make two probes collide
 * and would give a name no other tool (perf, which uses the same sdt_
 * convention) computes. A name that is an identifier but too long is
 * SHORTENED deterministically: the first 54 characters, '_', and 8 hex digits
 * of the 32-bit FNV-1a hash of the whole name (group: of "sdt_<provider>").
 * Names of up to 63 characters, which is every real probe, are unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "notes.h"

bool usdt_is_identifier(const char *s, size_t max)
{
	size_t n = 0;

	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (; *s; s++, n++) {
		if (n >= max)
			return false;
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	}
	return true;
}

static uint32_t fnv1a(const char *a, const char *b)
{
	uint32_t h = 2166136261u;

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 16777619u;
	for (; *b; b++)
		h = (h ^ (unsigned char)*b) * 16777619u;
	return h;
}

bool usdt_tracefs_name(char *out, const char *prefix, const char *name)
{
	size_t lp = strlen(prefix), ln = strlen(name);
	size_t keep = USDT_TRACEFS_NAME_MAX - 9;

	if (lp + ln <= USDT_TRACEFS_NAME_MAX) {
		memcpy(out, prefix, lp);
		memcpy(out + lp, name, ln + 1);
		return false;
	}
	if (lp >= keep) {
		memcpy(out, prefix, keep);
	} else {
		memcpy(out, prefix, lp);
		memcpy(out + lp, name, keep - lp);
	}
	snprintf(out + keep, USDT_TRACEFS_NAME_MAX + 1 - keep, "_%08x", fnv1a(prefix, name));
	return true;
}

int usdt_site_set_arg_hint(struct usdt_site *p, unsigned i, const char *name, bool is_string)
{
	struct usdt_argspec *a;

	if (p->reject || i >= p->nargs)
		return -EINVAL;
	a = &p->arg[i];
	if (name && *name) {
		if (!usdt_is_identifier(name, USDT_TRACEFS_NAME_MAX) ||
		    strncmp(name, "common_", 7) == 0)
			return -EINVAL;
		for (unsigned j = 0; j < p->nargs; j++)
			if (j != i && p->arg[j].name && strcmp(p->arg[j].name, name) == 0)
				return -EINVAL;
	}
	/* The kernel fetches strings only through a memory operand (+0(%reg)). */
	if (is_string && a->kind != USDT_ARG_REG && a->kind != USDT_ARG_MEM)
		return -EINVAL;
	/*
	 * A pointer held in memory is followed with a nested +0(+DISP(%reg)), and
	 * the kernel reads that inner word as an unsigned long: 8 bytes. A 4-byte
	 * pointer of an i386 process then gets 4 bytes of its neighbour (measured:
	 * "(fault)"). Such an argument stays an integer.
	 */
	if (is_string && a->kind == USDT_ARG_MEM && a->size < 8)
		return -EOPNOTSUPP;
	if (name && *name) {
		char *dup = strdup(name);

		if (!dup)
			return -ENOMEM;
		free(a->name);
		a->name = dup;
	}
	a->is_string = is_string;
	return 0;
}

void usdt_notes_apply_arg_hint(struct usdt_notes *n, const char *provider, const char *probe,
			       unsigned argi, const char *name, bool is_string)
{
	for (size_t k = 0; k < n->nsites; k++) {
		struct usdt_site *p = &n->sites[k];

		if (p->reject || argi >= p->nargs || strcmp(p->provider, provider) != 0 ||
		    strcmp(p->name, probe) != 0)
			continue;
		/* Best first; fall back to less rather than nothing. */
		if (usdt_site_set_arg_hint(p, argi, name, is_string) &&
		    usdt_site_set_arg_hint(p, argi, name, false))
			usdt_site_set_arg_hint(p, argi, NULL, is_string);
	}
}
