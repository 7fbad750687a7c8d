/* SPDX-License-Identifier: MIT */
/*
 * Runtime providers: the API of <usdtkit/runtime.h>.
 *
 * A provider is a list of declared probes and the objects loaded for it.
 * Loading turns the declarations into the probe model every other stage
 * speaks (core/model.h: one provider, its probes, their typed arguments),
 * writes the metadata note from it (core/metadata.h), has elfso.c write the
 * object around that note, maps the object from a sealed memfd with the
 * dynamic loader and registers it (register.c).
 *
 * The fire path reads one pointer of the probe and the semaphore it points
 * at. While a provider is not loaded that pointer is `inert`, a static
 * semaphore that reads 1, so a fire takes the slow path and fails there
 * (ESRCH) instead of calling a stub that is not there. Objects are unmapped
 * only by usdtkit_provider_destroy(): a thread that read a probe's pointers
 * just before an unload still calls into mapped memory, and a binding's
 * view of a semaphore stays readable. An unload *detaches* the object
 * instead: each of its mappings is replaced, in one mremap(2) each, by a
 * private anonymous copy at the same address (the stubs as the file has
 * them, without a tracer's breakpoint; the semaphores at 0). The process
 * then maps the memfd no more, exactly as after a dlclose, which is what
 * the helper checks before it removes events that a consumer held at the
 * unload (EBUSY). Each load therefore maps a new object; the detached ones,
 * and their descriptors (which keep the loader from mistaking a new object
 * for an old one of the same /proc/PID/fd/N name), are returned at destroy.
 */
#include "usdtkit/runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfso.h"
#include "metadata.h"
#include "model.h"
#include "names.h"
#include "register.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

typedef void (*usdt_rt_stub)(const uint64_t *argv);

struct usdtkit_probe {
	/* First: the fire path's one pointer. `inert` while not loaded. */
	const volatile unsigned short *sema;
	usdt_rt_stub stub;
	usdtkit_provider *prov;
	char *name;	 /* as given: "client-error" */
	char *note_name; /* as in the notes: "client__error" */
	int nargs;
	usdtkit_type types[USDTKIT_MAX_ARGS];
};

/* One object mapped for the provider; kept until destroy. */
struct rt_object {
	struct rt_object *next;
	void *handle;
	int fd;
	size_t nprobes; /* the provider's first nprobes probes are in it */
	uintptr_t base;
	int detached;		  /* the mappings are anonymous copies (unload) */
	struct usdt_rt_image img; /* bytes freed after the load; offsets kept */
};

struct usdtkit_provider {
	char *name, *note_name, *module;
	usdtkit_probe **probes;
	size_t nprobes, cap;
	struct rt_object *objects; /* newest first */
	int loaded;
	int registered; /* the daemon took the current object: UNREGISTER owed */
	char error[512];
};

/* What a probe's semaphore pointer is while its provider is not loaded. */
static const volatile unsigned short inert = 1;

static void set_error(usdtkit_provider *p, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(usdtkit_provider *p, int err, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->error, sizeof(p->error), "usdtkit: provider '%s': ", p->name);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(p->error))
		vsnprintf(p->error + n, sizeof(p->error) - (size_t)n, fmt, ap);
	va_end(ap);
	errno = err;
}

/*
 * A DTrace-style name ("client-error") spelled as the notes spell it
 * ("client__error") and checked by the rule the note reader and the daemon
 * apply (core/names.h); NULL with *why, saying what is wrong, when it is
 * not a name.
 */
static char *note_name(const char *name, const char **why)
{
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
	size_t i, j, n = name ? strlen(name) : 0;
	char *s = malloc(2 * n + 1);

	if (!s) {
		*why = "cannot be stored: out of memory";
		return NULL;
	}
	for (i = j = 0; i < n; i++) {
		if (name[i] == '-') {
			s[j++] = '_';
			s[j++] = '_';
		} else {
			s[j++] = name[i];
		}
	}
	s[j] = '\0';
	if (usdt_is_identifier(s, USDTKIT_MAX_NAME))
		return s;
	free(s);
	if (n == 0)
		*why = "is empty";
	else if (name[0] >= '0' && name[0] <= '9')
		*why = "starts with a digit";
	else if (strspn(name, allowed) != n)
		*why = "has a character other than letters, digits, '_' and '-'";
	else
		*why = "is longer than 63 characters (each '-' counts as two)";
	return NULL;
}

usdtkit_provider *usdtkit_provider_create(const char *name, const char *module)
{
	usdtkit_provider *p;
	const char *why;
	size_t i;

	if (module) {
		for (i = 0; module[i]; i++)
			if ((unsigned char)module[i] < 0x20 || module[i] == 0x7f) {
				errno = EINVAL;
				return NULL;
			}
		if (i == 0 || i > 200) {
			errno = EINVAL;
			return NULL;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->note_name = note_name(name, &why);
	if (!p->note_name) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	p->name = strdup(name);
	p->module = module ? strdup(module) : NULL;
	if (!p->name || (module && !p->module)) {
		free(p->note_name);
		free(p->name);
		free(p->module);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static int type_ok(int t)
{
	switch (t) {
	case USDTKIT_INT8:
	case USDTKIT_UINT8:
	case USDTKIT_INT16:
	case USDTKIT_UINT16:
	case USDTKIT_INT32:
	case USDTKIT_UINT32:
	case USDTKIT_INT64:
	case USDTKIT_UINT64:
	case USDTKIT_POINTER:
	case USDTKIT_STRING:
		return 1;
	default:
		return 0;
	}
}

usdtkit_probe *usdtkit_probe_addv(usdtkit_provider *p, const char *name, int nargs,
				  const usdtkit_type *types)
{
	usdtkit_probe *q;
	const char *why;
	char *nn;
	size_t i;
	int k;

	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	p->error[0] = '\0';
	if (p->loaded) {
		set_error(p, EBUSY, "cannot add probe '%s' while loaded: unload it first",
			  name ? name : "(null)");
		return NULL;
	}
	if (nargs < 0 || nargs > USDTKIT_MAX_ARGS) {
		set_error(p, E2BIG, "probe '%s': %d arguments; a probe has 0 to %d",
			  name ? name : "(null)", nargs, USDTKIT_MAX_ARGS);
		return NULL;
	}
	for (k = 0; k < nargs; k++)
		if (!type_ok(types[k])) {
			set_error(
			    p, EINVAL,
			    "probe '%s': argument %d has type %d, which is not a usdtkit_type",
			    name ? name : "(null)", k, (int)types[k]);
			return NULL;
		}
	nn = note_name(name, &why);
	if (!nn) {
		set_error(p, errno == ENOMEM ? ENOMEM : EINVAL, "probe name '%s' %s",
			  name ? name : "(null)", why);
		return NULL;
	}
	for (i = 0; i < p->nprobes; i++)
		if (strcmp(p->probes[i]->note_name, nn) == 0) {
			set_error(p, EEXIST, "probe '%s' is already declared%s%s%s", name,
				  strcmp(p->probes[i]->name, name) ? " (as '" : "",
				  strcmp(p->probes[i]->name, name) ? p->probes[i]->name : "",
				  strcmp(p->probes[i]->name, name) ? "': '-' is '__')" : "");
			free(nn);
			return NULL;
		}
	if (p->nprobes == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		usdtkit_probe **a = realloc(p->probes, cap * sizeof(*a));

		if (!a) {
			free(nn);
			set_error(p, ENOMEM, "out of memory");
			return NULL;
		}
		p->probes = a;
		p->cap = cap;
	}
	q = calloc(1, sizeof(*q));
	if (!q || !(q->name = strdup(name))) {
		free(q);
		free(nn);
		set_error(p, ENOMEM, "out of memory");
		return NULL;
	}
	q->note_name = nn;
	q->prov = p;
	q->nargs = nargs;
	for (k = 0; k < nargs; k++)
		q->types[k] = types[k];
	q->sema = &inert;
	p->probes[p->nprobes++] = q;
	return q;
}

usdtkit_probe *usdtkit_probe_add(usdtkit_provider *p, const char *name, int nargs, ...)
{
	usdtkit_type types[USDTKIT_MAX_ARGS];
	va_list ap;
	int k;

	if (p && (nargs < 0 || nargs > USDTKIT_MAX_ARGS))
		return usdtkit_probe_addv(p, name, nargs, NULL);
	va_start(ap, nargs);
	for (k = 0; k < nargs; k++)
		types[k] = (usdtkit_type)va_arg(ap, int);
	va_end(ap);
	return usdtkit_probe_addv(p, name, nargs, types);
}

/* The declared type of an argument, as the metadata note and `dtrace -l -v` say it. */
static int set_arg_type(struct usdt_arg *a, usdtkit_type t)
{
	static const struct {
		int t;
		const char *spelling;
		enum usdt_type_class cls;
		unsigned size;
		bool is_signed;
	} map[] = {
	    {USDTKIT_INT8, "int8_t", USDT_T_INTEGER, 1, true},
	    {USDTKIT_UINT8, "uint8_t", USDT_T_INTEGER, 1, false},
	    {USDTKIT_INT16, "int16_t", USDT_T_INTEGER, 2, true},
	    {USDTKIT_UINT16, "uint16_t", USDT_T_INTEGER, 2, false},
	    {USDTKIT_INT32, "int32_t", USDT_T_INTEGER, 4, true},
	    {USDTKIT_UINT32, "uint32_t", USDT_T_INTEGER, 4, false},
	    {USDTKIT_INT64, "int64_t", USDT_T_INTEGER, 8, true},
	    {USDTKIT_UINT64, "uint64_t", USDT_T_INTEGER, 8, false},
	    {USDTKIT_POINTER, "void *", USDT_T_POINTER, 8, false},
	    {USDTKIT_STRING, "char *", USDT_T_STRING, 8, false},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].t == (int)t) {
			a->type.spelling = strdup(map[i].spelling);
			a->type.c_spelling = strdup(map[i].spelling);
			a->type.cls = map[i].cls;
			a->type.size = map[i].size;
			a->type.is_signed = map[i].is_signed;
			return a->type.spelling && a->type.c_spelling ? 0 : -1;
		}
	return -1;
}

/* The [-]SIZE the note gives an argument of type t. */
static int arg_size(usdtkit_type t)
{
	return t == USDTKIT_POINTER || t == USDTKIT_STRING ? 8 : (int)t;
}

/* The declarations of p's probes as the probe model (core/model.h). */
static int build_model(const usdtkit_provider *p, struct usdt_program *prog)
{
	struct usdt_provider *pv;
	size_t i;
	int k;

	usdt_program_init(prog);
	pv = prog->providers = calloc(1, sizeof(*pv));
	if (!pv)
		return -1;
	prog->nproviders = 1;
	usdt_meta_default_attrs(pv->attr); /* what DTrace gives a provider that says none */
	pv->name = strdup(p->note_name);
	pv->probes = calloc(p->nprobes, sizeof(*pv->probes));
	if (!pv->name || !pv->probes)
		return -1;
	pv->nprobes = p->nprobes;
	for (i = 0; i < p->nprobes; i++) {
		const usdtkit_probe *q = p->probes[i];
		struct usdt_probe *pr = &pv->probes[i];

		pr->name = strdup(q->note_name);
		pr->nargs = pr->nxargs = (size_t)q->nargs;
		if (!pr->name)
			return -1;
		if (q->nargs == 0)
			continue;
		pr->args = calloc((size_t)q->nargs, sizeof(*pr->args));
		pr->xargs = calloc((size_t)q->nargs, sizeof(*pr->xargs));
		pr->argmap = calloc((size_t)q->nargs, 1);
		if (!pr->args || !pr->xargs || !pr->argmap)
			return -1;
		for (k = 0; k < q->nargs; k++) {
			pr->argmap[k] = (unsigned char)k;
			if (set_arg_type(&pr->args[k], q->types[k]) != 0 ||
			    set_arg_type(&pr->xargs[k], q->types[k]) != 0)
				return -1;
		}
	}
	return 0;
}

/* "usdtkit:<module or provider>": the object's name in maps and `dtrace -l`. */
static void object_name(const usdtkit_provider *p, char *buf, size_t len)
{
	snprintf(buf, len, "usdtkit:%s", p->module ? p->module : p->name);
}

/* Writes the image into a sealed memfd; the descriptor, or -1 with the error set. */
static int image_fd(usdtkit_provider *p, const struct usdt_rt_image *img)
{
	char name[256];
	size_t done = 0;
	int fd;

	object_name(p, name, 250);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	if (fd < 0 && errno == EINVAL) /* before Linux 6.3: no MFD_NOEXEC_SEAL */
		fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		set_error(p, errno, "cannot create the in-memory object (memfd_create: %s)",
			  strerror(errno));
		return -1;
	}
	while (done < img->size) {
		ssize_t n = write(fd, img->bytes + done, img->size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			set_error(p, e, "cannot write the in-memory object: %s", strerror(e));
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	/* Sealed: nobody (the daemon's reader included) sees it change or shrink. */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	return fd;
}

/* Builds and maps a new object for all of p's probes; NULL with the error set. */
static struct rt_object *map_object(usdtkit_provider *p)
{
	struct usdt_rt_site *sites = NULL;
	struct usdt_meta_blob blob = {0};
	struct usdt_program prog;
	struct rt_object *o = NULL;
	struct link_map *lm = NULL;
	char **args = NULL, path[64], soname[256];
	int arch = usdt_rt_host_arch(), err, fd = -1;
	size_t i;

	if (arch < 0) {
		set_error(p, ENOTSUP, "runtime providers are made for x86-64 and aarch64 only");
		return NULL;
	}
	if (build_model(p, &prog) != 0 || usdt_meta_build(&prog, &blob) != 0)
		goto nomem;
	sites = calloc(p->nprobes, sizeof(*sites));
	args = calloc(p->nprobes, sizeof(*args));
	o = calloc(1, sizeof(*o));
	if (!sites || !args || !o)
		goto nomem;
	for (i = 0; i < p->nprobes; i++) {
		const usdtkit_probe *q = p->probes[i];
		int sizes[USDTKIT_MAX_ARGS], k;

		for (k = 0; k < q->nargs; k++)
			sizes[k] = arg_size(q->types[k]);
		args[i] = malloc(USDTKIT_MAX_ARGS * 16 + 1);
		if (!args[i])
			goto nomem;
		if (usdt_rt_argspecs((enum usdt_arch)arch, sizes, q->nargs, args[i],
				     USDTKIT_MAX_ARGS * 16 + 1) < 0)
			goto nomem;
		sites[i].provider = p->note_name;
		sites[i].name = q->note_name;
		sites[i].args = args[i];
		sites[i].symbol = q->name;
	}
	object_name(p, soname, sizeof(soname));
	err = usdt_rt_image_build((enum usdt_arch)arch, soname, sites, p->nprobes, &blob, &o->img);
	if (err) {
		set_error(p, -err, "cannot build the object: %s", strerror(-err));
		goto fail;
	}
	fd = image_fd(p, &o->img);
	if (fd < 0)
		goto fail;
	/* By pid, not /proc/self: a debugger resolves the name in its own process. */
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)getpid(), fd);
	o->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!o->handle) {
		const char *e = dlerror();

		set_error(p, ELIBBAD, "the dynamic loader refused the object: %s",
			  e ? e : "(no reason given)");
		goto fail;
	}
	if (dlinfo(o->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
		set_error(p, ELIBBAD, "the dynamic loader gave no address for the object");
		goto fail;
	}
	o->base = (uintptr_t)lm->l_addr;
	o->fd = fd;
	o->nprobes = p->nprobes;
	free(o->img.bytes);
	o->img.bytes = NULL;
	for (i = 0; i < p->nprobes; i++)
		free(args[i]);
	free(args);
	free(sites);
	usdt_meta_blob_free(&blob);
	usdt_program_free(&prog);
	return o;

nomem:
	set_error(p, ENOMEM, "out of memory");
fail:
	err = errno;
	if (o) {
		if (o->handle)
			dlclose(o->handle);
		usdt_rt_image_free(&o->img);
		free(o);
	}
	if (fd >= 0)
		close(fd);
	for (i = 0; args && i < p->nprobes; i++)
		free(args[i]);
	free(args);
	free(sites);
	usdt_meta_blob_free(&blob);
	usdt_program_free(&prog);
	errno = err;
	return NULL;
}

int usdtkit_provider_load(usdtkit_provider *p)
{
	struct rt_object *o;
	size_t i;

	if (!p) {
		errno = EINVAL;
		return -1;
	}
	p->error[0] = '\0';
	if (p->loaded) {
		set_error(p, EALREADY, "is loaded already");
		return -1;
	}
	if (p->nprobes == 0) {
		set_error(p, ENOENT, "has no probes to load: add one first");
		return -1;
	}
	o = map_object(p);
	if (!o)
		return -1;
	o->next = p->objects;
	p->objects = o;
	/* The stub before the semaphore: a fire that sees the new semaphore calls a live stub. */
	for (i = 0; i < p->nprobes; i++) {
		usdtkit_probe *q = p->probes[i];

		q->stub = (usdt_rt_stub)(o->base + o->img.stub[i]);
		__atomic_store_n(&q->sema,
				 (const volatile unsigned short *)(o->base + o->img.sema[i]),
				 __ATOMIC_RELEASE);
	}
	p->loaded = 1;
	p->registered = usdt_rt_register((const void *)(o->base + o->img.meta));
	return 0;
}

/* Puts `len` bytes at `addr`, protection `prot`, in place of what is mapped there, in one step. */
static int replace_range(uintptr_t addr, size_t len, int prot, const void *bytes)
{
	void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp == MAP_FAILED)
		return -1;
	memcpy(tmp, bytes, len);
	if (mprotect(tmp, len, prot) != 0 ||
	    mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)addr) == MAP_FAILED) {
		munmap(tmp, len);
		return -1;
	}
	return 0;
}

/* Detaches o (see the top of this file): afterwards nothing of the memfd is mapped. */
static int detach(usdtkit_provider *p, struct rt_object *o)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t text = o->base, text_end = (o->base + o->img.text_end + pg - 1) & ~(pg - 1);
	uintptr_t rw = o->base + o->img.rw_start;
	uintptr_t rw_end = (o->base + o->img.rw_end + pg - 1) & ~(pg - 1);
	size_t i, len = text_end - text > rw_end - rw ? text_end - text : rw_end - rw;
	unsigned char *copy = calloc(1, len);
	int r = -1;

	if (!copy)
		goto out;
	/* The stubs from the file: the mapped page may hold a tracer's breakpoint. */
	if (pread(o->fd, copy, o->img.text_end, 0) != (ssize_t)o->img.text_end ||
	    replace_range(text, text_end - text, PROT_READ | PROT_EXEC, copy) != 0)
		goto out;
	/* A gap between the segments (pages larger than this one's) is the file's too. */
	if (text_end < rw && mmap((void *)text_end, rw - text_end, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		goto out;
	memset(copy, 0, len);
	memcpy(copy, (const void *)rw, o->img.rw_end - o->img.rw_start);
	for (i = 0; i < o->nprobes; i++)
		memset(copy + (o->img.sema[i] - o->img.rw_start), 0, 2);
	if (replace_range(rw, rw_end - rw, PROT_READ | PROT_WRITE, copy) != 0)
		goto out;
	o->detached = 1;
	r = 0;
out:
	if (r)
		set_error(p, errno, "cannot detach the object: %s", strerror(errno));
	free(copy);
	return r;
}

int usdtkit_provider_unload(usdtkit_provider *p)
{
	size_t i;

	if (!p) {
		errno = EINVAL;
		return -1;
	}
	p->error[0] = '\0';
	if (!p->loaded) {
		set_error(p, EALREADY, "is not loaded");
		return -1;
	}
	for (i = 0; i < p->nprobes; i++)
		__atomic_store_n(&p->probes[i]->sema, &inert, __ATOMIC_RELEASE);
	p->loaded = 0;
	/* As drti's at dlclose: the helper finds the object by its address, so before the detach.
	 */
	if (p->registered)
		usdt_rt_unregister((const void *)(p->objects->base + p->objects->img.meta));
	p->registered = 0;
	(void)detach(p, p->objects);
	return 0;
}

void usdtkit_provider_destroy(usdtkit_provider *p)
{
	struct rt_object *o, *next;
	size_t i;
	int saved = errno;

	if (!p)
		return;
	if (p->loaded)
		(void)usdtkit_provider_unload(p);
	for (o = p->objects; o; o = next) {
		next = o->next;
		dlclose(o->handle);
		close(o->fd);
		usdt_rt_image_free(&o->img);
		free(o);
	}
	for (i = 0; i < p->nprobes; i++) {
		free(p->probes[i]->name);
		free(p->probes[i]->note_name);
		free(p->probes[i]);
	}
	free(p->probes);
	free(p->name);
	free(p->note_name);
	free(p->module);
	free(p);
	errno = saved;
}

const char *usdtkit_provider_error(const usdtkit_provider *p)
{
	return p ? p->error : "usdtkit: no provider (NULL)";
}

/* The slow path of a fire: a tracer is attached, or the provider is not loaded. */
static int fire_slow(const usdtkit_probe *q, const volatile unsigned short *s, const uint64_t *argv)
{
	usdt_rt_stub stub;

	if (s == &inert) {
		errno = ESRCH;
		return -1;
	}
	stub = __atomic_load_n(&q->stub, __ATOMIC_ACQUIRE);
	stub(argv);
	return 0;
}

/*
 * usdtkit_probe_fire() itself is a few instructions of assembly where there
 * is a fire-<arch>.S (meson defines USDT_RT_FIRE_ASM): it tests the
 * semaphore and jumps here, its arguments untouched, only when it is not 0.
 * Elsewhere this is usdtkit_probe_fire().
 */
#ifdef USDT_RT_FIRE_ASM
int usdt_rt_fire_slow(const usdtkit_probe *q, ...) __attribute__((visibility("hidden")));
int usdt_rt_fire_slow(const usdtkit_probe *q, ...)
#else
int usdtkit_probe_fire(const usdtkit_probe *q, ...)
#endif
{
	const volatile unsigned short *s = __atomic_load_n(&q->sema, __ATOMIC_ACQUIRE);
	uint64_t argv[USDTKIT_MAX_ARGS];
	va_list ap;
	int k;

	if (__builtin_expect(*s == 0, 1))
		return 0;
	if (s == &inert)
		return fire_slow(q, s, NULL);
	va_start(ap, q);
	for (k = 0; k < q->nargs; k++) {
		switch (q->types[k]) {
		case USDTKIT_INT8:
		case USDTKIT_INT16:
		case USDTKIT_INT32:
			argv[k] = (uint64_t)(int64_t)va_arg(ap, int);
			break;
		case USDTKIT_UINT8:
		case USDTKIT_UINT16:
			argv[k] = (uint64_t)(unsigned)va_arg(ap, int);
			break;
		case USDTKIT_UINT32:
			argv[k] = va_arg(ap, unsigned);
			break;
		case USDTKIT_INT64:
			argv[k] = (uint64_t)va_arg(ap, int64_t);
			break;
		case USDTKIT_UINT64:
			argv[k] = va_arg(ap, uint64_t);
			break;
		case USDTKIT_POINTER:
			argv[k] = (uint64_t)(uintptr_t)va_arg(ap, void *);
			break;
		case USDTKIT_STRING:
			argv[k] = (uint64_t)(uintptr_t)va_arg(ap, const char *);
			break;
		}
	}
	va_end(ap);
	return fire_slow(q, s, argv);
}

int usdtkit_probe_fire_argv(const usdtkit_probe *q, int argc, const uint64_t *argv)
{
	const volatile unsigned short *s = __atomic_load_n(&q->sema, __ATOMIC_ACQUIRE);
	uint64_t a[USDTKIT_MAX_ARGS];
	int k;

	if (__builtin_expect(*s == 0, 1))
		return 0;
	if (s == &inert)
		return fire_slow(q, s, NULL);
	for (k = 0; k < q->nargs; k++)
		a[k] = k < argc && argv ? argv[k] : 0;
	return fire_slow(q, s, a);
}

int usdtkit_probe_enabled(const usdtkit_probe *q)
{
	const volatile unsigned short *s = __atomic_load_n(&q->sema, __ATOMIC_ACQUIRE);

	return s != &inert && *s != 0;
}

const volatile unsigned short *usdtkit_probe_semaphore(const usdtkit_probe *q)
{
	const volatile unsigned short *s = __atomic_load_n(&q->sema, __ATOMIC_ACQUIRE);

	return s == &inert ? NULL : s;
}

const char *usdtkit_probe_name(const usdtkit_probe *q)
{
	return q->name;
}

usdtkit_provider *usdtkit_probe_provider(const usdtkit_probe *q)
{
	return q->prov;
}

int usdtkit_probe_nargs(const usdtkit_probe *q)
{
	return q->nargs;
}

usdtkit_type usdtkit_probe_arg_type(const usdtkit_probe *q, int i)
{
	return i >= 0 && i < q->nargs ? q->types[i] : (usdtkit_type)0;
}

const char *usdtkit_provider_name(const usdtkit_provider *p)
{
	return p->name;
}

int usdtkit_provider_loaded(const usdtkit_provider *p)
{
	return p->loaded;
}
