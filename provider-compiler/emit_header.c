/* SPDX-License-Identifier: MIT */
/*
 * The header emitter (`dtrace -h`).
 *
 * Theory. A generated header gives every probe NAME of provider PROV two
 * macros, PROV_NAME(args...) and PROV_NAME_ENABLED(), and nothing a program
 * has to link against: the probe sites come from <sys/sdt.h> (ours or
 * SystemTap's, whichever is first on the include path) and the semaphores
 * from the `dtrace -G` object. What we emit must survive what real build
 * systems do to it afterwards (docs/compat.md, "Header shape"), which fixes
 * most of its layout:
 *
 *  - every `#define NAME(` of a probe or _ENABLED() macro is alone on its
 *    line and its body sits on continuation lines, so Erlang's sed, which
 *    lower-cases whole `#define ERLANG_X(...)` lines, renames only the macro;
 *  - no line holds more than one upper-case macro name and internal helper
 *    names are lower-case, so prefix renames (`s/PYTHON_/PyDTrace_/`, with or
 *    without g) keep definitions and uses in step;
 *  - a string type is written `char *`, with its space, so PostgreSQL's sed
 *    that turns `(char *` into `(const char *` reaches the type checks; a
 *    leading `const` is moved after the base type (`char const *`) so that
 *    such seds never produce `const const`, and other types with char
 *    pointers are written without the space (`char**`, `unsigned char*`) so
 *    that those seds leave them alone;
 *  - the two literal lines `#define _SDT_HAS_SEMAPHORES 1` and
 *    `#define STAP_HAS_SEMAPHORES 1` may be turned into #undef (GLib): then no
 *    semaphore is referenced anywhere and _ENABLED() is a constant 1, so the
 *    header needs no -G object.
 *
 * What we add over every peer, without costing a disabled probe anything:
 *  - the argument count is checked by the preprocessor (a fixed-parameter
 *    macro), the argument types by the compiler, unevaluated. A mismatch is
 *    the use of a deprecated declaration whose message names the probe, the
 *    argument and the declared type: a warning (-Werror makes it an error)
 *    that none of the conversion errors GCC 14 and clang made default can
 *    reach, since the check converts nothing. C++ chooses between ok(T) and a
 *    deprecated ok(...) by overload resolution; C computes its assignment
 *    rules with GNU builtins (see emit_checks.c). The type checks are on in
 *    a header made with `dtrace -h -x typecheck` (what usdtkit's CMake,
 *    Autotools and Meson rules run) and off in one made by plain `dtrace
 *    -h`, i.e. by build rules written for SystemTap's tool, whose header
 *    checks no types: real .d files declare types their code does not pass
 *    (libvirt, GLib), and a drop-in must not add a diagnostic to a build
 *    (-Werror builds would stop). Off, each check goes through a switch
 *    (__usdt_hdr_num_if...) that USDTKIT_TYPE_CHECKS, defined before the
 *    first usdtkit header, turns on. USDTKIT_NO_TYPE_CHECKS turns every
 *    check off, USDTKIT_TYPE_CHECK_ERRORS makes them errors. The count check
 *    stays on: SystemTap's header also fails to compile a wrong count.
 *    Arguments whose type C cannot spell (c_spelling NULL, structs,
 *    function pointers) are left unchecked. Each argument is evaluated
 *    once, by the probe site itself.
 *  - the header includes what DTrace's own headers do (<unistd.h>,
 *    <inttypes.h>), which programs written against them rely on.
 *  - _ENABLED() reads its semaphore through a volatile lvalue, so a loop
 *    testing it notices a tracer attaching; that is the same single
 *    compare-with-memory SystemTap's header costs.
 *  - a probe with more arguments than <sys/sdt.h> sites carry (12) gets a
 *    macro that fails to compile with an identifier naming the probe, only
 *    where it is used; the header itself stays valid.
 *  - two probes whose macro names collide are reported instead of producing
 *    a header that silently redefines one.
 *
 * User parameter names never reach the generated C (they may be `class` or
 * `errno`); macro parameters are arg1..argN as in SystemTap's header. Names
 * in the notes and semaphores are the probe names as written (`__` kept).
 */
#include "emit_header.h"
#include "front.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* "dir/probes.h.tmp" -> "_PROBES_H_TMP" (illumos builds it the same way). */
static char *guard_name(const char *output_name)
{
	const char *base = output_name ? strrchr(output_name, '/') : NULL;
	size_t i, n;
	char *g;

	base = base ? base + 1 : (output_name && *output_name ? output_name : "probes.h");
	n = strlen(base);
	g = malloc(n + 2);
	if (!g)
		return NULL;
	g[0] = '_';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)base[i];

		g[i + 1] = isalnum(c) ? (char)toupper(c) : '_';
	}
	g[n + 1] = '\0';
	return g;
}

/*
 * Only a plain string, `char *`, keeps the space the const-adding seds look
 * for: they mean to turn string arguments into `const char *`, and applied to
 * `char **`, `unsigned char *` or `char * const *` they would make a type an
 * argument no longer converts to (or, for `unsigned char *`, not a type).
 * Those are written `char**`, `unsigned char*`, `char* const *`.
 */
static const char *unspace_char_pointers(const char *s, char *buf, size_t bufsz)
{
	char tmp[512];
	const char *p;
	size_t n = 0;

	if (!strcmp(s, "char *") || !strstr(s, "char *") || strlen(s) >= sizeof(tmp) ||
	    strlen(s) >= bufsz)
		return s;
	for (p = s; *p; p++) {
		tmp[n++] = *p;
		if (!strncmp(p, "char *", 6)) {
			memcpy(tmp + n, "har*", 4);
			n += 4;
			p += 5;
		}
	}
	tmp[n] = '\0';
	memcpy(buf, tmp, n + 1);
	return buf;
}

/*
 * The type an argument is checked against, or NULL to leave it unchecked.
 * Returned in buf (or a static string).
 */
static const char *check_type(const struct usdt_arg *a, char *buf, size_t bufsz)
{
	const char *s = a->type.c_spelling;
	const char *star;

	if (!s || !*s || a->type.cls == USDT_T_OTHER)
		return NULL;
	/*
	 * A function pointer's commas would split the helper macro's
	 * arguments; arrays and anything else parenthesised are not values a
	 * site can carry.
	 */
	if (strpbrk(s, ",()[]"))
		return NULL;
	/*
	 * A tag type named only in the .d cannot be named in C (a struct in a
	 * parameter list is scoped to it; in C++ it may live in a namespace):
	 * check a pointer to one as "some object pointer".
	 */
	if (strstr(s, "struct ") || strstr(s, "union ") || strstr(s, "enum ")) {
		if (a->type.cls == USDT_T_POINTER && strchr(s, '*'))
			return "const volatile void *";
		return NULL;
	}
	/* bool needs <stdbool.h> in C, which may clash with a program's own bool. */
	if (!strcmp(s, "bool") || !strcmp(s, "_Bool"))
		return NULL;
	/*
	 * For an integer every integer converts without a diagnostic, so the
	 * check only asks "is it an integer", and `long long` may be spelled
	 * `long`: C90 and C++98 under -Wpedantic reject the spelling, and
	 * g++ ignores __extension__ for it inside a macro expansion.
	 */
	if (a->type.cls == USDT_T_INTEGER && !strchr(s, '*') && strstr(s, "long long")) {
		const char *ll = strstr(s, "long long");

		if (strlen(s) >= bufsz)
			return NULL;
		snprintf(buf, bufsz, "%.*s%s", (int)(ll - s), s, ll + 5);
		return buf;
	}
	/* "const char *" -> "char const *": see the theory (const-adding seds). */
	star = strchr(s, '*');
	if (!strncmp(s, "const ", 6) && star && star > s + 6) {
		size_t baselen = (size_t)(star - (s + 6));

		while (baselen && s[6 + baselen - 1] == ' ')
			baselen--;
		if (baselen + strlen(star) + 8 > bufsz)
			return NULL;
		snprintf(buf, bufsz, "%.*s const %s", (int)baselen, s + 6, star);
		s = buf;
	}
	return unspace_char_pointers(s, buf, bufsz);
}

/* s (n characters) is `void` with qualifiers only: "const volatile void ". */
static bool is_qualified_void(const char *s, size_t n)
{
	bool seen_void = false;

	while (n) {
		size_t w = strcspn(s, " ");

		if (w > n)
			w = n;
		if (w == 4 && !strncmp(s, "void", 4))
			seen_void = true;
		else if (w && !(w == 5 && !strncmp(s, "const", 5)) &&
			 !(w == 8 && !strncmp(s, "volatile", 8)))
			return false;
		s += w;
		n -= w;
		while (n && *s == ' ') {
			s++;
			n--;
		}
	}
	return seen_void;
}

/*
 * The prologue's helper that checks an argument against t: C must know
 * whether t is a number, a pointer to void or another pointer (C++ need not).
 */
static const char *check_helper(const struct usdt_arg *a, const char *t)
{
	const char *star = strchr(t, '*');

	if (a->type.cls == USDT_T_INTEGER || a->type.cls == USDT_T_FLOAT || !star)
		return "__usdt_hdr_num";
	if (star == strrchr(t, '*') && is_qualified_void(t, (size_t)(star - t)))
		return "__usdt_hdr_vptr";
	return "__usdt_hdr_ptr";
}

/* A type spelling for a comment: never let it close the comment. */
static void put_comment_text(struct usdt_sbuf *out, const char *s)
{
	const char *end;

	while ((end = strstr(s, "*/")) != NULL) {
		usdt_sb_putn(out, s, (size_t)(end - s) + 1);
		usdt_sb_putc(out, ' ');
		s = end + 1;
	}
	usdt_sb_puts(out, s);
}

static void put_uint(struct usdt_sbuf *out, size_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	usdt_sb_puts(out, p);
}

static void put_strs(struct usdt_sbuf *out, const char *const *strs)
{
	for (; *strs; strs++)
		usdt_sb_puts(out, *strs);
}

#define PUT(out, ...) put_strs(out, (const char *const[]){__VA_ARGS__, NULL})

static void put_arg_list(struct usdt_sbuf *out, const struct usdt_arg *args, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			usdt_sb_puts(out, ", ");
		put_comment_text(out, args[i].type.spelling ? args[i].type.spelling : "?");
		if (args[i].name) {
			usdt_sb_putc(out, ' ');
			put_comment_text(out, args[i].name);
		}
	}
}

static bool has_translation(const struct usdt_probe *p)
{
	size_t i;

	if (!p->xargs)
		return false;
	if (p->nxargs != p->nargs)
		return true;
	for (i = 0; i < p->nxargs; i++) {
		const char *a = p->args[i].type.spelling, *b = p->xargs[i].type.spelling;

		if ((p->argmap && p->argmap[i] != i) || !a || !b || strcmp(a, b))
			return true;
	}
	return false;
}

/* The D declaration of the probe, for the reader of the header. */
static void put_signature_comment(struct usdt_sbuf *out, const struct usdt_provider *pv,
				  const struct usdt_probe *p)
{
	char *dname = usdt_probe_dtrace_name(p->name);

	usdt_sb_puts(out, "/* ");
	put_comment_text(out, pv->name);
	usdt_sb_puts(out, ":::");
	put_comment_text(out, dname ? dname : p->name);
	usdt_sb_puts(out, "  probe ");
	put_comment_text(out, p->name);
	usdt_sb_putc(out, '(');
	put_arg_list(out, p->args, p->nargs);
	usdt_sb_putc(out, ')');
	if (has_translation(p)) {
		usdt_sb_puts(out, " : (");
		put_arg_list(out, p->xargs, p->nxargs);
		usdt_sb_putc(out, ')');
	}
	usdt_sb_puts(out, " */\n");
	free(dname);
}

static void put_params(struct usdt_sbuf *out, size_t n)
{
	size_t i;

	for (i = 1; i <= n; i++) {
		usdt_sb_puts(out, i > 1 ? ", arg" : "arg");
		put_uint(out, i);
	}
}

static int emit_probe(struct usdt_sbuf *out, const struct usdt_provider *pv,
		      const struct usdt_probe *p, bool type_checks, struct usdt_diag *diag)
{
	char *macro = usdt_probe_macro_name(pv->name, p->name);
	char *sem = usdt_probe_semaphore_name(pv->name, p->name);
	char *dname = usdt_probe_dtrace_name(p->name);
	size_t i;

	if (!macro || !sem || !dname) {
		free(macro);
		free(sem);
		free(dname);
		usdt_error(diag, "out of memory");
		return -1;
	}

	usdt_sb_putc(out, '\n');
	put_signature_comment(out, pv, p);
	PUT(out, "__extension__ extern unsigned short ", sem,
	    " __attribute__((__unused__, __section__(\".probes\"), "
	    "__visibility__(\"hidden\")));\n#define ",
	    macro, "(");
	put_params(out, p->nargs);
	usdt_sb_puts(out, ") \\\n");
	if (p->nargs > USDT_SDT_MAX_ARGS) {
		/* Fails where used, naming the probe; see the theory. */
		PUT(out, "do { \\\n\t(void)usdt_error_probe_", pv->name, "_", p->name, "_has_");
		put_uint(out, p->nargs);
		usdt_sb_puts(out, "_arguments_but_sdt_sites_carry_at_most_");
		put_uint(out, USDT_SDT_MAX_ARGS);
		usdt_sb_puts(out, "; \\\n} while (0)\n");
	} else {
		usdt_sb_puts(out, "do { \\\n");
		for (i = 0; i < p->nargs; i++) {
			char buf[512];
			const char *t = check_type(&p->args[i], buf, sizeof(buf));

			if (!t)
				continue;
			PUT(out, "\t", check_helper(&p->args[i], t), type_checks ? "(" : "_if(", t,
			    ", arg");
			put_uint(out, i + 1);
			PUT(out, ", \"", pv->name, ":", dname ? dname : p->name, "\", ");
			put_uint(out, i + 1);
			usdt_sb_puts(out, "); \\\n");
		}
		if (p->nargs == 0) {
			PUT(out, "\tSTAP_PROBE(", pv->name, ", ", p->name, "); \\\n");
		} else {
			usdt_sb_puts(out, "\tSTAP_PROBE");
			put_uint(out, p->nargs);
			PUT(out, "(", pv->name, ", ", p->name, ", ");
			put_params(out, p->nargs);
			usdt_sb_puts(out, "); \\\n");
		}
		usdt_sb_puts(out, "} while (0)\n");
	}
	PUT(out, "#define ", macro, "_ENABLED() \\\n\t__usdt_hdr_enabled(", sem, ")\n");
	free(macro);
	free(sem);
	free(dname);
	return 0;
}

struct macro_ref {
	char *name;
	const struct usdt_probe *probe;
	const struct usdt_provider *provider;
	bool enabled; /* the _ENABLED() macro of the probe */
};

static int cmp_macro_ref(const void *a, const void *b)
{
	const struct macro_ref *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * Two probes (of any providers) whose macros would be spelled alike:
 * `a__b` and `a_b`, or `x` and `x_enabled` (X_ENABLED). C would see a
 * redefinition only where both are used, so reject the .d here.
 */
static int check_macro_collisions(const struct usdt_program *prog, struct usdt_diag *diag)
{
	size_t n = 0, i, j, k = 0;
	struct macro_ref *refs;
	int err = 0;

	for (i = 0; i < prog->nproviders; i++)
		n += prog->providers[i].nprobes;
	if (n == 0)
		return 0;
	refs = calloc(2 * n, sizeof(*refs));
	if (!refs) {
		usdt_error(diag, "out of memory");
		return -1;
	}
	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *pv = &prog->providers[i];

		for (j = 0; j < pv->nprobes; j++) {
			char *m = usdt_probe_macro_name(pv->name, pv->probes[j].name);
			size_t len = m ? strlen(m) : 0;
			char *e = m ? malloc(len + sizeof("_ENABLED")) : NULL;

			if (!e) {
				free(m);
				usdt_error(diag, "out of memory");
				err = -1;
				goto out;
			}
			memcpy(e, m, len);
			memcpy(e + len, "_ENABLED", sizeof("_ENABLED"));
			refs[k].name = m;
			refs[k].probe = &pv->probes[j];
			refs[k++].provider = pv;
			refs[k].name = e;
			refs[k].probe = &pv->probes[j];
			refs[k].enabled = true;
			refs[k++].provider = pv;
		}
	}
	qsort(refs, k, sizeof(*refs), cmp_macro_ref);
	for (i = 1; i < k; i++) {
		const struct macro_ref *a = &refs[i - 1], *b = &refs[i];

		/* Equal probe macros imply equal _ENABLED() macros: report once. */
		if (strcmp(a->name, b->name) || a->probe == b->probe || (a->enabled && b->enabled))
			continue;
		/* Report at the later declaration when both are in one file. */
		if (a->probe->loc.file && b->probe->loc.file &&
		    !strcmp(a->probe->loc.file, b->probe->loc.file) &&
		    a->probe->loc.line > b->probe->loc.line) {
			const struct macro_ref *t = a;

			a = b;
			b = t;
		}
		usdt_error_at(diag, b->probe->loc.file, b->probe->loc.line, b->probe->loc.col, NULL,
			      "probe '%s:%s' would define macro %s, as probe '%s:%s' does",
			      b->provider->name, b->probe->name, b->name, a->provider->name,
			      a->probe->name);
		if (a->probe->loc.file)
			usdt_note_at(diag, a->probe->loc.file, a->probe->loc.line,
				     a->probe->loc.col, NULL, "'%s:%s' declared here",
				     a->provider->name, a->probe->name);
		err = -1;
	}
out:
	for (i = 0; i < k; i++)
		free(refs[i].name);
	free(refs);
	return err;
}

/*
 * Everything before the probes: the include guard, the includes and the two
 * helper macros every probe macro uses. The helpers are shared by every
 * usdtkit header in a translation unit (hence #ifndef) and spelled in lower
 * case so that no prefix rename touches them.
 */
static const char prologue[] =
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "#include <inttypes.h>\n"
    "#include <sys/types.h>\n"
    "#include <unistd.h>\n"
    "\n"
    "#ifndef _DTRACE_VERSION\n"
    "#define _DTRACE_VERSION 1\n"
    "#endif\n"
    "\n"
    "/*\n"
    " * Probe sites reference their semaphores only if <sys/sdt.h> saw\n"
    " * _SDT_HAS_SEMAPHORES when it was first included. If it was included\n"
    " * earlier without it, _ENABLED() must not wait for a semaphore no tracer\n"
    " * will ever raise.\n"
    " */\n"
    "#if !defined __usdt_hdr_enabled && defined _SYS_SDT_H && !defined _SDT_HAS_SEMAPHORES\n"
    "#define __usdt_hdr_sites_without_semaphores 1\n"
    "#endif\n"
    "#define _SDT_HAS_SEMAPHORES 1\n"
    "#define STAP_HAS_SEMAPHORES 1 /* deprecated */\n"
    "/* C++ templates inside: this header may be included inside extern \"C\" { }. */\n"
    "#ifdef __cplusplus\n"
    "extern \"C++\" {\n"
    "#endif\n"
    "#include <sys/sdt.h>\n"
    "#ifdef __cplusplus\n"
    "}\n"
    "#endif\n"
    "\n"
    "#ifndef __usdt_hdr_enabled\n"
    "#if defined _SDT_HAS_SEMAPHORES && !defined __usdt_hdr_sites_without_semaphores\n"
    "#ifdef __cplusplus\n"
    "#define __usdt_hdr_enabled(sem) \\\n"
    "\t__builtin_expect(*static_cast<volatile unsigned short *>(&(sem)) != 0, 0)\n"
    "#else\n"
    "#define __usdt_hdr_enabled(sem) \\\n"
    "\t__builtin_expect(*(volatile unsigned short *)&(sem) != 0, 0)\n"
    "#endif\n"
    "#else /* no semaphores: probes always fire, so always report enabled */\n"
    "#define __usdt_hdr_enabled(sem) 1\n"
    "#endif\n"
    "#endif\n"
    "\n";

static const char prologue_end[] = "#ifdef __cplusplus\n"
				   "extern \"C\" {\n"
				   "#endif\n";

static const char epilogue[] = "\n"
			       "#ifdef __cplusplus\n"
			       "}\n"
			       "#endif\n";

int usdt_emit_header(const struct usdt_program *prog, const char *output_name, bool type_checks,
		     FILE *fp, struct usdt_diag *diag)
{
	/*
	 * The header is built in memory and written with one fwrite: for a
	 * 1,000-probe provider it is about a megabyte in some 100,000 pieces, and
	 * stdio's per-call cost (format parsing, locking) was most of the
	 * emitter's time.
	 */
	struct usdt_sbuf ob = {NULL, 0, 0, false}, *out = &ob;
	char *guard;
	size_t i, j;

	if (check_macro_collisions(prog, diag))
		return -1;
	guard = guard_name(output_name);
	if (!guard) {
		usdt_error(diag, "out of memory");
		return -1;
	}

	usdt_sb_puts(out,
		     "/*\n"
		     " * Generated by usdtkit's dtrace -h: do not edit.\n"
		     " *\n"
		     " * For each probe NAME of provider PROV: PROV_NAME(args...) fires the probe\n"
		     " * (a NOP and a SystemTap .note.stapsdt entry) and PROV_NAME_ENABLED() is\n"
		     " * non-zero while a tracer is attached. Argument counts are checked at\n"
		     " * compile time, argument types too ");
	usdt_sb_puts(out, type_checks
			      ? "(made with -x typecheck; define\n"
				" * USDTKIT_NO_TYPE_CHECKS to turn them off); every argument is\n"
				" * evaluated exactly once.\n"
			      : "if USDTKIT_TYPE_CHECKS is defined\n"
				" * before the include (or with dtrace -h -x typecheck); every\n"
				" * argument is evaluated exactly once.\n");
	usdt_sb_puts(out, " */\n");
	PUT(out, "#ifndef ", guard, "\n#define ", guard, "\n\n");
	usdt_sb_puts(out, prologue);
	usdt_put_type_checks(out);
	usdt_sb_puts(out, prologue_end);

	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *pv = &prog->providers[i];

		usdt_sb_puts(out, "\n/* provider ");
		put_comment_text(out, pv->name);
		usdt_sb_puts(out, " */\n");
		for (j = 0; j < pv->nprobes; j++) {
			const struct usdt_probe *p = &pv->probes[j];

			if (p->nargs > USDT_SDT_MAX_ARGS)
				usdt_warning_at(
				    diag, p->loc.file, p->loc.line, p->loc.col, NULL,
				    "probe '%s:%s' has %zu arguments; <sys/sdt.h> sites "
				    "carry at most %d, so its macro fails to compile where "
				    "it is used",
				    pv->name, p->name, p->nargs, USDT_SDT_MAX_ARGS);
			if (emit_probe(out, pv, p, type_checks, diag)) {
				free(guard);
				free(ob.s);
				return -1;
			}
		}
	}

	usdt_sb_puts(out, epilogue);
	PUT(out, "\n#endif /* ", guard, " */\n");
	free(guard);
	if (ob.oom) {
		free(ob.s);
		usdt_error(diag, "out of memory");
		return -1;
	}
	if (fwrite(ob.s, 1, ob.len, fp) != ob.len || ferror(fp)) {
		free(ob.s);
		usdt_error(diag, "cannot write the header");
		return -1;
	}
	free(ob.s);
	return 0;
}
