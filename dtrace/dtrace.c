/* SPDX-License-Identifier: MIT */
/*
 * The `dtrace` command: `dtrace -h` (provider header) and `dtrace -G`
 * (provider object), with the command line real build systems use
 * (docs/compat.md, "Command line"): the options of illumos/Oracle DTrace and
 * of SystemTap's Python `dtrace` that appear in the wild, options and
 * operands in any order, single-letter flags groupable (`-hs x.d`).
 *
 * Theory. The command is the edge: it parses the options, reads every input
 * fully into memory (through cpp with -C: see cpp.c), hands the texts to the
 * provider compiler, and only if nothing went wrong writes the output
 * through atomic_file (a complete file or none; an existing output survives
 * any failure). Library code reports through diag and returns; only main()
 * decides the exit status: 0 success, 1 errors, 2 a usage error.
 *
 * Accepted and ignored, because build systems pass them: -32/-64 (passed on
 * to -G), -x nolibs, -Z, -fpic/-fPIC and SystemTap's --no-pyparsing and
 * --types. -x unusedprobes turns on -G's warning for a declared probe with no
 * site (off by default: DTrace's and SystemTap's -G say nothing of them, and
 * a drop-in must not add lines to build logs; USDTKIT_WARN_UNUSED=1 does the
 * same for builds whose command lines are not ours to change). For the same
 * reason -h's argument type checks are off unless -x typecheck is given (or
 * the program defines USDTKIT_TYPE_CHECKS): SystemTap's header checks no
 * types, and real .d files declare types their code does not pass. Any other -x
 * option is accepted with a warning. -D/-I/-U matter
 * whenever cpp runs: with -C, or for a file that needs it (read_source()).
 *
 * `dtrace -l` lists the probes of live processes (list.c); -v, -p, -c, -n,
 * -P, -m and -f belong to it and are usage errors without it; -o FILE appends
 * the listing to FILE, as in DTrace. Since -fpic/-fPIC
 * are whole-word options, `-f` with a function pattern must not be spelled
 * glued to a pattern "pic" or "PIC".
 *
 * `-n` and `-s` without -h, -G or -l run a D program (consumer/, with -q,
 * -Z, -w, -e, -x, -p, -c and the operands as $1...); a `#!` line's options,
 * which the kernel passes as one argument, are split at blanks first. A
 * provider file given to -s without -h/-G is a usage error, not a program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cpp.h"
#include "usage.h"
#include "diag.h"
#include "emit_header.h"
#include "link.h"
#include "consumer.h"
#include "list.h"
#include "usdt_provider.h"

#ifndef USDTKIT_VERSION
#define USDTKIT_VERSION "unknown"
#endif

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* A growable array of borrowed or owned strings. */
struct strv {
	char **v;
	size_t n, cap;
};

/* The -l options. */
struct list_options {
	bool list, verbose;
	int *pids;
	size_t npids;
	const char **cmds; /* -c, borrowed from argv */
	size_t ncmds;
	struct usdt_list_desc *descs;
	size_t ndescs;
};

struct options {
	bool header, object, cpp, keep;
	bool warn_unused; /* -x unusedprobes: -G warns about probes without a site */
	bool type_checks; /* -x typecheck: -h's type checks on unless the program says no */
	struct list_options l;
	struct dt_consumer_opts c; /* -n/-s without -l, -h or -G: tracing */
	struct dt_source *csrc;	   /* every -n and -s, in order */
	size_t ncsrc;
	bool flowindent;
	char stdc; /* -x stdc=a|c|s|t, for cpp (0: a, DTrace's default) */
	int bits;
	const char *output;
	struct strv sources;
	struct strv cpp_args; /* owned: "-Idir", "-DX", "-UX" */
	struct strv objects;
};

static int strv_push(struct strv *s, char *str)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	return 0;
}

static int usage_error(struct usdt_diag *diag, const char *fmt, ...) USDT_PRINTF(2, 3);

static int usage_error(struct usdt_diag *diag, const char *fmt, ...)
{
	va_list ap;

	fprintf(diag->out, "%s: error: ", diag->progname);
	va_start(ap, fmt);
	vfprintf(diag->out, fmt, ap);
	va_end(ap);
	fprintf(diag->out, "\nRun 'dtrace --help' for the options.\n");
	return EXIT_USAGE;
}

/* "-I" + "dir" as one cpp argument. */
static int push_cpp_arg(struct options *o, char letter, const char *val)
{
	size_t n = strlen(val) + 3;
	char *s = malloc(n);

	if (!s)
		return -1;
	snprintf(s, n, "-%c%s", letter, val);
	if (strv_push(&o->cpp_args, s)) {
		free(s);
		return -1;
	}
	return 0;
}

/*
 * -x nolibs and friends: accept every DTrace option, warn about the unknown.
 * -x unusedprobes is ours: -G's warning for a declared probe without a site;
 * so is -x typecheck: -h's argument type checks on by default.
 */
static void dtrace_x_option(struct options *o, const char *val, struct usdt_diag *diag)
{
	size_t len = strcspn(val, "=");

	if (len == 6 && !strncmp(val, "nolibs", 6))
		return;
	if (!strcmp(val, "unusedprobes")) {
		o->warn_unused = true;
		return;
	}
	if (!strcmp(val, "typecheck")) {
		o->type_checks = true;
		return;
	}
	usdt_warning(diag, "ignoring unsupported option -x %s", val);
}

/* -x for a D program: DTrace's options that tracing uses (consumer/run.c). */
static void consumer_x_option(struct options *o, const char *val, struct usdt_diag *diag)
{
	char name[128];
	size_t len = strcspn(val, "=");

	snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1),
		 val);
	/* DTrace's preprocessor options: -x define=X is -D X, undef -U, incdir -I */
	if (val[len] == '=' &&
	    (!strcmp(name, "define") || !strcmp(name, "undef") || !strcmp(name, "incdir"))) {
		if (push_cpp_arg(o,
				 name[0] == 'd'	  ? 'D'
				 : name[0] == 'u' ? 'U'
						  : 'I',
				 val + len + 1))
			usdt_error(diag, "out of memory");
		return;
	}
	if (!strcmp(name, "cpp")) { /* -x cpp is -C */
		o->cpp = true;
		return;
	}
	switch (dt_set_option(&o->c, name, val[len] == '=' ? val + len + 1 : NULL)) {
	case 0:
		if (!strcmp(name, "stdc"))
			o->stdc = val[len + 1];
		break;
	case -2:
		/* DTrace's words: the option's name, its value cut at '=' */
		usdt_error(diag, "failed to set -x %s: Invalid value for specified option", name);
		break;
	default:
		dtrace_x_option(o, val, diag);
	}
}

static int push_csrc(struct options *o, char kind, const char *val)
{
	struct dt_source *nv = realloc(o->csrc, (o->ncsrc + 1) * sizeof(*nv));

	if (!nv)
		return -1;
	o->csrc = nv;
	o->csrc[o->ncsrc].kind = kind;
	o->csrc[o->ncsrc].name = val;
	o->csrc[o->ncsrc].text = NULL;
	o->ncsrc++;
	return 0;
}

/* -p PID, -c CMD or a probe description: returns -1 to go on, or an exit status. */
static int list_option(struct list_options *l, char c, const char *val, struct usdt_diag *diag)
{
	if (c == 'c') {
		const char **nv;

		if (!val[strspn(val, " \t\n\v\f\r")])
			return usage_error(diag, "-c needs a command");
		nv = realloc(l->cmds, (l->ncmds + 1) * sizeof(*nv));
		if (!nv)
			goto nomem;
		l->cmds = nv;
		l->cmds[l->ncmds++] = val;
	} else if (c == 'p') {
		char *end;
		long pid;
		int *nv;

		errno = 0;
		pid = strtol(val, &end, 10);
		if (errno || end == val || *end || pid <= 0 || pid > 0x7fffffffL)
			return usage_error(diag, "invalid process id '%s'", val);
		nv = realloc(l->pids, (l->npids + 1) * sizeof(*nv));
		if (!nv)
			goto nomem;
		l->pids = nv;
		l->pids[l->npids++] = (int)pid;
	} else {
		struct usdt_list_desc *nv = realloc(l->descs, (l->ndescs + 1) * sizeof(*nv));

		if (!nv)
			goto nomem;
		l->descs = nv;
		l->descs[l->ndescs].kind = c;
		l->descs[l->ndescs++].spec = val;
	}
	return -1;
nomem:
	usdt_error(diag, "out of memory");
	return EXIT_ERROR;
}

static int check_list_options(const struct options *o, struct usdt_diag *diag)
{
	if (o->header || o->object)
		return usage_error(diag, "-l cannot be used with -h or -G");
	if (o->sources.n)
		return usage_error(diag,
				   "-l lists the probes of processes: -s is not supported with it");
	if (o->objects.n)
		return usage_error(diag, "unexpected operand '%s' with -l", o->objects.v[0]);
	return -1;
}

/* -n/-s without -h, -G or -l: a D program to run (consumer/). */
static int check_consumer_options(struct options *o, struct usdt_diag *diag)
{
	size_t i;

	o->c.verbose = o->l.verbose; /* -v: the stability report */
	for (i = 0; i < o->l.ndescs; i++)
		if (o->l.descs[i].kind != 'n')
			return usage_error(diag,
					   "-%c is only used with -l (enable probes with -n or -s)",
					   o->l.descs[i].kind);
	if (o->l.ncmds > 1)
		return usage_error(diag, "-c is given more than once: one command is traced");
	if (o->output)
		return usage_error(diag, "-o is not supported when tracing: redirect the output");
	if (o->flowindent)
		return usage_error(diag, "-F (flowindent) is not supported when tracing");
	o->c.sources = o->csrc;
	o->c.nsources = o->ncsrc;
	o->c.pids = o->l.pids;
	o->c.npids = o->l.npids;
	o->c.cmd = o->l.ncmds ? o->l.cmds[0] : NULL;
	o->c.macros = (const char *const *)o->objects.v;
	o->c.nmacros = o->objects.n;
	/* DTrace's test harness asks for output without what varies (CPU, probe ID) */
	o->c.testing = getenv("_DTRACE_TESTING") != NULL;
	return -1;
}

/*
 * Returns -1 to go on, or an exit status (help and version exit 0 here).
 * Option arguments are borrowed from argv.
 */
static int parse_options(int argc, char **argv, struct options *o, struct usdt_diag *diag)
{
	bool only_operands = false;
	int i;

	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		size_t j;

		if (only_operands || a[0] != '-' || a[1] == '\0') {
			if (strv_push(&o->objects, a))
				goto nomem;
			continue;
		}
		/* Whole-word options first. */
		if (!strcmp(a, "--")) {
			only_operands = true;
			continue;
		}
		if (!strcmp(a, "--help")) {
			fputs(usdt_dtrace_usage, stdout);
			return EXIT_OK;
		}
		if (!strcmp(a, "-32") || !strcmp(a, "-64")) {
			o->bits = a[1] == '3' ? 32 : 64;
			continue;
		}
		if (!strcmp(a, "-fpic") || !strcmp(a, "-fPIC") || !strcmp(a, "--no-pyparsing") ||
		    !strcmp(a, "--types"))
			continue;
		if (a[1] == '-')
			return usage_error(diag, "unknown option '%s'", a);

		/* Single letters, groupable; an option taking a value ends the group. */
		for (j = 1; a[j]; j++) {
			char c = a[j];
			const char *val;

			switch (c) {
			case 'h':
				o->header = true;
				continue;
			case 'G':
				o->object = true;
				continue;
			case 'C':
				o->cpp = true;
				continue;
			case 'H': /* cpp's -H: each included file's path, on stderr */
				if (push_cpp_arg(o, 'H', "")) {
					usdt_error(diag, "out of memory");
					return EXIT_ERROR;
				}
				continue;
			case 'k':
				o->keep = true;
				continue;
			case 'Z':
				o->c.zero_ok = true;
				continue;
			case 'q':
				o->c.quiet = true;
				continue;
			case 'w':
				o->c.destructive = true;
				continue;
			case 'e':
				o->c.compile_only = true;
				continue;
			case 'F':
				o->flowindent = true;
				continue;
			case 'V':
				printf("dtrace: usdtkit %s\n", USDTKIT_VERSION);
				return EXIT_OK;
			case 'l':
				o->l.list = true;
				continue;
			case 'v':
				o->l.verbose = true;
				continue;
			case 'p':
			case 'c':
			case 'n':
			case 'P':
			case 'm':
			case 'f':
			case 's':
			case 'o':
			case 'I':
			case 'D':
			case 'U':
			case 'x':
			case 'b':
				break;
			default: {
				char opt[3] = {'-', c, '\0'};

				return usage_error(diag, "unknown option '%s'", opt);
			}
			}
			if (a[j + 1]) {
				val = a + j + 1;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				char opt[3] = {'-', c, '\0'};

				return usage_error(diag, "option '%s' needs an argument", opt);
			}
			switch (c) {
			case 's':
				if (strv_push(&o->sources, (char *)val) || push_csrc(o, 's', val))
					goto nomem;
				break;
			case 'o':
				if (o->output)
					return usage_error(diag, "-o given more than once");
				o->output = val;
				break;
			case 'x':
				consumer_x_option(o, val, diag);
				break;
			case 'b': /* DTrace's -b N: -x bufsize=N */
				dt_set_option(&o->c, "bufsize", val);
				break;
			case 'p':
			case 'c':
			case 'n':
			case 'P':
			case 'm':
			case 'f': {
				int rc = list_option(&o->l, c, val, diag);

				if (rc >= 0)
					return rc;
				if (c == 'n' && push_csrc(o, 'n', val))
					goto nomem;
				break;
			}
			default:
				if (push_cpp_arg(o, c, val))
					goto nomem;
				break;
			}
			break; /* the value ended this argument */
		}
	}

	if (o->l.list)
		return check_list_options(o, diag);
	if (!o->header && !o->object && o->ncsrc)
		return check_consumer_options(o, diag);
	if (o->l.verbose || o->l.npids || o->l.ncmds || o->l.ndescs)
		return usage_error(diag, "-v, -p, -c, -P, -m and -f are only used with -l "
					 "(or -p and -c with -n or -s, to trace)");
	if (o->header && o->object)
		return usage_error(diag, "-h and -G cannot be used together");
	if (!o->header && !o->object)
		return usage_error(diag, "one of -h, -G, -l, -n or -s is required");
	if (o->sources.n == 0)
		return usage_error(diag, "no provider file: give one with -s FILE");
	if (o->output && !*o->output)
		return usage_error(diag, "-o needs a non-empty file name");
	return -1;
nomem:
	usdt_error(diag, "out of memory");
	return EXIT_ERROR;
}

/* "dir/provider.d" -> "provider.h" (in the current directory). */
static char *default_output(const char *source, const char *ext)
{
	const char *base = strrchr(source, '/'), *dot;
	size_t stem, n;
	char *s;

	base = base ? base + 1 : source;
	dot = strrchr(base, '.');
	stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	n = stem + strlen(ext) + 1;
	s = malloc(n);
	if (s)
		snprintf(s, n, "%.*s%s", (int)stem, base, ext);
	return s;
}

/* One -s source, read whole (cpp.c's usdt_read_source(): when cpp runs). */
static int read_source(const struct options *o, const char *src, char **text, size_t *len,
		       bool auto_cpp, bool *cpp_warned, struct usdt_diag *diag)
{
	struct usdt_cpp_opts co = {
	    .cpp = getenv("CPP"),
	    .args = o->cpp_args.v,
	    .nargs = o->cpp_args.n,
	    /* a D program to trace: DTrace's cpp environment (not -h/-G's builds) */
	    .dstdc = o->header || o->object ? 0
		     : o->stdc		    ? o->stdc
					    : 'a',
	};

	return usdt_read_source(&co, o->cpp, auto_cpp, src, text, len, cpp_warned, diag);
}

/* A provider file (`provider x { ... };` first, after comments and '#' lines). */
static bool declares_provider(const char *s)
{
	for (;;) {
		s += strspn(s, " \t\r\n");
		if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");

			if (!e)
				return false;
			s = e + 2;
		} else if ((s[0] == '/' && s[1] == '/') || s[0] == '#') {
			s += strcspn(s, "\n");
		} else {
			break;
		}
	}
	return !strncmp(s, "provider", 8) && (s[8] == ' ' || s[8] == '\t' || s[8] == '\n');
}

static int write_header(const struct usdt_program *prog, const char *output, bool type_checks,
			struct usdt_diag *diag)
{
	struct usdt_atomic_file f;
	int err;

	err = usdt_atomic_open(&f, output);
	if (err) {
		usdt_error(diag, "cannot create '%s': %s", output, strerror(-err));
		return -1;
	}
	if (usdt_emit_header(prog, output, type_checks, f.fp, diag)) {
		usdt_atomic_abort(&f);
		return -1;
	}
	err = usdt_atomic_commit(&f);
	if (err) {
		usdt_error(diag, "cannot write '%s': %s", output, strerror(-err));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct usdt_program prog;
	struct usdt_diag diag;
	struct strv texts = {0};
	bool cpp_warned = false;
	char *output = NULL, *shebang = NULL, **shebang_argv = NULL;
	int rc;
	size_t i;

	usdt_diag_init(&diag, stderr, "dtrace");
	usdt_program_init(&prog);

	/*
	 * A `#!/usr/sbin/dtrace -Z -qs` script: the kernel passes "-Z -qs" as
	 * one argument, the first; it is split at blanks. Not a first
	 * argument that is an option value with blanks (-D'X=a b', -I, -U, -o).
	 */
	i = 1;
	if (argc > 1 && argv[1][0] == '-' && strchr(argv[1], ' ') && !strchr("DIUo-", argv[1][1])) {
		char **nv = calloc((size_t)argc + strlen(argv[i]) + 1, sizeof(*nv)), *w;
		size_t n = 0, k;

		if (!nv || !(shebang = strdup(argv[i]))) {
			free(nv);
			usdt_error(&diag, "out of memory");
			return EXIT_ERROR;
		}
		for (k = 0; k < i; k++)
			nv[n++] = argv[k];
		for (w = strtok(shebang, " \t"); w; w = strtok(NULL, " \t"))
			nv[n++] = w;
		for (k = i + 1; k < (size_t)argc; k++)
			nv[n++] = argv[k];
		argv = shebang_argv = nv;
		argc = (int)n;
	}

	rc = parse_options(argc, argv, &o, &diag);
	if (rc >= 0)
		goto out;
	rc = EXIT_ERROR;

	if (o.c.nsources) {
		for (i = 0; i < o.ncsrc; i++) {
			char *text = NULL;
			size_t len = 0;

			if (o.csrc[i].kind == 'n') {
				o.csrc[i].text = strdup(o.csrc[i].name);
				continue;
			}
			if (read_source(&o, o.csrc[i].name, &text, &len, false, &cpp_warned, &diag))
				continue;
			o.csrc[i].text = text;
		}
		for (i = 0; i < o.ncsrc && !diag.errors; i++)
			if (o.csrc[i].text && declares_provider(o.csrc[i].text)) {
				rc = usage_error(
				    &diag,
				    "'%s' declares a provider: give -h or -G to generate "
				    "code from it (a D program to trace has probe clauses)",
				    o.csrc[i].name);
				for (i = 0; i < o.ncsrc; i++)
					free(o.csrc[i].text);
				goto out;
			}
		rc = diag.errors ? EXIT_ERROR : dt_consume(&o.c, &diag);
		for (i = 0; i < o.ncsrc; i++)
			free(o.csrc[i].text);
		goto out;
	}

	if (o.l.list) {
		struct usdt_list_opts lo = {
		    .verbose = o.l.verbose,
		    .pids = o.l.pids,
		    .npids = o.l.npids,
		    .cmds = o.l.cmds,
		    .ncmds = o.l.ncmds,
		    .descs = o.l.descs,
		    .ndescs = o.l.ndescs,
		};

		FILE *out = stdout;

		/* As DTrace: -o appends the listing to a file. */
		if (o.output && !(out = fopen(o.output, "a"))) {
			usdt_error(&diag, "failed to open output file '%s': %s", o.output,
				   strerror(errno));
			goto out;
		}
		rc = usdt_list(&lo, out, &diag);
		if (out != stdout && fclose(out) && rc == EXIT_OK) {
			usdt_error(&diag, "cannot write '%s': %s", o.output, strerror(errno));
			rc = EXIT_ERROR;
		}
		goto out;
	}

	output =
	    o.output ? strdup(o.output) : default_output(o.sources.v[0], o.header ? ".h" : ".o");
	if (!output) {
		usdt_error(&diag, "out of memory");
		goto out;
	}
	if (o.header && o.objects.n)
		usdt_warning(&diag, "ignoring %zu object file operand(s): only -G reads them",
			     o.objects.n);

	/* Every source is parsed, so that all their errors are reported at once. */
	for (i = 0; i < o.sources.n; i++) {
		const char *src = o.sources.v[i];
		char *text = NULL;
		size_t len = 0;

		if (read_source(&o, src, &text, &len, true, &cpp_warned, &diag))
			continue;
		if (strv_push(&texts, text)) {
			free(text);
			usdt_error(&diag, "out of memory");
			continue;
		}
		if (usdt_parse(&prog, src, text, len, &diag) && !diag.errors)
			usdt_error(&diag, "cannot parse '%s'", src); /* never unreported */
	}
	if (diag.errors)
		goto out;

	if (o.header) {
		if (write_header(&prog, output, o.type_checks, &diag))
			goto out;
	} else {
		const char *cc = getenv("CC"), *cflags = getenv("CFLAGS");
		const char *wu = getenv("USDTKIT_WARN_UNUSED");
		struct usdt_link_opts lo = {
		    .output = output,
		    .cc = cc && *cc ? cc : NULL,
		    .cflags = cflags && *cflags ? cflags : NULL,
		    .bits = o.bits,
		    .objects = o.objects.v,
		    .nobjects = o.objects.n,
		    .keep = o.keep,
		    .warn_unused = o.warn_unused || (wu && !strcmp(wu, "1")),
		};

		if (usdt_link_object(&prog, &lo, &diag))
			goto out;
	}
	rc = diag.errors ? EXIT_ERROR : EXIT_OK;
out:
	usdt_program_free(&prog);
	for (i = 0; i < texts.n; i++)
		free(texts.v[i]);
	free(texts.v);
	for (i = 0; i < o.cpp_args.n; i++)
		free(o.cpp_args.v[i]);
	free(o.cpp_args.v);
	free(o.sources.v);
	free(o.objects.v);
	free(o.l.pids);
	free(o.l.cmds);
	free(o.l.descs);
	free(o.csrc);
	free(shebang);
	free(shebang_argv);
	free(output);
	return rc;
}
