// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps lines (maps.h), read field by field as the kernel prints
 * them (show_map_vma: "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu ", padding,
 * the path). By hand rather than with sscanf, which cost about 14,000
 * instructions a line: the daemon reads these for every REGISTER and every
 * process a LIST looks at (bench/helper/loopcost.sh).
 */
#include <string.h>
#include <sys/sysmacros.h>

#include "maps.h"

#define DELETED_SUFFIX " (deleted)"

/* Hexadecimal digits at *p, at least one and at most 16, then *p past them. */
static bool hex_field(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	for (; (size_t)(*p - s) <= 16; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			x = x << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x = x << 4 | (uint64_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x = x << 4 | (uint64_t)(c - 'A' + 10);
		else
			break;
	}
	*v = x;
	return *p > s && *p - s <= 16;
}

/* Decimal digits at *p (at most 20, no overflow), then *p past them. */
static bool dec_field(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++) {
		uint64_t d = (uint64_t)(**p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return *p > s;
}

bool usdt_maps_parse_line(char *line, struct usdt_mapping *m)
{
	const char *p = line;
	uint64_t start, end, off, maj, min, ino;
	size_t len, sl = sizeof(DELETED_SUFFIX) - 1, np = 0;

	if (!hex_field(&p, &start) || *p++ != '-' || !hex_field(&p, &end) || *p++ != ' ')
		return false;
	while (*p && *p != ' ' && np < sizeof(m->perms) - 1)
		m->perms[np++] = *p++;
	m->perms[np] = '\0';
	if (*p++ != ' ' || !hex_field(&p, &off) || *p++ != ' ' || !hex_field(&p, &maj) ||
	    *p++ != ':' || !hex_field(&p, &min) || *p++ != ' ' || !dec_field(&p, &ino) ||
	    *p != ' ' || maj > 0xffffffffu || min > 0xffffffffu)
		return false;
	while (*p == ' ')
		p++;
	if (ino == 0 || *p != '/')
		return false;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->dev = (uint64_t)makedev((unsigned)maj, (unsigned)min);
	m->ino = ino;
	m->path = line + (p - line);
	len = strlen(m->path);
	if (len && m->path[len - 1] == '\n')
		m->path[--len] = '\0';
	m->deleted = len > sl && strcmp(m->path + len - sl, DELETED_SUFFIX) == 0;
	return true;
}
