/* SPDX-License-Identifier: MIT */
/*
 * A USDT probe's programs, one per site: the site's notes are read again
 * (core/notes: the one argument-spec parser, core/argspec.c) and each
 * argument the clauses read becomes C for that site: a register by its
 * pt_regs field, a constant, `disp(%reg)` or a symbol's address relative to
 * %rip (gcc's operand for a global) read from the process with
 * bpf_probe_read_user; then sign- or zero-extended from the note's size. An
 * argument the note places where this cannot read (a SIB operand) is an
 * error at the expression that reads it, naming the site.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen.h"
#include "notes.h"
#include "symbols.h"

void cg_use_arg(struct cg *g, const struct dt_node *n, unsigned k)
{
	if (k < USDT_SDT_MAX_ARGS && !g->arg_used[k])
		g->arg_used[k] = n;
}

/* The pt_regs expression of a register the note names, or NULL. */
static const char *reg_expr(const struct usdt_site *s, const char *reg, char *buf, size_t n)
{
	unsigned width;
	const char *f = usdt_reg_fetch_name(s->arch, reg, &width);

	if (!f || strcmp(f, "%ip") == 0)
		return NULL;
#if defined(__aarch64__)
	if (s->arch != USDT_ARCH_AARCH64)
		return NULL;
	if (strcmp(f, "%sp") == 0)
		snprintf(buf, n, "ctx->sp");
	else
		snprintf(buf, n, "ctx->regs[%s]", f + 2);
#else
	if (s->arch != USDT_ARCH_X86_64)
		return NULL;
	snprintf(buf, n, "ctx->%s", f + 1);
#endif
	return buf;
}

/*
 * An argument at a symbol (`-8@g_var(%rip)`): at the uprobe, the
 * instruction pointer is the site's run-time address, so the symbol's is
 * that plus their link-time distance (the file's load bias cancels out).
 */
static int symbol_arg(const struct usdt_site *s, unsigned k, const char *path, struct dt_buf *o,
		      const char **why)
{
	const char *spec = s->args ? s->args : "", *e = NULL;
	char sym[256];
	int64_t add;
	uint64_t v;
	unsigned i;
	int fd, rc;

	for (i = 0; (spec = usdt_argspec_next(spec, &e)) && i < k; i++)
		spec = e;
	if (!spec || s->arch != USDT_ARCH_X86_64 ||
	    usdt_argspec_rip_symbol(spec, e, sym, sizeof(sym), &add))
		return 1;
#if defined(__x86_64__)
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = fd < 0 ? -errno : usdt_elf_symbol(fd, sym, &v);
	if (fd >= 0)
		close(fd);
	if (rc) {
		*why = rc == -ENOENT ? "its symbol is not in the file's symbol tables"
				     : "its symbol could not be read from the file";
		return -1;
	}
	dt_buf_printf(o, "umem((__u64)ctx->ip + (%" PRId64 "LL), %u, %d)",
		      (int64_t)(v + (uint64_t)add - s->pc), s->arg[k].size, s->arg[k].is_signed);
	return 0;
#else
	(void)path;
	(void)o;
	(void)why;
	(void)fd;
	(void)rc;
	(void)v;
	return 1;
#endif
}

/* One argument's C, or -1 with the reason in why. */
static int arg_expr(const struct usdt_site *s, unsigned k, const char *path, struct dt_buf *o,
		    const char **why)
{
	const struct usdt_argspec *a = &s->arg[k];
	char rb[32];
	const char *r;

	if (k >= s->nargs) {
		*why = "the site has no such argument";
		return -1;
	}
	switch (a->kind) {
	case USDT_ARG_IMM:
		dt_buf_printf(o, "(%" PRId64 "LL)", a->value);
		return 0;
	case USDT_ARG_REG:
		r = reg_expr(s, a->reg, rb, sizeof(rb));
		if (!r)
			break;
		dt_buf_printf(o, "%s((__u64)%s, %u)", a->is_signed ? "sx" : "zx", r, a->size);
		return 0;
	case USDT_ARG_MEM:
		r = reg_expr(s, a->reg, rb, sizeof(rb));
		if (!r)
			break;
		dt_buf_printf(o, "umem((__u64)%s + (%" PRId64 "LL), %u, %d)", r, a->value, a->size,
			      a->is_signed);
		return 0;
	case USDT_ARG_UNSUPPORTED: {
		int rc = symbol_arg(s, k, path, o, why);

		if (rc <= 0)
			return rc;
		*why = a->why ? a->why : "an operand this engine cannot read";
		return -1;
	}
	}
	*why = "a register this engine cannot read";
	return -1;
}

/* "usdt:PATH:provider:name" split (the path may hold ':'). */
static char *split_bt(const char *bt, const char **prov, const char **name)
{
	char *path = dt_xstrdup(bt + 5), *p;

	*prov = *name = NULL;
	p = strrchr(path, ':');
	if (!p)
		return path;
	*p = '\0';
	*name = p + 1;
	p = strrchr(path, ':');
	if (p) {
		*p = '\0';
		*prov = p + 1;
	}
	return path;
}

static int read_notes(struct cg *g, const struct dt_probe *p, const char *path,
		      struct usdt_notes **notes)
{
	char err[200];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || (p->ino && (st.st_ino != p->ino || st.st_dev != p->dev))) {
		usdt_error(g->diag, "%s cannot be read again (%s)", path,
			   fd < 0 ? strerror(errno) : "it was replaced");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (usdt_notes_read(fd, NULL, notes, err, sizeof(err))) {
		usdt_error(g->diag, "%s: %s", path, err);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int cg_site_programs(struct cg *g, size_t pi, const char *body, struct dt_buf *o)
{
	const struct dt_probe *p = g->probe;
	struct usdt_notes *notes = NULL;
	const char *prov, *name;
	char *path = split_bt(p->bt, &prov, &name);
	size_t i, nsites = 0;
	unsigned k;
	int rc = -1;

	if (!prov || !name || read_notes(g, p, path, &notes))
		goto out;
	for (i = 0; i < notes->nsites; i++) {
		const struct usdt_site *s = &notes->sites[i];
		struct eg_site site = {0};

		if (s->reject || !s->provider || !s->name || strcmp(s->provider, prov) ||
		    strcmp(s->name, name))
			continue;
		dt_buf_printf(o, "INLINE __s64 arg_%zu_%zu(struct pt_regs *ctx, int k)\n{\n", pi,
			      nsites);
		dt_buf_printf(o, "\tswitch (k) {\n");
		for (k = 0; k < USDT_SDT_MAX_ARGS; k++) {
			const char *why = NULL;

			if (!g->arg_used[k])
				continue;
			dt_buf_printf(o, "\tcase %u: return ", k);
			if (arg_expr(s, k, path, o, &why)) {
				const char *spec = s->args ? s->args : "", *e = spec;
				unsigned j;

				for (j = 0; (spec = usdt_argspec_next(spec, &e)) && j < k; j++)
					spec = e;
				dt_error_at(g->diag, &g->arg_used[k]->pos, "D_UNSUPPORTED",
					    "arg%u of %s:::%s cannot be read at its site 0x%" PRIx64
					    " in %s: operand '%.*s': %s",
					    k, prov, name, s->pc, path, spec ? (int)(e - spec) : 0,
					    spec ? spec : "", why);
				goto out;
			}
			dt_buf_printf(o, ";\n");
		}
		dt_buf_printf(o, "\t}\n\treturn 0;\n}\n");
		snprintf(site.prog, sizeof(site.prog), "p%zu_s%zu", pi, nsites);
		site.path = dt_xstrdup(path);
		site.off = s->pc_off;
		site.sema_off = s->sema_off;
		DT_PUSH(g->out->sites, g->out->nsites, site);
		dt_buf_printf(o, "#define ARG(k) arg_%zu_%zu(ctx, k)\n#define SITE %zu\n", pi,
			      nsites, nsites);
		dt_buf_printf(
		    o, "SEC(\"uprobe\") int p%zu_s%zu(struct pt_regs *ctx)\n{\n%s\treturn 0;\n}\n",
		    pi, nsites, body);
		dt_buf_printf(o, "#undef ARG\n#undef SITE\n");
		nsites++;
	}
	if (!nsites) {
		usdt_error(g->diag, "no site of %s:%s in %s", prov, name, path);
		goto out;
	}
	rc = 0;
out:
	if (notes)
		usdt_notes_free(notes);
	dt_free(path);
	return rc;
}

void cg_site_funcs_free(struct cg *g)
{
	size_t i;

	for (i = 0; i < g->nsite_func; i++)
		free(g->site_func[i]);
	dt_free(g->site_func);
	g->site_func = NULL;
	g->nsite_func = 0;
	g->funcs_of = NULL;
}

void cg_site_funcs(struct cg *g)
{
	const struct dt_probe *p = g->probe;
	struct usdt_notes *notes = NULL;
	const char *prov, *name, *why = NULL;
	char *path;
	uint64_t *pcs = NULL;
	size_t i, n = 0;
	int fd;

	if (g->funcs_of == p)
		return;
	cg_site_funcs_free(g);
	g->funcs_of = p;
	path = split_bt(p->bt, &prov, &name);
	if (!prov || !name || read_notes(g, p, path, &notes))
		goto out;
	pcs = dt_xmalloc((notes->nsites + 1) * sizeof(*pcs));
	for (i = 0; i < notes->nsites; i++) {
		const struct usdt_site *s = &notes->sites[i];

		/* cg_site_programs()'s sites, in its order */
		if (s->reject || !s->provider || !s->name || strcmp(s->provider, prov) ||
		    strcmp(s->name, name))
			continue;
		pcs[n++] = s->pc;
	}
	g->site_func = dt_xmalloc((n + 1) * sizeof(*g->site_func));
	memset(g->site_func, 0, (n + 1) * sizeof(*g->site_func));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && n && usdt_sym_functions(fd, pcs, n, g->site_func, &why) == 0)
		g->nsite_func = n;
	if (fd >= 0)
		close(fd);
out:
	if (notes)
		usdt_notes_free(notes);
	dt_free(pcs);
	dt_free(path);
}
