// SPDX-License-Identifier: MIT
/*
 * The text of uprobe_events lines (the tracefs uprobe layer, tracefs.c):
 * a site's definition built from its note, and a listed line read back.
 * Text only: nothing here touches the kernel.
 *
 * Definitions are built only from fields the note reader validated:
 *   p:sdt_<provider>/<probe> PATH:0xOFF(0xREF) arg1=%di:s32 arg2=-8(%bp):u64 arg3=\42:s32
 * - OFF is the file offset of the site, REF the file offset of the semaphore:
 *   the same one bpftrace, perf and libbpf derive, since the kernel allows one
 *   ref_ctr per (inode, offset) and refuses a second, different one.
 * - Registers by their pt_regs names (%di, %r12, %ip; %x0 on arm64); a 32-bit
 *   alias (edi) fetches the full register and the note's size gives the type
 *   (s32), which keeps the low bytes: the kernel stores `size` bytes.
 * - Immediates as \VALUE, memory as +DISP(%reg)/-DISP(%reg); a string
 *   (known from metadata) as +0(%reg):ustring or +0(+DISP(%reg)):ustring,
 *   since the kernel fetches strings from memory operands only.
 * - Argument names: argN, N the position in the note, so a skipped
 *   unsupported argument does not renumber the others.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "names.h"
#include "tracefs.h"
#include "tracefs_int.h"

static int format_arg(char *buf, size_t len, unsigned pos, const struct usdt_argspec *a,
		      enum usdt_arch arch)
{
	char name[USDT_TRACEFS_NAME_MAX + 1], fetch[64], type[8];
	const char *reg = NULL;
	unsigned width;

	if (a->kind == USDT_ARG_UNSUPPORTED)
		return 0;
	if (a->kind != USDT_ARG_IMM) {
		reg = usdt_reg_fetch_name(arch, a->reg, &width);
		if (!reg)
			return 0; /* the parser guarantees a name; be safe anyway */
	}
	if (a->name)
		snprintf(name, sizeof(name), "%s", a->name);
	else
		snprintf(name, sizeof(name), "arg%u", pos);
	snprintf(type, sizeof(type), "%c%u", a->is_signed ? 's' : 'u', a->size * 8);
	switch (a->kind) {
	case USDT_ARG_REG:
		if (a->is_string)
			snprintf(fetch, sizeof(fetch), "+0(%s)", reg);
		else
			snprintf(fetch, sizeof(fetch), "%s", reg);
		break;
	case USDT_ARG_MEM:
		if (a->is_string)
			snprintf(fetch, sizeof(fetch), "+0(%s%" PRId64 "(%s))",
				 a->value < 0 ? "" : "+", a->value, reg);
		else
			snprintf(fetch, sizeof(fetch), "%s%" PRId64 "(%s)", a->value < 0 ? "" : "+",
				 a->value, reg);
		break;
	case USDT_ARG_IMM:
		snprintf(fetch, sizeof(fetch), "\\%" PRId64, a->value);
		break;
	case USDT_ARG_UNSUPPORTED:
		return 0;
	}
	return snprintf(buf, len, " %s=%s:%s", name, fetch, a->is_string ? "ustring" : type);
}

int usdt_uprobe_def(char *buf, size_t len, const char *group, const char *event, const char *path,
		    const struct usdt_site *p)
{
	size_t n;
	int w;

	if (p->reject || !usdt_tracefs_path_ok(path) ||
	    !usdt_is_identifier(group, USDT_TRACEFS_NAME_MAX) ||
	    !usdt_is_identifier(event, USDT_TRACEFS_NAME_MAX))
		return -EINVAL;
	if (p->sema_off)
		w = snprintf(buf, len, "p:%s/%s %s:0x%" PRIx64 "(0x%" PRIx64 ")", group, event,
			     path, p->pc_off, p->sema_off);
	else
		w = snprintf(buf, len, "p:%s/%s %s:0x%" PRIx64, group, event, path, p->pc_off);
	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	n = (size_t)w;
	for (unsigned i = 0; i < p->nargs; i++) {
		w = format_arg(buf + n, len - n, i + 1, &p->arg[i], p->arch);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	return n > USDT_UPROBE_LINE_MAX ? -ENAMETOOLONG : (int)n;
}

/*
 * The kernel's notion of an event's signature: argument names and types, in
 * order ("arg1:s32 arg3:ustring"), from the argument part of a line.
 */
void usdt_uprobe_signature(const char *args, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	while (*args) {
		const char *e, *eq, *colon = NULL;

		while (*args == ' ')
			args++;
		if (!*args)
			break;
		for (e = args; *e && *e != ' '; e++)
			if (*e == ':')
				colon = e;
		eq = memchr(args, '=', (size_t)(e - args));
		if (eq && n < len) {
			int w = snprintf(out + n, len - n, "%s%.*s:%.*s", n ? " " : "",
					 (int)(eq - args), args, colon ? (int)(e - colon - 1) : 3,
					 colon ? colon + 1 : "x64");
			n += w > 0 ? (size_t)w : 0;
		}
		args = e;
	}
}

int usdt_uprobe_parse_line(const char *line, struct usdt_uprobe_entry *e)
{
	const char *slash, *sp, *loc, *loc_end, *colon, *p;
	char *end;

	memset(e, 0, sizeof(*e));
	if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':')
		return -EINVAL;
	e->type = line[0];
	slash = strchr(line + 2, '/');
	sp = strchr(line + 2, ' ');
	if (!slash || !sp || slash > sp || (size_t)(slash - line - 2) > USDT_TRACEFS_NAME_MAX ||
	    (size_t)(sp - slash - 1) > USDT_TRACEFS_NAME_MAX)
		return -EINVAL;
	memcpy(e->group, line + 2, (size_t)(slash - line - 2));
	memcpy(e->event, slash + 1, (size_t)(sp - slash - 1));
	loc = sp + 1;
	loc_end = strchr(loc, ' ');
	if (!loc_end)
		loc_end = loc + strlen(loc);
	for (colon = NULL, p = loc; p < loc_end; p++)
		if (*p == ':')
			colon = p;
	if (!colon || colon == loc)
		return -EINVAL;
	errno = 0;
	e->off = strtoull(colon + 1, &end, 16);
	if (errno || end == colon + 1)
		return -EINVAL;
	if (*end == '(') {
		e->has_ref = true;
		e->ref = strtoull(end + 1, &end, 16);
		if (*end != ')')
			return -EINVAL;
		end++;
	}
	e->path = strndup(loc, (size_t)(colon - loc));
	e->args = strdup(*loc_end ? loc_end + 1 : "");
	if (!e->path || !e->args) {
		usdt_uprobe_entry_clear(e);
		return -ENOMEM;
	}
	return 0;
}

void usdt_uprobe_entry_clear(struct usdt_uprobe_entry *e)
{
	free(e->path);
	free(e->args);
	e->path = e->args = NULL;
}
