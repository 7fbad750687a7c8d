// SPDX-License-Identifier: MIT
/*
 * usdtkit-probes: the helper's two layers by hand, for tests and debugging.
 *
 *   usdtkit-probes list FILE        what the note reader finds, rejected probes and why
 *   usdtkit-probes register FILE    registers FILE's probes as tracefs uprobe events
 *   usdtkit-probes unregister FILE  removes them (only sites of FILE; others stay)
 *
 * `-s PROVIDER:PROBE:N` (repeatable) says argument N (1-based) of that probe
 * is a char * to fetch as a string, for files without the metadata note
 * (those built by other tools); a `dtrace -G` file's note says it already.
 *
 * `list` needs no privilege; the others need root (tracefs). Output is one
 * record per line, `key=value` after the first words, so scripts can read it;
 * the argument string comes last on a probe line because it holds spaces.
 * Exit status: 0 done, 1 some site failed, 2 the file or tracefs unusable.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "notes.h"
#include "tracefs.h"

static struct usdt_diag diag;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: usdtkit-probes list|register|unregister [-s PROVIDER:PROBE:N]... FILE\n");
}

static const char *kind_name(enum usdt_argspec_kind k)
{
	switch (k) {
	case USDT_ARG_REG:
		return "reg";
	case USDT_ARG_IMM:
		return "imm";
	case USDT_ARG_MEM:
		return "mem";
	case USDT_ARG_UNSUPPORTED:
		break;
	}
	return "unsupported";
}

static void print_flags(unsigned f, bool file)
{
	const char *sep = " flags=";

	if (file) {
		if (f & USDT_NOTES_NO_BASE_SECTION) {
			printf("%sno-base-section", sep);
			sep = ",";
		}
		if (f & USDT_NOTES_BASE_ZERO) {
			printf("%sbase-zero", sep);
			sep = ",";
		}
		if (f & USDT_NOTES_TOO_MANY) {
			printf("%stoo-many-notes", sep);
			sep = ",";
		}
		if (f & USDT_NOTES_META_DROPPED)
			printf("%smetadata-dropped", sep);
		return;
	}
	if (f & USDT_SITE_SHORTENED) {
		printf("%sshortened", sep);
		sep = ",";
	}
	if (f & USDT_SITE_BASE_ZERO)
		printf("%sbase-zero", sep);
}

static void print_arg(const struct usdt_site *p, unsigned i)
{
	const struct usdt_argspec *a = &p->arg[i];
	unsigned width;
	const char *fetch;

	printf("  arg%u %s", i + 1, kind_name(a->kind));
	if (a->kind == USDT_ARG_UNSUPPORTED) {
		printf(" why=%s\n", a->why);
		return;
	}
	printf(" %c%u%s", a->is_signed ? 's' : 'u', a->size * 8, a->is_string ? " string" : "");
	switch (a->kind) {
	case USDT_ARG_IMM:
		printf(" value=%" PRId64 "\n", a->value);
		return;
	case USDT_ARG_REG:
		fetch = usdt_reg_fetch_name(p->arch, a->reg, &width);
		printf(" reg=%s fetch=%s\n", a->reg, fetch ? fetch : "?");
		return;
	case USDT_ARG_MEM:
		fetch = usdt_reg_fetch_name(p->arch, a->reg, &width);
		printf(" reg=%s disp=%" PRId64 " fetch=%s%" PRId64 "(%s)\n", a->reg, a->value,
		       a->value < 0 ? "" : "+", a->value, fetch ? fetch : "?");
		return;
	case USDT_ARG_UNSUPPORTED:
		break;
	}
}

static void list(const char *file, const struct usdt_notes *n)
{
	printf("file %s elf=ELF%u arch=%s type=%s", file, n->elf_class, usdt_arch_name(n->arch),
	       n->e_type == 2 ? "exec" : "dyn");
	if (!(n->flags & USDT_NOTES_NO_BASE_SECTION))
		printf(" base_section=0x%" PRIx64, n->base_addr);
	printf(" probes=%zu accepted=%zu", n->nsites, n->naccepted);
	print_flags(n->flags, true);
	if (n->nmeta)
		printf(" metadata_notes=%zu", n->nmeta);
	printf("\n");
	for (size_t i = 0; i < n->nsites; i++) {
		const struct usdt_site *p = &n->sites[i];

		if (p->reject) {
			printf("reject %s %s pc=0x%" PRIx64 " sema=0x%" PRIx64
			       " reason=%s detail=%s\n",
			       p->provider, p->name, p->pc, p->sema, p->reject, p->detail);
			continue;
		}
		printf("probe %s %s pc=0x%" PRIx64 " pc_off=0x%" PRIx64 " sema=0x%" PRIx64
		       " sema_off=0x%" PRIx64 " base=0x%" PRIx64 " group=%s event=%s",
		       p->provider, p->name, p->pc, p->pc_off, p->sema, p->sema_off, p->note_base,
		       p->group, p->event);
		print_flags(p->flags, false);
		printf(" nargs=%u args=%s\n", p->nargs, p->args);
		for (unsigned a = 0; a < p->nargs; a++)
			print_arg(p, a);
	}
}

/*
 * The path to write into definitions: FILE's absolute name when it is
 * trusted (no symlink, every directory root's and writable by no one else)
 * and names the file we opened, else a bind-mounted alias of what we
 * opened: the kernel resolves the name again for every line, so a name
 * someone else can change would let them swap another file in meanwhile.
 */
static int event_path(const char *file, int fd, bool make_alias, char *out, size_t outlen,
		      bool *aliased)
{
	char real[PATH_MAX];
	int kind, ret;

	ret = usdt_tracefs_event_path(fd, realpath(file, real) ? real : NULL, make_alias, out,
				      outlen, &kind);
	*aliased = kind == USDT_PATH_ALIAS;
	return ret;
}

static const char *hint_error(int err)
{
	if (err == -ENOENT)
		return "no such probe";
	if (err == -EOPNOTSUPP)
		return "a pointer in memory narrower than 8 bytes cannot be fetched as a string";
	return "not PROVIDER:PROBE:N, or argument N is not a register or memory operand";
}

/* Applies one -s PROVIDER:PROBE:N to every site of that probe. */
static int string_hint(struct usdt_notes *n, const char *spec)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char *end;
	unsigned long argn;
	size_t hits = 0;

	if (!c2)
		return -EINVAL;
	argn = strtoul(c2 + 1, &end, 10);
	if (*end || argn < 1 || argn > USDT_SDT_MAX_ARGS)
		return -EINVAL;
	for (size_t i = 0; i < n->nsites; i++) {
		struct usdt_site *p = &n->sites[i];

		if (p->reject || strncmp(p->provider, spec, (size_t)(c1 - spec)) ||
		    p->provider[c1 - spec] || strncmp(p->name, c1 + 1, (size_t)(c2 - c1 - 1)) ||
		    p->name[c2 - c1 - 1])
			continue;
		int ret = usdt_site_set_arg_hint(p, (unsigned)argn - 1, NULL, true);

		if (ret)
			return ret;
		hits++;
	}
	return hits ? 0 : -ENOENT;
}

static int do_sites(const char *cmd, struct usdt_tracefs *t, const struct usdt_notes *n,
		    const char *path)
{
	struct usdt_site_result *s;
	size_t ns;
	int ret, failed = 0;

	if (strcmp(cmd, "register") == 0)
		ret = usdt_tracefs_register(t, n, path, &s, &ns);
	else
		ret = usdt_tracefs_unregister(t, n, path, &s, &ns);
	if (ret) {
		usdt_error(&diag, "%s: %s", path, strerror(-ret));
		return 2;
	}
	for (size_t i = 0; i < ns; i++) {
		if (s[i].err) {
			failed = 1;
			printf("! %s: %s (%s)\n", s[i].line ? s[i].line : s[i].event, s[i].msg,
			       strerror(-s[i].err));
		} else if (s[i].existed && s[i].line) {
			printf("= %s\n", s[i].line);
		} else if (s[i].existed) {
			printf("  %s:%s at 0x%" PRIx64 " not registered\n", s[i].probe->provider,
			       s[i].probe->name, s[i].probe->pc_off);
		} else {
			printf("%c %s\n", cmd[0] == 'r' ? '+' : '-', s[i].line);
		}
	}
	usdt_tracefs_results_free(s, ns);
	return failed;
}

int main(int argc, char **argv)
{
	struct usdt_notes *n = NULL;
	struct usdt_tracefs t = {.fd = -1};
	char err[256], path[PATH_MAX];
	const char *cmd, *file;
	const char *hints[USDT_SDT_MAX_ARGS * 8];
	size_t nhints = 0;
	bool aliased;
	int fd, ret, opt;

	usdt_diag_init(&diag, stderr, "usdtkit-probes");
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || (strcmp(argv[1], "list") && strcmp(argv[1], "register") &&
			 strcmp(argv[1], "unregister"))) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	/* Options follow the command: getopt sees argv[1..] with the command as its argv[0]. */
	while ((opt = getopt(argc - 1, argv + 1, "s:")) != -1) {
		if (opt != 's' || nhints == USDT_SDT_MAX_ARGS * 8) {
			usage(stderr);
			return 2;
		}
		hints[nhints++] = optarg;
	}
	if (optind + 2 != argc) {
		usage(stderr);
		return 2;
	}
	file = argv[optind + 1];
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		usdt_error(&diag, "%s: %s", file, strerror(errno));
		return 2;
	}
	ret = usdt_notes_read(fd, NULL, &n, err, sizeof(err));
	if (ret) {
		usdt_error(&diag, "%s: %s", file, err);
		close(fd);
		return 2;
	}
	for (size_t i = 0; i < nhints; i++) {
		ret = string_hint(n, hints[i]);
		if (ret) {
			usdt_error(&diag, "-s %s: %s", hints[i], hint_error(ret));
			ret = 2;
			goto out;
		}
	}
	if (!strcmp(cmd, "list")) {
		list(file, n);
		ret = 0;
		goto out;
	}
	ret = usdt_tracefs_open(&t, USDT_TRACEFS_MOUNT, err, sizeof(err));
	if (ret) {
		usdt_error(&diag, "%s", err);
		ret = 2;
		goto out;
	}
	ret = event_path(file, fd, !strcmp(cmd, "register"), path, sizeof(path), &aliased);
	if (ret) {
		usdt_error(&diag, "%s: cannot make an alias for a path tracefs cannot take: %s",
			   file, strerror(-ret));
		ret = 2;
		goto out;
	}
	if (aliased && !strcmp(cmd, "register"))
		printf("alias %s\n", path);
	ret = do_sites(cmd, &t, n, path);
	/*
	 * The alias goes with the file's events, whether the file was named
	 * by its own path or by the alias that `register` printed (then the
	 * alias is the trusted literal path; release checks the form).
	 */
	if (!strcmp(cmd, "unregister") && ret == 0 &&
	    (aliased || !strncmp(path, USDT_ALIAS_DIR "/", sizeof(USDT_ALIAS_DIR))))
		usdt_tracefs_alias_release(path);
out:
	usdt_tracefs_close(&t);
	usdt_notes_free(n);
	close(fd);
	return ret;
}
