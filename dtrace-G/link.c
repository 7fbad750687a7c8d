/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -G`: the link-time provider object.
 *
 * What the object is for. The header from `dtrace -h` makes every probe site
 * a NOP plus a SystemTap `.note.stapsdt` entry, and every `_ENABLED()` a load
 * of `unsigned short <provider>_<probe>_semaphore`. The -G object supplies
 * what those sites need but cannot define themselves:
 *   - the semaphores: strong, global, hidden (so per executable or shared
 *     library, as SystemTap's -G makes them), in `.probes`, each in a COMDAT
 *     group of its own name so that two -G objects for one provider in one
 *     link share it rather than collide;
 *   - the metadata note `.note.usdtkit` (METADATA-NOTE.md): argument types,
 *     translated arguments and mapping, stability attributes;
 *   - drti, the registration constructor/destructor (kernel-helper/drti);
 *   - `.note.GNU-stack` (from the compiler), PIC code, so no executable stack
 *     and no text relocations in a PIE or a shared library.
 * Everything else is static, so -G objects never clash with each other.
 *
 * How it is made. We generate C (the semaphores as top-level assembly, the
 * note as a const object, drti pasted in) and compile it with the target's
 * own compiler: `$CC $CFLAGS` (default `cc`), as a build system would. That
 * gives us every target and ABI the compiler supports, the right byte order,
 * and `.note.GNU-stack` and property notes, without an ELF writer of our own
 * or a linker step. The drti source is embedded in this binary at build time
 * (kernel-helper/embed.py), so nothing needs installing beside `dtrace`.
 * Source and object live in a private mkdtemp() directory under $TMPDIR,
 * never in the current directory; termination signals are held back while
 * it exists so it is always removed; the result reaches `-o` through
 * atomic_file (whole or not at all), so concurrent runs cannot collide and a
 * failure leaves nothing.
 *
 * The target. `-32`/`-64` if given, else the class of the input objects,
 * else whatever `$CC $CFLAGS` produces. When the compiled object has another
 * class and the compiler is an x86 one, we recompile with -m32/-m64. When CC
 * is not set and the input objects are for another machine (aarch64 objects
 * on an x86-64 host), that machine's cross gcc is used if it is installed.
 * Any input object whose class or machine differs from the output is an
 * error.
 *
 * The input objects are read, never written (elf_objects.c), and
 * cross-checked against the provider declarations: a site of a declared
 * provider naming an undeclared probe, or passing another number of
 * arguments, is an error; a declared probe with no site is a warning (only
 * when objects were given); an unresolved `__dtrace_*` reference means the
 * object was built against an illumos-style header and is an error. Sites of
 * providers not declared here belong to other libraries and are ignored.
 *
 * Errors are reported once through diag, naming the object (and archive
 * member) and the probe, with a note pointing at the declaration.
 */
#include "link.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "elf_objects.h"
#include "gen_object.h"

/* ---- cross-checks ---- */

struct probe_ref {
	const struct usdt_provider *prov;
	const struct usdt_probe *probe;
	size_t last_unit; /* the last object reported for it, against repeats */
	int used;
};

struct probe_index {
	struct probe_ref *refs;
	size_t nrefs;
	size_t *slots; /* open addressing: index+1 into refs, 0 = empty */
	size_t nslots;
};

static uint32_t hash2(const char *a, const char *b)
{
	uint32_t h = 2166136261u;

	while (*a)
		h = (h ^ (unsigned char)*a++) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	while (*b)
		h = (h ^ (unsigned char)*b++) * 16777619u;
	return h;
}

static int index_build(struct probe_index *ix, const struct usdt_program *prog)
{
	size_t i, j, n = 0, k;

	for (i = 0; i < prog->nproviders; i++)
		n += prog->providers[i].nprobes;
	ix->nslots = 16;
	while (ix->nslots < n * 2)
		ix->nslots *= 2;
	ix->refs = calloc(n ? n : 1, sizeof(*ix->refs));
	ix->slots = calloc(ix->nslots, sizeof(*ix->slots));
	if (!ix->refs || !ix->slots)
		return -ENOMEM;
	for (i = 0; i < prog->nproviders; i++) {
		const struct usdt_provider *p = &prog->providers[i];

		for (j = 0; j < p->nprobes; j++) {
			struct probe_ref *r = &ix->refs[ix->nrefs];

			r->prov = p;
			r->probe = &p->probes[j];
			r->last_unit = SIZE_MAX;
			k = hash2(p->name, r->probe->name) & (ix->nslots - 1);
			while (ix->slots[k])
				k = (k + 1) & (ix->nslots - 1);
			ix->slots[k] = ++ix->nrefs;
		}
	}
	return 0;
}

static struct probe_ref *index_find(struct probe_index *ix, const char *prov, const char *name)
{
	size_t k = hash2(prov, name) & (ix->nslots - 1);

	for (; ix->slots[k]; k = (k + 1) & (ix->nslots - 1)) {
		struct probe_ref *r = &ix->refs[ix->slots[k] - 1];

		if (strcmp(r->probe->name, name) == 0 && strcmp(r->prov->name, prov) == 0)
			return r;
	}
	return NULL;
}

static const struct usdt_provider *find_provider(const struct usdt_program *prog, const char *name)
{
	size_t i;

	for (i = 0; i < prog->nproviders; i++)
		if (strcmp(prog->providers[i].name, name) == 0)
			return &prog->providers[i];
	return NULL;
}

static void check_sites(const struct usdt_program *prog, const struct usdt_elf_objects *objs,
			struct probe_index *ix, struct usdt_diag *diag)
{
	size_t i;

	for (i = 0; i < objs->nsites; i++) {
		const struct usdt_elf_site *s = &objs->sites[i];
		const char *origin = objs->units[s->unit].origin;
		const struct usdt_provider *p;
		struct probe_ref *r;

		p = find_provider(prog, s->provider);
		if (!p)
			continue; /* another library's probes */
		r = index_find(ix, s->provider, s->name);
		if (!r) {
			usdt_error_at(
			    diag, origin, 0, 0, NULL,
			    "probe '%s:%s' has a site here but is not declared in provider "
			    "'%s'",
			    s->provider, s->name, s->provider);
			usdt_note_at(diag, p->loc.file, p->loc.line, p->loc.col, NULL,
				     "provider '%s' is declared here", p->name);
			continue;
		}
		r->used = 1;
		if (s->nargs != r->probe->nargs && r->last_unit != s->unit) {
			r->last_unit = s->unit;
			usdt_error_at(diag, origin, 0, 0, NULL,
				      "probe '%s:%s' is fired with %u argument%s here but declared "
				      "with %zu",
				      s->provider, s->name, s->nargs, s->nargs == 1 ? "" : "s",
				      r->probe->nargs);
			usdt_note_at(diag, r->probe->loc.file, r->probe->loc.line,
				     r->probe->loc.col, NULL, "probe '%s:%s' is declared here",
				     s->provider, s->name);
		}
	}
}

static void check_dtrefs(const struct usdt_elf_objects *objs, struct usdt_diag *diag)
{
	size_t i;

	for (i = 0; i < objs->ndtrefs; i++)
		usdt_error_at(
		    diag, objs->units[objs->dtrefs[i].unit].origin, 0, 0, NULL,
		    "undefined reference to '%s': this object was compiled against a "
		    "header from another DTrace's 'dtrace -h'; regenerate the header with "
		    "usdtkit's 'dtrace -h' and recompile",
		    objs->dtrefs[i].symbol);
}

static void warn_unused(struct probe_index *ix, struct usdt_diag *diag)
{
	size_t i;

	for (i = 0; i < ix->nrefs; i++) {
		const struct probe_ref *r = &ix->refs[i];

		if (!r->used)
			usdt_warning_at(diag, r->probe->loc.file, r->probe->loc.line,
					r->probe->loc.col, NULL,
					"probe '%s:%s' is declared but has no site in the given "
					"objects",
					r->prov->name, r->probe->name);
	}
}

/* ---- the target ---- */

struct elf_id {
	int elfclass, machine;
};

static int read_elf_id(const char *path, struct elf_id *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = 0;
	Elf *elf;
	GElf_Ehdr eh;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) && eh.e_type == ET_REL) {
		id->elfclass = eh.e_ident[EI_CLASS];
		id->machine = eh.e_machine;
		ok = 1;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok ? 0 : -1;
}

static int bits_of(int elfclass)
{
	return elfclass == ELFCLASS32 ? 32 : 64;
}

static int compile(const char *cc, const struct usdt_link_opts *opts, const struct usdt_workdir *w,
		   int want_bits, struct elf_id *id, struct usdt_diag *diag)
{
	if (usdt_run_cc(cc, opts->cflags, NULL, w, diag))
		return -1;
	if (read_elf_id(w->obj, id)) {
		usdt_error(diag, "the compiler '%s' did not produce a relocatable ELF object", cc);
		return -1;
	}
	if (want_bits && bits_of(id->elfclass) != want_bits &&
	    (id->machine == EM_X86_64 || id->machine == EM_386)) {
		if (usdt_run_cc(cc, opts->cflags, want_bits == 32 ? "-m32" : "-m64", w, diag))
			return -1;
		if (read_elf_id(w->obj, id)) {
			usdt_error(
			    diag, "the compiler '%s' did not produce a relocatable ELF object", cc);
			return -1;
		}
	}
	if (want_bits && bits_of(id->elfclass) != want_bits) {
		char buf[32];

		usdt_error(diag,
			   "the compiler '%s' produces %d-bit %s objects, not %d-bit ones: set CC "
			   "or CFLAGS for the target",
			   cc, bits_of(id->elfclass),
			   usdt_elf_machine_name(id->machine, buf, sizeof(buf)), want_bits);
		return -1;
	}
	return 0;
}

/* Debian's (and most distributions') name of a cross gcc for a machine. */
static const char *cross_gcc(const struct usdt_elf_unit *u)
{
	switch (u->machine) {
	case EM_AARCH64:
		return "aarch64-linux-gnu-gcc";
	case EM_ARM:
		return "arm-linux-gnueabihf-gcc";
	case EM_RISCV:
		return u->elfclass == ELFCLASS64 ? "riscv64-linux-gnu-gcc" : NULL;
	case EM_PPC64:
		return u->data == ELFDATA2LSB ? "powerpc64le-linux-gnu-gcc"
					      : "powerpc64-linux-gnu-gcc";
	case EM_S390:
		return "s390x-linux-gnu-gcc";
	case EM_LOONGARCH:
		return "loongarch64-linux-gnu-gcc";
	case EM_X86_64:
		return "x86_64-linux-gnu-gcc";
	case EM_386:
		return "i686-linux-gnu-gcc";
	default:
		return NULL;
	}
}

static bool on_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[4096];

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), end > p ? p : ".", prog) <
			(int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Compiles for the target: $CC, or when CC is not set and the input objects
 * are for another machine than cc makes, that machine's cross gcc if one is
 * installed (the objects were evidently built by one).
 */
static int compile_for_target(const struct usdt_link_opts *opts,
			      const struct usdt_elf_objects *objs, const struct usdt_workdir *w,
			      int want_bits, struct elf_id *id, struct usdt_diag *diag)
{
	bool cc_set = opts->cc && *opts->cc;
	const char *cross;

	if (compile(cc_set ? opts->cc : "cc", opts, w, want_bits, id, diag))
		return -1;
	if (cc_set || !objs->nunits || objs->units[0].machine == id->machine)
		return 0;
	cross = cross_gcc(&objs->units[0]);
	if (!cross || !on_path(cross))
		return 0; /* check_units() reports the mismatch */
	return compile(cross, opts, w, want_bits, id, diag);
}

static bool is_x86(int machine)
{
	return machine == EM_X86_64 || machine == EM_386;
}

static void check_units(const struct usdt_elf_objects *objs, const struct elf_id *out,
			const struct usdt_link_opts *opts, struct usdt_diag *diag)
{
	size_t i;

	for (i = 0; i < objs->nunits; i++) {
		const struct usdt_elf_unit *u = &objs->units[i];
		const char *hint = "";
		char b1[32], b2[32];

		if (u->elfclass == out->elfclass && u->machine == out->machine)
			continue;
		if (is_x86(u->machine) && is_x86(out->machine))
			hint =
			    " (objects of one link must agree; -32/-64 or CFLAGS=-m32 choose the "
			    "output)";
		else if (u->machine != out->machine && !(opts->cc && *opts->cc))
			hint = " (set CC to the compiler that built the objects)";
		usdt_error_at(diag, u->origin, 0, 0, NULL,
			      "object is %d-bit %s but the provider object is %d-bit %s%s",
			      bits_of(u->elfclass),
			      usdt_elf_machine_name(u->machine, b1, sizeof(b1)),
			      bits_of(out->elfclass),
			      usdt_elf_machine_name(out->machine, b2, sizeof(b2)), hint);
	}
}

/* Copies the compiled object into the atomic output. */
static int install(const char *obj, const char *output, struct usdt_diag *diag)
{
	struct usdt_atomic_file f;
	char buf[65536];
	int fd, err;
	ssize_t n;

	fd = open(obj, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		usdt_error(diag, "cannot read the compiled object: %s", strerror(errno));
		return -1;
	}
	err = usdt_atomic_open(&f, output);
	if (err) {
		close(fd);
		usdt_error(diag, "cannot create '%s': %s", output, strerror(-err));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, (size_t)n, f.fp) != (size_t)n)
			break;
	if (n != 0) {
		err = errno ? errno : EIO;
		close(fd);
		usdt_atomic_abort(&f);
		usdt_error(diag, "cannot write '%s': %s", output, strerror(err));
		return -1;
	}
	close(fd);
	err = usdt_atomic_commit(&f);
	if (err) {
		usdt_error(diag, "cannot write '%s': %s", output, strerror(-err));
		return -1;
	}
	return 0;
}

/* A termination signal arrived while held: give up before installing anything. */
static int interrupted(const sigset_t *hold, struct usdt_diag *diag)
{
	sigset_t pending;
	int sig;

	if (sigpending(&pending) != 0)
		return 0;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(hold, sig) == 1 && sigismember(&pending, sig) == 1) {
			usdt_error(diag, "interrupted");
			return 1;
		}
	return 0;
}

/* Generates, compiles and installs, with the work directory's whole life inside. */
static int build(const struct usdt_program *prog, const struct usdt_link_opts *opts,
		 const struct usdt_elf_objects *objs, struct usdt_diag *diag)
{
	struct usdt_workdir w;
	struct elf_id out;
	sigset_t hold, old;
	int want_bits = opts->bits, rc = -1, err;
	unsigned errors = diag->errors;
	FILE *src;

	if (!want_bits && objs->nunits)
		want_bits = bits_of(objs->units[0].elfclass);

	/* A Ctrl-C now waits for the compiler, then our cleanup, then kills us. */
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigaddset(&hold, SIGQUIT);
	sigprocmask(SIG_BLOCK, &hold, &old);

	err = usdt_workdir_create(&w);
	if (err) {
		usdt_error(diag, "cannot create a temporary directory: %s", strerror(-err));
		goto out;
	}
	src = fopen(w.src, "we");
	err = src ? -usdt_gen_source(prog, src) : errno;
	if (src && fclose(src) != 0 && !err)
		err = errno;
	if (err) {
		usdt_error(diag, "cannot write the provider object's source: %s", strerror(err));
		goto out_dir;
	}
	if (compile_for_target(opts, objs, &w, want_bits, &out, diag))
		goto out_dir;
	if (interrupted(&hold, diag))
		goto out_dir;
	check_units(objs, &out, opts, diag);
	if (diag->errors != errors)
		goto out_dir;
	if (install(w.obj, opts->output, diag) == 0)
		rc = 0;
out_dir:
	if (opts->keep)
		fprintf(diag->out, "%s: kept the provider object's source in %s\n", diag->progname,
			w.src);
	usdt_workdir_remove(&w, opts->keep);
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Replacing an input with the provider object would be modifying it. */
static int output_is_input(const struct usdt_link_opts *opts, struct usdt_diag *diag)
{
	struct stat out, in;
	size_t i;

	if (stat(opts->output, &out) != 0)
		return 0;
	for (i = 0; i < opts->nobjects; i++)
		if (stat(opts->objects[i], &in) == 0 && in.st_dev == out.st_dev &&
		    in.st_ino == out.st_ino) {
			usdt_error(diag,
				   "the output '%s' is the input object '%s': -G never writes "
				   "its inputs",
				   opts->output, opts->objects[i]);
			return 1;
		}
	return 0;
}

int usdt_link_object(const struct usdt_program *prog, const struct usdt_link_opts *opts,
		     struct usdt_diag *diag)
{
	struct usdt_elf_objects objs;
	struct probe_index ix = {0};
	unsigned errors = diag->errors;
	int rc = -1;

	memset(&objs, 0, sizeof(objs));
	if (!opts->output || !*opts->output) {
		usdt_error(diag, "no output file for -G");
		goto out;
	}
	if (output_is_input(opts, diag))
		goto out;
	if (usdt_elf_objects_read(opts->objects, opts->nobjects, &objs, diag))
		goto out;
	if (index_build(&ix, prog)) {
		usdt_error(diag, "out of memory");
		goto out;
	}
	check_dtrefs(&objs, diag);
	check_sites(prog, &objs, &ix, diag);
	if (diag->errors != errors)
		goto out;
	if (opts->warn_unused && opts->nobjects && !objs.nunchecked)
		warn_unused(&ix, diag);
	rc = build(prog, opts, &objs, diag);
out:
	free(ix.refs);
	free(ix.slots);
	usdt_elf_objects_free(&objs);
	return rc;
}
