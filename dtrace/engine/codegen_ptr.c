/* SPDX-License-Identifier: MIT */
/*
 * D's pointers (under codegen_expr.c, over codegen_vars.c): `&`, `*`,
 * `->`, `.` of a union or of memory, `[]` through a pointer or of a scalar
 * array, pointer arithmetic, alloca(), bcopy(), copyinto().
 *
 * Theory. A pointer is an integer value (cv) that knows its pointee's type
 * (cv.ptr: its words, "int", "struct rec", "void"); `p + i` moves by the
 * pointee's size, `p - q` counts elements. D's own memory is addressed
 * by virtual addresses no process or kernel uses (non-canonical on x86-64
 * and arm64): scratch (alloca(), per CPU, from the start again at each
 * clause, as DTrace's: two clauses of a firing get the same address) at
 * DMEM_VA_S, the globals' memory objects (scalar arrays `int a[5]`, union
 * variables) at DMEM_VA_G, offsets into their maps. A load or a store
 * there is the map's bytes, bounds tested (dmem_at()); a load elsewhere
 * reads the process's memory, else the kernel's (a value known to be the
 * kernel's, cv.kernel, the kernel's alone: load()); an address nothing
 * answers for faults (DTRACEFLT_BADADDR), a store anywhere but D's memory
 * too. What DTrace refuses is refused with its tag: `&` of a D variable
 * (D_ADDROF_VAR), `*` of an integer (D_DEREF_NONPTR) or of `void *`
 * (D_DEREF_VOID), `->` of a non-pointer (D_OP_PTR), `.` of a pointer
 * (D_OP_SOU), arithmetic on `void *` (D_OP_INCOMPAT).
 */
#include <string.h>

#include "cg.h"

static void cv_set(struct cv *v, const char *text, unsigned size, bool uns, const char *ptr)
{
	dt_free(v->text);
	v->text = dt_xstrdup(text);
	v->type = TY_INT;
	v->size = size;
	v->is_unsigned = uns;
	v->ptr = ptr ? dt_xstrdup(ptr) : NULL;
}

static char *strndup_(const char *s, size_t n)
{
	char *p = dt_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* A type's words with its typedefs undone (the outermost). */
static const char *resolve(struct cg *g, const char *ty)
{
	const char *d;
	int guard = 0;

	while (ty && (d = cg_decl_type(g, 'T', ty)) != NULL && strcmp(d, ty) && guard++ < 32)
		ty = d;
	return ty;
}

/* "T *" -> "T"; "T [n]" -> "T" (an array's element); NULL for neither. */
static char *element(struct cg *g, const char *ty, bool *array)
{
	const char *r = resolve(g, ty), *br;
	size_t n;

	*array = false;
	if (!r)
		return NULL;
	n = strlen(r);
	if (n > 2 && !strcmp(r + n - 2, " *"))
		return strndup_(r, n - 2);
	if ((br = strrchr(r, '[')) != NULL && br > r + 1 && br[-1] == ' ') {
		*array = true;
		return strndup_(r, (size_t)(br - 1 - r));
	}
	return NULL;
}

static bool is_void(struct cg *g, const char *ty)
{
	struct cg_type t;

	return !cg_type(g, ty, &t) && t.is_void;
}

/* The pointee's size for arithmetic: 0 when it has none (void, unknown). */
static unsigned elem_size(struct cg *g, const char *ty)
{
	struct cg_type t;

	return cg_type(g, ty, &t) || t.is_void ? 0 : t.size;
}

/* A kernel symbol (`` `max_pfn``, ``vmlinux`max_pfn``): its name past the backquote. */
static const char *ksym(const struct dt_node *n)
{
	const char *bq = n->kind == N_IDENT ? strrchr(n->name, '`') : NULL;

	return bq && bq[1] ? bq + 1 : NULL;
}

/*
 * A kernel symbol's address, from /proc/kallsyms (a kernel built without
 * CONFIG_KALLSYMS_ALL lists functions only: its data has no address here).
 */
static bool ksym_addr(struct cg *g, const struct dt_node *n, unsigned long long *addr)
{
	const char *name = ksym(n);
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], msg[400];
	unsigned long long a;
	char t;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, sym) == 3 && !strcmp(sym, name) && a) {
			fclose(f);
			*addr = a;
			return true;
		}
	if (f)
		fclose(f);
	snprintf(msg, sizeof(msg),
		 "failed to resolve %s: no such kernel symbol with an address in "
		 "/proc/kallsyms",
		 n->name);
	cg_fail(g, n, msg);
	return false;
}

/* A global that is a memory object (a scalar array, a union): its variable. */
static const struct cg_var *mem_var(struct cg *g, const struct dt_node *n)
{
	const struct cg_var *x;

	if (n->kind != N_IDENT)
		return NULL;
	x = cg_var_find(g, 'g', n->name);
	return x && x->bytes ? x : NULL;
}

/* The pointer variable an index applies to (`p[i]`, `self->p[i]`), or NULL. */
static bool ptr_index(struct cg *g, const struct dt_node *n)
{
	const struct cg_var *x;

	if (n->kind != N_INDEX || n->nargs != 1)
		return false;
	if (!n->name[0] || (!n->a && strchr(n->name, '`')))
		return true; /* through an expression; a kernel symbol's elements */
	if (n->a && n->a->kind != N_SELF && n->a->kind != N_THIS)
		return false;
	x = cg_var_find(g, !n->a ? 'g' : n->a->kind == N_SELF ? 's' : 't', n->name);
	return x && (x->ptr || x->bytes);
}

static void load(struct cg *g, const struct dt_node *n, const char *addr, bool kernel,
		 const char *ty, struct cv *v);
static size_t site(struct cg *g);

/*
 * n as a place in memory: its address (an integer) and its type's words;
 * false (reported, or nothing when quiet) when n is none.
 */
static bool lvalue(struct cg *g, const struct dt_node *n, struct cv *addr, char **ty)
{
	const struct cg_var *x;
	struct cv b = {0}, i = {0};
	struct cg_type st;
	bool arr;
	char *el;

	memset(addr, 0, sizeof(*addr));
	*ty = NULL;
	if (ksym(n)) { /* its type is not known here (no CTF): an int, as an undeclared value */
		unsigned long long ka;
		char t[40];

		if (!ksym_addr(g, n, &ka))
			return false;
		snprintf(t, sizeof(t), "(__s64)0x%llxULL", ka);
		cv_set(addr, t, 8, true, NULL);
		addr->kernel = true;
		*ty = dt_xstrdup("int");
		return true;
	}
	if ((x = mem_var(g, n)) != NULL) {
		char t[200];

		snprintf(t, sizeof(t), "(DMEM_VA_G + __builtin_offsetof(struct gvars, g_%s))",
			 x->cname);
		cv_set(addr, t, 8, true, NULL);
		*ty = dt_xstrdup(cg_decl_type(g, 'g', n->name));
		return true;
	}
	if (n->kind == N_UNARY && n->op[0] == '*') {
		cg_value(g, n->a, &b);
		if (g->failed)
			return false;
		if (!b.ptr) {
			cg_refuse(g, n, "D_DEREF_NONPTR", "cannot dereference non-pointer type");
			return false;
		}
		if (is_void(g, b.ptr)) {
			cg_refuse(g, n, "D_DEREF_VOID", "cannot dereference pointer to void");
			return false;
		}
		*ty = b.ptr;
		b.ptr = NULL;
		*addr = b;
		return true;
	}
	if (n->kind == N_MEMBER) {
		unsigned off = 0;
		struct cg_type mt;
		const char *sty;
		int r;

		if (n->op[0] == '-') {
			const struct dt_node *a = n->a;
			const char *dt = NULL;

			if (a->kind == N_IDENT || a->kind == N_SELF || a->kind == N_THIS)
				dt = cg_decl_type(g,
						  a->kind == N_IDENT  ? 'g'
						  : a->kind == N_SELF ? 's'
								      : 't',
						  a->name);
			if (dt && !cg_type_pointee(g, dt)) {
				cg_refuse(g, n, "D_OP_PTR",
					  "operator -> must be applied to a pointer");
				return false;
			}
			cg_value(g, n->a, &b);
			if (g->failed)
				return false;
			if (!b.ptr) {
				cg_refuse(g, n, "D_OP_PTR",
					  "operator -> must be applied to a pointer");
				return false;
			}
			sty = b.ptr;
		} else {
			char *t = NULL;

			if (n->a->kind != N_IDENT && n->a->kind != N_SELF && n->a->kind != N_THIS &&
			    n->a->kind != N_UNARY && n->a->kind != N_MEMBER &&
			    n->a->kind != N_INDEX) {
				cg_err(g, n, "'.' of this expression");
				return false;
			}
			if (n->a->kind == N_IDENT || n->a->kind == N_SELF || n->a->kind == N_THIS) {
				char k = n->a->kind == N_IDENT	? 'g'
					 : n->a->kind == N_SELF ? 's'
								: 't';
				const char *dt = cg_decl_type(g, k, n->a->name);

				if (!dt) {
					const struct cg_var *pv = cg_var_find(g, k, n->a->name);
					char msg[300];

					snprintf(
					    msg, sizeof(msg),
					    "operator . cannot be applied to type \"%s%s\"; must "
					    "be applied to a struct or union",
					    pv && pv->ptr ? pv->ptr : "int",
					    pv && pv->ptr ? " *" : "");
					cg_refuse(g, n, "D_OP_SOU", msg);
					return false;
				}
				if (!mem_var(g, n->a)) {
					char msg[300];

					snprintf(msg, sizeof(msg),
						 strchr(dt, '*')
						     ? "operator . cannot be applied to "
						       "type \"%s\"; must be applied "
						       "to a struct or union"
						     : "'.' of %s (a union: its members "
						       "as a variable's)",
						 dt);
					if (strchr(dt, '*'))
						cg_refuse(g, n, "D_OP_SOU", msg);
					else
						cg_err(g, n, msg);
					return false;
				}
			}
			if (!lvalue(g, n->a, &b, &t))
				return false;
			sty = t;
		}
		r = cg_type_member(g, sty, n->name, &mt, &off);
		if (r) {
			char msg[300];

			snprintf(msg, sizeof(msg),
				 r == -2 ? "operator %s cannot be applied to type \"%s\"; must be "
					   "applied to a struct or union"
				 : r == -3 ? "%s: %s has no member named this"
					   : "operator %s: %s is an incomplete type",
				 n->op, sty);
			cg_refuse(g, n,
				  r == -2   ? "D_OP_SOU"
				  : r == -3 ? "D_TYPE_MEMBER"
					    : "D_OP_INCOMPLETE",
				  msg);
			cv_free(&b);
			return false;
		}
		if (mt.bits) {
			cg_err(g, n, "a bit-field member through a pointer");
			cv_free(&b);
			return false;
		}
		{
			char t[600];

			if (n->op[0] == '-') /* `p->m` of a NULL p: DTrace's fault at address 0 */
				snprintf(t, sizeof(t),
					 "({ __u64 pn_ = (__u64)(%s); if (!pn_) FAULT(%zu, 1, 0); "
					 "(__s64)(pn_ + %uULL); })",
					 b.text, site(g), off);
			else
				snprintf(t, sizeof(t), "(__s64)((__u64)(%s) + %uULL)", b.text, off);
			cv_set(addr, t, 8, true, NULL);
			addr->kernel = b.kernel; /* a member of a kernel object is the kernel's */
		}
		cv_free(&b);
		*ty = cg_type_member_words(g, sty, n->name);
		return *ty != NULL;
	}
	if (ptr_index(g, n)) {
		unsigned long bound = 0; /* an array's elements (a constant index is checked) */
		unsigned sz;
		int64_t k;
		char t[1200];

		if (!n->name[0]) {
			char *at = NULL;

			if ((n->a->kind == N_MEMBER || mem_var(g, n->a)) &&
			    !lvalue(g, n->a, &b, &at)) {
				return false;
			} else if (at) {
				el = element(g, at, &arr);
				if (el && arr)
					bound = strtoul(strrchr(resolve(g, at), '[') + 1, NULL, 10);
				if (!el || !arr) { /* a pointer member: its value */
					cv_free(&b);
					cg_value(g, n->a, &b);
					el = b.ptr;
				}
			} else {
				cg_value(g, n->a, &b);
				el = b.ptr;
			}
		} else {
			struct dt_node base = *n;

			base.kind = n->a ? n->a->kind : N_IDENT;
			base.a = NULL;
			base.nargs = 0;
			if (mem_var(g, &base) || ksym(&base)) {
				char *at;

				if (!lvalue(g, &base, &b, &at))
					return false;
				el = element(g, at, &arr);
				if (el && arr)
					bound = strtoul(strrchr(resolve(g, at), '[') + 1, NULL, 10);
				if (!el)
					el = at; /* a kernel symbol: its elements, of its type */
			} else {
				cg_value(g, &base, &b);
				el = b.ptr;
			}
		}
		if (g->failed)
			return false;
		if (!el) {
			cg_refuse(g, n, "D_OP_ARRPTR",
				  "operator [ ] must be applied to an array or pointer");
			return false;
		}
		sz = elem_size(g, el);
		if (!sz) {
			cg_refuse(g, n, "D_DEREF_VOID", "cannot dereference pointer to void");
			return false;
		}
		cg_int(g, n->args[0], &i);
		if (g->failed)
			return false;
		if (bound && cg_const(g, n->args[0], &k) && (k < 0 || (uint64_t)k >= bound)) {
			snprintf(t, sizeof(t), "index outside array bounds: %lld, max is %lu",
				 (long long)k, bound);
			cg_refuse(g, n, "D_ARR_BOUNDS", t);
			return false;
		}
		if (bound && !cg_const(g, n->args[0], &k))
			/* a declared array's index, checked at run time: DTRACEFLT_BADINDEX */
			snprintf(
			    t, sizeof(t),
			    "({ __s64 ix_ = (__s64)(%s); if ((__u64)ix_ >= %luULL) "
			    "FAULT(%zu, 11, ix_); (__s64)((__u64)(%s) + (__u64)ix_ * %uULL); })",
			    i.text, bound, site(g), b.text, sz);
		else
			snprintf(t, sizeof(t), "(__s64)((__u64)(%s) + (__u64)(%s) * %uULL)", b.text,
				 i.text, sz);
		cv_set(addr, t, 8, true, NULL);
		addr->kernel = b.kernel;
		cv_free(&b);
		cv_free(&i);
		*ty = el;
		return true;
	}
	(void)st;
	return false;
}

static size_t site(struct cg *g)
{
	return g->scanning ? 0 : cg_fault_site(g);
}

/*
 * The value at addr of type ty (an array decays to a pointer to its first
 * element). An array or a string in a kernel object is the kernel's, and
 * so is where a pointer read from one points, as DTrace reads it (a
 * `__user` member is copyin()'s).
 */
static void load(struct cg *g, const struct dt_node *n, const char *addr, bool kernel,
		 const char *ty, struct cv *v)
{
	struct cg_type t;
	bool arr;
	char *el = element(g, ty, &arr);
	char text[1400];

	if (el && arr && !strcmp(el, "char")) { /* a char array is a string, as D has it */
		cv_set(v, addr, 0, false, NULL);
		v->type = TY_STR;
		v->skind = SV_USER;
		v->kernel = kernel;
		return;
	}
	if (el && arr) {
		cv_set(v, addr, 8, true, el);
		v->kernel = kernel;
		return;
	}
	if (!cg_type(g, ty, &t) && t.is_str) { /* a string kept in memory: read where it is */
		cv_set(v, addr, 0, false, NULL);
		v->type = TY_STR;
		v->skind = SV_USER;
		v->kernel = kernel;
		return;
	}
	if (cg_type(g, ty, &t) || t.is_aggr || t.is_str || t.is_void || t.size > 8) {
		char msg[300];

		snprintf(msg, sizeof(msg), "a value of type '%s' read from memory", ty);
		cg_err(g, n, msg);
		return;
	}
	/* (the kernel's is read as the kernel's: no try at the process's first) */
	snprintf(text, sizeof(text),
		 "({ __u64 pa_ = (__u64)(%s); __u64 pv_ = 0; if (%s(&pv_, %u, %spa_)) FAULT(%zu, "
		 "1, pa_); %s(pv_, %u); })",
		 addr, kernel ? "bpf_probe_read_kernel" : "dload", t.size, kernel ? "(void *)" : "",
		 site(g), t.is_unsigned || t.is_ptr ? "zx" : "sx", t.size);
	cv_set(v, text, t.size, t.is_unsigned, t.is_ptr ? el : NULL);
	v->kernel = kernel && t.is_ptr;
	g->dmem = true;
}

/* `&x`: x's address, as a pointer to x's type. */
static void address_of(struct cg *g, const struct dt_node *n, struct cv *v)
{
	const struct dt_node *a = n->a;
	struct cv addr;
	char *ty;

	if ((a->kind == N_IDENT && !ksym(a)) || a->kind == N_SELF || a->kind == N_THIS ||
	    a->kind == N_AGG || (a->kind == N_INDEX && !ptr_index(g, a))) {
		cg_refuse(g, n, "D_ADDROF_VAR", "cannot take address of dynamic variable");
		return;
	}
	if (a->kind != N_UNARY && a->kind != N_MEMBER && a->kind != N_INDEX && !ksym(a)) {
		cg_refuse(g, n, "D_ADDROF_LVAL", "unacceptable operand for unary & operator");
		return;
	}
	if (!lvalue(g, a, &addr, &ty))
		return;
	cv_set(v, addr.text, 8, true, ty);
	v->kernel = addr.kernel;
	cv_free(&addr);
	g->dmem = true;
}

/* A pointer's arithmetic or comparison (a or b a pointer): false when neither is. */
bool cg_ptr_arith(struct cg *g, const struct dt_node *n, struct cv *a, struct cv *b, struct cv *v)
{
	char t[1200];
	unsigned sz;

	if (!a->ptr && !b->ptr)
		return false;
	if ((n->op[0] == '+' || n->op[0] == '-') && !n->op[1]) {
		struct cv *p = a->ptr ? a : b, *i = a->ptr ? b : a;

		if (a->ptr && b->ptr && n->op[0] == '-') {
			sz = elem_size(g, a->ptr);
			snprintf(t, sizeof(t), "sdiv((__s64)((__u64)(%s) - (__u64)(%s)), %u)",
				 a->text, b->text, sz ? sz : 1);
			cv_set(v, t, 8, false, NULL);
			return true;
		}
		sz = elem_size(g, p->ptr);
		if ((a->ptr && b->ptr) || (n->op[0] == '-' && !a->ptr) || !sz) {
			char msg[300];

			snprintf(msg, sizeof(msg),
				 "operands have incompatible types: \"%s%s\" %s \"%s%s\"",
				 a->ptr ? a->ptr : "int", a->ptr ? " *" : "", n->op,
				 b->ptr ? b->ptr : "int", b->ptr ? " *" : "");
			cg_refuse(g, n, "D_OP_INCOMPAT", msg);
			return true;
		}
		cg_conv(i, 8, i->is_unsigned);
		snprintf(t, sizeof(t), "(__s64)((__u64)(%s) %s (__u64)(%s) * %uULL)", p->text,
			 n->op, i->text, sz);
		cv_set(v, t, 8, true, p->ptr);
		v->kernel = p->kernel;
		return true;
	}
	return false; /* comparisons and the rest: as integers (unsigned, 64 bits) */
}

bool cg_ptr_is_place(struct cg *g, const struct dt_node *n)
{
	return (n->kind == N_UNARY && n->op[0] == '*' && !n->op[1]) || n->kind == N_MEMBER ||
	       ptr_index(g, n) || mem_var(g, n);
}

bool cg_ptr_lvalue(struct cg *g, const struct dt_node *n, struct cv *addr, char **ty)
{
	if ((n->kind == N_UNARY && n->op[0] == '*' && !n->op[1]) || n->kind == N_MEMBER ||
	    ptr_index(g, n) || mem_var(g, n) || ksym(n))
		return lvalue(g, n, addr, ty);
	return false;
}

char *cg_ptr_type(struct cg *g, const struct dt_node *n)
{
	struct cv addr = {0};
	char *ty = NULL;

	if ((n->kind == N_UNARY && n->op[0] == '*' && !n->op[1]) || n->kind == N_MEMBER ||
	    ptr_index(g, n) || mem_var(g, n)) {
		if (!lvalue(g, n, &addr, &ty))
			ty = NULL;
		cv_free(&addr);
	}
	return ty;
}

bool cg_ptr_value(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct cv addr = {0};
	char *ty;

	if (n->kind == N_UNARY && n->op[0] == '&' && !n->op[1]) {
		address_of(g, n, v);
		return true;
	}
	if (n->kind == N_CALL && !strcmp(n->name, "alloca") && n->nargs == 1) {
		struct cv s;
		char t[600];

		cg_int(g, n->args[0], &s);
		if (g->failed || cg_dmem_refuse_size(g, n, n->args[0]))
			return true;
		snprintf(
		    t, sizeof(t),
		    "({ __u64 an_ = (__u64)(%s), ap_ = dalloca(an_); if (!ap_) FAULT(%zu, 5, an_); "
		    "(__s64)ap_; })",
		    s.text, site(g));
		cv_set(v, t, 8, true, "void");
		cv_free(&s);
		g->dmem = true;
		return true;
	}
	if ((n->kind == N_UNARY && n->op[0] == '*' && !n->op[1]) || n->kind == N_MEMBER ||
	    ptr_index(g, n) || mem_var(g, n) || ksym(n)) {
		if (mem_var(g, n)) {
			const char *dt = cg_decl_type(g, 'g', n->name);
			bool arr;
			char *el = element(g, dt, &arr);

			if (!el && lvalue(g, n, &addr, &ty)) { /* a struct or union: its bytes */
				struct cg_type t = {0};

				cg_type(g, ty, &t);
				cv_set(v, addr.text, 0, false, NULL);
				v->type = TY_STR;
				v->skind = SV_BYTES;
				v->size = t.size;
				v->ptr = ty;
				cv_free(&addr);
				g->dmem = true;
				return true;
			}
		}
		if (lvalue(g, n, &addr, &ty))
			load(g, n, addr.text, addr.kernel, ty, v);
		cv_free(&addr);
		return true;
	}
	return false;
}

/* The new value of a place: `=`'s, `op=`'s, ++/--'s (the old one loaded at `addr`). */
static bool store(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	struct cv addr = {0}, val = {0}, old = {0}, nv = {0}, one = {0};
	struct cg_type t;
	char *ty;

	if (!lvalue(g, n->a, &addr, &ty))
		return true;
	if (!cg_type(g, ty, &t) && t.is_aggr && (strstr(ty, " [") || strchr(resolve(g, ty), '['))) {
		char msg[300];

		snprintf(msg, sizeof(msg),
			 "operator %s may not be applied to operand of type \"%s\"",
			 n->kind == N_ASSIGN ? n->op : n->op, ty);
		cg_refuse(g, n, "D_OP_ARRFUN", msg);
		return true;
	}
	if (!cg_type(g, ty, &t) && t.is_aggr && n->kind == N_ASSIGN && !strcmp(n->op, "=")) {
		/* a struct or union copied whole, from a place of its type */
		struct cv src = {0};
		char *sty = NULL;

		if (!lvalue(g, n->b, &src, &sty) || strcmp(resolve(g, sty), resolve(g, ty))) {
			if (!g->failed)
				cg_refuse(g, n, "D_OP_INCOMPAT",
					  "operands have incompatible types: a struct or union is "
					  "assigned only one of its own type");
			cv_free(&src);
			return true;
		}
		dt_buf_printf(o,
			      "%s{\n%s\t__u64 cd_ = (__u64)(%s), cs_ = (__u64)(%s);\n"
			      "%s\tif (dcopy(cd_, cs_, %u, 0))\n%s\t\tFAULT(%zu, 1, cd_);\n%s}\n",
			      ind, ind, addr.text, src.text, ind, t.size, ind, site(g), ind);
		g->dmem = true;
		cv_free(&src);
		cv_free(&addr);
		return true;
	}
	if (!cg_type(g, ty, &t) && t.is_str && n->kind == N_ASSIGN && !strcmp(n->op, "=")) {
		/* a string into memory: STRSIZE bytes there (the scratch holds them) */
		if (cg_dmem_size(g) < (unsigned)g->strsize) {
			cg_err(g, n, "a string stored into a scratch smaller than strsize");
			return true;
		}
		cg_value(g, n->b, &val);
		if (!g->failed && val.type != TY_STR)
			cg_refuse(g, n, "D_OP_INCOMPAT",
				  "operands have incompatible types: string = int");
		if (g->failed)
			goto out;
		/*
		 * sizeof(string) is strsize, one byte less than a string's
		 * area (its strsize characters and NUL): the string is made
		 * above the allocations, then strsize bytes of it are copied,
		 * the last a NUL.
		 */
		dt_buf_printf(o,
			      "%s{\n%s\t__u64 sa_ = (__u64)(%s);\n%s\t__u8 *sp_ = dmem_at(sa_, "
			      "STRSIZE - 1);\n"
			      "%s\t__u8 *st_ = dmem_tmp();\n"
			      "%s\tif (!sp_ || !st_)\n%s\t\tFAULT(%zu, 1, sa_);\n",
			      ind, ind, addr.text, ind, ind, ind, ind, site(g));
		cg_store_str(g, &val, "st_", false, o, "\t\t\t");
		dt_buf_printf(o,
			      "%s\tbpf_probe_read_kernel(sp_, STRSIZE - 1, st_);\n"
			      "%s\tsp_[STRSIZE - 2] = 0;\n%s}\n",
			      ind, ind, ind);
		g->dmem = true;
		goto out;
	}
	if (cg_type(g, ty, &t) || t.is_aggr || t.is_str || t.is_void || t.size > 8) {
		cg_err(g, n, "a store of this type into memory");
		return true;
	}
	g->dmem = true;
	dt_buf_printf(o, "%s{\n%s\t__u64 sa_ = (__u64)(%s);\n", ind, ind, addr.text);
	if (n->kind == N_ASSIGN && !strcmp(n->op, "=")) {
		cg_value(g, n->b, &nv);
		if (!g->failed && nv.type != TY_INT)
			cg_err(g, n, "a string stored through a pointer");
	} else {
		char op[4] = "+";

		load(g, n, "sa_", false, ty, &old);
		if (n->kind == N_INCDEC) {
			cv_set(&one, "1LL", 4, false, NULL);
			op[0] = n->op[0];
			val = one;
			one.text = NULL;
		} else {
			snprintf(op, sizeof(op), "%.*s", (int)strlen(n->op) - 1, n->op);
			cg_value(g, n->b, &val);
		}
		if (!g->failed) {
			struct dt_node bin = *n;

			bin.kind = N_BINARY;
			strcpy(bin.op, op);
			if (!cg_ptr_arith(g, &bin, &old, &val, &nv))
				cg_arith(op, &old, &val, &nv);
		}
	}
	if (!g->failed) {
		cg_conv(&nv, t.size, t.is_unsigned);
		dt_buf_printf(
		    o, "%s\tif (dstore(sa_, (__u64)(%s), %u))\n%s\t\tFAULT(%zu, 1, sa_);\n%s}\n",
		    ind, nv.text, t.size, ind, site(g), ind);
	}
out:
	cv_free(&addr);
	cv_free(&val);
	cv_free(&old);
	cv_free(&nv);
	return true;
}

/* bcopy(src, dst, n), copyinto(addr, n, dst): into D's memory. */
static bool copy_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	bool bc = !strcmp(n->name, "bcopy");
	struct cv a[3] = {{0}};
	/* bcopy(src, dst, n), copyinto(src, n, dst): which argument is which */
	int src = 0, dst = bc ? 1 : 2, len = bc ? 2 : 1, i;
	char *stext = NULL;

	for (i = 0; i < 3 && !g->failed; i++)
		if (i == src)
			cg_value(g, n->args[i], &a[i]);
		else
			cg_int(g, n->args[i], &a[i]);
	if (g->failed)
		goto out;
	if (!a[dst].ptr) {
		cg_refuse(g, n, "D_PROTO_ARG",
			  bc ? "bcopy( ) argument #2 is incompatible with prototype"
			     : "copyinto( ) argument #3 is incompatible with prototype");
		goto out;
	}
	dt_buf_printf(o, "%s{\n", ind);
	if (a[src].type == TY_STR && a[src].skind != SV_MEM) {
		/* a string that is no variable's: its bytes in a slot first */
		dt_buf_printf(
		    o, "%s\t__u8 *ct_ = strtmp(0);\n%s\tif (!ct_)\n%s\t\tFAULT(%zu, 5, 0);\n", ind,
		    ind, ind, site(g));
		cg_store_str(g, &a[src], "ct_", false, o, "\t\t\t");
		stext = "ct_";
	}
	/* (evaluated in the arguments' order: D's) */
	dt_buf_printf(o, "%s\t__u64 c0_ = (__u64)(%s), c1_ = (__u64)(%s), c2_ = (__u64)(%s);\n",
		      ind, stext ? stext : a[0].text, a[1].text, a[2].text);
	dt_buf_printf(o, "%s\tif (dcopy(c%d_, c%d_, c%d_, %d))\n%s\t\tFAULT(%zu, 1, c%d_);\n%s}\n",
		      ind, dst, src, len, a[src].type == TY_STR ? 1 : 0, ind, site(g), dst, ind);
	g->dmem = true;
out:
	for (i = 0; i < 3; i++)
		cv_free(&a[i]);
	return true;
}

bool cg_ptr_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind)
{
	const struct dt_node *l = n->a;

	if (n->kind == N_CALL && (!strcmp(n->name, "bcopy") || !strcmp(n->name, "copyinto")) &&
	    n->nargs == 3)
		return copy_stmt(g, n, o, ind);
	if ((n->kind != N_ASSIGN && n->kind != N_INCDEC) || !l)
		return false;
	if ((l->kind == N_UNARY && l->op[0] == '*') || l->kind == N_MEMBER || ptr_index(g, l) ||
	    mem_var(g, l))
		return store(g, n, o, ind);
	if (l->kind == N_UNARY && l->op[0] == '&') {
		cg_refuse(g, n, "D_OP_LVAL", "operator = requires modifiable lvalue as an operand");
		return true;
	}
	return false;
}
