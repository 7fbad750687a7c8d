/* SPDX-License-Identifier: MIT */
/*
 * usdt_parse() as a library call: what dump-model cannot show. Each check
 * states what the interface (usdt_provider.h, diag.h) promises. Also
 * usdt_needs_cpp(), which decides whether dtrace runs cpp without -C.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usdt_provider.h"
#include "../lib/check.h"

/* Parses text (copied into an exact-size, unterminated buffer), capturing diagnostics. */
static int parse(struct usdt_program *prog, const char *file, const char *text, char **msgs,
		 unsigned *errors)
{
	size_t n = strlen(text), size = 0;
	char *buf = malloc(n ? n : 1);
	struct usdt_diag diag;
	FILE *out;
	int rc;

	memcpy(buf, text, n);
	*msgs = NULL;
	out = open_memstream(msgs, &size);
	usdt_diag_init(&diag, out, "test");
	rc = usdt_parse(prog, file, buf, n, &diag);
	fclose(out);
	free(buf);
	*errors = diag.errors;
	return rc;
}

static void test_names_outlive_inputs(void)
{
	struct usdt_program prog;
	char *file = strdup("owned.d"), *msgs;
	unsigned errors;

	usdt_program_init(&prog);
	CHECK(parse(&prog, file,
		    "provider p { probe a(int x); };\n# 7 \"marker.d\"\nprovider q { probe b(); };",
		    &msgs, &errors) == 0);
	memset(file, 'X', strlen(file));
	free(file);
	CHECK(errors == 0 && msgs && !*msgs);
	CHECK(prog.nproviders == 2);
	if (prog.nproviders == 2) {
		CHECK(!strcmp(prog.providers[0].loc.file, "owned.d"));
		CHECK(!strcmp(prog.providers[0].probes[0].loc.file, "owned.d"));
		CHECK(!strcmp(prog.providers[0].probes[0].args[0].name, "x"));
		CHECK(!strcmp(prog.providers[1].loc.file, "marker.d"));
		CHECK(prog.providers[1].loc.line == 7);
	}
	free(msgs);
	usdt_program_free(&prog);
	CHECK(prog.nproviders == 0 && prog.providers == NULL && prog.priv == NULL);
}

static void test_error_then_success(void)
{
	struct usdt_program prog;
	char *msgs;
	unsigned errors;

	usdt_program_init(&prog);
	CHECK(parse(&prog, "bad.d", "provider bad { probe a(nosuch_t) probe b(int); };", &msgs,
		    &errors) == -1);
	CHECK(errors == 2);
	/* The exact gcc-style form: location, message, source line, caret. */
	CHECK(msgs && strstr(msgs, "bad.d:1:24: error: unknown type 'nosuch_t'\n"
				   "    1 | provider bad { probe a(nosuch_t) probe b(int); };\n"
				   "      |                        ^\n"));
	CHECK(msgs &&
	      strstr(msgs, "bad.d:1:33: error: expected ';' after the declaration of probe 'a'\n"));
	free(msgs);
	/* Both probes are in the model despite the errors. */
	CHECK(prog.nproviders == 1 && prog.providers[0].nprobes == 2);
	/* A later, clean source succeeds on its own. */
	CHECK(parse(&prog, "good.d", "provider bad { probe c(long); };", &msgs, &errors) == 0);
	CHECK(errors == 0);
	CHECK(prog.providers[0].nprobes == 3);
	free(msgs);
	usdt_program_free(&prog);
}

static void test_caret_under_tab(void)
{
	struct usdt_program prog;
	char *msgs;
	unsigned errors;

	usdt_program_init(&prog);
	CHECK(parse(&prog, "tab.d", "provider t {\n\tprobe a(void, int);\n};\n", &msgs, &errors) ==
	      -1);
	/* The caret line keeps the tab so that it lines up under the source. */
	CHECK(
	    msgs &&
	    strstr(msgs,
		   "tab.d:2:10: error: 'void' must be the only parameter of probe 'a' and unnamed\n"
		   "    2 | \tprobe a(void, int);\n"
		   "      | \t        ^\n"));
	free(msgs);
	usdt_program_free(&prog);
}

static void test_no_translation_invariant(void)
{
	struct usdt_program prog;
	char *msgs;
	unsigned errors;
	const struct usdt_probe *p;

	usdt_program_init(&prog);
	CHECK(parse(&prog, NULL, "provider t { probe a(int x, char *y); };", &msgs, &errors) == 0);
	free(msgs);
	p = &prog.providers[0].probes[0];
	CHECK(!strcmp(prog.providers[0].loc.file, "<input>"));
	CHECK(p->nxargs == 2 && p->argmap[0] == 0 && p->argmap[1] == 1);
	CHECK(p->xargs != p->args && p->xargs[1].name != p->args[1].name);
	CHECK(!strcmp(p->xargs[1].type.spelling, "char *") && !strcmp(p->xargs[1].name, "y"));
	usdt_program_free(&prog);
}

/* usdt_needs_cpp() on an unterminated copy of text: the directive, or NULL. */
static const char *needs(const char *text, unsigned *line, unsigned *col)
{
	size_t n = strlen(text);
	char *buf = malloc(n ? n : 1);
	struct usdt_cpp_need need = {0, 0, NULL};
	bool yes;

	memcpy(buf, text, n);
	yes = usdt_needs_cpp(buf, n, &need);
	free(buf);
	*line = need.line;
	*col = need.col;
	return yes ? need.directive : NULL;
}

static void test_needs_cpp(void)
{
	static const char *const no[] = {
	    "provider p { probe a(); };",
	    ("# 1 \"x.d\"\n# 3 \"/usr/include/y.h\" 1 3 4\n#line 9\n#pragma D attributes "
	     "Stable/Stable/Common provider p args\n#pragma once\n"),
	    "# file: x.c\n#!/usr/sbin/dtrace -s\nprovider p { probe a(); # if x\n};\n",
	    "/*\n#include <x.h>\n*/ // #ifdef X\nprovider p { probe a(char *s = \"#if\"); };",
	    "#define UNUSED 1\n#undef UNUSED\n#error stop\n#warning w\n#ident \"x\"\n",
	    /* a macro undefined before its use, and one used only before it is defined */
	    "#define T int\n#undef T\nprovider p { probe a(T); };\nU\n#define U long\n",
	    /* a use in a directive is cpp's business there, not here */
	    "#define P p\n#pragma D attributes Stable/Stable/Common provider P args\n",
	    "#define\n#undef\n# define\n#",
	    "",
	};
	unsigned line, col;
	const char *d;
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		d = needs(no[i], &line, &col);
		if (d)
			fprintf(stderr, "case %zu: '#%s' at %u:%u\n", i, d, line, col);
		CHECK(d == NULL);
	}
	d = needs("/* x */\n  #  ifdef __APPLE__\n#endif\n", &line, &col);
	CHECK(d && !strcmp(d, "ifdef") && line == 2 && col == 6);
	d = needs("provider p {\n#include \"more.d\"\n};", &line, &col);
	CHECK(d && !strcmp(d, "include") && line == 2 && col == 2);
	d = needs("#else\n", &line, &col);
	CHECK(d && !strcmp(d, "else") && line == 1 && col == 2);
	/* A used macro: at its #define (the use may come much later). */
	d = needs("#define A 1\n#define TxnId unsigned int\n\nprovider p { probe a(TxnId); };",
		  &line, &col);
	CHECK(d && !strcmp(d, "define") && line == 2 && col == 2);
	/* Defined again after an #undef, then used. */
	d = needs("#define T int\n#undef T\n#define T long\nT", &line, &col);
	CHECK(d && !strcmp(d, "define") && line == 3);
}

int main(void)
{
	test_names_outlive_inputs();
	test_error_then_success();
	test_caret_under_tab();
	test_no_translation_invariant();
	test_needs_cpp();
	if (!check_failures)
		printf("ok: parser API\n");
	return check_result();
}
