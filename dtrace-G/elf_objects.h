/* SPDX-License-Identifier: MIT */
/*
 * Reading the input objects of `dtrace -G` (relocatable objects, shared
 * objects, static archives) with libelf, read-only: their class and machine,
 * their SystemTap probe sites, and illumos-style `__dtrace_*` references.
 */
#ifndef USDT_ELF_OBJECTS_H
#define USDT_ELF_OBJECTS_H

#include <stddef.h>

#include "diag.h"

/* One ELF file: a command-line object or one archive member. */
struct usdt_elf_unit {
	char *origin; /* "x.o" or "libx.a(y.o)" */
	int elfclass; /* ELFCLASS32 / ELFCLASS64 */
	int machine;  /* EM_* */
	int data;     /* ELFDATA2LSB / ELFDATA2MSB */
};

/* A `.note.stapsdt` entry: only what the cross-checks need (no addresses). */
struct usdt_elf_site {
	size_t unit;
	char *provider, *name;
	unsigned nargs;
};

/* An undefined `__dtrace_*` / `__dtraceenabled_*` symbol: an illumos-style header. */
struct usdt_elf_dtref {
	size_t unit;
	char *symbol;
};

struct usdt_elf_objects {
	struct usdt_elf_unit *units;
	size_t nunits;
	struct usdt_elf_site *sites;
	size_t nsites;
	struct usdt_elf_dtref *dtrefs;
	size_t ndtrefs;
	/* Inputs whose sites cannot be read (LTO IR only): each was warned about. */
	size_t nunchecked;
};

/*
 * Reads every path (never writing to it). Returns 0, or -1 after reporting
 * each unreadable, non-ELF or corrupt input to diag.
 */
int usdt_elf_objects_read(char *const *paths, size_t n, struct usdt_elf_objects *objs,
			  struct usdt_diag *diag);
void usdt_elf_objects_free(struct usdt_elf_objects *objs);

/* "x86-64", "aarch64", ... or "machine N" in buf. */
const char *usdt_elf_machine_name(int machine, char *buf, size_t len);

#endif
