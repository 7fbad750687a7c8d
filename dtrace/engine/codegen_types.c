/* SPDX-License-Identifier: MIT */
/*
 * D's integer types and C's arithmetic on them (under codegen_expr.c).
 *
 * Theory. An integer value is a C expression of type __s64 (DTrace's
 * 64-bit register) and a type (width, signedness) given by C's rules: a
 * constant's by its digits and suffix, an operation's by the usual
 * arithmetic conversions (each operand promoted to int at least; the
 * wider type wins, unsigned at equal width). As DTrace's code generator
 * does, the operations work on the whole 64 bits (as __u64: no overflow in
 * C) and the type decides what is signed: division, modulo and `>>` by the
 * result's type, a comparison signed only when both operands are. The
 * value is narrowed to its type's width (sx()/zx() of the prelude) where
 * DTrace narrows it: a cast or an operand converted to another type
 * (cg_conv()), a comparison's operands, a store into a variable, a value
 * recorded by trace() or printf(). So `i = i * i` of an int wraps at the
 * store, and `(x * y) / z` divides the 64-bit product, as DTrace's unit
 * tests print them (arithmetic/tst.basics.d, tst.bug-casting.d). Signed
 * division and modulo are DTrace's: of the magnitudes, negated when the
 * signs differ (`19 % -5` is -4, `-19 % -5` is 4: tst.moddiv.d). A type is its words as the parser
 * kept them; typedefs, structs and unions are the program's declarations (prog->decls), sized here
 * as x86-64 and arm64 lay C out.
 */
#include <inttypes.h>
#include <string.h>

#include "cg.h"
#include "kbtf.h"

static const struct {
	const char *name;
	unsigned size;
	bool is_unsigned;
} named[] = {
    {"int8_t", 1, false},
    {"int16_t", 2, false},
    {"int32_t", 4, false},
    {"int64_t", 8, false},
    {"uint8_t", 1, true},
    {"uint16_t", 2, true},
    {"uint32_t", 4, true},
    {"uint64_t", 8, true},
    {"intptr_t", 8, false},
    {"uintptr_t", 8, true},
    {"size_t", 8, true},
    {"ssize_t", 8, false},
    {"pid_t", 4, false},
    {"id_t", 4, false},
    {"uid_t", 4, true},
    {"gid_t", 4, true},
    {"uchar_t", 1, true},
    {"ushort_t", 2, true},
    {"uint_t", 4, true},
    {"ulong_t", 8, true},
    {"u_longlong_t", 8, true},
    {"longlong_t", 8, false},
    {"hrtime_t", 8, false},
    {"bool", 1, true},
    {"_Bool", 1, true},
    {"boolean_t", 4, false},
    {"processorid_t", 4, false},
    {"caddr_t", 8, true},
    {"user_addr_t", 8, true},
    {"off_t", 8, false},
    {"dev_t", 8, true},
    {"ino_t", 8, true},
    {"time_t", 8, false},
    {"mode_t", 4, true},
    {"float", 4, false},
    {"double", 8, false},
    {"long double", 16, false},
    /* the kernel's (linux/types.h): DTrace on Linux knows them from its CTF */
    {"uint", 4, true},
    {"ushort", 2, true},
    {"ulong", 8, true},
    {"u_char", 1, true},
    {"u_short", 2, true},
    {"u_int", 4, true},
    {"u_long", 8, true},
    {"u8", 1, true},
    {"u16", 2, true},
    {"u32", 4, true},
    {"u64", 8, true},
    {"s8", 1, false},
    {"s16", 2, false},
    {"s32", 4, false},
    {"s64", 8, false},
};

static const struct dt_decl *decl(const struct cg *g, char kind, const char *name)
{
	size_t i;

	for (i = 0; i < g->prog->ndecls; i++)
		if (g->prog->decls[i].kind == kind && !strcmp(g->prog->decls[i].name, name))
			return &g->prog->decls[i];
	return dt_kbtf_decl(kind, name); /* the kernel's, when the program has none */
}

/* C's base type from its words: char, short, int, long, long long, signed, unsigned. */
static bool base_words(const char *ty, struct cg_type *t)
{
	char buf[128], *w, *save = NULL;
	int nchar = 0, nshort = 0, nlong = 0, nint = 0, nsig = 0, nuns = 0;

	snprintf(buf, sizeof(buf), "%s", ty);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "char"))
			nchar++;
		else if (!strcmp(w, "short"))
			nshort++;
		else if (!strcmp(w, "long"))
			nlong++;
		else if (!strcmp(w, "int"))
			nint++;
		else if (!strcmp(w, "signed"))
			nsig++;
		else if (!strcmp(w, "unsigned"))
			nuns++;
		else
			return false;
	}
	if (nsig + nuns > 1 || nchar + nshort + (nlong > 0) > 1 || nlong > 2 || nint > 1 ||
	    (nchar && nint))
		return false;
	t->is_unsigned = nuns > 0;
	t->size = nchar ? 1 : nshort ? 2 : nlong ? 8 : 4;
	t->align = t->size;
	return true;
}

static bool layout(struct cg *g, const struct dt_decl *d, struct cg_type *t, const char *member,
		   unsigned *offset);

int cg_type(struct cg *g, const char *ty, struct cg_type *t)
{
	const struct dt_decl *d;
	const char *br;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!ty)
		return -1;
	if ((br = strstr(ty, " [")) != NULL) { /* an array member: "int [4]" */
		char el[128];
		unsigned n = (unsigned)strtoul(br + 2, NULL, 10);

		snprintf(el, sizeof(el), "%.*s", (int)(br - ty), ty);
		if (cg_type(g, el, t))
			return -1;
		t->size *= n;
		t->is_aggr = true;
		return 0;
	}
	if (strchr(ty, '*')) {
		t->size = t->align = 8;
		t->is_unsigned = true;
		t->is_ptr = true;
		return 0;
	}
	if (!strcmp(ty, "string")) {
		t->size = (unsigned)g->strsize - 1; /* sizeof (string): strsize */
		t->align = 1;
		t->is_str = true;
		return 0;
	}
	if (!strcmp(ty, "void")) {
		t->is_void = true;
		return 0;
	}
	if (!strncmp(ty, "enum ", 5)) {
		t->size = t->align = 4;
		return 0;
	}
	if (!strncmp(ty, "struct ", 7) || !strncmp(ty, "union ", 6)) {
		d = decl(g, ty[0] == 's' ? 'S' : 'U', ty);
		return d && layout(g, d, t, NULL, NULL) ? 0 : -1;
	}
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(ty, named[i].name)) {
			t->size = named[i].size;
			t->align = t->size > 8 ? 16 : t->size;
			t->is_unsigned = named[i].is_unsigned;
			t->is_float = !strcmp(ty, "float") || strstr(ty, "double");
			return 0;
		}
	if (base_words(ty, t))
		return 0;
	d = decl(g, 'T', ty);
	if (d && strcmp(d->type, ty))
		return cg_type(g, d->type, t);
	return -1;
}

/*
 * A kernel struct or union (kbtf.c): its size BTF's, a member at its bit
 * offset, one in an unnamed member found through it (as C finds it). A
 * member of a type this cannot size is still placed (its words are
 * enough to read through a pointer to it).
 */
static bool klayout(struct cg *g, const struct dt_decl *d, struct cg_type *t, const char *member,
		    unsigned *offset)
{
	unsigned align = 1;
	size_t i;

	for (i = 0; i < d->nmembers; i++) {
		const struct dt_decl *m = &d->members[i];
		struct cg_type mt;
		unsigned sub = 0;

		if (cg_type(g, m->type, &mt))
			memset(&mt, 0, sizeof(mt));
		if (mt.align > align)
			align = mt.align;
		if (!member)
			continue;
		if (!m->name && !cg_type_member(g, m->type, member, t, &sub)) {
			*offset = m->boff / 8 + sub;
			return true;
		}
		if (m->name && !strcmp(m->name, member)) {
			*offset = m->boff / 8;
			*t = mt;
			t->bits = m->bits;
			return true;
		}
	}
	if (member)
		return false;
	memset(t, 0, sizeof(*t));
	t->size = d->ksize;
	t->align = align > 16 ? 16 : align;
	t->is_aggr = true;
	return true;
}

/*
 * A struct's or union's size and alignment (or a member's offset), as
 * DTrace's CTF lays out a struct the program declares: each member at the
 * first byte after the previous one's last bit, rounded up to its
 * alignment; a bit-field is an integer of the bytes its bits take (so
 * `int a : 3` is one byte, aligned to one); the size is where the last
 * member ends, not padded to the alignment (tst.SizeofBitField.d).
 */
static bool layout(struct cg *g, const struct dt_decl *d, struct cg_type *t, const char *member,
		   unsigned *offset)
{
	unsigned end = 0, size = 0, align = 1;
	bool uni = d->kind == 'U';
	size_t i;

	if (d->ksize) /* the kernel's: its places are BTF's */
		return klayout(g, d, t, member, offset);
	for (i = 0; i < d->nmembers; i++) {
		const struct dt_decl *m = &d->members[i];
		struct cg_type mt;
		unsigned off, msize, malign;

		if (cg_type(g, m->type, &mt) || mt.is_void)
			return false;
		if (m->bits > mt.size * 8)
			return false;
		msize = m->bits ? (m->bits + 7) / 8 : mt.size;
		malign = m->bits ? msize : mt.align;
		if (!malign)
			malign = 1;
		if (malign > align)
			align = malign;
		off = uni ? 0 : ((end + 7) / 8 + malign - 1) / malign * malign;
		end = off * 8 + (m->bits ? m->bits : mt.size * 8);
		if (member && m->name && !strcmp(m->name, member)) {
			*offset = off;
			*t = mt;
			t->bits = m->bits;
			return true;
		}
		if (off + msize > size)
			size = off + msize;
	}
	if (member)
		return false;
	memset(t, 0, sizeof(*t));
	t->size = size;
	t->align = align;
	t->is_aggr = true;
	return true;
}

int cg_type_member(struct cg *g, const char *ty, const char *member, struct cg_type *t,
		   unsigned *offset)
{
	const struct dt_decl *d = NULL;
	struct cg_type st;

	if (cg_type(g, ty, &st))
		return -1;
	while (ty && (d = decl(g, 'T', ty)) != NULL && strcmp(d->type, ty))
		ty = d->type;
	if (!strncmp(ty, "struct ", 7) || !strncmp(ty, "union ", 6))
		d = decl(g, ty[0] == 's' ? 'S' : 'U', ty);
	else
		return -2; /* not a struct or union */
	if (!d)
		return -1;
	return layout(g, d, t, member, offset) ? 0 : -3;
}

static const char *undo_typedefs(struct cg *g, const char *ty)
{
	const struct dt_decl *d;
	int guard = 0;

	while (ty && (d = decl(g, 'T', ty)) != NULL && strcmp(d->type, ty) && guard++ < 32)
		ty = d->type;
	return ty;
}

bool cg_type_has_bits(struct cg *g, const char *ty)
{
	const char *r = undo_typedefs(g, ty);
	const struct dt_decl *d = r && !strncmp(r, "struct ", 7) ? decl(g, 'S', r) : NULL;
	size_t i;

	for (i = 0; d && i < d->nmembers; i++)
		if (d->members[i].bits)
			return true;
	return false;
}

char *cg_type_pointee(struct cg *g, const char *ty)
{
	const char *r = undo_typedefs(g, ty);
	size_t n = r ? strlen(r) : 0;
	char *p;

	if (n < 3 || strcmp(r + n - 2, " *"))
		return NULL;
	p = dt_xmalloc(n - 1);
	memcpy(p, r, n - 2);
	p[n - 2] = '\0';
	return p;
}

char *cg_type_member_words(struct cg *g, const char *ty, const char *member)
{
	const struct dt_decl *d;
	const char *r = undo_typedefs(g, ty);
	size_t i;
	char *w;

	if (!r || (strncmp(r, "struct ", 7) && strncmp(r, "union ", 6)))
		return NULL;
	d = decl(g, r[0] == 's' ? 'S' : 'U', r);
	for (i = 0; d && i < d->nmembers; i++) {
		if (d->members[i].name && !strcmp(d->members[i].name, member))
			return dt_xstrdup(d->members[i].type);
		/* an unnamed struct or union member: its members are the struct's */
		if (!d->members[i].name &&
		    (w = cg_type_member_words(g, d->members[i].type, member)) != NULL)
			return w;
	}
	return NULL;
}

const struct dt_decl *cg_type_decl(struct cg *g, const char *ty)
{
	const char *r = undo_typedefs(g, ty);

	if (!r)
		return NULL;
	if (!strncmp(r, "struct ", 7) || !strncmp(r, "union ", 6))
		return decl(g, r[0] == 's' ? 'S' : 'U', r);
	if (!strncmp(r, "enum ", 5))
		return decl(g, 'E', r);
	return NULL;
}

/* The type a variable is declared with ('g', 's', 't'), or NULL. */
const char *cg_decl_type(const struct cg *g, char kind, const char *name)
{
	const struct dt_decl *d = decl(g, kind, name);

	return d ? d->type : NULL;
}

/*
 * A value converted to (size, signedness) as C converts it, which is what
 * DTrace's casts print: what the source type holds (its width, its
 * signedness), then that value in the target type (truncated to a
 * narrower one). `(long long)(x + x)` of an int sign-extends its low 32
 * bits; an unsigned int becomes a long long zero-extended.
 */
unsigned cg_decl_bits(const struct cg *g, char kind, const char *name)
{
	const struct dt_decl *d = decl(g, kind, name);

	return d ? d->bits : 0;
}

void cg_conv(struct cv *v, unsigned size, bool is_unsigned)
{
	struct dt_buf o = {0};
	bool src = v->size < 8 && size > v->size;
	bool dst = size < 8 && (size <= v->size || (!v->is_unsigned && is_unsigned));

	if (src)
		dt_buf_printf(&o, "%s((__u64)(%s), %u)", v->is_unsigned ? "zx" : "sx", v->text,
			      v->size);
	else
		dt_buf_printf(&o, "%s", v->text);
	if (dst) {
		char *in = o.s;

		o = (struct dt_buf){0};
		dt_buf_printf(&o, "%s((__u64)(%s), %u)", is_unsigned ? "zx" : "sx", in, size);
		dt_free(in);
	}
	dt_free(v->text);
	v->text = o.s;
	v->type = TY_INT;
	v->size = size;
	v->is_unsigned = is_unsigned;
}

/* A value made what its type holds: where it is stored (a variable, a record). */
void cg_narrow(struct cv *v)
{
	char *in = v->text;
	struct dt_buf o = {0};

	if (v->type != TY_INT || !v->size || v->size >= 8)
		return;
	dt_buf_printf(&o, "%s((__u64)(%s), %u)", v->is_unsigned ? "zx" : "sx", in, v->size);
	v->text = o.s;
	dt_free(in);
}

/* C's integer promotion: the type of a char or short operand becomes int. */
static void promote(struct cv *v)
{
	if (v->size < 4) {
		v->size = 4;
		v->is_unsigned = false;
	}
}

/*
 * DTrace's arithmetic conversions (dt_type_promote): the common type of a
 * and b is the wider one, unsigned at equal width, with no promotion to int
 * (an unsigned char plus a signed char is an unsigned char, as DTrace's
 * arithmetic/tst.cast-add*.d print).
 */
static void common(const struct cv *a, const struct cv *b, unsigned *size, bool *uns)
{
	struct cv x = *a, y = *b;

	if (!x.size)
		promote(&x);
	if (!y.size)
		promote(&y);
	if (x.size == y.size) {
		*size = x.size;
		*uns = x.is_unsigned || y.is_unsigned;
	} else {
		*size = x.size > y.size ? x.size : y.size;
		*uns = x.size > y.size ? x.is_unsigned : y.is_unsigned;
	}
}

static void set_type(struct cv *v, unsigned size, bool uns)
{
	v->type = TY_INT;
	v->size = size;
	v->is_unsigned = uns;
}

/*
 * a op b as DTrace computes it: on the 64-bit registers, the result typed
 * by C's rules; division, modulo and `>>` signed or not as that type is,
 * a comparison signed only when both operands are.
 */
void cg_arith(const char *op, struct cv *a, struct cv *b, struct cv *v)
{
	struct dt_buf o = {0};
	bool cmp = !strcmp(op, "==") || !strcmp(op, "!=") || (op[1] == '=' && !op[2]) ||
		   (op[0] == '<' && !op[1]) || (op[0] == '>' && !op[1]);
	unsigned size;
	bool uns;

	if (!strcmp(op, "&&") || !strcmp(op, "||") || !strcmp(op, "^^")) {
		if (op[0] == '^')
			dt_buf_printf(&o, "(__s64)(!(%s) != !(%s))", a->text, b->text);
		else
			dt_buf_printf(&o, "(__s64)((%s) %s (%s))", a->text, op, b->text);
		set_type(v, 4, false);
		goto out;
	}
	if (!strcmp(op, "<<") || !strcmp(op, ">>")) {
		struct cv t = *a;

		promote(&t);
		if (op[0] == '<' || t.is_unsigned)
			dt_buf_printf(&o, "(__s64)((__u64)(%s) %s ((%s) & 63))", a->text, op,
				      b->text);
		else
			dt_buf_printf(&o, "(__s64)((__s64)(%s) >> ((%s) & 63))", a->text, b->text);
		set_type(v, t.size, t.is_unsigned);
		goto out;
	}
	common(a, b, &size, &uns);
	if (cmp) {
		/* each side as its type holds it, compared as their common type is */
		const char *ct = uns ? "__u64" : "__s64";

		cg_narrow(a);
		cg_narrow(b);

		dt_buf_printf(&o, "(__s64)((%s)(%s) %s (%s)(%s))", ct, a->text, op, ct, b->text);
		set_type(v, 4, false);
		goto out;
	}
	/* an operand of another type is converted to the common one (as a cast) */
	if (a->size != size || a->is_unsigned != uns)
		cg_conv(a, size, uns);
	if (b->size != size || b->is_unsigned != uns)
		cg_conv(b, size, uns);
	if ((op[0] == '/' || op[0] == '%') && !uns)
		dt_buf_printf(&o, "s%s(%s, %s)", op[0] == '/' ? "div" : "mod", a->text, b->text);
	else if (op[0] == '/' || op[0] == '%')
		dt_buf_printf(&o,
			      "({ __u64 d_ = (__u64)(%s); d_ ? (__s64)((__u64)(%s) %s d_) : 0; })",
			      b->text, a->text, op);
	else
		dt_buf_printf(&o, "(__s64)((__u64)(%s) %s (__u64)(%s))", a->text, op, b->text);
	set_type(v, size, uns);
out:
	dt_free(v->text);
	v->text = o.s;
}

void cg_unary(const char *op, struct cv *a, struct cv *v)
{
	struct dt_buf o = {0};

	if (op[0] == '!') {
		dt_buf_printf(&o, "(__s64)!(%s)", a->text);
		set_type(v, 4, false);
	} else {
		promote(a);
		if (op[0] == '+')
			dt_buf_printf(&o, "(%s)", a->text);
		else
			dt_buf_printf(&o, "(__s64)(%s(__u64)(%s))", op[0] == '-' ? "0 - " : "~",
				      a->text);
		set_type(v, a->size, a->is_unsigned);
	}
	dt_free(v->text);
	v->text = o.s;
}

/*
 * An integer constant expression's value, in its type (C's arithmetic on
 * constants): what the compiler can refuse before anything runs (a
 * division by a constant zero). False when n is not constant.
 */
bool cg_const(struct cg *g, const struct dt_node *n, int64_t *val)
{
	int64_t a, b;

	switch (n->kind) {
	case N_INT:
		*val = n->ival;
		return true;
	case N_UNARY:
		if (!cg_const(g, n->a, &a))
			return false;
		*val = n->op[0] == '-'	 ? (int64_t)(0 - (uint64_t)a)
		       : n->op[0] == '~' ? ~a
		       : n->op[0] == '!' ? !a
					 : a;
		return true;
	case N_CAST:
		return cg_const(g, n->a, val);
	case N_SIZEOF: { /* sizeof and offsetof: the constant the expression layer makes */
		struct cv v = {0};
		unsigned long long u;
		char end[8] = "";
		bool ok;

		cg_value(g, n, &v);
		ok = !g->failed && v.text && sscanf(v.text, "%llu%7s", &u, end) == 2 &&
		     !strcmp(end, "ULL");
		if (ok)
			*val = (int64_t)u;
		cv_free(&v);
		return ok;
	}
	case N_BINARY:
		if (!cg_const(g, n->a, &a) || !cg_const(g, n->b, &b))
			return false;
		switch (n->op[0]) {
		case '+':
			*val = (int64_t)((uint64_t)a + (uint64_t)b);
			return true;
		case '-':
			*val = (int64_t)((uint64_t)a - (uint64_t)b);
			return true;
		case '*':
			*val = (int64_t)((uint64_t)a * (uint64_t)b);
			return true;
		case '/':
		case '%':
			if (!b || (b == -1 && a == INT64_MIN))
				return false;
			*val = n->op[0] == '/' ? a / b : a % b;
			return true;
		default:
			return false;
		}
	default:
		return false;
	}
}
