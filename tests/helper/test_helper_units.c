// SPDX-License-Identifier: MIT
/*
 * Unit tests of the note side's pure parts (core/argspec.c, core/names.c,
 * kernel-helper/lib/tracefs.c): the argument-string parser
 * (forms gcc and clang print, as measured with gcc 12 and clang 14,
 * and forms that must be refused), tracefs name shortening, definition
 * lines, and parsing uprobe_events lines back. Expectations come from the
 * SDT format and the kernel's fetch-argument syntax, not from the code.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notes.h"
#include "tracefs.h"
#include "../lib/check.h"

struct want {
	enum usdt_argspec_kind kind;
	unsigned size;
	int is_signed;
	const char *reg;
	int64_t value;
};

static void one(enum usdt_arch arch, const char *s, struct want w)
{
	struct usdt_site p;

	memset(&p, 0, sizeof(p));
	CHECKF(usdt_parse_args(arch, s, &p) == 0, "%s: parse failed", s);
	CHECKF(p.nargs == 1, "%s: %u args", s, p.nargs);
	CHECKF(p.arg[0].kind == w.kind, "%s: kind %d, want %d (%s)", s, p.arg[0].kind, w.kind,
	       p.arg[0].why ? p.arg[0].why : "");
	if (w.kind == USDT_ARG_UNSUPPORTED) {
		CHECKF(p.arg[0].why && *p.arg[0].why, "%s: no reason", s);
		return;
	}
	CHECKF(p.arg[0].size == w.size, "%s: size %u want %u", s, p.arg[0].size, w.size);
	CHECKF(p.arg[0].is_signed == (bool)w.is_signed, "%s: sign", s);
	if (w.reg)
		CHECKF(strcmp(p.arg[0].reg, w.reg) == 0, "%s: reg %s want %s", s, p.arg[0].reg,
		       w.reg);
	CHECKF(p.arg[0].value == w.value, "%s: value %" PRId64 " want %" PRId64, s, p.arg[0].value,
	       w.value);
}

static void test_x86_args(void)
{
	const enum usdt_arch X = USDT_ARCH_X86_64;

	one(X, "-4@%edi", (struct want){USDT_ARG_REG, 4, 1, "edi", 0});
	one(X, "8@%rsi", (struct want){USDT_ARG_REG, 8, 0, "rsi", 0});
	one(X, "1@%sil", (struct want){USDT_ARG_REG, 1, 0, "sil", 0});
	one(X, "-2@%r9w", (struct want){USDT_ARG_REG, 2, 1, "r9w", 0});
	one(X, "-4@%r10d", (struct want){USDT_ARG_REG, 4, 1, "r10d", 0});
	one(X, "-4@(%rax)", (struct want){USDT_ARG_MEM, 4, 1, "rax", 0});
	one(X, "-8@8(%rax)", (struct want){USDT_ARG_MEM, 8, 1, "rax", 8});
	one(X, "-4@-100(%rsp)", (struct want){USDT_ARG_MEM, 4, 1, "rsp", -100});
	one(X, "8@0x10(%rbp)", (struct want){USDT_ARG_MEM, 8, 0, "rbp", 16});
	one(X, "-4@$42", (struct want){USDT_ARG_IMM, 4, 1, NULL, 42});
	one(X, "-4@$-7", (struct want){USDT_ARG_IMM, 4, 1, NULL, -7});
	one(X, "8@$0xffffffffffffffff", (struct want){USDT_ARG_IMM, 8, 0, NULL, -1});
	/* Refused forms: each one argument, unsupported, with a reason. */
	one(X, "-8@g(%rip)", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "8@(%r11,%rax,8)", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "1@-96(%rbp,%rax,8)", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "8f@%rcx", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4f@%r10d", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "16@%rax", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "3@%rax", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "1@%ah", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@%xmm0", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@$sym", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "%eax", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@%", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@()", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@8(%rax", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@$99999999999999999999999", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(X, "4@%r8extra", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	/* i386 has no 64-bit or r8+ registers. */
	one(USDT_ARCH_I386, "-4@%eax", (struct want){USDT_ARG_REG, 4, 1, "eax", 0});
	one(USDT_ARCH_I386, "-4@8(%ebp)", (struct want){USDT_ARG_MEM, 4, 1, "ebp", 8});
	one(USDT_ARCH_I386, "8@%rax", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(USDT_ARCH_I386, "4@%r8d", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
}

static void test_aarch64_args(void)
{
	const enum usdt_arch A = USDT_ARCH_AARCH64;

	one(A, "-4@x0", (struct want){USDT_ARG_REG, 4, 1, "x0", 0});
	one(A, "-4@w30", (struct want){USDT_ARG_REG, 4, 1, "w30", 0});
	one(A, "8@sp", (struct want){USDT_ARG_REG, 8, 0, "sp", 0});
	one(A, "-4@[x10]", (struct want){USDT_ARG_MEM, 4, 1, "x10", 0});
	one(A, "-4@[sp, 128]", (struct want){USDT_ARG_MEM, 4, 1, "sp", 128});
	one(A, "8@[x29, #-16]", (struct want){USDT_ARG_MEM, 8, 0, "x29", -16});
	one(A, "-4@42", (struct want){USDT_ARG_IMM, 4, 1, NULL, 42});
	one(A, "-4@#-42", (struct want){USDT_ARG_IMM, 4, 1, NULL, -42});
	one(A, "4@[x21, #:lo12:.LANCHOR2]", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(A, "4@x31", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(A, "4@x07", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
	one(A, "4@arr", (struct want){USDT_ARG_UNSUPPORTED, 0, 0, NULL, 0});
}

/* An operand at a symbol (the D consumer's engine reads it; tracefs cannot). */
static void sym_arg(enum usdt_arch arch, const char *spec, int want_rc, const char *want_sym,
		    int64_t want_add, const char *want_reg)
{
	struct usdt_argsym as;
	int rc = usdt_argspec_symbol(arch, spec, spec + strlen(spec), &as);

	CHECKF(rc == want_rc, "%s: rc %d want %d", spec, rc, want_rc);
	if (!want_rc)
		CHECKF(!strcmp(as.sym, want_sym) && as.add == want_add &&
			   !strcmp(as.reg, want_reg) && as.page == (*want_reg != 0),
		       "%s: '%s'%+" PRId64 " [%s] want '%s'%+" PRId64 " [%s]", spec, as.sym, as.add,
		       as.reg, want_sym, want_add, want_reg);
}

static void test_rip_symbols(void)
{
	const enum usdt_arch X = USDT_ARCH_X86_64, A = USDT_ARCH_AARCH64;
	char longer[300];

	sym_arg(X, "-8@g_var(%rip)", 0, "g_var", 0, "");
	sym_arg(X, "4@tab+8(%rip)", 0, "tab", 8, "");
	sym_arg(X, "-4@s_small.lto_priv.0(%rip)", 0, "s_small.lto_priv.0", 0, "");
	memset(longer, 'a', sizeof(longer));
	memcpy(longer, "8@", 2);
	strcpy(longer + sizeof(longer) - 7, "(%rip)"); /* a name longer than usdt_argsym's */
	sym_arg(X, longer, -EINVAL, NULL, 0, NULL);
	sym_arg(X, "-4@x.1-4(%rip)", 0, "x.1", -4, "");
	sym_arg(X, "8@16(%rip)", -EINVAL, NULL, 0, NULL);
	sym_arg(X, "8@g(%rax)", -EINVAL, NULL, 0, NULL);
	sym_arg(X, "8@(%rip)", -EINVAL, NULL, 0, NULL);
	sym_arg(X, "8@g+x(%rip)", -EINVAL, NULL, 0, NULL);
	sym_arg(X, "8@%rax", -EINVAL, NULL, 0, NULL);
	sym_arg(A, "-8@g_var(%rip)", -EINVAL, NULL, 0, NULL);
	/* arm64, as aarch64-linux-gnu-gcc -O2 writes a global with SystemTap's "nor" */
	sym_arg(A, "-8@[x0, #:lo12:e_var]", 0, "e_var", 0, "x0");
	sym_arg(A, "-8@[x0, #:lo12:.LANCHOR0]", 0, ".LANCHOR0", 0, "x0");
	sym_arg(A, "4@[x21, #:lo12:tab+12]", 0, "tab", 12, "x21");
	sym_arg(A, "4@[x3, :lo12:tab-4]", 0, "tab", -4, "x3");
	sym_arg(A, "4@[x3,#:lo12:g]", 0, "g", 0, "x3");
	sym_arg(A, "4@[sp, #:lo12:g]", -EINVAL, NULL, 0, NULL);
	sym_arg(A, "4@[x31, #:lo12:g]", -EINVAL, NULL, 0, NULL);
	sym_arg(A, "4@[x0, #:hi12:g]", -EINVAL, NULL, 0, NULL);
	sym_arg(A, "4@[x0, #:lo12:]", -EINVAL, NULL, 0, NULL);
	sym_arg(A, "4@[x0, 16]", -EINVAL, NULL, 0, NULL);
	sym_arg(A, "4@[x0, #:lo12:g", -EINVAL, NULL, 0, NULL);
	sym_arg(X, "4@[x0, #:lo12:g]", -EINVAL, NULL, 0, NULL);
}

static void test_arg_lists(void)
{
	struct usdt_site p;
	unsigned width;

	memset(&p, 0, sizeof(p));
	CHECKF(usdt_parse_args(USDT_ARCH_X86_64, "", &p) == 0 && p.nargs == 0, "empty");
	CHECKF(usdt_parse_args(USDT_ARCH_X86_64, "-4@%edi 8@(%r11,%rax,8) -8@%rsi", &p) == 0 &&
		   p.nargs == 3 && p.arg[0].kind == USDT_ARG_REG &&
		   p.arg[1].kind == USDT_ARG_UNSUPPORTED && p.arg[2].kind == USDT_ARG_REG,
	       "one bad argument leaves the others");
	CHECKF(usdt_parse_args(USDT_ARCH_X86_64,
			       "1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al "
			       "1@%al",
			       &p) == 0 &&
		   p.nargs == 12,
	       "12 arguments");
	CHECKF(usdt_parse_args(USDT_ARCH_X86_64,
			       "1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al "
			       "1@%al 1@%al",
			       &p) == -E2BIG,
	       "13 arguments refused");
	CHECKF(usdt_parse_args(USDT_ARCH_AARCH64, "-4@[sp, 28] 8@x1", &p) == 0 && p.nargs == 2 &&
		   p.arg[0].value == 28,
	       "aarch64 operand with a space");

	/* pt_regs names, as uprobe fetch arguments spell them (uprobes.md §1). */
	CHECKF(!strcmp(usdt_reg_fetch_name(USDT_ARCH_X86_64, "edi", &width), "%di") && width == 4,
	       "edi");
	CHECKF(!strcmp(usdt_reg_fetch_name(USDT_ARCH_X86_64, "r12b", &width), "%r12") && width == 1,
	       "r12b");
	CHECKF(!strcmp(usdt_reg_fetch_name(USDT_ARCH_X86_64, "rip", &width), "%ip"), "rip");
	CHECKF(!strcmp(usdt_reg_fetch_name(USDT_ARCH_I386, "esp", &width), "%sp"), "esp");
	CHECKF(!strcmp(usdt_reg_fetch_name(USDT_ARCH_AARCH64, "w7", &width), "%x7") && width == 4,
	       "w7");
}

/* FNV-1a 32 written out from its definition, to check the shortening independently. */
static uint32_t fnv(const char *s)
{
	uint32_t h = 0x811c9dc5u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x01000193u;
	return h;
}

static void test_names(void)
{
	char out[USDT_TRACEFS_NAME_MAX + 1], want[USDT_TRACEFS_NAME_MAX + 1], full[200];
	char long_name[71];

	CHECKF(!usdt_tracefs_name(out, "sdt_", "app") && !strcmp(out, "sdt_app"), "short group");
	memset(long_name, 'a', 63);
	long_name[63] = '\0';
	CHECKF(!usdt_tracefs_name(out, "", long_name) && strlen(out) == 63, "63 characters fit");
	memset(long_name, 'b', 70);
	long_name[70] = '\0';
	CHECKF(usdt_tracefs_name(out, "", long_name) && strlen(out) == 63, "70 shortened to 63");
	snprintf(want, sizeof(want), "%.54s_%08x", long_name, fnv(long_name));
	CHECKF(!strcmp(out, want), "shortened name %s, want %s", out, want);
	memset(long_name, 'c', 60);
	long_name[60] = '\0';
	CHECKF(usdt_tracefs_name(out, "sdt_", long_name), "group of 64 shortened");
	snprintf(full, sizeof(full), "sdt_%s", long_name);
	snprintf(want, sizeof(want), "%.54s_%08x", full, fnv(full));
	CHECKF(!strcmp(out, want), "shortened group %s, want %s", out, want);
}

static void test_definitions(void)
{
	struct usdt_site p;
	char line[USDT_UPROBE_LINE_MAX + 1];
	int n;

	memset(&p, 0, sizeof(p));
	p.arch = USDT_ARCH_X86_64;
	p.pc_off = 0x1077;
	p.sema_off = 0x3020;
	CHECKF(usdt_parse_args(p.arch, "-4@%edi -8@-24(%rbp) 1@$-56 8@%r12 8@g(%rip) 8@8(%rsi)",
			       &p) == 0,
	       "parse");
	CHECKF(usdt_site_set_arg_hint(&p, 3, NULL, true) == 0, "string hint on a register");
	CHECKF(usdt_site_set_arg_hint(&p, 5, "path", true) == 0, "named string on memory");
	CHECKF(usdt_site_set_arg_hint(&p, 2, NULL, true) == -EINVAL, "no string from immediate");
	CHECKF(usdt_site_set_arg_hint(&p, 0, "common_pid", false) == -EINVAL, "reserved name");
	CHECKF(usdt_site_set_arg_hint(&p, 0, "path", false) == -EINVAL, "duplicate name");
	CHECKF(usdt_site_set_arg_hint(&p, 0, "9x", false) == -EINVAL, "not an identifier");
	{
		struct usdt_site q;

		memset(&q, 0, sizeof(q));
		q.arch = USDT_ARCH_I386;
		CHECKF(usdt_parse_args(q.arch, "4@60(%esp) 4@%eax", &q) == 0, "i386 parse");
		CHECKF(usdt_site_set_arg_hint(&q, 0, NULL, true) == -EOPNOTSUPP,
		       "i386 pointer in memory cannot be a string");
		CHECKF(usdt_site_set_arg_hint(&q, 1, NULL, true) == 0,
		       "i386 pointer in a register");
	}
	n = usdt_uprobe_def(line, sizeof(line), "sdt_app", "go", "/usr/bin/app", &p);
	CHECKF(n > 0 && !strcmp(line, "p:sdt_app/go /usr/bin/app:0x1077(0x3020) arg1=%di:s32 "
				      "arg2=-24(%bp):s64 arg3=\\-56:u8 arg4=+0(%r12):ustring "
				      "path=+0(+8(%si)):ustring"),
	       "definition: %s", line);
	CHECKF(usdt_uprobe_def(line, sizeof(line), "sdt_app", "go", "/tmp/a b", &p) == -EINVAL,
	       "path with a space refused");
	CHECKF(usdt_uprobe_def(line, sizeof(line), "sdt-app", "go", "/bin/x", &p) == -EINVAL,
	       "group not an identifier refused");
	p.sema_off = 0;
	for (unsigned i = 0; i < p.nargs; i++)
		free(
		    p.arg[i].name); /* set_arg_hint's copies (the sanitizer run checks for leaks) */
	memset(p.arg, 0, sizeof(p.arg));
	p.nargs = 0;
	n = usdt_uprobe_def(line, sizeof(line), "sdt_app", "go", "/bin/x", &p);
	CHECKF(n > 0 && !strcmp(line, "p:sdt_app/go /bin/x:0x1077"), "no semaphore: %s", line);
	p.reject = "pc-not-nop";
	CHECKF(usdt_uprobe_def(line, sizeof(line), "sdt_app", "go", "/bin/x", &p) == -EINVAL,
	       "rejected probe refused");

	CHECKF(usdt_tracefs_path_ok("/usr/lib/x86_64-linux-gnu/libc.so.6"), "plain path");
	CHECKF(usdt_tracefs_path_ok("/tmp/p:co"), "colon is fine (measured)");
	CHECKF(!usdt_tracefs_path_ok("/tmp/p sp"), "space");
	CHECKF(!usdt_tracefs_path_ok("/tmp/p\nx"), "newline");
	CHECKF(!usdt_tracefs_path_ok("relative/x"), "relative");
}

static void test_listing(void)
{
	struct usdt_uprobe_entry e;

	CHECKF(usdt_uprobe_parse_line("p:sdt_app/go /tmp/hm/p:co:0x0000000000001077(0x3020) "
				      "arg1=\\-3:s8 arg2=%di:u64",
				      &e) == 0,
	       "parse listing");
	CHECKF(e.type == 'p' && !strcmp(e.group, "sdt_app") && !strcmp(e.event, "go") &&
		   !strcmp(e.path, "/tmp/hm/p:co") && e.off == 0x1077 && e.has_ref &&
		   e.ref == 0x3020 && !strcmp(e.args, "arg1=\\-3:s8 arg2=%di:u64"),
	       "listing fields");
	usdt_uprobe_entry_clear(&e);
	CHECKF(usdt_uprobe_parse_line("p:uprobes/p_x_0x10 /bin/x:0x0000000000000010", &e) == 0 &&
		   !e.has_ref && !strcmp(e.args, ""),
	       "no ref, no args");
	usdt_uprobe_entry_clear(&e);
	CHECKF(usdt_uprobe_parse_line("garbage", &e) == -EINVAL, "garbage");
	CHECKF(usdt_uprobe_parse_line("p:nogroup /bin/x:0x10", &e) == -EINVAL, "no group");
}

/*
 * --symbols FILE: every argument of FILE's notes at a symbol, as the D
 * consumer's engine reads it: "PROVIDER:NAME argK SYM+ADD REG VALUE", where
 * VALUE is the symbol's low 12 bits plus ADD's (arm64: what the register's
 * page is added to) or its address plus ADD (x86-64), or "absent" when the
 * file's symbol tables lack it. t-helper-argsym.sh reads it.
 */
static int print_symbols(const char *path)
{
	struct usdt_notes *n = NULL;
	char err[200];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || usdt_notes_read(fd, NULL, &n, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, fd < 0 ? strerror(errno) : err);
		return 1;
	}
	for (size_t i = 0; i < n->nsites; i++) {
		const struct usdt_site *st = &n->sites[i];
		const char *spec = st->args ? st->args : "", *e;

		for (unsigned k = 0; (spec = usdt_argspec_next(spec, &e)); k++, spec = e) {
			struct usdt_argsym as;
			uint64_t v;

			if (usdt_argspec_symbol(st->arch, spec, e, &as))
				continue;
			printf("%s:%s arg%u %s%+" PRId64 " %s ", st->provider, st->name, k, as.sym,
			       as.add, as.page ? as.reg : "rip");
			if (usdt_elf_symbol(fd, as.sym, &v))
				printf("absent\n");
			else if (as.page)
				printf("0x%" PRIx64 "\n", (v + (uint64_t)as.add) & 0xfff);
			else
				printf("0x%" PRIx64 "\n", v + (uint64_t)as.add);
		}
	}
	usdt_notes_free(n);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--symbols"))
		return print_symbols(argv[2]);
	test_x86_args();
	test_aarch64_args();
	test_arg_lists();
	test_rip_symbols();
	test_names();
	test_definitions();
	test_listing();
	if (!check_failures)
		printf("all unit checks passed\n");
	return check_result();
}
