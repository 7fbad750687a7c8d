/* SPDX-License-Identifier: MIT */
/*
 * The running kernel's types, from its BTF (kbtf.c): the one reader of
 * /sys/kernel/btf, for the parser (a kernel typedef is a type name), the
 * engine's type model (a struct, union, enum or typedef the program does
 * not declare) and the engine's builtins (a member's offset).
 */
#ifndef DT_KBTF_H
#define DT_KBTF_H

#include <stdbool.h>

struct btf;
struct dt_decl;

/* vmlinux's BTF, loaded at the first call of the process; NULL when the kernel has none. */
struct btf *dt_kbtf(void);
/* A kernel typedef named `name` exists (the parser: it is a type's name). */
bool dt_kbtf_typedef(const char *name);
/*
 * The kernel's type `name` as a D declaration, converted at its first use:
 * kind 'S' ("struct tag"), 'U' ("union tag"), 'E' ("enum tag": its
 * enumerators, d.h), 'T' (a typedef's name). A
 * module's name may scope it ("struct vmlinux`task_struct"). Its members
 * carry BTF's bit offsets (boff) and the struct its size (ksize); an
 * unnamed member's type is "struct <kernel ID>". NULL when unknown.
 */
const struct dt_decl *dt_kbtf_decl(char kind, const char *name);
/* The byte offset of member path "a.b.c" in struct `strct`: 0, or -1. */
int dt_kbtf_offset(const char *strct, const char *path, unsigned *off);

#endif /* DT_KBTF_H */
