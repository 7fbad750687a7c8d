/* SPDX-License-Identifier: MIT */
/*
 * Types of the D provider language, as far as providers need them.
 *
 * A probe argument's type is resolved here into what the model records:
 * the spelling as written, a C spelling, a class, a size and a signedness.
 * The C spelling is what the header emitter puts into a prototype that must
 * compile, as C and as C++, with -Wall -Wextra -Werror, after only
 * <stddef.h>, <stdint.h>, <sys/types.h> and <stdbool.h>. Hence:
 *
 *  - integers keep their C or standard typedef name (`uint32_t`, `size_t`);
 *    a typedef declared in the .d, or a name only illumos has (`zoneid_t`,
 *    `uint_t`, `hrtime_t`), resolves to its base integer type; an enum is
 *    `int`; D's `string` is `char *`.
 *  - a pointer to something C cannot see (a struct, union or typedef that
 *    exists only in the .d) becomes `const volatile void *`: every object
 *    pointer, however qualified, converts to it implicitly in C and C++
 *    without a warning, whereas `struct foo *` would clash with the
 *    program's own spelling of the type (or be a new type scoped to the
 *    prototype in C).
 *  - what has no safe spelling (a struct by value, a function pointer, an
 *    array typedef) gets NULL and is left unchecked by the emitter.
 *
 * Sizes are those of the LP64 target (x86-64, aarch64); plain char is
 * counted as signed, as on x86-64.
 */
#include "front.h"

#include <stdlib.h>
#include <string.h>

struct builtin {
	const char *name;
	const char *c; /* C spelling of the base */
	unsigned char size;
	bool is_signed;
	unsigned char ptr; /* caddr_t is a pointer */
	enum base_kind kind;
};

/*
 * Typedef names a .d may use without declaring them: DTrace's own (from its
 * D library and illumos headers) and what <stdint.h>/<sys/types.h> give C.
 * Names C knows in every language mode keep their name; the others resolve.
 */
static const struct builtin builtins[] = {
    {"int8_t", "int8_t", 1, true, 0, B_INT},
    {"int16_t", "int16_t", 2, true, 0, B_INT},
    {"int32_t", "int32_t", 4, true, 0, B_INT},
    {"int64_t", "int64_t", 8, true, 0, B_INT},
    {"uint8_t", "uint8_t", 1, false, 0, B_INT},
    {"uint16_t", "uint16_t", 2, false, 0, B_INT},
    {"uint32_t", "uint32_t", 4, false, 0, B_INT},
    {"uint64_t", "uint64_t", 8, false, 0, B_INT},
    {"intptr_t", "intptr_t", 8, true, 0, B_INT},
    {"uintptr_t", "uintptr_t", 8, false, 0, B_INT},
    {"intmax_t", "intmax_t", 8, true, 0, B_INT},
    {"uintmax_t", "uintmax_t", 8, false, 0, B_INT},
    {"size_t", "size_t", 8, false, 0, B_INT},
    {"ssize_t", "ssize_t", 8, true, 0, B_INT},
    {"ptrdiff_t", "ptrdiff_t", 8, true, 0, B_INT},
    {"off_t", "off_t", 8, true, 0, B_INT},
    {"off64_t", "int64_t", 8, true, 0, B_INT},
    {"pid_t", "pid_t", 4, true, 0, B_INT},
    {"uid_t", "uid_t", 4, false, 0, B_INT},
    {"gid_t", "gid_t", 4, false, 0, B_INT},
    {"mode_t", "mode_t", 4, false, 0, B_INT},
    {"dev_t", "dev_t", 8, false, 0, B_INT},
    {"ino_t", "ino_t", 8, false, 0, B_INT},
    {"ino64_t", "uint64_t", 8, false, 0, B_INT},
    {"time_t", "time_t", 8, true, 0, B_INT},
    {"blkcnt_t", "blkcnt_t", 8, true, 0, B_INT},
    {"nlink_t", "nlink_t", 8, false, 0, B_INT},
    {"wchar_t", "wchar_t", 4, true, 0, B_INT},
    {"bool", "bool", 1, false, 0, B_INT},
    /* Not declared by the headers in strict ISO modes: resolved. */
    {"id_t", "unsigned int", 4, false, 0, B_INT},
    {"key_t", "int", 4, true, 0, B_INT},
    {"clock_t", "long", 8, true, 0, B_INT},
    {"useconds_t", "unsigned int", 4, false, 0, B_INT},
    {"suseconds_t", "long", 8, true, 0, B_INT},
    {"socklen_t", "unsigned int", 4, false, 0, B_INT},
    {"u_char", "unsigned char", 1, false, 0, B_INT},
    {"u_short", "unsigned short", 2, false, 0, B_INT},
    {"u_int", "unsigned int", 4, false, 0, B_INT},
    {"u_long", "unsigned long", 8, false, 0, B_INT},
    {"daddr_t", "long", 8, true, 0, B_INT},
    {"caddr_t", "char", 1, true, 1, B_INT},
    /* illumos and D names that Linux does not have at all. */
    {"uchar_t", "unsigned char", 1, false, 0, B_INT},
    {"ushort_t", "unsigned short", 2, false, 0, B_INT},
    {"uint_t", "unsigned int", 4, false, 0, B_INT},
    {"ulong_t", "unsigned long", 8, false, 0, B_INT},
    {"longlong_t", "long long", 8, true, 0, B_INT},
    {"u_longlong_t", "unsigned long long", 8, false, 0, B_INT},
    {"hrtime_t", "long long", 8, true, 0, B_INT},
    {"zoneid_t", "int", 4, true, 0, B_INT},
    {"processorid_t", "int", 4, true, 0, B_INT},
    {"psetid_t", "int", 4, true, 0, B_INT},
    {"taskid_t", "int", 4, true, 0, B_INT},
    {"projid_t", "int", 4, true, 0, B_INT},
    {"poolid_t", "int", 4, true, 0, B_INT},
    {"ctid_t", "int", 4, true, 0, B_INT},
    {"lwpid_t", "int", 4, true, 0, B_INT},
    {"boolean_t", "int", 4, true, 0, B_INT},
    {"major_t", "unsigned int", 4, false, 0, B_INT},
    {"minor_t", "unsigned int", 4, false, 0, B_INT},
    {"string", "char", 8, false, 0, B_STRING},
};

static struct ctype builtin_types[sizeof(builtins) / sizeof(builtins[0])];
static bool builtin_types_ready;

static void init_builtin_types(void)
{
	size_t i;

	/* Idempotent and data-only, so a race between threads is harmless. */
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		struct ctype *t = &builtin_types[i];

		memset(t, 0, sizeof(*t));
		t->kind = builtins[i].kind;
		t->c_base = builtins[i].c;
		t->size = builtins[i].ptr ? 1 : builtins[i].size;
		t->align = t->size;
		t->is_signed = builtins[i].is_signed;
		t->plain_char = builtins[i].ptr != 0;
		t->ptr = builtins[i].ptr;
		if (t->kind == B_STRING)
			t->size = t->align = 8;
	}
	builtin_types_ready = true;
}

static bool name_eq(const char *a, const char *b, size_t blen)
{
	return strlen(a) == blen && memcmp(a, b, blen) == 0;
}

const struct typedef_ent *types_user_typedef(const struct typetab *tt, const char *name, size_t len)
{
	size_t i;

	for (i = tt->ndefs; i-- > 0;)
		if (name_eq(tt->defs[i].name, name, len))
			return &tt->defs[i];
	return NULL;
}

const struct ctype *types_lookup(const struct typetab *tt, const char *name, size_t len)
{
	const struct typedef_ent *d = types_user_typedef(tt, name, len);
	size_t i;

	if (d)
		return &d->type;
	if (!builtin_types_ready)
		init_builtin_types();
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (name_eq(builtins[i].name, name, len))
			return &builtin_types[i];
	return NULL;
}

int types_add_typedef(struct typetab *tt, const char *name, size_t len, const struct ctype *t,
		      const char *spelling, struct usdt_loc loc)
{
	struct typedef_ent *d;

	if (fe_grow((void **)&tt->defs, &tt->capdefs, tt->ndefs, sizeof(*tt->defs)))
		return -1;
	d = &tt->defs[tt->ndefs];
	d->name = fe_strndup(name, len);
	d->spelling = strdup(spelling);
	if (!d->name || !d->spelling) {
		free(d->name);
		free(d->spelling);
		return -1;
	}
	d->type = *t;
	d->loc = loc;
	tt->ndefs++;
	return 0;
}

struct tag *types_find_tag(const struct typetab *tt, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < tt->ntags; i++)
		if (tt->tags[i]->name && name_eq(tt->tags[i]->name, name, len))
			return tt->tags[i];
	return NULL;
}

struct tag *types_tag(struct typetab *tt, enum base_kind kind, const char *name, size_t len)
{
	struct tag *g = name ? types_find_tag(tt, name, len) : NULL;

	if (g)
		return g;
	if (fe_grow((void **)&tt->tags, &tt->captags, tt->ntags, sizeof(*tt->tags)))
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	if (name && !(g->name = fe_strndup(name, len))) {
		free(g);
		return NULL;
	}
	g->kind = kind;
	tt->tags[tt->ntags++] = g;
	return g;
}

void types_free(struct typetab *tt)
{
	size_t i;

	for (i = 0; i < tt->ndefs; i++) {
		free(tt->defs[i].name);
		free(tt->defs[i].spelling);
	}
	free(tt->defs);
	for (i = 0; i < tt->ntags; i++) {
		free(tt->tags[i]->name);
		free(tt->tags[i]);
	}
	free(tt->tags);
	memset(tt, 0, sizeof(*tt));
}

bool spec_any(const struct int_spec *s)
{
	return s->n_char || s->n_short || s->n_int || s->n_long || s->n_signed || s->n_unsigned ||
	       s->n_float || s->n_double || s->n_void || s->n_bool;
}

static void set_int(struct ctype *t, const char *c, unsigned size, bool sign)
{
	t->kind = B_INT;
	t->c_base = c;
	t->size = t->align = size;
	t->is_signed = sign;
}

bool spec_resolve(const struct int_spec *s, struct ctype *t)
{
	unsigned sign = s->n_signed + s->n_unsigned;
	unsigned ints = s->n_char + s->n_short + s->n_int + s->n_long;
	bool u = s->n_unsigned != 0;

	if (s->n_void) {
		if (s->n_void > 1 || ints || sign || s->n_float || s->n_double || s->n_bool)
			return false;
		t->kind = B_VOID;
		t->c_base = "void";
		return true;
	}
	if (s->n_bool) {
		if (s->n_bool > 1 || ints || sign || s->n_float || s->n_double)
			return false;
		set_int(t, "bool", 1, false);
		return true;
	}
	if (s->n_float || s->n_double) {
		if (sign || s->n_char || s->n_short || s->n_int || s->n_float + s->n_double > 1)
			return false;
		t->kind = B_FLOAT;
		if (s->n_float && !s->n_long) {
			t->c_base = "float";
			t->size = t->align = 4;
		} else if (s->n_double && s->n_long == 0) {
			t->c_base = "double";
			t->size = t->align = 8;
		} else if (s->n_double && s->n_long == 1) {
			t->c_base = "long double";
			t->size = t->align = 16;
		} else {
			return false;
		}
		t->is_signed = true;
		return true;
	}
	if (sign > 1 || s->n_char > 1 || s->n_short > 1 || s->n_int > 1 || s->n_long > 2)
		return false;
	if (s->n_char) {
		if (s->n_short || s->n_int || s->n_long)
			return false;
		if (s->n_signed)
			set_int(t, "signed char", 1, true);
		else if (u)
			set_int(t, "unsigned char", 1, false);
		else
			set_int(t, "char", 1, true);
		t->plain_char = sign == 0;
		return true;
	}
	if (s->n_short && s->n_long)
		return false;
	if (s->n_short)
		set_int(t, u ? "unsigned short" : "short", 2, !u);
	else if (s->n_long == 1)
		set_int(t, u ? "unsigned long" : "long", 8, !u);
	else if (s->n_long == 2)
		set_int(t, u ? "unsigned long long" : "long long", 8, !u);
	else
		set_int(t, u ? "unsigned int" : "int", 4, !u);
	return true;
}

void ctype_layout(const struct ctype *t, unsigned *size, unsigned *align)
{
	*size = *align = 0;
	if (t->ptr || t->kind == B_STRING) {
		*size = *align = 8;
		return;
	} else if (t->kind == B_STRUCT || t->kind == B_UNION) {
		if (t->tag && t->tag->defined) {
			*size = t->tag->size;
			*align = t->tag->align;
		}
	} else if (t->kind == B_INT || t->kind == B_FLOAT || t->kind == B_ENUM) {
		*size = t->size;
		*align = t->align;
	}
	if (t->array && *size) {
		if (*size > 0xffffffffu / t->array)
			*size = *align = 0;
		else
			*size *= t->array;
	}
}

/* C's name for t without top-level qualifiers, or NULL. */
static char *c_spelling(const struct ctype *t)
{
	struct usdt_sbuf b = {0};
	unsigned ptr = t->ptr + (t->kind == B_STRING), i;
	const char *base = t->kind == B_STRING ? "char" : t->c_base;

	if ((t->array && !t->ptr) || t->no_c || t->kind == B_FUNC || t->kind == B_UNKNOWN)
		return NULL;
	if (t->array)
		return strdup("const volatile void *"); /* a pointer to an array */
	if (t->kind == B_VOID && ptr == 0)
		return NULL;
	if (!base)
		return ptr ? strdup("const volatile void *") : NULL;
	if (t->base_const && ptr)
		usdt_sb_puts(&b, "const ");
	if (t->base_volatile && ptr)
		usdt_sb_puts(&b, "volatile ");
	usdt_sb_puts(&b, base);
	for (i = 0; i < ptr; i++) {
		usdt_sb_puts(&b, b.s[b.len - 1] == '*' ? "*" : " *");
		/* Qualifiers of the outermost pointer do not change the value's type. */
		if (i + 1 < ptr && i < 32 && (t->ptr_const >> i & 1))
			usdt_sb_puts(&b, " const");
	}
	return usdt_sb_take(&b);
}

int types_to_model(const struct ctype *t, const char *spelling, struct usdt_type *out)
{
	unsigned ptr = t->ptr + (t->kind == B_STRING), size, align;

	memset(out, 0, sizeof(*out));
	out->spelling = strdup(spelling);
	if (!out->spelling)
		return -1;
	/* NULL also after an allocation failure: the argument is then unchecked. */
	out->c_spelling = c_spelling(t);
	if (t->array && !t->ptr)
		out->cls = USDT_T_OTHER;
	else if (t->kind == B_STRING && t->ptr == 0)
		out->cls = USDT_T_STRING;
	else if (ptr == 1 && t->plain_char && !t->array)
		out->cls = USDT_T_STRING;
	else if (ptr)
		out->cls = USDT_T_POINTER;
	else if (t->kind == B_INT || t->kind == B_ENUM)
		out->cls = USDT_T_INTEGER;
	else if (t->kind == B_FLOAT)
		out->cls = USDT_T_FLOAT;
	else
		out->cls = USDT_T_OTHER;
	ctype_layout(t, &size, &align);
	out->size = size;
	out->is_signed = out->cls == USDT_T_INTEGER && t->is_signed;
	return 0;
}
