/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -l [-v] [-c CMD | -p PID] [-n|-P|-m|-f DESC]`: the USDT probes of
 * live processes, listed the way DTrace lists them.
 *
 * Theory. DTrace names a USDT probe provider:module:function:name, with the
 * process id appended to the provider (`myapp1234`), the module the basename
 * of the file that holds the probe, the function the one the site is in, and
 * the probe name with each `__` turned into `-`. It lists one line per such
 * name: several sites of one probe in one function are one line, a probe
 * used in two functions is two lines. The columns and the -v block below
 * follow illumos dtrace(1M) (cmd/dtrace/dtrace.c, list_probe and
 * print_probe_info) byte for byte, so scripts written against it keep
 * working; IDs are the position in this listing (there is no kernel
 * framework handing out probe ids here).
 *
 * Which processes: those of -c, each run to its main, listed there and then
 * killed (list_create.c); those of -p, each first given the time to finish
 * its exec and its dynamic loader if it has only just started
 * (list_grab.c); else every process the helper daemon knows.
 *
 * Where the probes come from: each module (a file some process maps) is
 * reached through /proc/PID/map_files (list_source.c) and read with the
 * core's validating note reader (core/notes.c): the probes listed are
 * exactly the sites the daemon would register, accepted by the same rules.
 * A file is read once however many processes map it (keyed by device and
 * inode). Function names come from symbols.c (symbol tables, and DWARF for
 * inlined sites and compilers' copies); -v types and stability from our
 * metadata note (core/metadata.c), or, for probes built without
 * `dtrace -G`, integer types of the sizes the stapsdt note gives and
 * DTrace's default attributes.
 *
 * Probe descriptions match as DTrace's do: fields are globs (fnmatch: `*`,
 * `?`, `[...]`), an empty field matches anything, and a description with
 * fewer than four fields is aligned on the field its option names (-P the
 * provider, -m the module, -f the function, -n the name). A description
 * that matches nothing is reported as DTrace reports it. `$target` in a
 * field (DTrace's macro reference: from the `$` to the field's end) is the
 * pid of the first -c, else the first -p; descriptions are checked before
 * any command starts, and expanded once the processes exist.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "list.h"
#include "list_create.h"
#include "list_grab.h"
#include "list_group.h"
#include "list_source.h"
#include "metadata.h"
#include "notes.h"
#include "symbols.h"

enum { FIELD_PROVIDER, FIELD_MODULE, FIELD_FUNCTION, FIELD_NAME, NFIELDS };

struct pdesc {
	char *buf; /* owns the field strings */
	const char *field[NFIELDS];
	char *expanded[NFIELDS]; /* a field with its $target expanded, owned */
	size_t matched;
};

/* What one file (device, inode) holds; read once per run. */
struct file_entry {
	uint64_t dev, ino;
	struct usdt_notes *notes; /* NULL: no probes to list */
	struct file_probe *p;
	size_t n;
};

struct lister {
	const struct usdt_list_opts *o;
	FILE *out;
	struct usdt_diag *diag;
	struct pdesc *descs;
	size_t ndescs;
	struct file_entry *files;
	size_t nfiles;
	int *created; /* the processes of -c, stopped at main */
	size_t ncreated;
	unsigned id; /* the last ID printed */
};

/* ---- probe descriptions ---- */

/*
 * A macro reference in a field, as DTrace reads one: from a '$' (or "$$")
 * to the end of the field. Returns the name after it, or NULL.
 */
static const char *macro_name(const char *field)
{
	const char *v = strchr(field, '$');

	if (!v)
		return NULL;
	if (v[1] == '$' && v[2])
		v++;
	return v + 1;
}

/* dtrace -l knows one macro, $target: the process of -c or -p. */
static int check_macros(const struct usdt_list_desc *d, const struct pdesc *p, bool have_target,
			struct usdt_diag *diag)
{
	size_t k;

	for (k = 0; k < NFIELDS; k++) {
		const char *name = macro_name(p->field[k]);

		if (!name)
			continue;
		if (strcmp(name, "target"))
			fprintf(
			    diag->out,
			    "%s: invalid probe description \"%s\": undefined macro variable $%s "
			    "(dtrace -l knows $target)\n",
			    diag->progname, d->spec, name);
		else if (!have_target)
			fprintf(
			    diag->out,
			    "%s: invalid probe description \"%s\": $target is the process of -c "
			    "or -p, and neither was given\n",
			    diag->progname, d->spec);
		else
			continue;
		diag->errors++;
		return -1;
	}
	return 0;
}

/* Each field's "$target" (from its '$' to its end) becomes the pid. */
static int expand_target(struct pdesc *p, int target)
{
	size_t k;

	for (k = 0; k < NFIELDS; k++) {
		const char *v = strchr(p->field[k], '$');
		size_t n;

		if (!v)
			continue;
		n = (size_t)(v - p->field[k]) + 16;
		p->expanded[k] = malloc(n);
		if (!p->expanded[k])
			return -ENOMEM;
		snprintf(p->expanded[k], n, "%.*s%d", (int)(v - p->field[k]), p->field[k], target);
		p->field[k] = p->expanded[k];
	}
	return 0;
}

static int parse_desc(const struct usdt_list_desc *d, struct pdesc *p, bool have_target,
		      struct usdt_diag *diag)
{
	size_t nf = 1, i;
	int last;
	char *s;

	switch (d->kind) {
	case 'P':
		last = FIELD_PROVIDER;
		break;
	case 'm':
		last = FIELD_MODULE;
		break;
	case 'f':
		last = FIELD_FUNCTION;
		break;
	default:
		last = FIELD_NAME;
		break;
	}
	for (s = (char *)d->spec; *s; s++)
		nf += *s == ':';
	if (nf > (size_t)last + 1) {
		fprintf(diag->out,
			"%s: invalid probe description \"%s\": too many fields for -%c\n",
			diag->progname, d->spec, d->kind);
		diag->errors++;
		return -1;
	}
	p->buf = strdup(d->spec);
	if (!p->buf)
		return -ENOMEM;
	for (i = 0; i < NFIELDS; i++)
		p->field[i] = "";
	s = p->buf;
	for (i = (size_t)last + 1 - nf; i <= (size_t)last; i++) {
		char *colon = strchr(s, ':');

		if (colon)
			*colon = '\0';
		p->field[i] = s;
		s = colon ? colon + 1 : s + strlen(s);
	}
	return check_macros(d, p, have_target, diag);
}

static bool field_matches(const char *pattern, const char *value)
{
	return !*pattern || fnmatch(pattern, value, 0) == 0;
}

/* Counts the match on every description it satisfies; true when any did. */
static bool matches(struct lister *l, const char *const v[NFIELDS])
{
	bool any = l->ndescs == 0;
	size_t i, k;

	for (i = 0; i < l->ndescs; i++) {
		for (k = 0; k < NFIELDS; k++)
			if (!field_matches(l->descs[i].field[k], v[k]))
				break;
		if (k == NFIELDS) {
			l->descs[i].matched++;
			any = true;
		}
	}
	return any;
}

/* ---- reading a file ---- */

static void file_entry_free(struct file_entry *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->p[i].dname);
		free(f->p[i].func);
	}
	free(f->p);
	if (f->notes)
		usdt_notes_free(f->notes);
}

static bool is_elf(int fd)
{
	unsigned char magic[4];

	return pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	       !memcmp(magic, "\177ELF", 4);
}

static void warn_rejected(struct lister *l, const char *path, const struct usdt_notes *n)
{
	size_t i, nrej = n->nsites - n->naccepted;

	if (!nrej)
		return;
	for (i = 0; i < n->nsites; i++)
		if (n->sites[i].reject)
			break;
	usdt_warning(l->diag, "%s: %zu probe site(s) not listed, e.g. %s:%s: %s (%s)", path, nrej,
		     n->sites[i].provider ? n->sites[i].provider : "?",
		     n->sites[i].name ? n->sites[i].name : "?", n->sites[i].reject,
		     n->sites[i].detail);
}

/*
 * A name from the file (a symbol, a DWARF name, a mapped path) as printed:
 * bytes outside printable ASCII, and spaces unless `spaces`, as \xNN. The
 * file may be anyone's; its names must not reach a terminal as control
 * sequences or break the columns.
 */
static char *printable(const char *s, bool spaces)
{
	size_t n = 0, i;
	char *out, *o;

	for (i = 0; s[i]; i++)
		n += (s[i] > ' ' && s[i] < 0x7f) || (spaces && s[i] == ' ') ? 1 : 4;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (o = out, i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c > ' ' && c < 0x7f) || (spaces && c == ' ')) {
			*o++ = (char)c;
		} else {
			snprintf(o, 5, "\\x%02x", c);
			o += 4;
		}
	}
	*o = '\0';
	return out;
}

/* The same, written to out (spaces kept): for types from the metadata note. */
static void put_printable(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= ' ' && c < 0x7f)
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

static int read_file(struct lister *l, const struct usdt_list_module *m, struct file_entry *f)
{
	char err[256] = "", **funcs = NULL, *shown;
	const char *why = NULL;
	uint64_t *pcs = NULL;
	size_t i, n = 0;
	int rc;

	if (!is_elf(m->fd))
		return 0;
	shown = printable(m->path, true);
	if (!shown)
		return -ENOMEM;
	rc = usdt_notes_read(m->fd, NULL, &f->notes, err, sizeof(err));
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		usdt_warning(l->diag, "cannot read the probes of %s: %s", shown, err);
		f->notes = NULL;
		rc = 0;
		goto out;
	}
	n = f->notes->nsites;
	warn_rejected(l, shown, f->notes);
	if (f->notes->naccepted == 0) {
		usdt_notes_free(f->notes);
		f->notes = NULL;
		goto out;
	}
	pcs = calloc(n, sizeof(*pcs));
	funcs = calloc(n, sizeof(*funcs));
	rc = -ENOMEM;
	if (!pcs || !funcs)
		goto out;
	for (i = 0; i < n; i++)
		pcs[i] = f->notes->sites[i].pc;
	rc = usdt_sym_functions(m->fd, pcs, n, funcs, &why);
	if (rc)
		goto out;
	if (why)
		usdt_warning(l->diag, "%s: functions named from the symbol table only: %s", shown,
			     why);
	for (i = 0; i < n; i++) {
		char *fn = printable(funcs[i] ? funcs[i] : "", false);

		free(funcs[i]);
		funcs[i] = fn;
		if (!fn) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = list_group_sites(f->notes, funcs, &f->p, &f->n);
out:
	if (funcs)
		for (i = 0; i < n; i++)
			free(funcs[i]);
	free(funcs);
	free(pcs);
	free(shown);
	return rc;
}

static struct file_entry *get_file(struct lister *l, const struct usdt_list_module *m)
{
	struct file_entry *nv, *f;
	size_t i;

	for (i = 0; i < l->nfiles; i++)
		if (l->files[i].dev == m->dev && l->files[i].ino == m->ino)
			return &l->files[i];
	nv = realloc(l->files, (l->nfiles + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	l->files = nv;
	f = &l->files[l->nfiles++];
	memset(f, 0, sizeof(*f));
	f->dev = m->dev;
	f->ino = m->ino;
	if (read_file(l, m, f)) {
		file_entry_free(f);
		l->nfiles--;
		return NULL;
	}
	return f;
}

/* ---- printing ---- */

static void print_attr(FILE *out, const char *title, const struct usdt_attr *a)
{
	fprintf(out, "\n\t%s\n", title);
	fprintf(out, "\t\tIdentifier Names: %s\n", usdt_stability_name(a->name_stab));
	fprintf(out, "\t\tData Semantics:   %s\n", usdt_stability_name(a->data_stab));
	fprintf(out, "\t\tDependency Class: %s\n", usdt_depclass_name(a->dep_class));
}

static const char *sized_type(const struct usdt_argspec *a)
{
	static const char *const s[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
	static const char *const u[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
	int k = a->size == 1 ? 0 : a->size == 2 ? 1 : a->size == 4 ? 2 : a->size == 8 ? 3 : -1;

	if (k < 0)
		return "(unknown)";
	return a->is_signed ? s[k] : u[k];
}

/*
 * DTrace's -v block. The probe description attributes are the least of the
 * provider, module, function and name sets (each component on its own), as
 * dt_probe_info() computes them for a fully specified probe.
 */
static void print_info(struct lister *l, const struct file_entry *f, const struct file_probe *p)
{
	struct usdt_meta_info info;
	struct usdt_attr desc;
	const char *why = NULL;
	unsigned i;

	memset(&info, 0, sizeof(info));
	if (!usdt_meta_find(f->notes, p->provider, p->name, &info, &why)) {
		const struct usdt_site *s = &f->notes->sites[p->site];

		usdt_meta_default_attrs(info.attr);
		info.nargs = info.nxargs = s->nargs;
		for (i = 0; i < s->nargs; i++)
			info.native[i] = info.xlated[i] = sized_type(&s->arg[i]);
	}
	desc = info.attr[USDT_ATTR_PROVIDER];
	for (i = USDT_ATTR_MODULE; i <= USDT_ATTR_NAME; i++) {
		if (info.attr[i].name_stab < desc.name_stab)
			desc.name_stab = info.attr[i].name_stab;
		if (info.attr[i].data_stab < desc.data_stab)
			desc.data_stab = info.attr[i].data_stab;
		if (info.attr[i].dep_class < desc.dep_class)
			desc.dep_class = info.attr[i].dep_class;
	}
	print_attr(l->out, "Probe Description Attributes", &desc);
	print_attr(l->out, "Argument Attributes", &info.attr[USDT_ATTR_ARGS]);
	fprintf(l->out, "\n\tArgument Types\n");
	for (i = 0; i < info.nxargs && i < USDT_MAX_ARGS; i++) {
		fprintf(l->out, "\t\targs[%u]: ", i);
		put_printable(l->out, info.xlated[i]);
		fputc('\n', l->out);
	}
	if (info.nxargs == 0)
		fprintf(l->out, "\t\tNone\n");
	/* Not in DTrace's output: what argN (the untranslated values) are. */
	if (info.translated) {
		fprintf(l->out, "\n\tNative Argument Types\n");
		for (i = 0; i < info.nargs && i < USDT_MAX_ARGS; i++) {
			fprintf(l->out, "\t\targ%u: ", i);
			put_printable(l->out, info.native[i]);
			fputc('\n', l->out);
		}
		if (info.nargs == 0)
			fprintf(l->out, "\t\tNone\n");
	}
	fprintf(l->out, "\n");
}

static int list_module(struct lister *l, const struct usdt_list_module *m)
{
	struct file_entry *f = get_file(l, m);
	char *module;
	size_t i;

	if (!f)
		return -ENOMEM;
	if (!f->notes)
		return 0;
	module = printable(m->module, true);
	if (!module)
		return -ENOMEM;
	for (i = 0; i < f->n; i++) {
		const struct file_probe *p = &f->p[i];
		char provider[USDT_NAME_INPUT_MAX + 16];
		const char *v[NFIELDS];

		snprintf(provider, sizeof(provider), "%s%d", p->provider, m->pid);
		v[FIELD_PROVIDER] = provider;
		v[FIELD_MODULE] = module;
		v[FIELD_FUNCTION] = p->func;
		v[FIELD_NAME] = p->dname;
		if (!matches(l, v))
			continue;
		fprintf(l->out, "%5u %10s %17s %33s %s\n", ++l->id, provider, module, p->func,
			p->dname);
		if (l->o->verbose)
			print_info(l, f, p);
	}
	free(module);
	return 0;
}

static int cmp_module(const void *a, const void *b)
{
	const struct usdt_list_module *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	/* Within a process, by address, as /proc/PID/maps (and -p) orders them. */
	return (x->start > y->start) - (x->start < y->start);
}

static int grab(struct lister *l, int pid, struct usdt_list_modules *mods)
{
	int err = usdt_list_proc_modules(pid, mods, l->diag);

	if (err) {
		fprintf(l->diag->out, "%s: failed to grab pid %d: %s\n", l->diag->progname, pid,
			strerror(-err));
		l->diag->errors++;
		return -1;
	}
	return 0;
}

static int gather(struct lister *l, struct usdt_list_modules *mods)
{
	size_t i;

	if (!l->o->npids && !l->ncreated) {
		if (usdt_list_daemon_modules(mods, l->diag))
			return -1;
		if (mods->n) /* no module: mods->v is NULL, which qsort may not be given */
			qsort(mods->v, mods->n, sizeof(*mods->v), cmp_module);
		return 0;
	}
	for (i = 0; i < l->ncreated; i++)
		if (grab(l, l->created[i], mods))
			return -1;
	for (i = 0; i < l->o->npids; i++) {
		/* Just forked, or its loader still at work: wait a little (list_grab.c). */
		if (usdt_list_grab_wait(l->o->pids[i]) == -ENOMEM) {
			usdt_error(l->diag, "out of memory");
			return -1;
		}
		if (grab(l, l->o->pids[i], mods))
			return -1;
	}
	return 0;
}

/* Runs the commands of -c to their main; $target is the first process. */
static int create(struct lister *l, int *target)
{
	size_t i;

	l->created = calloc(l->o->ncmds ? l->o->ncmds : 1, sizeof(*l->created));
	if (!l->created) {
		usdt_error(l->diag, "out of memory");
		return -1;
	}
	for (i = 0; i < l->o->ncmds; i++) {
		int pid = usdt_list_create(l->o->cmds[i], l->diag);

		if (pid < 0)
			return -1;
		l->created[l->ncreated++] = pid;
	}
	*target = l->ncreated ? l->created[0] : l->o->npids ? l->o->pids[0] : 0;
	return 0;
}

int usdt_list(const struct usdt_list_opts *o, FILE *out, struct usdt_diag *diag)
{
	struct lister l = {.o = o, .out = out, .diag = diag};
	struct usdt_list_modules mods = {0};
	size_t i, matched = 0;
	int rc = 1, target = 0;

	l.descs = calloc(o->ndescs ? o->ndescs : 1, sizeof(*l.descs));
	if (!l.descs)
		goto nomem;
	/* Every description is checked before a command is started. */
	for (i = 0; i < o->ndescs; i++) {
		int err = parse_desc(&o->descs[i], &l.descs[l.ndescs], o->npids || o->ncmds, diag);

		if (l.descs[l.ndescs].buf) /* owned, even when it was refused */
			l.ndescs++;
		if (err == -ENOMEM)
			goto nomem;
		if (err) {
			rc = 2;
			goto out;
		}
	}
	if (create(&l, &target))
		goto out;
	for (i = 0; i < l.ndescs; i++)
		if (expand_target(&l.descs[i], target))
			goto nomem;
	if (gather(&l, &mods))
		goto out;

	fprintf(out, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME");
	for (i = 0; i < mods.n; i++)
		if (list_module(&l, &mods.v[i]))
			goto nomem;
	fflush(out);

	for (i = 0; i < l.ndescs; i++) {
		const struct pdesc *d = &l.descs[i];

		matched += d->matched;
		if (d->matched)
			continue;
		fprintf(diag->out,
			"%s: failed to match %s:%s:%s:%s: No probe matches description\n",
			diag->progname, d->field[0], d->field[1], d->field[2], d->field[3]);
	}
	rc = l.ndescs && !matched ? 1 : 0;
	goto out;
nomem:
	usdt_error(diag, "out of memory");
	rc = 1;
out:
	for (i = 0; i < l.nfiles; i++)
		file_entry_free(&l.files[i]);
	free(l.files);
	for (i = 0; i < l.ndescs; i++) {
		size_t k;

		for (k = 0; k < NFIELDS; k++)
			free(l.descs[i].expanded[k]);
		free(l.descs[i].buf);
	}
	free(l.descs);
	usdt_list_modules_free(&mods);
	/* Whatever happened, the processes of -c end here: killed and reaped. */
	for (i = 0; i < l.ncreated; i++)
		usdt_list_destroy(l.created[i], diag);
	free(l.created);
	return rc;
}

/* ---- the consumer's view: every probe, handed to a function ---- */

static int each_module(struct lister *l, const struct usdt_list_module *m,
		       int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg)
{
	struct file_entry *f = get_file(l, m);
	size_t i, k;

	if (!f)
		return -ENOMEM;
	for (i = 0; f->notes && i < f->n; i++) {
		const struct file_probe *p = &f->p[i];
		struct usdt_list_probe lp = {
		    .pid = m->pid,
		    .path = m->path,
		    .dev = m->dev,
		    .ino = m->ino,
		    .module = m->module,
		    .provider = p->provider,
		    .name = p->name,
		    .dname = p->dname,
		    .func = p->func,
		    .site = &f->notes->sites[p->site],
		};
		struct usdt_meta_info info;
		const char *why = NULL;
		int rc;

		lp.nfuncs = p->nfuncs;
		lp.nargs = lp.site->nargs;
		memset(&info, 0, sizeof(info));
		if (usdt_meta_find(f->notes, p->provider, p->name, &info, &why)) {
			lp.ntypes = info.nxargs < USDT_MAX_ARGS ? info.nxargs : USDT_MAX_ARGS;
			for (k = 0; k < lp.ntypes; k++)
				lp.types[k] = info.xlated[k];
		}
		rc = fn(&lp, arg);
		if (rc)
			return rc;
	}
	return 0;
}

int usdt_list_each(const int *pids, size_t npids,
		   int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg,
		   struct usdt_diag *diag)
{
	return usdt_list_each_new(pids, npids, NULL, fn, arg, diag);
}

/* fn for each probe of the modules (but those skip names), then they are freed. */
static int each_of(struct lister *l, struct usdt_list_modules *mods,
		   bool (*skip)(uint64_t dev, uint64_t ino),
		   int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg)
{
	int rc = 0;
	size_t i;

	for (i = 0; i < mods->n && !rc; i++)
		if (!skip || !skip(mods->v[i].dev, mods->v[i].ino))
			rc = each_module(l, &mods->v[i], fn, arg);
	if (rc == -ENOMEM) {
		usdt_error(l->diag, "out of memory");
		rc = -1;
	}
	for (i = 0; i < l->nfiles; i++)
		file_entry_free(&l->files[i]);
	free(l->files);
	usdt_list_modules_free(mods);
	return rc;
}

int usdt_list_each_new(const int *pids, size_t npids, bool (*skip)(uint64_t dev, uint64_t ino),
		       int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg,
		       struct usdt_diag *diag)
{
	struct usdt_list_opts o = {.pids = pids, .npids = npids};
	struct lister l = {.o = &o, .diag = diag};
	struct usdt_list_modules mods = {0};

	if (gather(&l, &mods)) {
		usdt_list_modules_free(&mods);
		return -1;
	}
	return each_of(&l, &mods, skip, fn, arg);
}

int usdt_list_each_file(int pid, uint64_t dev, uint64_t ino,
			int (*fn)(const struct usdt_list_probe *p, void *arg), void *arg,
			struct usdt_diag *diag)
{
	struct usdt_list_opts o = {0};
	struct lister l = {.o = &o, .diag = diag};
	struct usdt_list_modules mods = {0};

	if (usdt_list_proc_file(pid, dev, ino, &mods)) {
		usdt_list_modules_free(&mods);
		return -1;
	}
	return each_of(&l, &mods, NULL, fn, arg);
}
