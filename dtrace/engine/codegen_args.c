/* SPDX-License-Identifier: MIT */
/*
 * USDT programs and their sites. A program is one per clause set (the
 * clauses a probe runs, for which processes, and the argument types where
 * args[] is read: eg_group_key()), shared by every site of every probe
 * with that set: each site is attached with a BPF cookie, and the program
 * reads what differs between sites from the map `sites` at that cookie
 * (bpf_get_attach_cookie): the record's probe, its ID, probeprov,
 * probemod, probefunc, probename, and each argument's place. The place is
 * the site's argument spec (core/notes: the one parser, core/argspec.c)
 * reduced to data: a constant, a register by its pt_regs field, a
 * register plus a displacement read from the process, or (gcc's operand
 * for a global, `-8@g_var(%rip)`) the instruction pointer plus the
 * symbol's distance from the site (arm64's `-8@[x0, #:lo12:g_var]`: the
 * register's page plus the low 12 bits, a memory operand); then a size and
 * a sign. So a file that
 * appears later is attached to the programs already loaded: its sites are
 * new entries and new links, no code. An argument the note places where
 * this cannot read (a SIB operand) is an error at the expression that
 * reads it, naming the site.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg.h"
#include "notes.h"
#include "symbols.h"

void cg_use_arg(struct cg *g, const struct dt_node *n, unsigned k)
{
	if (k < USDT_SDT_MAX_ARGS && !g->arg_used[k])
		g->arg_used[k] = n;
}

/* struct pt_regs's fields, in order (codegen_prelude.c lays it out). */
#if defined(__aarch64__)
#define NREGS 32 /* regs[0..30], sp */
#else
static const char *const regs[] = {"r15", "r14",     "r13", "r12", "bp",    "bx", "r11",
				   "r10", "r9",	     "r8",  "ax",  "cx",    "dx", "si",
				   "di",  "orig_ax", "ip",  "cs",  "flags", "sp", "ss"};
#define NREGS (sizeof(regs) / sizeof(regs[0]))
#endif

/* The pt_regs field's index of a register the note names, or -1. */
static int reg_index(const struct usdt_site *s, const char *reg)
{
	unsigned width;
	const char *f = usdt_reg_fetch_name(s->arch, reg, &width);

	if (!f || strcmp(f, "%ip") == 0)
		return -1;
#if defined(__aarch64__)
	if (s->arch != USDT_ARCH_AARCH64)
		return -1;
	if (strcmp(f, "%sp") == 0)
		return 31;
	return f[0] == '%' && f[1] == 'x' ? atoi(f + 2) : -1;
#else
	size_t i;

	if (s->arch != USDT_ARCH_X86_64)
		return -1;
	for (i = 0; i < NREGS; i++)
		if (!strcmp(f + 1, regs[i]))
			return (int)i;
	return -1;
#endif
}

/*
 * An argument at a symbol (core/argspec's usdt_argspec_symbol()). x86-64's
 * `-8@g_var(%rip)`: at the uprobe, the instruction pointer is the site's
 * run-time address, so the symbol's is that plus their link-time distance
 * (the file's load bias cancels out). arm64's `-8@[x0, #:lo12:g_var]`: the
 * register holds the symbol's run-time page, the low 12 bits are the
 * link-time address's (the bias is whole pages).
 */
static int symbol_arg(const struct usdt_site *s, unsigned k, const char *path,
		      struct eg_site_arg *a, const char **why)
{
	const char *spec = s->args ? s->args : "", *e = NULL;
	struct usdt_argsym as;
	uint64_t v;
	unsigned i;
	int fd, rc, r = -1;

	for (i = 0; (spec = usdt_argspec_next(spec, &e)) && i < k; i++)
		spec = e;
	if (!spec || usdt_argspec_symbol(s->arch, spec, e, &as))
		return 1;
	if (as.page && (r = reg_index(s, as.reg)) < 0)
		return 1;
#if !defined(__x86_64__)
	if (!as.page)
		return 1;
#endif
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = fd < 0 ? -errno : usdt_elf_symbol(fd, as.sym, &v);
	if (fd >= 0)
		close(fd);
	if (rc) {
		*why = rc == -ENOENT && !strncmp(as.sym, ".L", 2)
			   ? "its symbol is the compiler's section anchor, which no file keeps "
			     "(compile with -fno-section-anchors)"
		       : rc == -ENOENT ? "its symbol is not in the file's symbol tables"
				       : "its symbol could not be read from the file";
		return -1;
	}
	if (as.page) { /* the register's page plus the low 12 bits: a memory operand */
		a->kind = EG_ARG_MEM;
		a->reg = (uint16_t)r;
		a->val = (int64_t)((v + (uint64_t)as.add) & 0xfff);
	} else {
		a->kind = EG_ARG_IP;
		a->val = (int64_t)(v + (uint64_t)as.add - s->pc);
	}
	return 0;
}

/* One argument's place, or -1 with the reason in why. */
static int arg_place(const struct usdt_site *s, unsigned k, const char *path, struct eg_site_arg *a,
		     const char **why)
{
	const struct usdt_argspec *as = &s->arg[k];
	int r;

	if (k >= s->nargs) {
		*why = "the site has no such argument";
		return -1;
	}
	a->size = (uint8_t)as->size;
	a->sign = as->is_signed ? 1 : 0;
	switch (as->kind) {
	case USDT_ARG_IMM:
		a->kind = EG_ARG_IMM;
		a->val = as->value;
		return 0;
	case USDT_ARG_REG:
	case USDT_ARG_MEM:
		r = reg_index(s, as->reg);
		if (r < 0)
			break;
		a->kind = as->kind == USDT_ARG_REG ? EG_ARG_REG : EG_ARG_MEM;
		a->reg = (uint16_t)r;
		a->val = as->kind == USDT_ARG_MEM ? as->value : 0;
		return 0;
	case USDT_ARG_UNSUPPORTED: {
		int rc = symbol_arg(s, k, path, a, why);

		if (rc <= 0)
			return rc;
		*why = as->why ? as->why : "an operand this engine cannot read";
		return -1;
	}
	}
	*why = "a register this engine cannot read";
	return -1;
}
/* "usdt:PATH:provider:name" split (the path may hold ':'). */
static char *split_attach(const char *attach, const char **prov, const char **name)
{
	char *path = dt_xstrdup(attach + 5), *p;

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

void eg_probe_sites_end(struct eg_prog *p)
{
	size_t i;

	if (p->last.funcs)
		for (i = 0; i < p->last.notes->nsites; i++)
			free(p->last.funcs[i]);
	dt_free(p->last.funcs);
	if (p->last.notes)
		usdt_notes_free(p->last.notes);
	dt_free(p->last.path);
	memset(&p->last, 0, sizeof(p->last));
}

/* The notes of the probe's file: read once for all its probes (p->last). */
static struct usdt_notes *read_notes(struct eg_prog *p, const struct dt_probe *pr, const char *path,
				     struct usdt_diag *diag)
{
	char err[200];
	struct stat st;
	int fd;

	if (p->last.notes && pr->ino && pr->ino == p->last.ino && pr->dev == p->last.dev &&
	    !strcmp(path, p->last.path))
		return p->last.notes;
	eg_probe_sites_end(p);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) ||
	    (pr->ino && (st.st_ino != pr->ino || st.st_dev != pr->dev))) {
		usdt_error(diag, "%s cannot be read again (%s)", path,
			   fd < 0 ? strerror(errno) : "it was replaced");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (usdt_notes_read(fd, NULL, &p->last.notes, err, sizeof(err))) {
		usdt_error(diag, "%s: %s", path, err);
		p->last.notes = NULL;
		close(fd);
		return NULL;
	}
	close(fd);
	p->last.path = dt_xstrdup(path);
	p->last.dev = (uint64_t)st.st_dev;
	p->last.ino = (uint64_t)st.st_ino;
	return p->last.notes;
}

/*
 * Every site's function in the file (the lister's symbol reader: DWARF in
 * a process of its own), once: NULL when it cannot say.
 */
static char **site_funcs(struct eg_prog *p)
{
	const struct usdt_notes *n = p->last.notes;
	uint64_t *pcs;
	const char *why = NULL;
	size_t i;
	int fd;

	if (p->last.funcs)
		return p->last.funcs;
	pcs = dt_xmalloc((n->nsites + 1) * sizeof(*pcs));
	p->last.funcs = dt_xmalloc((n->nsites + 1) * sizeof(char *));
	for (i = 0; i < n->nsites; i++)
		pcs[i] = n->sites[i].pc;
	fd = open(p->last.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || usdt_sym_functions(fd, pcs, n->nsites, p->last.funcs, &why))
		memset(p->last.funcs, 0, (n->nsites + 1) * sizeof(char *));
	if (fd >= 0)
		close(fd);
	dt_free(pcs);
	return p->last.funcs;
}

static bool node_args(const struct dt_node *n)
{
	size_t i;

	if (!n)
		return false;
	if (n->kind == N_ARGS || node_args(n->a) || node_args(n->b) || node_args(n->c))
		return true;
	for (i = 0; i < n->nargs; i++)
		if (node_args(n->args[i]))
			return true;
	return false;
}

static bool stmts_args(struct dt_stmt *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (node_args(v[i]->e) || stmts_args(v[i]->then, v[i]->nthen) ||
		    stmts_args(v[i]->els, v[i]->nels))
			return true;
	return false;
}

bool eg_group_uses_args(const struct dt_program *prog, const struct dt_probe *pr)
{
	size_t i;

	for (i = 0; i < pr->npc; i++) {
		const struct dt_clause *c = prog->clauses[pr->pc[i].clause];

		if (node_args(c->pred) || stmts_args(c->body, c->nbody))
			return true;
	}
	return false;
}

void eg_group_key(const struct dt_program *prog, const struct dt_probe *pr, struct dt_buf *key)
{
	bool args = false;
	size_t i, k;

	for (i = 0; i < pr->npc; i++) {
		const struct dt_pclause *pc = &pr->pc[i];
		const struct dt_clause *c = prog->clauses[pc->clause];

		dt_buf_printf(key, "%zu:", pc->clause);
		if (pc->any_pid)
			dt_buf_printf(key, "*");
		for (k = 0; !pc->any_pid && k < pc->npids; k++)
			dt_buf_printf(key, "%d,", pc->pids[k]);
		dt_buf_printf(key, ";");
		args |= node_args(c->pred) || stmts_args(c->body, c->nbody);
	}
	/* args[N]'s types are the probe's, written into the program */
	for (k = 0; args && k < pr->ntypes; k++)
		dt_buf_printf(key, "|%s", pr->types[k] ? pr->types[k] : "");
	dt_buf_add(key, "", 1);
	key->n--;
}

long eg_group_find(const struct eg_prog *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->ngroups; i++)
		if (!strcmp(p->groups[i].key, key))
			return (long)i;
	return -1;
}

/* A name into a site's field, cut to fit. */
static void site_str(char *dst, const char *s)
{
	snprintf(dst, EG_SITE_STR, "%s", s ? s : "");
}

int eg_probe_sites(struct eg_prog *p, const struct dt_probe *pr, size_t gi, uint32_t probe,
		   struct usdt_diag *diag)
{
	const struct eg_group *gr = &p->groups[gi];
	const struct usdt_notes *notes;
	const char *prov, *name, *why = NULL;
	char *path = split_attach(pr->attach, &prov, &name), **funcs;
	size_t *at = NULL;
	size_t i, n = 0, first = p->nsites;
	unsigned k;
	int rc = -1;

	if (!prov || !name || !(notes = read_notes(p, pr, path, diag)))
		goto out;
	at = dt_xmalloc((notes->nsites + 1) * sizeof(*at));
	for (i = 0; i < notes->nsites; i++) {
		const struct usdt_site *s = &notes->sites[i];
		struct eg_site site;

		if (s->reject || !s->provider || !s->name || strcmp(s->provider, prov) ||
		    strcmp(s->name, name))
			continue;
		memset(&site, 0, sizeof(site));
		for (k = 0; k < USDT_SDT_MAX_ARGS; k++) {
			if (!gr->arg_used[k])
				continue;
			if (arg_place(s, k, path, &site.val.arg[k], &why)) {
				const char *spec = s->args ? s->args : "", *e = spec;
				unsigned j;

				for (j = 0; (spec = usdt_argspec_next(spec, &e)) && j < k; j++)
					spec = e;
				dt_error_at(diag, &gr->arg_used[k]->pos, "D_UNSUPPORTED",
					    "arg%u of %s:::%s cannot be read at its site 0x%" PRIx64
					    " in %s: operand '%.*s': %s",
					    k, prov, name, s->pc, path, spec ? (int)(e - spec) : 0,
					    spec ? spec : "", why);
				goto out;
			}
		}
		snprintf(site.prog, sizeof(site.prog), "%s", gr->prog);
		site.path = dt_xstrdup(path);
		site.off = s->pc_off;
		site.sema_off = s->sema_off;
		site.cookie = p->next_cookie++;
		site.val.probe = probe;
		site.val.id = pr->id;
		site_str(site.val.prov, pr->prov);
		site_str(site.val.mod, pr->mod);
		site_str(site.val.name, pr->name);
		at[n++] = i;
		DT_PUSH(p->sites, p->nsites, site);
	}
	if (!n) {
		usdt_error(diag, "no site of %s:%s in %s", prov, name, path);
		goto out;
	}
	/* probefunc: each site's function where the listing saw several, else the probe's */
	funcs = pr->nfuncs > 1 ? site_funcs(p) : NULL;
	for (i = 0; i < n; i++)
		site_str(p->sites[first + i].val.func,
			 funcs && funcs[at[i]] ? funcs[at[i]] : pr->func);
	rc = 0;
out:
	dt_free(at);
	dt_free(path);
	return rc;
}

/*
 * A USDT probe's program is its clause set's: written for the first probe
 * with that set (*added), which every later one's sites share.
 */
long cg_usdt_group(struct cg *g, bool *added)
{
	struct dt_buf key = {0};
	struct eg_group gr;
	long gi;

	eg_group_key(g->prog, g->probe, &key);
	gi = eg_group_find(g->out, key.s);
	*added = gi < 0;
	if (gi >= 0) {
		dt_free(key.s);
		return gi;
	}
	memset(&gr, 0, sizeof(gr));
	gr.key = key.s;
	snprintf(gr.prog, sizeof(gr.prog), "u%zu", g->out->ngroups);
	DT_PUSH(g->out->groups, g->out->ngroups, gr);
	return (long)g->out->ngroups - 1;
}

/*
 * A clause with a USDT description gets a program of its own (for every
 * process) where no probe of the start has it alone: the sites of a file
 * that comes later (retained enablings, engine.c) attach to it, one link
 * per clause, when no program has their clause set. Not for a clause that
 * reads args[] (their types are the probe's: there is none yet). The
 * stand-in probe it is written for, or NULL.
 */
const struct dt_probe *cg_spare_probe(struct cg *g, size_t c)
{
	const struct dt_clause *cl = g->prog->clauses[c];
	const struct dt_pdesc *d = &cl->descs[0];
	struct dt_buf key = {0};
	struct dt_probe *p;
	struct dt_pclause pc;
	bool usdt = false;
	size_t k;

	for (k = 0; k < cl->ndescs; k++)
		usdt |= dt_match_is_usdt(&cl->descs[k]);
	if (!usdt)
		return NULL;
	p = dt_xmalloc(sizeof(*p));
	memset(p, 0, sizeof(*p));
	memset(&pc, 0, sizeof(pc));
	p->kind = P_USDT;
	p->prov = dt_xstrdup(d->field[0] ? d->field[0] : "");
	p->mod = dt_xstrdup(d->field[1] ? d->field[1] : "");
	p->func = dt_xstrdup(d->field[2] ? d->field[2] : "");
	p->name = dt_xstrdup(d->field[3] ? d->field[3] : "");
	pc.clause = c;
	pc.any_pid = true;
	DT_PUSH(p->pc, p->npc, pc);
	eg_group_key(g->prog, p, &key);
	if (eg_group_find(g->out, key.s) >= 0 || eg_group_uses_args(g->prog, p))
		p = NULL; /* (an arena's: freed with the run) */
	dt_free(key.s);
	return p;
}

bool cg_site_builtin(struct cg *g, const struct dt_node *n, struct cv *v)
{
	const char *s = n->name;

	if (!strcmp(s, "id") || !strcmp(s, "epid")) {
		v->type = TY_INT;
		v->size = 4;
		v->is_unsigned = true;
		v->text = dt_xstrdup("((__s64)site->id)");
		return true;
	}
	if (!strcmp(s, "probeprov")) {
		cg_usdt_probeprov(g, n, v);
		return true;
	}
	if (strcmp(s, "probemod") && strcmp(s, "probefunc") && strcmp(s, "probename"))
		return false;
	v->type = TY_STR;
	v->skind = SV_MEM;
	v->text = dt_xmalloc(32);
	snprintf(v->text, 32, "site->%s", s + 5);
	return true;
}

/* The program of group gi: the site's entry, its arguments, then the clauses. */
void cg_group_program(struct cg *g, size_t gi, const char *body, struct dt_buf *o)
{
	const struct eg_group *gr = &g->out->groups[gi];
	unsigned k, any = 0;

	dt_buf_printf(o,
		      "SEC(\"uprobe\") int %s(struct pt_regs *ctx)\n{\n"
		      "\t__u32 cookie = (__u32)bpf_get_attach_cookie(ctx);\n"
		      "\tconst struct site *site = bpf_map_lookup_elem(&sites, &cookie);\n"
		      "\tif (!site)\n\t\treturn 0;\n",
		      gr->prog);
	for (k = 0; k < USDT_SDT_MAX_ARGS; k++)
		if (gr->arg_used[k])
			dt_buf_printf(o, "%s\t__s64 a_%u = site_arg(ctx, regs, site, %u);\n",
				      any++ ? "" : "\t__u64 *regs = regs_of(ctx);\n", k, k);
	dt_buf_printf(o, "#define ARG(k) a_##k\n%s\treturn 0;\n}\n#undef ARG\n", body);
}

/* What a USDT program needs: the sites' map, their registers read by index. */
void cg_sites_prelude(struct dt_buf *o)
{
	dt_buf_printf(
	    o,
	    "struct site_arg { __s64 val; unsigned short reg; __u8 kind, size, sign, pad[3]; };\n"
	    "struct site { __u32 probe, id; struct site_arg arg[%d];\n"
	    "\tchar prov[%d], mod[%d], func[%d], name[%d]; };\n"
	    "struct { __uint(type, 1); __uint(max_entries, 65536); __uint(map_flags, 1); "
	    "__type(key, __u32); __type(value, struct site); } sites SEC(\".maps\");\n"
	    "static __u64 (*bpf_get_attach_cookie)(void *ctx) = (void *)174;\n"
	    /* the registers copied out (a ctx field read at a varying offset is refused) */
	    "struct regs { __u64 r[32]; };\n"
	    "struct { __uint(type, 6); __uint(max_entries, 1); __type(key, __u32); "
	    "__type(value, struct regs); } regs SEC(\".maps\");\n"
	    "INLINE __u64 *regs_of(struct pt_regs *ctx) {\n"
	    "\t__u32 z = 0; struct regs *r = bpf_map_lookup_elem(&regs, &z);\n"
	    "\tif (r) bpf_probe_read_kernel(r->r, sizeof(*ctx), ctx);\n"
	    "\treturn r ? r->r : 0;\n}\n",
	    USDT_SDT_MAX_ARGS, EG_SITE_STR, EG_SITE_STR, EG_SITE_STR, EG_SITE_STR);
	dt_buf_printf(o,
		      "INLINE __s64 site_arg(struct pt_regs *ctx, const __u64 *regs, "
		      "const struct site *s, int k) {\n"
		      "\tconst struct site_arg *a = &s->arg[k];\n"
		      "\tint size = ((a->size - 1) & 7) + 1;\n"
		      "\t__u64 r = regs && a->reg < %u ? regs[a->reg & 31] : 0;\n"
		      "\tswitch (a->kind) {\n"
		      "\tcase %d: return a->val;\n"
		      "\tcase %d: return a->sign ? sx(r, size) : zx(r, size);\n"
		      "\tcase %d: return umem(r + a->val, size, a->sign);\n"
		      "\tcase %d: return umem((__u64)ctx->%s + a->val, size, a->sign);\n"
		      "\t}\n\treturn 0;\n}\n",
		      (unsigned)NREGS, EG_ARG_IMM, EG_ARG_REG, EG_ARG_MEM, EG_ARG_IP,
#if defined(__aarch64__)
		      "pc"
#else
		      "ip"
#endif
	);
}
