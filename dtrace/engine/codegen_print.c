/* SPDX-License-Identifier: MIT */
/*
 * print(p): the object p points at, printed as DTrace prints it (its
 * members by name and type, nested structs, arrays, enumerators by name;
 * zeroes left out; -x printsize bytes of it at most). Over codegen_ptr.c.
 *
 * Theory. The record holds p and the object's bytes (from D's memory, the
 * process's or the kernel's; an address nothing answers for is DTrace's
 * fault), read as tracemem() reads them. What the bytes are is the
 * type's layout, written here once at compile time into the action's
 * fmt, one line a node in the order they print: its depth, its kind, its
 * byte offset in the object, its size, a bit-field's width and bit
 * offset, its name and its type's words (enumerators after them). The
 * renderer (dtrace/consumer/render_print.c) walks those lines over the
 * bytes: it knows nothing of types, the engine nothing of the output.
 * The layout is the one model's (codegen_types.c): the program's own
 * types and the kernel's (BTF, dtrace/consumer/kbtf.c) alike.
 */
#include <string.h>

#include "cg.h"

/* the most bytes a print() records (a struct task_struct fits) */
#define PRINT_MAX 4096u
/* nodes a layout may have: a kernel struct's members nest deep */
#define PRINT_NODES 4000

/*
 * Kinds: 's' a struct or union (its members follow, one deeper), 'a' an
 * array and 'A' a char array (its element follows, one deeper, at the
 * array's offset), 'p' a pointer, 'i' a signed integer, 'u' an unsigned
 * one, 'c' a char, 'e' an enum (its enumerators follow the type, "\tN=V").
 */
static void node(struct cg *g, struct dt_buf *o, unsigned *count, unsigned depth, const char *name,
		 const char *ty, unsigned off, unsigned bits, unsigned boff)
{
	const struct dt_decl *d;
	struct cg_type t;
	const char *br;
	char kind;
	size_t i;

	if (++*count > PRINT_NODES || depth > 24 || cg_type(g, ty, &t) || t.is_void)
		return;
	d = cg_type_decl(g, ty);
	br = strstr(ty, " [");
	if (br)
		kind = !strncmp(ty, "char [", 6) ? 'A' : 'a';
	else if (t.is_ptr)
		kind = 'p';
	else if (d && d->kind != 'E')
		kind = 's';
	else if (d)
		kind = 'e';
	else if (!strcmp(ty, "char"))
		kind = 'c';
	else
		kind = t.is_unsigned ? 'u' : 'i';
	if (t.is_float)
		return; /* (D has no floating point to print) */
	dt_buf_printf(o, "%u %c %u %u %u %u %s\t%s", depth, kind, off, t.size, bits, boff,
		      name ? name : "", ty);
	if (kind == 'e')
		for (i = 0; i < d->nmembers; i++)
			dt_buf_printf(o, "\t%s=%s", d->members[i].name, d->members[i].type);
	dt_buf_printf(o, "\n");
	if (kind == 'a' || kind == 'A') {
		char el[256];

		snprintf(el, sizeof(el), "%.*s", (int)(br - ty), ty);
		node(g, o, count, depth + 1, NULL, el, off, 0, 0);
	} else if (kind == 's') {
		for (i = 0; i < d->nmembers; i++) {
			const struct dt_decl *m = &d->members[i];
			struct cg_type mt;
			unsigned moff = 0;

			if (d->ksize) /* the kernel's: BTF's places */
				moff = m->boff / 8;
			else if (!m->name || cg_type_member(g, ty, m->name, &mt, &moff))
				continue;
			if (m->bits && d->ksize) /* its 64-bit word, and its bits in it */
				node(g, o, count, depth + 1, m->name, m->type,
				     off + m->boff / 64 * 8, m->bits, m->boff % 64);
			else
				node(g, o, count, depth + 1, m->name, m->type, off + moff, m->bits,
				     0);
		}
	}
}

void cg_print(struct cg *g, const struct dt_node *n, size_t act, struct eg_rec *r, struct dt_buf *o)
{
	struct eg_field fp = {.type = TY_INT, .off = r->size, .size = 8},
			fb = {.type = TY_STR, .is_bytes = true};
	struct cv p = {0};
	struct cg_type t;
	struct dt_buf lay = {0};
	unsigned count = 0, size;

	if (n->nargs != 1) {
		cg_err(g, n, "print() of other than one value");
		return;
	}
	cg_value(g, n->args[0], &p);
	if (g->failed)
		goto out;
	if (p.type != TY_INT || !p.ptr) { /* DTrace's words */
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "print( ) argument #1 is incompatible with prototype:\n\tprototype: void "
			 "*\n\t argument: %s",
			 p.type == TY_STR ? "string" : "int");
		cg_refuse(g, n, "D_PROTO_ARG", msg);
		goto out;
	}
	if (cg_type(g, p.ptr, &t) || t.is_void || !t.size) {
		char msg[400];

		snprintf(msg, sizeof(msg),
			 "print( ) argument #1 reference has type '%s' with size 0; cannot "
			 "print( ) it.",
			 p.ptr);
		cg_refuse(g, n, "D_PRINT_SIZE", msg);
		goto out;
	}
	size = t.size < PRINT_MAX ? t.size : PRINT_MAX;
	node(g, &lay, &count, 0, NULL, p.ptr, 0, 0, 0);
	if (count > PRINT_NODES) {
		cg_err(g, n, "print() of a type of more than 4000 members");
		goto out;
	}
	fb.off = r->size + 8;
	fb.size = (size + 7) & ~7u;
	dt_buf_printf(o,
		      "\t\tif (rec) {\n\t\t\t__u64 ta_ = (__u64)(%s);\n"
		      "\t\t\t__u8 *tp_ = dmem_at(ta_, %u);\n"
		      "\t\t\t*(__u64 *)(rec + %u) = ta_;\n"
		      "\t\t\tif (tp_ ? bpf_probe_read_kernel(rec + %u, %u, tp_) :\n"
		      "\t\t\t    bpf_probe_read_user(rec + %u, %u, (void *)ta_) &&\n"
		      "\t\t\t    bpf_probe_read_kernel(rec + %u, %u, (void *)ta_))\n"
		      "\t\t\t\tFAULT(%zu, 1, ta_);\n\t\t}\n",
		      p.text, size, fp.off, fb.off, size, fb.off, size, fb.off, size,
		      g->scanning ? 0 : cg_fault_site(g));
	DT_PUSH(r->f, r->nf, fp);
	DT_PUSH(r->f, r->nf, fb);
	r->items[r->nitems - 1].n += 2;
	r->size += 8 + fb.size;
	g->dmem = true;
	g->t->acts[act].fmt = lay.s;
	lay.s = NULL;
out:
	dt_free(lay.s);
	cv_free(&p);
}
