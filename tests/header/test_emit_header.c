/* SPDX-License-Identifier: MIT */
/*
 * The header emitter on models built by hand, independent of the parser:
 * the include guard, the spelling of checked types, the shape of every
 * #define line, collisions between macro names. With an argument, also
 * writes the header of the hand-built model there for t-model.sh to compile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "emit_header.h"
#include "usdt_provider.h"
#include "../lib/check.h"

struct targ {
	const char *spelling, *c_spelling;
	enum usdt_type_class cls;
};

static void add_probe(struct usdt_provider *pv, const char *name, const struct targ *args, size_t n)
{
	struct usdt_probe *p;
	size_t i;

	pv->probes = realloc(pv->probes, (pv->nprobes + 1) * sizeof(*pv->probes));
	p = &pv->probes[pv->nprobes++];
	memset(p, 0, sizeof(*p));
	p->name = strdup(name);
	p->loc.file = "hand.d";
	p->loc.line = (unsigned)pv->nprobes + 1;
	p->loc.col = 2;
	p->nargs = p->nxargs = n;
	p->args = calloc(n ? n : 1, sizeof(*p->args));
	p->xargs = p->args;
	p->argmap = calloc(n ? n : 1, 1);
	for (i = 0; i < n; i++) {
		p->args[i].type.spelling = strdup(args[i].spelling);
		p->args[i].type.c_spelling = args[i].c_spelling ? strdup(args[i].c_spelling) : NULL;
		p->args[i].type.cls = args[i].cls;
		p->argmap[i] = (unsigned char)i;
	}
}

static struct usdt_provider *add_provider(struct usdt_program *prog, const char *name)
{
	struct usdt_provider *pv;

	prog->providers = realloc(prog->providers, (prog->nproviders + 1) * sizeof(*pv));
	pv = &prog->providers[prog->nproviders++];
	memset(pv, 0, sizeof(*pv));
	pv->name = strdup(name);
	return pv;
}

/* The model is freed by hand: usdt_program_free() belongs to the parser. */
static void free_program(struct usdt_program *prog)
{
	size_t i, j, k;

	for (i = 0; i < prog->nproviders; i++) {
		struct usdt_provider *pv = &prog->providers[i];

		for (j = 0; j < pv->nprobes; j++) {
			struct usdt_probe *p = &pv->probes[j];

			for (k = 0; k < p->nargs; k++) {
				free(p->args[k].type.spelling);
				free(p->args[k].type.c_spelling);
			}
			free(p->args);
			free(p->argmap);
			free(p->name);
		}
		free(pv->probes);
		free(pv->name);
	}
	free(prog->providers);
}

static char *emit_checked(const struct usdt_program *prog, const char *output, bool type_checks,
			  int *rc, unsigned *errors)
{
	struct usdt_diag diag;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	usdt_diag_init(&diag, stderr, "test");
	*rc = usdt_emit_header(prog, output, type_checks, f, &diag);
	fclose(f);
	*errors = diag.errors;
	return buf;
}

/* As `dtrace -h -x typecheck` makes it: the checks on unless turned off. */
static char *emit(const struct usdt_program *prog, const char *output, int *rc, unsigned *errors)
{
	return emit_checked(prog, output, true, rc, errors);
}

static void build_hand_model(struct usdt_program *prog)
{
	static const struct targ plain[] = {
	    {"int", "int", USDT_T_INTEGER},
	    {"char *", "char *", USDT_T_STRING},
	};
	static const struct targ unchecked[] = {
	    {"zoneid_t", NULL, USDT_T_INTEGER},
	    {"struct conn *", "struct conn *", USDT_T_POINTER},
	    {"const char *", "const char *", USDT_T_STRING},
	    {"bool", "bool", USDT_T_INTEGER},
	    {"void (*)(int, int)", "void (*)(int, int)", USDT_T_POINTER},
	    {"const uint8_t **", "const uint8_t **", USDT_T_POINTER},
	    {"unsigned char *", "unsigned char *", USDT_T_POINTER},
	    {"char **", "char **", USDT_T_POINTER},
	};
	struct targ many[13];
	struct usdt_provider *pv;
	size_t i;

	for (i = 0; i < 13; i++)
		many[i] = (struct targ){"int", "int", USDT_T_INTEGER};
	usdt_program_init(prog);
	pv = add_provider(prog, "hand");
	add_probe(pv, "plain__probe", plain, 2);
	add_probe(pv, "unchecked", unchecked, 8);
	add_probe(pv, "many", many, 13);
	add_probe(pv, "twelve", many, 12);
	add_probe(pv, "none", NULL, 0);
	add_provider(prog, "nothing");
}

/* Every line that defines a probe or _ENABLED() macro: alone, body on continuation lines. */
static void check_define_lines(const char *hdr)
{
	const char *line = hdr;
	unsigned defines = 0;

	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		size_t len = strcspn(line, "\n");

		if (strncmp(line, "#define HAND_", 13))
			continue;
		defines++;
		CHECKF(len >= 3 && !strncmp(line + len - 3, ") \\", 3),
		       "a probe #define line carries more than the macro head: %.*s", (int)len,
		       line);
	}
	CHECKF(defines == 10, "expected 10 probe/_ENABLED() defines, found %u", defines);
}

int main(int argc, char **argv)
{
	struct usdt_program prog;
	unsigned errors;
	char *hdr;
	int rc;

	build_hand_model(&prog);
	hdr = emit(&prog, "some/dir/probes.h.tmp", &rc, &errors);
	CHECKF(rc == 0 && errors == 0, "emit failed: rc %d, %u errors", rc, errors);
	CHECKF(strstr(hdr, "#ifndef _PROBES_H_TMP\n#define _PROBES_H_TMP\n"), "include guard");
	CHECKF(strstr(hdr, "#define _SDT_HAS_SEMAPHORES 1\n"), "literal semaphore line (GLib)");
	CHECKF(strstr(hdr, "#define STAP_HAS_SEMAPHORES 1"), "literal STAP semaphore line");
	CHECKF(strstr(hdr, "__usdt_hdr_num(int, arg1, \"hand:plain-probe\", 1);"),
	       "int checked as a number, the message names the probe by its DTrace name");
	CHECKF(strstr(hdr, "__usdt_hdr_ptr(char *, arg2, \"hand:plain-probe\", 2);"),
	       "char * checked, spelled with a space");
	CHECKF(strstr(hdr, "__usdt_hdr_ptr(char const *, arg3, "), "const moved after char");
	CHECKF(strstr(hdr, "__usdt_hdr_ptr(uint8_t const **, arg6, "), "const moved after uint8_t");
	CHECKF(strstr(hdr, "__usdt_hdr_vptr(const volatile void *, arg2, \"hand:unchecked\", 2);"),
	       "struct pointer as void *");
	CHECKF(strstr(hdr, "__usdt_hdr_ptr(unsigned char*, arg7, "),
	       "only plain char * keeps its space");
	CHECKF(strstr(hdr, "__usdt_hdr_ptr(char**, arg8, "), "char ** is written char**");
	CHECKF(!strstr(hdr, "_num(zoneid_t"), "NULL c_spelling must stay unchecked");
	CHECKF(!strstr(hdr, "(*)(int, int), arg5"), "function pointer must stay unchecked");
	CHECKF(!strstr(hdr, "bool, arg4"), "bool must stay unchecked");
	CHECKF(strstr(hdr, "STAP_PROBE2(hand, plain__probe, arg1, arg2);"),
	       "note names as written");
	CHECKF(strstr(hdr, "STAP_PROBE(hand, none);"), "no-argument probe");
	CHECKF(strstr(hdr, "hand_plain__probe_semaphore"), "semaphore name as SystemTap's");
	CHECKF(strstr(hdr, "#define HAND_PLAIN_PROBE(arg1, arg2) \\\n"), "macro name");
	CHECKF(strstr(hdr, "#define HAND_PLAIN_PROBE_ENABLED() \\\n"), "_ENABLED() macro name");
	CHECKF(strstr(hdr, "usdt_error_probe_hand_many_has_13_arguments"), "13 arguments");
	CHECKF(strstr(hdr, "STAP_PROBE12(hand, twelve,"), "12 arguments");
	CHECKF(strstr(hdr, "/* provider nothing */"), "an empty provider is still listed");
	check_define_lines(hdr);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		CHECKF(f && fputs(hdr, f) >= 0 && fclose(f) == 0, "cannot write %s", argv[1]);
	}
	free(hdr);

	/*
	 * As plain `dtrace -h` makes it: every check through the switch that
	 * only USDTKIT_TYPE_CHECKS turns on, the rest the same.
	 */
	hdr = emit_checked(&prog, "some/dir/probes.h.tmp", false, &rc, &errors);
	CHECKF(rc == 0 && errors == 0, "emit without checks failed: rc %d, %u errors", rc, errors);
	CHECKF(strstr(hdr, "\t__usdt_hdr_num_if(int, arg1, \"hand:plain-probe\", 1);"),
	       "without -x typecheck, int checked only if asked");
	CHECKF(strstr(hdr, "\t__usdt_hdr_ptr_if(char *, arg2, \"hand:plain-probe\", 2);"),
	       "without -x typecheck, char * checked only if asked, spelled with a space");
	CHECKF(strstr(hdr,
		      "\t__usdt_hdr_vptr_if(const volatile void *, arg2, \"hand:unchecked\", 2);"),
	       "without -x typecheck, void * checked only if asked");
	CHECKF(!strstr(hdr, "\t__usdt_hdr_num(") && !strstr(hdr, "\t__usdt_hdr_ptr(") &&
		   !strstr(hdr, "\t__usdt_hdr_vptr("),
	       "without -x typecheck, no probe calls a check unconditionally");
	CHECKF(
	    strstr(hdr, "#if defined USDTKIT_TYPE_CHECKS || defined USDTKIT_TYPE_CHECK_ERRORS\n"),
	    "the switch is in the header");
	CHECKF(strstr(hdr, "STAP_PROBE2(hand, plain__probe, arg1, arg2);"),
	       "without -x typecheck, the same probe sites");
	check_define_lines(hdr);
	free(hdr);
	free_program(&prog);

	/* Macro-name collisions are errors, reported once per clash. */
	{
		static const struct targ one[] = {{"int", "int", USDT_T_INTEGER}};
		struct usdt_provider *pv;

		usdt_program_init(&prog);
		pv = add_provider(&prog, "p");
		add_probe(pv, "a__b", one, 1);
		add_probe(pv, "a_b", one, 1);
		hdr = emit(&prog, "x.h", &rc, &errors);
		CHECKF(rc == -1 && errors == 1, "a__b vs a_b: rc %d, %u errors", rc, errors);
		free(hdr);
		free_program(&prog);

		usdt_program_init(&prog);
		pv = add_provider(&prog, "p");
		add_probe(pv, "x", one, 1);
		add_probe(pv, "x_enabled", NULL, 0);
		hdr = emit(&prog, "x.h", &rc, &errors);
		CHECKF(rc == -1 && errors == 1, "x vs x_enabled: rc %d, %u errors", rc, errors);
		free(hdr);
		free_program(&prog);

		/* Across providers: a_b:c and a:b_c are both A_B_C. */
		usdt_program_init(&prog);
		add_probe(add_provider(&prog, "a_b"), "c", one, 1);
		add_probe(add_provider(&prog, "a"), "b_c", one, 1);
		hdr = emit(&prog, "x.h", &rc, &errors);
		CHECKF(rc == -1 && errors == 1, "a_b:c vs a:b_c: rc %d, %u errors", rc, errors);
		free(hdr);
		free_program(&prog);

		/* No provider: a valid, empty header. */
		usdt_program_init(&prog);
		hdr = emit(&prog, "empty.h", &rc, &errors);
		CHECKF(rc == 0 && strstr(hdr, "#endif /* _EMPTY_H */"), "empty program");
		free(hdr);
	}

	if (!check_failures)
		puts("emitter checks passed");
	return check_result();
}
