/* SPDX-License-Identifier: MIT */
/*
 * Function names for probe sites.
 *
 * DTrace names a USDT probe's function after the function its site is in;
 * our sites are found from their notes, so the name is looked up here, in
 * two steps:
 *
 *  1. The symbol tables (.symtab, else .dynsym for a stripped file): the
 *     STT_FUNC (or IFUNC) symbol whose [value, value + size) holds the pc.
 *     Several symbols at one place (aliases) are resolved as DTrace's -G
 *     does: a global before a weak before a local, then the lowest name.
 *  2. DWARF, when the file carries it (libdwarf): a site inside code inlined
 *     from another function (a `static inline` helper at -O2) is listed
 *     under the inlined function's name, the innermost one when inlining
 *     nests, as `addr2line -i` shows first. The DIE tree is walked once per
 *     file; a subtree whose ranges hold no pc of interest is skipped, so only
 *     the functions that contain probes are looked at closely.
 *  3. A site in a copy the compiler made of a function is listed under the
 *     function's own name, as DTrace names functions from the source: GCC
 *     calls its copies f.part.0 (a part split off), f.isra.0 and
 *     f.constprop.0 (parameters removed, constants propagated), f.cold (the
 *     unlikely blocks), f.lto_priv.0 (a static renamed by LTO), and chains
 *     them (f.constprop.0.isra.0); clang adds f.llvm.NNN (ThinLTO). With
 *     DWARF the name is the one of the subprogram that holds the site (the
 *     copy's abstract origin, f), else the symbol without the suffixes.
 *     Only such names are replaced: elsewhere the symbol table stays the
 *     authority (DWARF may name code otherwise than its symbol: a C++ class
 *     declares its constructor under a "C4" name that no symbol has).
 *
 * Separate debug files (.gnu_debuglink, build-id) are not searched: without
 * DWARF in the file itself, inlined sites get the enclosing symbol's name.
 *
 * The files are anyone's (`dtrace -l` without -p reads every registered
 * process's modules, as root), and libdwarf is not hardened against
 * malformed input: Debian 12's aborts on a double free for a corrupted
 * .debug_rnglists header (found by mutating test binaries). So the DWARF
 * walk runs in a child process with CPU, time and memory limits, which
 * hands back only (index, depth, name) records that are checked before use;
 * if it dies, the symbol names stand and the caller is told why.
 *
 * This file holds steps 1 and 3 and the whole; the DWARF walk and its child
 * are symbols_dwarf.c, below it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfsym.h"
#include "symbols.h"
#include "symbols_dwarf.h"

/* ---- symbol tables ---- */

struct func_sym {
	uint64_t lo, hi;
	const char *name; /* in libelf's string data, valid while the Elf is open */
	int rank;	  /* 0 global, 1 weak, 2 local */
};

static int rank_of(unsigned bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* Is a better than b for naming a site both contain? */
static bool better(const struct func_sym *a, const struct func_sym *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank;
	return strcmp(a->name, b->name) < 0;
}

/* The pcs to name, and the best symbol found so far for each. */
struct pcs_best {
	const uint64_t *pcs;
	size_t n;
	struct func_sym *best;
};

/* One symbol of a table (core/elfsym.h's walk): a function improves best[i] for each pc it holds.
 */
static int improve(const struct usdt_elf_sym *sym, void *arg)
{
	struct pcs_best *pb = arg;
	struct func_sym s;
	size_t i;

	if ((sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC) ||
	    sym->sym.st_shndx == SHN_UNDEF || sym->sym.st_size == 0 || !*sym->name)
		return 0;
	s.lo = sym->sym.st_value;
	s.hi = sym->sym.st_value + sym->sym.st_size;
	s.rank = rank_of(sym->bind);
	s.name = sym->name;
	for (i = 0; i < pb->n; i++)
		if (pb->pcs[i] >= s.lo && pb->pcs[i] < s.hi &&
		    (!pb->best[i].name || better(&s, &pb->best[i])))
			pb->best[i] = s;
	return 0;
}

static int symtab_names(int fd, const uint64_t *pcs, size_t n, char **names)
{
	struct func_sym *best = calloc(n ? n : 1, sizeof(*best));
	struct pcs_best pb = {pcs, n, best};
	Elf *elf;
	size_t i;
	int err = 0;

	if (!best)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	/* .symtab is a superset of .dynsym's functions when present. */
	if (usdt_elf_symbols(elf, SHT_SYMTAB, improve, &pb) == -ENOENT)
		usdt_elf_symbols(elf, SHT_DYNSYM, improve, &pb);
	for (i = 0; i < n; i++) {
		if (!best[i].name)
			continue;
		names[i] = strdup(best[i].name);
		if (!names[i]) {
			err = -ENOMEM;
			break;
		}
	}
out:
	if (elf)
		elf_end(elf);
	free(best);
	return err;
}

/* ---- DWARF: inlined sites ---- */
/* ---- compilers' copies of a function ---- */

/* Is s (at a '.') one or more of ".word" or ".word.N"? */
static bool clone_suffixes(const char *s)
{
	static const char *const words[] = {"part",  "isra",	 "constprop",
					    "cold",  "lto_priv", "localalias",
					    "clone", "llvm",	 "specialized"};
	bool any = false;

	while (*s == '.') {
		size_t i, len = strcspn(s + 1, ".");

		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i]) == len && !strncmp(s + 1, words[i], len))
				break;
		if (i == sizeof(words) / sizeof(words[0]))
			return false;
		s += 1 + len;
		any = true;
		len = strcspn(s + (*s == '.'), ".");
		if (*s == '.' && len && strspn(s + 1, "0123456789") == len)
			s += 1 + len;
	}
	return any && !*s;
}

/* The length of name without the suffixes of a compiler's copy (all of it when none). */
static size_t clone_base_len(const char *name)
{
	const char *dot;

	for (dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.'))
		if (dot != name && clone_suffixes(dot))
			return (size_t)(dot - name);
	return strlen(name);
}

/*
 * The name a site gets: the inlined function when DWARF has one; for a
 * symbol of a compiler's copy, DWARF's subprogram, else the symbol cut at
 * its suffixes; else the symbol. Takes what it uses from *inlined and *func.
 */
static void final_name(char **name, char **inlined, char **func)
{
	size_t base;

	if (*inlined) {
		free(*name);
		*name = *inlined;
		*inlined = NULL;
		return;
	}
	if (!*name)
		return;
	base = clone_base_len(*name);
	if (!(*name)[base])
		return;
	if (*func) {
		free(*name);
		*name = *func;
		*func = NULL;
		return;
	}
	(*name)[base] = '\0';
}

static const uint64_t *sort_base;

static int cmp_index(const void *a, const void *b)
{
	uint64_t x = sort_base[*(const size_t *)a], y = sort_base[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

static void free_names(char **v, size_t n)
{
	size_t i;

	if (v)
		for (i = 0; i < n; i++) {
			free(v[i]);
			v[i] = NULL;
		}
}

int usdt_sym_functions(int fd, const uint64_t *pcs, size_t n, char **names, const char **why)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	uint64_t *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	char **dnames = calloc(n ? n : 1, sizeof(*dnames));
	char **fnames = calloc(n ? n : 1, sizeof(*fnames));
	unsigned *depth = calloc(n ? n : 1, sizeof(*depth));
	struct dw_walk w = {0};
	size_t i;
	int err = -ENOMEM;

	for (i = 0; i < n; i++)
		names[i] = NULL;
	if (!idx || !sorted || !dnames || !fnames || !depth)
		goto out;
	err = symtab_names(fd, pcs, n, names);
	if (err)
		goto out;

	for (i = 0; i < n; i++)
		idx[i] = i;
	sort_base = pcs;
	qsort(idx, n, sizeof(*idx), cmp_index);
	for (i = 0; i < n; i++)
		sorted[i] = pcs[idx[i]];
	w.pcs = sorted;
	w.n = n;
	w.names = dnames;
	w.depth = depth;
	w.fnames = fnames;
	*why = usdt_sym_dwarf_names(fd, &w);
	if (w.nomem) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		final_name(&names[idx[i]], &dnames[i], &fnames[i]);
out:
	if (err)
		free_names(names, n);
	free_names(dnames, n);
	free_names(fnames, n);
	free(dnames);
	free(fnames);
	free(depth);
	free(sorted);
	free(idx);
	return err;
}
