// SPDX-License-Identifier: MIT
/*
 * SDT argument strings: `[-]SIZE@OPERAND` separated by spaces, one per probe
 * argument, as the assembler printed the compiler's operand. Only the forms
 * every consumer reads and the kernel can fetch are accepted:
 *
 *   x86-64, i386   %reg          $imm            disp(%reg)   (%reg)
 *   aarch64        xN wN sp      imm  #imm       [reg]  [reg, #disp]  [reg, disp]
 *
 * SIZE is 1, 2, 4 or 8; a leading '-' means signed. Anything else (SIB
 * `(%r11,%rax,8)`, symbols `g(%rip)`, the float suffix `8f@`, high-byte
 * registers, sizes 16) makes that one argument USDT_ARG_UNSUPPORTED with a
 * reason: the probe still registers, without that argument, so a tracer sees
 * every probe a SystemTap-only consumer would. Parsing is strict on
 * purpose: the string comes from an untrusted file and ends up, translated,
 * in a line written to the kernel, so nothing is passed through verbatim.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "notes.h"

struct reg_alias {
	const char *name;  /* as the assembler writes it */
	const char *fetch; /* as uprobe fetch arguments name the full register */
	unsigned width;
};

/* x86-64: every name a GPR has, down to its low byte (not ah..dh: no fetch form). */
static const struct reg_alias x86_64_regs[] = {
    {"rax", "%ax", 8},	{"eax", "%ax", 4},   {"ax", "%ax", 2},	  {"al", "%ax", 1},
    {"rbx", "%bx", 8},	{"ebx", "%bx", 4},   {"bx", "%bx", 2},	  {"bl", "%bx", 1},
    {"rcx", "%cx", 8},	{"ecx", "%cx", 4},   {"cx", "%cx", 2},	  {"cl", "%cx", 1},
    {"rdx", "%dx", 8},	{"edx", "%dx", 4},   {"dx", "%dx", 2},	  {"dl", "%dx", 1},
    {"rsi", "%si", 8},	{"esi", "%si", 4},   {"si", "%si", 2},	  {"sil", "%si", 1},
    {"rdi", "%di", 8},	{"edi", "%di", 4},   {"di", "%di", 2},	  {"dil", "%di", 1},
    {"rbp", "%bp", 8},	{"ebp", "%bp", 4},   {"bp", "%bp", 2},	  {"bpl", "%bp", 1},
    {"rsp", "%sp", 8},	{"esp", "%sp", 4},   {"sp", "%sp", 2},	  {"spl", "%sp", 1},
    {"r8", "%r8", 8},	{"r8d", "%r8", 4},   {"r8w", "%r8", 2},	  {"r8b", "%r8", 1},
    {"r9", "%r9", 8},	{"r9d", "%r9", 4},   {"r9w", "%r9", 2},	  {"r9b", "%r9", 1},
    {"r10", "%r10", 8}, {"r10d", "%r10", 4}, {"r10w", "%r10", 2}, {"r10b", "%r10", 1},
    {"r11", "%r11", 8}, {"r11d", "%r11", 4}, {"r11w", "%r11", 2}, {"r11b", "%r11", 1},
    {"r12", "%r12", 8}, {"r12d", "%r12", 4}, {"r12w", "%r12", 2}, {"r12b", "%r12", 1},
    {"r13", "%r13", 8}, {"r13d", "%r13", 4}, {"r13w", "%r13", 2}, {"r13b", "%r13", 1},
    {"r14", "%r14", 8}, {"r14d", "%r14", 4}, {"r14w", "%r14", 2}, {"r14b", "%r14", 1},
    {"r15", "%r15", 8}, {"r15d", "%r15", 4}, {"r15w", "%r15", 2}, {"r15b", "%r15", 1},
    {"rip", "%ip", 8},	{NULL, NULL, 0},
};

/*
 * i386: a 32-bit process under an x86-64 kernel is probed through the 64-bit
 * pt_regs, whose names are the same short ones; the note's size still gives
 * the width.
 */
static const struct reg_alias i386_regs[] = {
    {"eax", "%ax", 4}, {"ax", "%ax", 2},  {"al", "%ax", 1},  {"ebx", "%bx", 4}, {"bx", "%bx", 2},
    {"bl", "%bx", 1},  {"ecx", "%cx", 4}, {"cx", "%cx", 2},  {"cl", "%cx", 1},	{"edx", "%dx", 4},
    {"dx", "%dx", 2},  {"dl", "%dx", 1},  {"esi", "%si", 4}, {"si", "%si", 2},	{"edi", "%di", 4},
    {"di", "%di", 2},  {"ebp", "%bp", 4}, {"bp", "%bp", 2},  {"esp", "%sp", 4}, {"sp", "%sp", 2},
    {"eip", "%ip", 4}, {NULL, NULL, 0},
};

static const char *const aarch64_fetch[] = {
    "%x0",  "%x1",  "%x2",  "%x3",  "%x4",  "%x5",  "%x6",  "%x7",  "%x8",  "%x9",  "%x10",
    "%x11", "%x12", "%x13", "%x14", "%x15", "%x16", "%x17", "%x18", "%x19", "%x20", "%x21",
    "%x22", "%x23", "%x24", "%x25", "%x26", "%x27", "%x28", "%x29", "%x30",
};

const char *usdt_arch_name(enum usdt_arch arch)
{
	switch (arch) {
	case USDT_ARCH_X86_64:
		return "x86_64";
	case USDT_ARCH_I386:
		return "i386";
	case USDT_ARCH_AARCH64:
		return "aarch64";
	}
	return "?";
}

const char *usdt_reg_fetch_name(enum usdt_arch arch, const char *reg, unsigned *width)
{
	const struct reg_alias *t = arch == USDT_ARCH_I386 ? i386_regs : x86_64_regs;

	if (arch == USDT_ARCH_AARCH64) {
		unsigned n = 0;
		const char *d = reg + 1;

		if (strcmp(reg, "sp") == 0) {
			*width = 8;
			return "%sp";
		}
		if ((reg[0] != 'x' && reg[0] != 'w') || d[0] < '0' || d[0] > '9')
			return NULL;
		if (d[0] == '0' && d[1] != '\0')
			return NULL; /* "x07": not a name an assembler prints */
		for (; *d; d++) {
			if (*d < '0' || *d > '9' || n > 30)
				return NULL;
			n = n * 10 + (unsigned)(*d - '0');
		}
		if (n > 30)
			return NULL;
		*width = reg[0] == 'x' ? 8 : 4;
		return aarch64_fetch[n];
	}
	for (; t->name; t++) {
		if (strcmp(t->name, reg) == 0) {
			*width = t->width;
			return t->fetch;
		}
	}
	return NULL;
}

/*
 * A decimal or 0x-hexadecimal integer with an optional '-', spanning exactly
 * [s, e). Values are taken modulo 2^64 (a `$0xffffffffffffffff` immediate is
 * -1); more than 16 hex or 20 decimal digits is an error.
 */
static int parse_int(const char *s, const char *e, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;
	unsigned digits = 0;

	if (s < e && *s == '-') {
		neg = true;
		s++;
	}
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (s += 2; s < e; s++, digits++) {
			unsigned d;

			if (*s >= '0' && *s <= '9')
				d = (unsigned)(*s - '0');
			else if (*s >= 'a' && *s <= 'f')
				d = (unsigned)(*s - 'a' + 10);
			else if (*s >= 'A' && *s <= 'F')
				d = (unsigned)(*s - 'A' + 10);
			else
				return -EINVAL;
			if (digits >= 16)
				return -ERANGE;
			v = v << 4 | d;
		}
	} else {
		for (; s < e; s++, digits++) {
			if (*s < '0' || *s > '9')
				return -EINVAL;
			if (digits >= 20)
				return -ERANGE;
			v = v * 10 + (uint64_t)(*s - '0');
		}
	}
	if (digits == 0)
		return -EINVAL;
	*out = (int64_t)(neg ? 0 - v : v);
	return 0;
}

static void unsupported(struct usdt_argspec *a, const char *why)
{
	a->kind = USDT_ARG_UNSUPPORTED;
	a->why = why;
	a->reg[0] = '\0';
	a->value = 0;
}

/* Copies a register name [s, e) into a->reg and checks that it has a fetch name. */
static int set_reg(enum usdt_arch arch, struct usdt_argspec *a, const char *s, const char *e)
{
	unsigned width;

	if (e - s <= 0 || (size_t)(e - s) >= sizeof(a->reg)) {
		unsupported(a, "unknown register");
		return -EINVAL;
	}
	memcpy(a->reg, s, (size_t)(e - s));
	a->reg[e - s] = '\0';
	if (!usdt_reg_fetch_name(arch, a->reg, &width)) {
		unsupported(a, strcmp(a->reg, "ah") == 0 || strcmp(a->reg, "bh") == 0 ||
				       strcmp(a->reg, "ch") == 0 || strcmp(a->reg, "dh") == 0
				   ? "high-byte register"
				   : "unknown register");
		return -EINVAL;
	}
	return 0;
}

static void parse_x86_operand(enum usdt_arch arch, struct usdt_argspec *a, const char *s,
			      const char *e)
{
	const char *open;

	if (*s == '%') {
		if (set_reg(arch, a, s + 1, e) == 0)
			a->kind = USDT_ARG_REG;
		return;
	}
	if (*s == '$') {
		if (parse_int(s + 1, e, &a->value) != 0) {
			unsupported(a, "immediate is not an integer (a symbol?)");
			return;
		}
		a->kind = USDT_ARG_IMM;
		return;
	}
	open = memchr(s, '(', (size_t)(e - s));
	if (!open || e[-1] != ')') {
		unsupported(a, "operand form not supported");
		return;
	}
	if (memchr(open, ',', (size_t)(e - open))) {
		unsupported(a, "indexed (SIB) operand");
		return;
	}
	if (open[1] != '%') {
		unsupported(a, "operand form not supported");
		return;
	}
	if (open == s)
		a->value = 0;
	else if (parse_int(s, open, &a->value) != 0) {
		unsupported(a, "displacement is not an integer (a symbol?)");
		return;
	}
	if (set_reg(arch, a, open + 2, e - 1) == 0)
		a->kind = USDT_ARG_MEM;
}

static void parse_aarch64_operand(struct usdt_argspec *a, const char *s, const char *e)
{
	const char *comma, *d;

	if (*s == '[') {
		if (e[-1] != ']') {
			unsupported(a, "operand form not supported");
			return;
		}
		comma = memchr(s, ',', (size_t)(e - s));
		if (!comma) {
			a->value = 0;
			comma = e - 1;
		} else {
			d = comma + 1;
			if (d < e && *d == ' ')
				d++;
			if (d < e && *d == '#')
				d++;
			if (parse_int(d, e - 1, &a->value) != 0) {
				unsupported(a, "offset is not an integer (a symbol or register?)");
				return;
			}
		}
		if (set_reg(USDT_ARCH_AARCH64, a, s + 1, comma) == 0)
			a->kind = USDT_ARG_MEM;
		return;
	}
	if (*s == '#' || *s == '-' || (*s >= '0' && *s <= '9')) {
		if (parse_int(s + (*s == '#'), e, &a->value) != 0) {
			unsupported(a, "immediate is not an integer");
			return;
		}
		a->kind = USDT_ARG_IMM;
		return;
	}
	if (set_reg(USDT_ARCH_AARCH64, a, s, e) == 0)
		a->kind = USDT_ARG_REG;
}

static void parse_one(enum usdt_arch arch, struct usdt_argspec *a, const char *s, const char *e)
{
	const char *at = memchr(s, '@', (size_t)(e - s));
	const char *p = s;

	memset(a, 0, sizeof(*a));
	if (!at || at + 1 == e) {
		unsupported(a, "not SIZE@OPERAND");
		return;
	}
	if (*p == '-') {
		a->is_signed = true;
		p++;
	}
	if (at - p == 2 && p[0] == '8' && p[1] == 'f') {
		unsupported(a, "floating-point argument");
		return;
	}
	if (at - p == 2 && p[0] == '4' && p[1] == 'f') {
		unsupported(a, "floating-point argument");
		return;
	}
	if (at - p != 1 || (*p != '1' && *p != '2' && *p != '4' && *p != '8')) {
		unsupported(a, "size is not 1, 2, 4 or 8");
		return;
	}
	a->size = (unsigned)(*p - '0');
	if (arch == USDT_ARCH_AARCH64)
		parse_aarch64_operand(a, at + 1, e);
	else
		parse_x86_operand(arch, a, at + 1, e);
}

const char *usdt_argspec_next(const char *s, const char **end)
{
	const char *e;
	int depth = 0;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	/* aarch64 memory operands contain a space: "[sp, 28]". */
	for (e = s; *e && (*e != ' ' || depth > 0); e++) {
		if (*e == '[')
			depth++;
		else if (*e == ']' && depth > 0)
			depth--;
	}
	*end = e;
	return s;
}

unsigned usdt_argspec_count(const char *s)
{
	unsigned n = 0;
	const char *e;

	while ((s = usdt_argspec_next(s, &e)) != NULL) {
		n++;
		s = e;
	}
	return n;
}

/* "sym", "sym+8" or "sym-4" in [op, end): the name into sym (n bytes), the addend. */
static int symbol_plus(const char *op, const char *end, char *sym, size_t n, int64_t *add)
{
	const char *q;
	size_t len;

	*add = 0;
	if (op >= end)
		return -EINVAL;
	/* the symbol: up to a '+' or '-' past its first character */
	for (q = op + 1; q < end && *q != '+' && *q != '-'; q++)
		;
	len = (size_t)(q - op);
	if (!len || len >= n || (*op >= '0' && *op <= '9') || *op == '-')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = op[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '$'))
			return -EINVAL;
	}
	if (q < end && parse_int(*q == '+' ? q + 1 : q, end, add) != 0)
		return -EINVAL;
	memcpy(sym, op, len);
	sym[len] = '\0';
	return 0;
}

/* arm64's "[xN, #:lo12:sym+K]" in [op, e): the register, the symbol, the addend. */
static int aarch64_symbol(const char *op, const char *e, struct usdt_argsym *out)
{
	static const char lo12[] = ":lo12:";
	const char *comma, *d;
	struct usdt_argspec r;

	if (op >= e || *op != '[' || e[-1] != ']')
		return -EINVAL;
	comma = memchr(op, ',', (size_t)(e - op));
	if (!comma)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	if (set_reg(USDT_ARCH_AARCH64, &r, op + 1, comma) || !strcmp(r.reg, "sp") ||
	    strlen(r.reg) >= sizeof(out->reg))
		return -EINVAL;
	d = comma + 1;
	if (d < e && *d == ' ')
		d++;
	if (d < e && *d == '#')
		d++;
	if ((size_t)(e - 1 - d) <= sizeof(lo12) - 1 || memcmp(d, lo12, sizeof(lo12) - 1))
		return -EINVAL;
	if (symbol_plus(d + sizeof(lo12) - 1, e - 1, out->sym, sizeof(out->sym), &out->add))
		return -EINVAL;
	strcpy(out->reg, r.reg);
	out->page = true;
	return 0;
}

int usdt_argspec_symbol(enum usdt_arch arch, const char *s, const char *e, struct usdt_argsym *out)
{
	const char *at = memchr(s, '@', (size_t)(e - s));
	static const char rip[] = "(%rip)";

	memset(out, 0, sizeof(*out));
	if (!at)
		return -EINVAL;
	if (arch == USDT_ARCH_AARCH64)
		return aarch64_symbol(at + 1, e, out);
	if (arch != USDT_ARCH_X86_64 || (size_t)(e - at - 1) <= sizeof(rip) - 1 ||
	    memcmp(e - (sizeof(rip) - 1), rip, sizeof(rip) - 1))
		return -EINVAL;
	return symbol_plus(at + 1, e - (sizeof(rip) - 1), out->sym, sizeof(out->sym), &out->add);
}

int usdt_parse_args(enum usdt_arch arch, const char *s, struct usdt_site *p)
{
	const char *e;

	p->nargs = 0;
	while ((s = usdt_argspec_next(s, &e)) != NULL) {
		if (p->nargs == USDT_SDT_MAX_ARGS)
			return -E2BIG;
		parse_one(arch, &p->arg[p->nargs++], s, e);
		s = e;
	}
	return 0;
}
