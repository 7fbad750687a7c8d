/* SPDX-License-Identifier: MIT */
/*
 * D to bpftrace (0.17 and later).
 *
 * Theory. bpftrace carries data, dtrace renders it (render.c). Every probe
 * a description matched becomes one bpftrace block that holds, in script
 * order, each clause matching it as `if (processes && predicate) { body }`:
 * DTrace's clause order, `this->` shared by the clauses of one firing, one
 * BEGIN and one END however many clauses have them (bpftrace 0.17 allows one
 * of each). probefunc, probename, probemod and the probe's ID are constants
 * of the block.
 *
 * Every output action is a record: `printf("\036<action>\037field...")`,
 * one JSON event in bpftrace's -f json stream; the action table says what
 * the fields are and how the renderer rebuilds each D value from them (a
 * recipe: strjoin(), basename(), dirname(), lltostr(), strlen(), strstr()
 * and substr() have no bpftrace 0.17 equivalent and are applied by the
 * renderer, so they are allowed where a value is printed or is an
 * aggregation key; so is the joining of a long string's chunks and the
 * writing of a ustack()). A clause that records
 * data starts with a record carrying the CPU (DTrace's record prefix).
 * printa() and the exit dump are `print(@agg)` between two records, so the
 * renderer knows which printa a map belongs to even when it is empty (an
 * empty map prints nothing).
 *
 * Variables: globals `@g_x[...]`, thread-locals `@s_x[tid, ...]` (set to 0:
 * deleted, as DTrace frees them), clause-locals `$t_x` (set to 0 or "" at
 * the top of each block: bpftrace 0.17 scopes variables to the probe, later
 * releases to the block, and D reads an unset this-> as 0). Types are
 * inferred from assignments (D's are too). At END, after the END clauses,
 * every aggregation is printed for the exit dump and every map cleared, so
 * bpftrace's own exit dump is empty.
 *
 * What 0.17 lacks is built here from what it has, each part with its own
 * theory below: USDT arguments past the sixth (the note's operands decoded
 * with reg() and typed reads), strings of DTrace's strsize (read in chunks
 * of BPFTRACE_STRLEN - 1 bytes, within the BPF stack's 512 bytes),
 * copyin()'s buffers, llquantize() (the bucket computed in the probe) and
 * stddev() (three maps).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "d.h"
#include "notes.h"

struct var {
	char *key; /* "g:name", "s:name", "t:name" */
	enum dt_type type;
	unsigned size;
	bool is_unsigned;
	bool keyed;
	bool assigned;	  /* somewhere in the program (known after pass 1) */
	char *copyin_ptr; /* last assigned copyin(p, n): p, for its s[n] = '\0' */
	char *copyin_len; /* and n, or the NUL's index: the string's length */
};

struct leaves {
	struct dt_buf *v;
	enum dt_type *type;
	size_t n;
	struct dt_buf pre; /* statements before the record or map update, one a line */
};

/*
 * The sites of one USDT probe in its file, read from the file's notes when
 * an argument past the sixth is used (bpftrace 0.17 decodes arg0..arg5 only).
 */
struct psites {
	const struct dt_probe *probe;
	struct usdt_notes *notes; /* NULL: could not be read (why) */
	const struct usdt_site **v;
	size_t n;
	char *path;
	char why[400];
};

struct tr {
	struct dt_program *prog;
	struct dt_probes *probes;
	struct dt_tables *t;
	struct usdt_diag *diag;
	const struct dt_probe *probe; /* the block being written */
	const struct dt_pclause *pc;
	size_t clause;
	struct var *vars;
	size_t nvars;
	bool failed;
	const char *tag;   /* the next error's, when not D_UNSUPPORTED */
	struct psites *ps; /* per USDT probe whose sites were read */
	size_t nps;
	bool infer;	    /* the inference pass: no output, no errors */
	bool lvalue;	    /* writing the variable being assigned */
	struct dt_agg *fns; /* pass 1's aggregations: their functions, known early */
	size_t nfns;
	bool in_key;	     /* value() of an aggregation key */
	unsigned nscratch;   /* $__sN of the probe's block */
	unsigned nlong;	     /* long strings in the probe's block */
	unsigned block_long; /* pass 1's count for the block being written */
	struct blk_keys {
		const char *bt;
		size_t bytes;
		unsigned nlong;
	} * blk; /* pass 1: the stack each block's keys take */
	size_t nblk;
	size_t block_keys; /* the block being written's */
	size_t key_room;   /* bytes of the block's BPF stack keys' long strings may still take */
	char *arg_int[USDT_SDT_MAX_ARGS]; /* the block's $__aK: args[K] as an int64 */
	size_t key_maps;		  /* maps the key being written is used with */
};

static void err(struct tr *t, const struct dt_node *n, const char *fmt, ...) USDT_PRINTF(3, 4);

/*
 * An error of the translation: what the bpftrace backend does not do
 * (D_UNSUPPORTED), the front end's checks (check.c) having refused
 * what D itself refuses before.
 */
static void err(struct tr *t, const struct dt_node *n, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (t->infer || t->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dt_error_at(t->diag, &n->pos, t->tag ? t->tag : "D_UNSUPPORTED", "%s", msg);
	t->failed = true;
}

static struct var *var_get(struct tr *t, char kind, const char *name, bool create)
{
	char key[300];
	struct var v;
	size_t i;

	snprintf(key, sizeof(key), "%c:%s", kind, name);
	for (i = 0; i < t->nvars; i++)
		if (!strcmp(t->vars[i].key, key))
			return &t->vars[i];
	if (!create)
		return NULL;
	memset(&v, 0, sizeof(v));
	v.key = dt_xstrdup(key);
	v.type = TY_INT;
	v.size = 8;
	DT_PUSH(t->vars, t->nvars, v);
	return &t->vars[t->nvars - 1];
}

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

static bool is_string_type(const char *ty)
{
	return ty && (!strcmp(ty, "char *") || !strcmp(ty, "const char *") ||
		      !strcmp(ty, "string") || !strcmp(ty, "char*") || !strcmp(ty, "const char*") ||
		      !strcmp(ty, "unsigned char *"));
}

/* Integer size and sign of a C type name as D would have it. */
static void ctype_size(const char *ty, unsigned *size, bool *is_unsigned)
{
	*size = 8;
	*is_unsigned = false;
	if (!ty)
		return;
	if (strchr(ty, '*'))
		*is_unsigned = true;
	else if (strstr(ty, "int8") || !strcmp(ty, "char") || !strcmp(ty, "signed char") ||
		 !strcmp(ty, "unsigned char") || !strcmp(ty, "uchar_t"))
		*size = 1;
	else if (strstr(ty, "int16") || strstr(ty, "short"))
		*size = 2;
	else if (strstr(ty, "int32") || !strcmp(ty, "int") || !strcmp(ty, "unsigned") ||
		 !strcmp(ty, "unsigned int") || !strcmp(ty, "signed int") || !strcmp(ty, "pid_t") ||
		 !strcmp(ty, "uid_t") || !strcmp(ty, "id_t") || !strcmp(ty, "uint_t") ||
		 !strcmp(ty, "bool") || !strcmp(ty, "boolean_t") || !strcmp(ty, "processorid_t"))
		*size = 4;
	if (!strncmp(ty, "unsigned", 8) || !strncmp(ty, "uint", 4) || !strncmp(ty, "u_", 2) ||
	    !strcmp(ty, "size_t") || !strcmp(ty, "uintptr_t") || !strncmp(ty, "uchar", 5) ||
	    !strncmp(ty, "ushort", 6) || !strncmp(ty, "ulong", 5))
		*is_unsigned = true;
}

/* ---- expressions ---- */

/*
 * An integer constant: bpftrace 0.17 keeps 32 bits of a literal, so a
 * larger one is built from 30-bit parts. No cast: a cast anywhere in a
 * program makes bpftrace 0.17 run its C parser (clang) before compiling,
 * 0.15 s of CPU at every start; literals are int64 already.
 */
static void emit_i64(struct dt_buf *o, int64_t v)
{
	uint64_t u;

	if (v >= INT32_MIN && v <= INT32_MAX) {
		dt_buf_printf(o, "%" PRId64, v);
		return;
	}
	u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	dt_buf_printf(o, "(%s((%u << 60) + (%u << 30) + %u))", v < 0 ? "-" : "",
		      (unsigned)(u >> 60), (unsigned)((u >> 30) & 0x3fffffff),
		      (unsigned)(u & 0x3fffffff));
}

static void emit(struct tr *t, struct dt_node *n, struct dt_buf *o);

static bool deferred(const struct dt_node *n)
{
	return n->kind == N_CALL && (!strcmp(n->name, "strjoin") || !strcmp(n->name, "basename") ||
				     !strcmp(n->name, "dirname") || !strcmp(n->name, "lltostr") ||
				     !strcmp(n->name, "strlen") || !strcmp(n->name, "strstr") ||
				     !strcmp(n->name, "substr"));
}

static void set_int(struct dt_node *n, unsigned size, bool is_unsigned)
{
	n->type = TY_INT;
	n->size = size;
	n->is_unsigned = is_unsigned;
}

static void emit_var_ref(struct tr *t, struct dt_node *n, struct dt_buf *o)
{
	struct var *v;
	size_t i;

	if (n->kind == N_INDEX && (!n->name[0] || strchr(n->name, '`'))) {
		err(t, n, "'[ ]' of a pointer: pointers are the BPF engine's (-x engine=bpf)%s",
		    "");
		return;
	}
	if (!t->infer && !t->lvalue) {
		char kind = n->kind == N_SELF		 ? 's'
			    : n->kind == N_THIS		 ? 't'
			    : n->kind == N_INDEX && n->a ? 's'
							 : 'g';

		if (n->kind == N_INDEX && n->a && n->a->kind == N_THIS) {
			err(t, n,
			    "this->%s[...]: a this-> array, or a byte of a string, is not "
			    "supported (only copyin()'s terminating this->%s[n] = '\\0')",
			    n->name, n->name);
			return;
		}
		v = var_get(t, kind, n->name, false);
		if (!v || !v->assigned) {
			if (kind == 'g') {
				t->tag = "D_IDENT_UNDEF";
				err(t, n,
				    "'%s' is not a variable or a builtin this D consumer knows",
				    n->name);
				return;
			}
			/* never assigned anywhere: D reads 0 */
			dt_buf_printf(o, "0");
			set_int(n, 8, false);
			return;
		}
	}
	switch (n->kind) {
	case N_IDENT:
		v = var_get(t, 'g', n->name, true);
		dt_buf_printf(o, "@g_%s", n->name);
		break;
	case N_SELF:
		v = var_get(t, 's', n->name, true);
		dt_buf_printf(o, "@s_%s[tid]", n->name);
		break;
	case N_THIS:
		v = var_get(t, 't', n->name, true);
		dt_buf_printf(o, "$t_%s", n->name);
		break;
	case N_INDEX: {
		bool self = n->a != NULL;

		v = var_get(t, self ? 's' : 'g', n->name, true);
		v->keyed = true;
		dt_buf_printf(o, "@%c_%s[", self ? 's' : 'g', n->name);
		if (self)
			dt_buf_printf(o, "tid%s", n->nargs ? ", " : "");
		for (i = 0; i < n->nargs; i++) {
			if (i)
				dt_buf_add(o, ", ", 2);
			emit(t, n->args[i], o);
		}
		dt_buf_add(o, "]", 1);
		break;
	}
	default:
		err(t, n, "this expression cannot be assigned to%s", "");
		return;
	}
	n->type = v->type;
	n->size = v->size;
	n->is_unsigned = v->is_unsigned;
}

/* ---- USDT arguments past the sixth: the note's operands, decoded here ---- */

/*
 * bpftrace 0.17 decodes arg0..arg5 of an x86-64 USDT probe and refuses the
 * rest. The note says where every argument is (`-4@-20(%rbp)`, `8@%rax`,
 * `-4@$5`, `8@16(%rsp)`, `8@g_var(%rip)`): an argument past the sixth is
 * read here from the probe's registers (`reg()`: a uprobe sees them as they
 * are at the site) and the memory they point to. Each register is read
 * once, into `$__r_<name>` at the top of the probe's block: LLVM would
 * otherwise keep a pointer into the context (or select between two) and
 * the verifier refuses both. The probe is still
 * bpftrace's `usdt:` one (it attaches every site and holds the semaphore);
 * when the sites of a probe place an argument differently, the site that
 * fired is told by the low 12 bits of the instruction pointer, which a
 * load address (page aligned) leaves alone: each placement is read, and the
 * one of the site that fired kept. A symbol (`g(%rip)`) is the
 * file's: its run-time address is the site's plus their link-time distance.
 */

static int elf_symbol(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	/* .symtab first (it has the static ones), then .dynsym */
	for (int pass = 0; e && pass < 2 && rc; pass++) {
		Elf_Scn *scn = NULL;

		while (rc && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			n = sh.sh_size / sh.sh_entsize;
			for (i = 0; d && i < n; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				s = elf_strptr(e, sh.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*value = sym.st_value;
					rc = 0;
					break;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

static struct psites *probe_sites(struct tr *t, const struct dt_probe *p)
{
	struct psites ps;
	const char *prov, *name;
	char err[200], *path;
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < t->nps; i++)
		if (t->ps[i].probe == p)
			return &t->ps[i];
	memset(&ps, 0, sizeof(ps));
	ps.probe = p;
	/* "usdt:PATH:provider:name" (the path may hold ':') */
	path = dt_xstrdup(p->bt + 5);
	name = strrchr(path, ':');
	if (name) {
		*(char *)name++ = '\0';
		prov = strrchr(path, ':');
		if (prov)
			*(char *)prov++ = '\0';
	}
	ps.path = path;
	if (!name || !prov) {
		snprintf(ps.why, sizeof(ps.why), "the probe's file is not known");
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || (p->ino && (st.st_ino != p->ino || st.st_dev != p->dev))) {
		snprintf(ps.why, sizeof(ps.why), "%s cannot be read again (%s)", path,
			 fd < 0 ? strerror(errno) : "it was replaced");
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (usdt_notes_read(fd, NULL, &ps.notes, err, sizeof(err))) {
		snprintf(ps.why, sizeof(ps.why), "%s: %s", path, err);
		ps.notes = NULL;
		close(fd);
		goto out;
	}
	close(fd);
	for (i = 0; i < ps.notes->nsites; i++) {
		const struct usdt_site *s = &ps.notes->sites[i];

		if (!s->provider || !s->name || strcmp(s->provider, prov) || strcmp(s->name, name))
			continue;
		if (s->reject) {
			snprintf(ps.why, sizeof(ps.why),
				 "a site of the probe in %s is not read (%s)", path, s->reject);
			usdt_notes_free(ps.notes);
			ps.notes = NULL;
			goto out;
		}
		DT_PUSH(ps.v, ps.n, s);
	}
	if (!ps.n && ps.notes) {
		snprintf(ps.why, sizeof(ps.why), "no site of the probe in %s", path);
		usdt_notes_free(ps.notes);
		ps.notes = NULL;
	}
out:
	DT_PUSH(t->ps, t->nps, ps);
	return &t->ps[t->nps - 1];
}

/* bpftrace's reg() name of an x86-64 register as the assembler writes it. */
static const char *bt_reg(const char *s, size_t n)
{
	char name[8];
	unsigned width;
	const char *f;

	if (n == 0 || n >= sizeof(name))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	if (!strcmp(name, "rip") || !strcmp(name, "eip"))
		return NULL;
	f = usdt_reg_fetch_name(USDT_ARCH_X86_64, name, &width);
	return f ? f + 1 : NULL; /* "%ax" -> "ax" */
}

static bool parse_i64(const char *s, size_t n, int64_t *v)
{
	char buf[32], *end;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return !errno && !*end;
}

/*
 * Argument k of a site as a bpftrace int64 expression, in out; or false
 * with why (what in the operand cannot be read).
 */
static bool site_arg(const struct psites *ps, const struct usdt_site *site, unsigned k,
		     struct dt_buf *out, char *why, size_t whylen)
{
	static const char *const stype[] = {"", "int8", "int16", "", "int32", "", "", "", "int64"};
	const char *s = site->args ? site->args : "", *e = NULL, *at, *open;
	unsigned size, i;
	bool is_signed = false;
	struct dt_buf v = {0};

	for (i = 0; i <= k; i++) {
		s = usdt_argspec_next(i ? e : s, &e);
		if (!s) {
			/* the site passes fewer arguments: DTrace reads 0 */
			dt_buf_printf(out, "0");
			return true;
		}
	}
	snprintf(why, whylen, "operand '%.*s'", (int)(e - s), s);
	at = memchr(s, '@', (size_t)(e - s));
	if (!at)
		return false;
	if (*s == '-')
		is_signed = true, s++;
	if (at - s != 1 || !strchr("1248", *s)) {
		snprintf(why + strlen(why), whylen - strlen(why),
			 ": a size other than 1, 2, 4, 8 (a floating-point argument?)");
		return false;
	}
	size = (unsigned)(*s - '0');
	s = at + 1;
	if (*s == '%' && e - s == 3 && strchr("abcd", s[1]) && s[2] == 'h') {
		/* %ah..%dh: bits 8..15 of the register */
		dt_buf_printf(&v, "(($__r_%cx >> 8) & 0xff)", s[1]);
	} else if (*s == '%') {
		const char *r = bt_reg(s + 1, (size_t)(e - s - 1));

		if (!r) {
			snprintf(why + strlen(why), whylen - strlen(why),
				 ": a register bpftrace's reg() does not read");
			return false;
		}
		dt_buf_printf(&v, "$__r_%s", r);
	} else if (*s == '$') {
		int64_t c;

		if (!parse_i64(s + 1, (size_t)(e - s - 1), &c)) {
			snprintf(why + strlen(why), whylen - strlen(why),
				 ": a constant that is not an integer");
			return false;
		}
		if (size < 8) {
			uint64_t m = (UINT64_C(1) << (size * 8)) - 1, u = (uint64_t)c & m;

			c = is_signed && (u >> (size * 8 - 1)) ? (int64_t)(u | ~m) : (int64_t)u;
		}
		dt_buf_add(out, "(int64)", 7);
		emit_i64(out, c);
		return true;
	} else if ((open = memchr(s, '(', (size_t)(e - s))) && e[-1] == ')') {
		/* disp(%base), sym+N(%rip), disp(%base,%index,scale), (,%index,scale) */
		const char *in = open + 1, *comma = memchr(in, ',', (size_t)(e - 1 - in));
		const char *bend = comma ? comma : e - 1;
		int64_t disp = 0;

		if (bend - in == 4 && !strncmp(in, "%rip", 4) && !comma) {
			const char *plus = NULL, *q;
			uint64_t symv;
			int64_t add = 0;
			char sym[256];

			for (q = s; q < open; q++)
				if ((*q == '+' || *q == '-') && q > s)
					plus = q;
			if (parse_i64(s, (size_t)(open - s), &disp) || open == s ||
			    (size_t)((plus ? plus : open) - s) >= sizeof(sym) ||
			    (plus && !parse_i64(plus, (size_t)(open - plus), &add))) {
				snprintf(why + strlen(why), whylen - strlen(why),
					 ": not a symbol's address relative to %%rip");
				return false;
			}
			snprintf(sym, sizeof(sym), "%.*s", (int)((plus ? plus : open) - s), s);
			if (elf_symbol(ps->path, sym, &symv)) {
				snprintf(why + strlen(why), whylen - strlen(why),
					 ": symbol '%s' is not in %s's symbol table", sym,
					 ps->path);
				return false;
			}
			/* run time: the site's address plus the link-time distance */
			dt_buf_printf(&v, "*(%s*)($__r_ip + ", stype[size]);
			emit_i64(&v, (int64_t)(symv + (uint64_t)add - site->pc));
			dt_buf_add(&v, ")", 1);
		} else {
			const char *base = NULL;

			if (open > s && !parse_i64(s, (size_t)(open - s), &disp)) {
				snprintf(why + strlen(why), whylen - strlen(why),
					 ": a displacement that is not an integer");
				return false;
			}
			if (bend > in &&
			    (*in != '%' || !(base = bt_reg(in + 1, (size_t)(bend - in - 1))))) {
				snprintf(why + strlen(why), whylen - strlen(why),
					 ": a base register bpftrace's reg() does not read");
				return false;
			}
			dt_buf_printf(&v, "*(%s*)(", stype[size]);
			if (base)
				dt_buf_printf(&v, "$__r_%s + ", base);
			if (comma) {
				const char *ix = comma + 1,
					   *c2 = memchr(ix, ',', (size_t)(e - 1 - ix));
				const char *index;
				int64_t scale = 1;

				if (*ix != '%' ||
				    !(index =
					  bt_reg(ix + 1, (size_t)((c2 ? c2 : e - 1) - ix - 1))) ||
				    (c2 &&
				     (!parse_i64(c2 + 1, (size_t)(e - 1 - c2 - 1), &scale) ||
				      (scale != 1 && scale != 2 && scale != 4 && scale != 8)))) {
					dt_free(v.s);
					snprintf(why + strlen(why), whylen - strlen(why),
						 ": an index or scale that cannot be read");
					return false;
				}
				dt_buf_printf(&v, "$__r_%s * %" PRId64 " + ", index, scale);
			}
			emit_i64(&v, disp);
			dt_buf_add(&v, ")", 1);
		}
	} else {
		snprintf(why + strlen(why), whylen - strlen(why), ": an operand form not known");
		return false;
	}
	/* the value as a 64-bit integer, signed or not as the note says */
	if (size == 8)
		dt_buf_printf(out, "(int64)%s", v.s);
	else if (is_signed)
		dt_buf_printf(out, "(int64)(%s)%s", stype[size], v.s);
	else
		dt_buf_printf(out, "((int64)%s & %s)", v.s,
			      size == 1	  ? "0xff"
			      : size == 2 ? "0xffff"
					  : "0xffffffff");
	dt_free(v.s);
	return true;
}

/*
 * argK of the USDT probe being written, into o: bpftrace's own argK up to
 * arg5, else the note's operand decoded for each site.
 */
static void emit_usdt_arg(struct tr *t, struct dt_node *n, unsigned k, struct dt_buf *o)
{
	const struct dt_probe *p = t->probe;
	struct dt_buf *ex = NULL;
	unsigned *low = NULL; /* each site's low address bits */
	size_t *lowex = NULL, nlow = 0, ne = 0, i, j;
	struct psites *ps;

	if (k >= USDT_SDT_MAX_ARGS) {
		err(t, n, "arg%u: a USDT probe has at most %d arguments", k, USDT_SDT_MAX_ARGS);
		return;
	}
	if (t->infer || !strcmp(p->bt, "usdt:unmatched")) {
		dt_buf_printf(o, k <= 5 ? "arg%u" : "0", k);
		return;
	}
	if (k <= 5) {
		/*
		 * bpftrace's own, unless a site has an operand it misreads
		 * (0.17 reads `g(%rip)` and indexed operands wrongly): those
		 * are decoded here too.
		 */
		bool own = false;

		ps = probe_sites(t, p);
		for (i = 0; ps->notes && i < ps->n; i++)
			if (ps->v[i]->arch != USDT_ARCH_X86_64) {
				own = false;
				break;
			} else if (k < ps->v[i]->nargs &&
				   ps->v[i]->arg[k].kind == USDT_ARG_UNSUPPORTED) {
				own = true;
			}
		if (!own) {
			dt_buf_printf(o, "arg%u", k);
			return;
		}
	}
	ps = probe_sites(t, p);
	if (!ps->notes) {
		err(t, n,
		    "arg%u of %s:::%s: past the sixth, an argument is read from the probe's "
		    "note, and %s",
		    k, p->prov, p->name, ps->why);
		return;
	}
	for (i = 0; i < ps->n; i++) {
		const struct usdt_site *s = ps->v[i];
		unsigned lo = (unsigned)(s->pc & 0xfff);
		struct dt_buf b = {0};
		char why[400];

		if (s->arch != USDT_ARCH_X86_64) {
			err(t, n,
			    "arg%u of %s:::%s: arguments past the sixth are decoded on x86-64 only "
			    "(this file is %s)",
			    k, p->prov, p->name, usdt_arch_name(s->arch));
			goto out;
		}
		if (!site_arg(ps, s, k, &b, why, sizeof(why))) {
			err(t, n,
			    "arg%u of %s:::%s cannot be read at its site 0x%" PRIx64 " in %s: %s",
			    k, p->prov, p->name, s->pc, ps->path, why);
			dt_free(b.s);
			goto out;
		}
		for (j = 0; j < nlow; j++)
			if (low[j] == lo && strcmp(ex[lowex[j]].s, b.s)) {
				err(t, n,
				    "arg%u of %s:::%s: two sites in %s place it differently and "
				    "cannot be told apart (their addresses end alike: 0x%" PRIx64
				    ")",
				    k, p->prov, p->name, ps->path, s->pc);
				dt_free(b.s);
				goto out;
			}
		for (j = 0; j < ne; j++)
			if (!strcmp(ex[j].s, b.s))
				break;
		if (j < ne) {
			dt_free(b.s);
		} else {
			ex = dt_xrealloc(ex, (ne + 1) * sizeof(*ex));
			ex[ne++] = b;
		}
		low = dt_xrealloc(low, (nlow + 1) * sizeof(*low));
		lowex = dt_xrealloc(lowex, (nlow + 1) * sizeof(*lowex));
		low[nlow] = lo;
		lowex[nlow++] = j;
	}
	/*
	 * Several placements: the sum of each times its sites' test. Not `?:`:
	 * LLVM turns a choice between two registers into one load from a
	 * computed context offset, which the verifier refuses.
	 */
	if (ne == 1) {
		dt_buf_printf(o, "%s", ex[0].s);
	} else {
		/* signed: a comparison is unsigned, and so would the sum be */
		dt_buf_add(o, "(int64)(", 8);
		for (i = 0; i < ne; i++) {
			const char *sep = "";

			dt_buf_printf(o, "%s%s * (", i ? " + " : "", ex[i].s);
			for (j = 0; j < nlow; j++)
				if (lowex[j] == i) {
					dt_buf_printf(o, "%s($__r_ip & 0xfff) == %u", sep, low[j]);
					sep = " || ";
				}
			dt_buf_add(o, ")", 1);
		}
		dt_buf_add(o, ")", 1);
	}
out:
	for (i = 0; i < ne; i++)
		dt_free(ex[i].s);
	dt_free(ex);
	dt_free(low);
	dt_free(lowex);
}

static bool emit_builtin(struct tr *t, struct dt_node *n, struct dt_buf *o)
{
	const struct dt_probe *p = t->probe;
	const char *s = n->name;

	if (!strcmp(s, "timestamp")) {
		dt_buf_printf(o, "nsecs");
		set_int(n, 8, true);
	} else if (!strcmp(s, "vtimestamp")) {
		dt_buf_printf(o, "curtask->se.sum_exec_runtime");
		set_int(n, 8, true);
	} else if (!strcmp(s, "walltimestamp")) {
		dt_buf_add(o, "(nsecs + ", 9);
		emit_i64(o, t->t->wall_offset);
		dt_buf_add(o, ")", 1);
		set_int(n, 8, true);
	} else if (!strcmp(s, "pid") || !strcmp(s, "tid") || !strcmp(s, "uid") ||
		   !strcmp(s, "gid") || !strcmp(s, "cpu")) {
		dt_buf_printf(o, "%s", s);
		set_int(n, 4, false);
	} else if (!strcmp(s, "ppid")) {
		dt_buf_printf(o, "curtask->real_parent->tgid");
		set_int(n, 4, false);
	} else if (!strcmp(s, "execname")) {
		dt_buf_printf(o, "comm");
		n->type = TY_STR;
	} else if (!strcmp(s, "probename") || !strcmp(s, "probefunc") || !strcmp(s, "probemod") ||
		   !strcmp(s, "probeprov") || !strcmp(s, "zonename")) {
		const char *v = !strcmp(s, "probename")	  ? p->name
				: !strcmp(s, "probefunc") ? p->func
				: !strcmp(s, "probemod")  ? p->mod
				: !strcmp(s, "zonename")  ? "global"
							  : p->prov;

		if (!strcmp(s, "probeprov") && p->kind == P_USDT)
			err(t, n,
			    "probeprov of a USDT probe (the provider with the pid) is supported "
			    "only as a printed value or an aggregation key%s",
			    "");
		dt_buf_printf(o, "\"%s\"", v);
		n->type = TY_STR;
	} else if (!strcmp(s, "epid") || !strcmp(s, "id")) {
		dt_buf_printf(o, "%u", p->id);
		set_int(n, 4, true);
	} else if (!strcmp(s, "NULL")) {
		dt_buf_printf(o, "0");
		set_int(n, 8, true);
	} else if (!strncmp(s, "arg", 3) && s[3] >= '0' && s[3] <= '9' &&
		   (s[4] == '\0' || (s[4] >= '0' && s[4] <= '9' && !s[5]))) {
		unsigned k = (unsigned)atoi(s + 3);

		set_int(n, 8, false);
		if (p->kind == P_TRACEPOINT) {
			if (k < p->ntp_fields)
				dt_buf_printf(o, "args->%s", p->tp_fields[k]);
			else
				dt_buf_printf(o, "0");
		} else if (p->kind == P_USDT) {
			emit_usdt_arg(t, n, k, o);
		} else {
			dt_buf_printf(o, "0");
		}
	} else {
		return false;
	}
	return true;
}

static const char *bt_cast(const char *ty)
{
	unsigned size;
	bool u;

	if (!strcmp(ty, "string"))
		return "string";
	if (strchr(ty, '*') || !strcmp(ty, "uintptr_t") || !strcmp(ty, "user_addr_t") ||
	    !strcmp(ty, "caddr_t"))
		return "";
	ctype_size(ty, &size, &u);
	switch (size) {
	case 1:
		return u ? "(uint8)" : "(int8)";
	case 2:
		return u ? "(uint16)" : "(int16)";
	case 4:
		return u ? "(uint32)" : "(int32)";
	default:
		return u ? "(uint64)" : "(int64)";
	}
}

/*
 * args[K] of an integer type. bpftrace's own argK (a uint64) narrowed by
 * masks and, signed, sign-extended by (v ^ m) - m, in $__aK: a variable
 * whose first value is 0 is an int64, so what it is given next compares
 * and divides signed. No cast (a cast runs bpftrace 0.17's C parser:
 * emit_i64()). emit_probe() sets $__aK at the block's start. An argument
 * the note's operand gives (decode_operand()) is cast as its type says.
 */
static void emit_typed_arg(struct tr *t, struct dt_node *n, const char *ty, struct dt_buf *o)
{
	static const char *const mask[] = {"", "0xff", "0xffff", "", "0xffffffff"};
	static const char *const sign[] = {"", "0x80", "0x8000", "", "0x80000000"};
	unsigned k = (unsigned)n->ival, size = n->size;
	struct dt_buf x = {0};
	char own[8];

	emit_usdt_arg(t, n, k, &x);
	snprintf(own, sizeof(own), "arg%u", k);
	if (!x.s || strcmp(x.s, own) || !*bt_cast(ty) ||
	    (size != 1 && size != 2 && size != 4 && size != 8)) {
		const char *c = bt_cast(ty);

		dt_buf_printf(o, "%s(%s)", c, x.s ? x.s : "0");
	} else if (n->is_unsigned && size == 8) {
		dt_buf_printf(o, "%s", own);
	} else if (n->is_unsigned) {
		dt_buf_printf(o, "(%s & %s)", own, mask[size]);
	} else {
		if (!t->arg_int[k]) {
			struct dt_buf v = {0};

			if (size == 8)
				dt_buf_printf(&v, "%s", own);
			else
				dt_buf_printf(&v, "((%s & %s) ^ %s) - %s", own, mask[size],
					      sign[size], sign[size]);
			t->arg_int[k] = v.s;
		}
		dt_buf_printf(o, "$__a%u", k);
	}
	dt_free(x.s);
}

static void emit_call(struct tr *t, struct dt_node *n, struct dt_buf *o)
{
	const char *f = n->name;

	if (!strcmp(f, "copyinstr")) {
		if (n->nargs < 1 || n->nargs > 2) {
			err(t, n, "copyinstr() takes an address and an optional length%s", "");
			return;
		}
		n->type = TY_STR;
		if (n->args[0]->kind == N_ARGS) {
			/* args[N] of a char * is already a string: read with its length */
			struct dt_buf tmp = {0};

			emit(t, n->args[0], &tmp);
			dt_free(tmp.s);
			if (n->args[0]->type == TY_STR) {
				dt_buf_add(o, "str(", 4);
				if (t->probe->kind == P_USDT)
					emit_usdt_arg(t, n->args[0], (unsigned)n->args[0]->ival, o);
				else
					dt_buf_printf(o, "arg%" PRId64, n->args[0]->ival);
				goto len;
			}
		}
		dt_buf_add(o, "str(", 4);
		emit(t, n->args[0], o);
	len:
		if (n->nargs == 2) {
			dt_buf_add(o, ", ", 2);
			emit(t, n->args[1], o);
		}
		dt_buf_add(o, ")", 1);
		return;
	}
	if (!strcmp(f, "stringof")) {
		/* the value itself: a string already, or an integer printed as one */
		if (n->nargs != 1) {
			err(t, n, "stringof() takes one argument%s", "");
			return;
		}
		emit(t, n->args[0], o);
		n->type = n->args[0]->type;
		n->size = n->args[0]->size;
		n->is_unsigned = n->args[0]->is_unsigned;
		return;
	}
	if (!strcmp(f, "copyin")) {
		/*
		 * copyin(p, n) is a buffer DTrace scripts turn into a string
		 * (`this->s[n - 1] = '\0'; stringof(this->s)`): it is one here,
		 * read with bpftrace's str(p, n).
		 */
		if (n->nargs != 2) {
			err(t, n, "copyin() takes an address and a length%s", "");
			return;
		}
		dt_buf_add(o, "str(", 4);
		emit(t, n->args[0], o);
		dt_buf_add(o, ", ", 2);
		emit(t, n->args[1], o);
		dt_buf_add(o, ")", 1);
		if (!t->failed && (n->args[0]->type == TY_STR || n->args[1]->type == TY_STR))
			err(t, n, "copyin() takes an address and a length, not strings%s", "");
		n->type = TY_STR;
		return;
	}
	if (!strcmp(f, "rand")) {
		dt_buf_printf(o, "rand");
		set_int(n, 4, false);
		return;
	}
	if (!strcmp(f, "ustack")) {
		err(t, n,
		    "ustack() is supported as an action, an aggregation key or printf's %%k "
		    "argument%s",
		    "");
		n->type = TY_STR;
		return;
	}
	if (deferred(n)) {
		err(t, n,
		    "%s() is supported where its value is printed (printf, trace) or is an "
		    "aggregation key: bpftrace 0.17 has no string functions to do it in the "
		    "probe",
		    f);
		n->type = TY_STR;
		return;
	}
	{
		static const char *const actions[] = {
		    "printf", "trace",	  "printa",    "exit",	     "normalize", "denormalize",
		    "trunc",  "clear",	  "count",     "sum",	     "avg",	  "min",
		    "max",    "quantize", "lquantize", "llquantize", "stddev",	  NULL};

		if (in_list(actions, f))
			err(t, n, "%s() is an action: it cannot be used as a value", f);
		else
			err(t, n,
			    "%s() is not supported by this D consumer (README: what is supported)",
			    f);
	}
	set_int(n, 8, false);
}

static void emit(struct tr *t, struct dt_node *n, struct dt_buf *o)
{
	if (!n || t->failed)
		return;
	switch (n->kind) {
	case N_INT:
		emit_i64(o, n->ival);
		set_int(n, n->ival >= INT32_MIN && n->ival <= INT32_MAX ? 4 : 8, false);
		return;
	case N_STR: {
		size_t i;

		dt_buf_add(o, "\"", 1);
		for (i = 0; i < n->slen; i++) {
			unsigned char c = (unsigned char)n->str[i];

			if (c == '"' || c == '\\')
				dt_buf_printf(o, "\\%c", c);
			else if (c < ' ' || c >= 0x7f)
				dt_buf_printf(o, "\\%03o", c);
			else
				dt_buf_add(o, (char *)&c, 1);
		}
		dt_buf_add(o, "\"", 1);
		n->type = TY_STR;
		return;
	}
	case N_IDENT:
		if (var_get(t, 'g', n->name, false) || !emit_builtin(t, n, o))
			emit_var_ref(t, n, o);
		return;
	case N_SELF:
	case N_THIS:
	case N_INDEX:
		emit_var_ref(t, n, o);
		return;
	case N_AGG:
		err(t, n, "an aggregation (@%s) cannot be used as a value", n->name);
		return;
	case N_CALL:
		emit_call(t, n, o);
		return;
	case N_ARGS: {
		const struct dt_probe *p = t->probe;
		const char *ty = n->ival < p->ntypes ? p->types[n->ival] : NULL;

		if (p->kind != P_USDT) {
			struct dt_node fake = *n;
			char name[16];

			snprintf(name, sizeof(name), "arg%" PRId64, n->ival);
			fake.name = name;
			fake.kind = N_IDENT;
			emit_builtin(t, &fake, o);
			set_int(n, 8, false);
			return;
		}
		if (n->ival < 0 || n->ival >= USDT_SDT_MAX_ARGS) {
			err(t, n, "args[%" PRId64 "]: a USDT probe has at most %d arguments",
			    n->ival, USDT_SDT_MAX_ARGS);
			return;
		}
		if (is_string_type(ty)) {
			dt_buf_add(o, "str(", 4);
			emit_usdt_arg(t, n, (unsigned)n->ival, o);
			dt_buf_add(o, ")", 1);
			n->type = TY_STR;
			return;
		}
		ctype_size(ty, &n->size, &n->is_unsigned);
		n->type = TY_INT;
		if (ty)
			emit_typed_arg(t, n, ty, o);
		else
			emit_usdt_arg(t, n, (unsigned)n->ival, o);
		return;
	}
	case N_UNARY:
		if (!n->op[1] && (n->op[0] == '*' || n->op[0] == '&')) {
			err(t, n, "'%s': pointers are the BPF engine's (-x engine=bpf)", n->op);
			return;
		}
		dt_buf_printf(o, "(%s", n->op);
		emit(t, n->a, o);
		dt_buf_add(o, ")", 1);
		if (n->a->type == TY_STR)
			err(t, n, "'%s' on a string", n->op);
		set_int(n, n->op[0] == '!' ? 4 : n->a->size, n->a->is_unsigned);
		return;
	case N_BINARY: {
		bool cmp = strchr("=!<>", n->op[0]) && strcmp(n->op, "<<") && strcmp(n->op, ">>");
		bool logic = !strcmp(n->op, "&&") || !strcmp(n->op, "||") || !strcmp(n->op, "^^");

		dt_buf_add(o, "(", 1);
		if (!strcmp(n->op, "^^")) {
			dt_buf_add(o, "((", 2);
			emit(t, n->a, o);
			dt_buf_add(o, ") != 0) != ((", 13);
			emit(t, n->b, o);
			dt_buf_add(o, ") != 0)", 7);
		} else {
			emit(t, n->a, o);
			dt_buf_printf(o, " %s ", n->op);
			emit(t, n->b, o);
		}
		dt_buf_add(o, ")", 1);
		if (t->failed)
			return;
		if ((n->a->type == TY_STR) != (n->b->type == TY_STR) ||
		    (n->a->type == TY_STR && !(cmp && (n->op[0] == '=' || n->op[0] == '!'))))
			err(t, n,
			    "'%s' between a string and another type, or on strings: strings "
			    "compare with == and != only",
			    n->op);
		if (cmp || logic)
			set_int(n, 4, false);
		else
			set_int(n, n->a->size > n->b->size ? n->a->size : n->b->size,
				n->a->is_unsigned || n->b->is_unsigned);
		return;
	}
	case N_TERNARY:
		dt_buf_add(o, "(", 1);
		emit(t, n->a, o);
		dt_buf_add(o, " ? ", 3);
		emit(t, n->b, o);
		dt_buf_add(o, " : ", 3);
		emit(t, n->c, o);
		dt_buf_add(o, ")", 1);
		if (t->failed)
			return;
		if ((n->b->type == TY_STR) != (n->c->type == TY_STR))
			err(t, n, "the two sides of '?:' must both be strings or both integers%s",
			    "");
		n->type = n->b->type;
		n->size = n->b->size > n->c->size ? n->b->size : n->c->size;
		n->is_unsigned = n->b->is_unsigned;
		return;
	case N_CAST:
		if (!strcmp(n->name, "string")) {
			emit(t, n->a, o);
			if (n->a->type != TY_STR)
				err(t, n,
				    "(string) of an integer is not supported: use copyinstr()%s",
				    "");
			n->type = TY_STR;
			return;
		}
		dt_buf_printf(o, "%s(", bt_cast(n->name));
		emit(t, n->a, o);
		dt_buf_add(o, ")", 1);
		if (n->a->type == TY_STR) {
			n->type = TY_STR; /* (char *)copyinstr(...) */
			return;
		}
		ctype_size(n->name, &n->size, &n->is_unsigned);
		n->type = TY_INT;
		return;
	case N_ASSIGN:
	case N_INCDEC:
		err(t, n,
		    "'%s' inside an expression is not supported: make it a statement of its own",
		    n->op);
		return;
	case N_MEMBER:
		err(t, n, "'->%s' is not supported", n->name);
		return;
	case N_SIZEOF:
		err(t, n, "'%s' is not supported by the bpftrace backend",
		    n->ival ? "offsetof" : "sizeof");
		return;
	}
}

/* ---- values that are printed: fields of a record ---- */

static size_t add_leaf(struct leaves *l, struct dt_buf *b, enum dt_type ty)
{
	l->v = dt_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->type = dt_xrealloc(l->type, (l->n + 1) * sizeof(*l->type));
	l->v[l->n] = *b;
	l->type[l->n] = ty;
	return l->n++;
}

static struct dt_recipe *recipe(enum dt_rop op)
{
	struct dt_recipe *r = dt_xmalloc(sizeof(*r));

	memset(r, 0, sizeof(*r));
	r->op = op;
	return r;
}

/*
 * Strings as long as DTrace's (strsize, 256 by default). bpftrace 0.17 holds
 * a string in BPFTRACE_STRLEN bytes (64 unless -x strsize sets it, 200 at
 * most: run.c), and a BPF program has 512 bytes of stack. A string read
 * from the process (copyinstr(), a char * argument, stringof()) that is
 * printed or is an aggregation key is read in chunks of STRLEN - 1 bytes,
 * one field each, and joined by the renderer (R_CHUNKS: a chunk shorter
 * than asked for ended the string). A record carrying such a string sends
 * each field as an event of its own (one string on the stack at a time). A
 * key holds its chunks together, and every map update of a probe's block has
 * its key on the stack: their long strings take at most 320 bytes of a
 * block's stack, later ones get one chunk (STRLEN - 1 bytes).
 */
long dt_bt_strlen(const struct dt_consumer_opts *o)
{
	/*
	 * Past 200, chunks of 199 would take the BPF stack's 512 bytes with
	 * two strings (the test of a first chunk and the chunk): chunks of
	 * 63 read any length bpftrace 0.17 can.
	 */
	return o->strsize && o->strsize <= 200 ? o->strsize : 64;
}

static long d_strsize(const struct dt_consumer_opts *o)
{
	return o->strsize ? o->strsize : 256;
}

/*
 * The address of a string read from the process, and its longest length
 * (*limit: an expression of it, for a this-> variable copyin() filled in
 * this firing: the HotSpot idiom).
 */
static bool user_string(struct tr *t, struct dt_node *n, struct dt_buf *ptr, int64_t *max,
			char **limit)
{
	const struct dt_probe *p = t->probe;
	struct var *v;

	if (n->kind == N_THIS && (v = var_get(t, 't', n->name, false)) && v->type == TY_STR &&
	    v->copyin_ptr && v->copyin_len) {
		dt_buf_printf(ptr, "%s", v->copyin_ptr);
		*limit = v->copyin_len;
		n->type = TY_STR;
		return true;
	}
	if (n->kind == N_CAST &&
	    (!strcmp(n->name, "string") || (strchr(n->name, '*') && strstr(n->name, "char"))))
		return user_string(t, n->a, ptr, max, limit);
	if (n->kind == N_CALL && !strcmp(n->name, "stringof") && n->nargs == 1)
		return user_string(t, n->args[0], ptr, max, limit);
	if (n->kind == N_ARGS && p->kind == P_USDT && n->ival >= 0 && n->ival < USDT_SDT_MAX_ARGS &&
	    n->ival < p->ntypes && is_string_type(p->types[n->ival])) {
		emit_usdt_arg(t, n, (unsigned)n->ival, ptr);
		n->type = TY_STR;
		return true;
	}
	if (n->kind == N_CALL && !strcmp(n->name, "copyinstr") &&
	    (n->nargs == 1 || (n->nargs == 2 && n->args[1]->kind == N_INT))) {
		struct dt_node *a = n->args[0];

		if (n->nargs == 2 && n->args[1]->ival < *max)
			*max = n->args[1]->ival < 0 ? 0 : n->args[1]->ival;
		if (a->kind == N_ARGS && p->kind == P_USDT && a->ival >= 0 &&
		    a->ival < USDT_SDT_MAX_ARGS) {
			emit_usdt_arg(t, a, (unsigned)a->ival, ptr);
		} else {
			emit(t, a, ptr);
			if (a->type == TY_STR)
				return false;
		}
		n->type = TY_STR;
		return true;
	}
	return false;
}

/*
 * $__f<sn> = 1 when the first chunk (n bytes at $__s<sn>) holds no NUL, else
 * 0, and the later chunks are then read at the string's start again: past a
 * short string's end is whatever memory follows, whose bytes (a comma,
 * \037) would break the key or the record they are sent in. No branch: each
 * would double the paths the verifier walks. A string longer than one chunk
 * may still send what follows its end in its later chunks (one test per
 * string keeps the program small).
 *
 * Where the block's stack has room (pass 1 counts its keys' bytes and long
 * strings), the first n - 1 and the first n bytes are read as strings:
 * they differ exactly when the n bytes hold no NUL, and strncmp() says so
 * as 0 or 1. Each test takes two strings of the stack, and no cast (a cast
 * runs bpftrace 0.17's C parser: emit_i64()).
 */
static void first_full_str(struct dt_buf *o, unsigned sn, size_t n)
{
	/* $v = 0 first: the variable is int64, as $__s<sn> is */
	dt_buf_printf(o,
		      "$__f%u = 0;\n$__f%u = strncmp(str($__s%u, %zu), str($__s%u, %zu), %zu);\n",
		      sn, sn, sn, n - 1, sn, n, n);
}

/*
 * Else the n bytes are read as words, each once; a word has a zero byte
 * when (w - 0x01..01) & ~w & 0x80..80 (bytes past n set to 0xff; a word
 * that cannot be read is 0), and (h | -h) >> 63 is 1 for any h but 0.
 * Every word read takes 8 bytes of the BPF stack: in a block with at most
 * four long strings, whose words fit beside its keys (a printed string, its
 * strlen() and a key of it took 512 bytes), every word of the first chunk
 * is tested, else its last 8 bytes only (a short string with 8 bytes of
 * other data there sends them).
 */
static void first_full(struct dt_buf *o, unsigned sn, size_t n, bool all)
{
	size_t w;

	dt_buf_add(o, "$__h = (int64)0;\n", 17);
	for (w = all || n < 8 ? 0 : n - 8; w < n; w += 8) {
		dt_buf_printf(o, "$__w = (int64)*(uint64*)($__s%u + %zu);\n", sn, w);
		if (n - w < 8) {
			dt_buf_add(o, "$__w = $__w | ", 14);
			emit_i64(o, (int64_t)(~UINT64_C(0) << (8 * (n - w))));
			dt_buf_add(o, ";\n", 2);
		}
		dt_buf_add(o, "$__h = $__h | (($__w - ", 23);
		emit_i64(o, (int64_t)UINT64_C(0x0101010101010101));
		dt_buf_add(o, ") & ~$__w & ", 12);
		emit_i64(o, (int64_t)UINT64_C(0x8080808080808080));
		dt_buf_add(o, ");\n", 3);
	}
	dt_buf_printf(o, "$__f%u = (int64)(1 - ((($__h | -$__h) >> 63) & 1));\n", sn);
}

static struct dt_recipe *long_string(struct tr *t, struct dt_node *n, struct leaves *l,
				     struct dt_value *v)
{
	long chunk = dt_bt_strlen(t->prog->o) - 1;
	int64_t max = d_strsize(t->prog->o) - 1;
	struct dt_buf ptr = {0};
	struct dt_recipe *r;
	char *limit = NULL;
	size_t k, nk;
	unsigned sn;

	if (!user_string(t, n, &ptr, &max, &limit) || max <= chunk || chunk < 1) {
		dt_free(ptr.s);
		return NULL;
	}
	nk = (size_t)((max + chunk - 1) / chunk);
	if (t->in_key) {
		size_t each = (size_t)(chunk + 1) * t->key_maps;

		if (nk * each > t->key_room) {
			nk = t->key_room / each;
			if (nk < 1)
				nk = 1;
			if ((int64_t)nk * chunk < max)
				max = (int64_t)nk * chunk;
		}
		t->key_room -= t->key_room > nk * each ? nk * each : t->key_room;
	}
	r = recipe(R_CHUNKS);
	r->chunk = (size_t)chunk;
	r->max = (size_t)max;
	r->nchunks = nk;
	/*
	 * the address once, in a variable: used by every chunk, LLVM would
	 * keep a pointer into the context for it, which the verifier refuses
	 */
	sn = t->nscratch++;
	dt_buf_printf(&l->pre, "$__s%u = 0;\n$__s%u = %s;\n", sn, sn, ptr.s ? ptr.s : "0");
	if (nk > 1 && t->block_keys + 2 * (size_t)(chunk + 1) * t->block_long <= 448)
		first_full_str(&l->pre, sn, (size_t)chunk);
	else if (nk > 1)
		first_full(&l->pre, sn, (size_t)chunk,
			   t->block_long <= 4 &&
			       t->block_keys + (size_t)(chunk + 1) * t->block_long <= 448);
	t->nlong++;
	for (k = 0; k < nk; k++) {
		struct dt_buf b = {0};
		int64_t len = max - (int64_t)k * chunk;

		if (k == 0)
			dt_buf_printf(&b, "str($__s%u, %ld)", sn, len < chunk ? (long)len : chunk);
		else
			dt_buf_printf(&b, "str($__s%u + $__f%u * %zu, %ld)", sn, sn,
				      k * (size_t)chunk, len < chunk ? (long)len : chunk);
		if (k == 0)
			r->field = add_leaf(l, &b, TY_STR);
		else
			add_leaf(l, &b, TY_STR);
	}
	r->limit = (size_t)-1;
	if (limit) {
		struct dt_buf b = {0};

		dt_buf_printf(&b, "(%s)", limit);
		r->limit = add_leaf(l, &b, TY_INT);
	}
	dt_free(ptr.s);
	v->type = TY_STR;
	return r;
}

/*
 * ustack([nframes]): bpftrace's ustack(perf, n), whose text (address,
 * symbol+offset, file) the renderer writes as DTrace's frames. DTrace's
 * default is ustackframes, 100; bpftrace reads at most 127.
 */
static bool ustack_frames(struct tr *t, struct dt_node *n, struct dt_buf *b)
{
	int64_t nf = 100;

	if (n->nargs > 2 || (n->nargs >= 1 && n->args[0]->kind != N_INT)) {
		err(t, n, "ustack() takes a constant number of frames (and a string size)%s", "");
		return false;
	}
	if (n->nargs >= 1)
		nf = n->args[0]->ival;
	if (nf < 1)
		nf = 1;
	if (nf > 127)
		nf = 127;
	dt_buf_printf(b, "ustack(perf, %d)", (int)nf);
	return true;
}

static struct dt_recipe *value(struct tr *t, struct dt_node *n, struct leaves *l,
			       struct dt_value *v)
{
	struct dt_recipe *r;

	if (n->kind == N_CALL && !strcmp(n->name, "ustack")) {
		struct dt_buf b = {0};

		v->type = TY_STR;
		r = recipe(R_USTACK);
		if (ustack_frames(t, n, &b))
			r->field = add_leaf(l, &b, TY_STR);
		return r;
	}

	if (deferred(n)) {
		const char *f = n->name;
		struct dt_value a = {0}, b = {0}, c = {0};
		bool two = !strcmp(f, "strjoin") || !strcmp(f, "strstr");
		bool sub = !strcmp(f, "substr");

		v->type = TY_STR;
		if (sub ? n->nargs < 2 || n->nargs > 3 : n->nargs != (two ? 2u : 1u)) {
			err(t, n, "%s() takes the wrong number of arguments here", f);
			return recipe(R_CONST);
		}
		r = recipe(!strcmp(f, "strjoin")    ? R_JOIN
			   : !strcmp(f, "basename") ? R_BASENAME
			   : !strcmp(f, "dirname")  ? R_DIRNAME
			   : !strcmp(f, "strlen")   ? R_STRLEN
			   : !strcmp(f, "strstr")   ? R_STRSTR
			   : sub		    ? R_SUBSTR
						    : R_ITOA);
		r->a = value(t, n->args[0], l, &a);
		if (n->nargs > 1)
			r->b = value(t, n->args[1], l, &b);
		if (n->nargs > 2)
			r->c = value(t, n->args[2], l, &c);
		if (r->op == R_ITOA ? a.type != TY_INT
		    : sub
			? a.type != TY_STR || b.type != TY_INT || (n->nargs > 2 && c.type != TY_INT)
			: a.type != TY_STR || (two && b.type != TY_STR))
			err(t, n, "%s() of the wrong type", f);
		r->max = (size_t)d_strsize(t->prog->o);
		if (r->op == R_STRLEN) {
			v->type = TY_INT;
			v->size = 8;
			v->is_unsigned = true;
		}
		return r;
	}
	if ((r = long_string(t, n, l, v)))
		return r;
	if (n->kind == N_IDENT && !strcmp(n->name, "probeprov") && t->probe->kind == P_USDT &&
	    !var_get(t, 'g', n->name, false)) {
		struct dt_buf b = {0};

		r = recipe(R_JOIN);
		r->a = recipe(R_CONST);
		r->a->str = dt_xstrdup(t->probe->prov);
		r->b = recipe(R_ITOA);
		r->b->a = recipe(R_FIELD);
		dt_buf_printf(&b, "pid");
		r->b->a->field = add_leaf(l, &b, TY_INT);
		v->type = TY_STR;
		return r;
	}
	{
		struct dt_buf b = {0};

		emit(t, n, &b);
		if (!b.s)
			dt_buf_add(&b, "0", 1);
		r = recipe(R_FIELD);
		r->field = add_leaf(l, &b, n->type);
		v->type = n->type;
		v->size = n->size ? n->size : 8;
		v->is_unsigned = n->is_unsigned;
		return r;
	}
}

static size_t new_action(struct tr *t, enum dt_akind kind)
{
	struct dt_action a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.clause = t->clause;
	a.probe = t->probe;
	DT_PUSH(t->t->acts, t->t->nacts, a);
	return t->t->nacts - 1;
}

/* The statements the leaves need first (long strings' addresses). */
static void emit_pre(const struct leaves *l, struct dt_buf *o, const char *indent)
{
	const char *p = l->pre.s;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		dt_buf_printf(o, "%s%.*s\n", indent, (int)n, p);
		p += n + (e ? 1 : 0);
	}
}

/* printf("\036<act>\037<field>...", leaves...) */
static void emit_record(struct tr *t, size_t act, const struct leaves *l, struct dt_buf *o,
			const char *indent)
{
	size_t i, nstr = 0;

	emit_pre(l, o, indent);
	for (i = 0; i < l->n; i++)
		nstr += l->type[i] == TY_STR;
	/*
	 * LLVM gives each map update's key its own stack, and the record
	 * shares what is left (bounds found by trying bpftrace 0.17)
	 */
	if (nstr * (size_t)dt_bt_strlen(t->prog->o) + (l->n - nstr + 1) * 8 + t->block_keys > 352) {
		/*
		 * more strings than the BPF stack holds at once: every field an
		 * event of its own, then the record, each with the CPU (bpftrace
		 * may read another CPU's events in between)
		 */
		for (i = 0; i < l->n; i++)
			dt_buf_printf(o, "%sprintf(\"\\035%%d\\037%s\", cpu, %s);\n", indent,
				      l->type[i] == TY_STR ? "%s" : "%lld", l->v[i].s);
		dt_buf_printf(o, "%sprintf(\"\\036%zu\\035%%d\", cpu);\n", indent, act);
		return;
	}
	dt_buf_printf(o, "%sprintf(\"\\036%zu", indent, act);
	for (i = 0; i < l->n; i++)
		dt_buf_printf(o, "\\037%s", l->type[i] == TY_STR ? "%s" : "%lld");
	dt_buf_add(o, "\"", 1);
	for (i = 0; i < l->n; i++)
		dt_buf_printf(o, ", %s", l->v[i].s);
	dt_buf_add(o, ");\n", 3);
}

static void leaves_free(struct leaves *l)
{
	size_t i;

	dt_free(l->pre.s);
	for (i = 0; i < l->n; i++)
		dt_free(l->v[i].s);
	dt_free(l->v);
	dt_free(l->type);
	memset(l, 0, sizeof(*l));
}

/* ---- aggregations ---- */

static struct dt_agg *agg_get(struct tr *t, const char *name, size_t *index)
{
	struct dt_agg a;
	size_t i;

	for (i = 0; i < t->t->naggs; i++)
		if (!strcmp(t->t->aggs[i].name, name)) {
			*index = i;
			return &t->t->aggs[i];
		}
	memset(&a, 0, sizeof(a));
	a.name = dt_xstrdup(name);
	a.normal = 1;
	DT_PUSH(t->t->aggs, t->t->naggs, a);
	*index = t->t->naggs - 1;
	return &t->t->aggs[*index];
}

/*
 * The bpftrace maps of an aggregation: one, or stddev()'s three (count,
 * sum, sum of squares). `op` is applied to each: "print", "clear", "zero".
 */
static void agg_maps(struct tr *t, struct dt_buf *o, const char *ind, const char *op,
		     const char *name)
{
	static const char *const part[] = {"", "__s", "__q"};
	size_t i, n = 1;

	for (i = 0; i < t->nfns; i++)
		if (!strcmp(t->fns[i].name, name) && t->fns[i].fn == F_STDDEV)
			n = 3;
	for (i = 0; i < t->t->naggs; i++)
		if (!strcmp(t->t->aggs[i].name, name) && t->t->aggs[i].fn == F_STDDEV)
			n = 3;
	for (i = 0; i < n; i++)
		dt_buf_printf(o, "%s%s(@a_%s%s);\n", ind, op, name, part[i]);
}

/*
 * llquantize(): DTrace's log-linear buckets (its bucket function's walk):
 * bucket 0 below factor^low; then each order of magnitude [last, this)
 * up to high is cut in min(this, nsteps) buckets of this / that width,
 * of which the first 1/factor lie in the magnitude below and are not
 * counted again; then one for what is above. Their lower bounds, into
 * lb[1..]; returns the number of buckets, or 0 for parameters DTrace
 * refuses (or more buckets than max).
 */
size_t dt_llq_bounds(const int64_t p[4], int64_t *lb, size_t max)
{
	int64_t factor = p[0], low = p[1], high = p[2], nsteps = p[3], this = 1, last, next = 0;
	size_t bin = 1;
	int64_t order, j;

	if (factor < 2 || low < 0 || high > 64 || low > high || nsteps <= 0)
		return 0;
	for (order = 0; order < low; order++)
		if (__builtin_mul_overflow(this, factor, &this))
			return 0;
	last = this;
	if (__builtin_mul_overflow(this, factor, &this))
		return 0;
	for (; order <= high; order++) {
		int64_t nb = this > nsteps ? nsteps : this, width = this / nb;

		for (j = 0; j < nb - nb / factor; j++) {
			if (bin >= max)
				return 0;
			lb[bin++] = last + j * width;
		}
		last = this;
		if (order < high && __builtin_mul_overflow(this, factor, &next))
			break; /* the magnitudes end where 64 bits do */
		this = next;
	}
	if (bin >= max)
		return 0;
	lb[bin] = last; /* ">= last" */
	return bin + 1;
}

/* The bucket of $__v: a search over the bounds lb[lo..hi]. */
static void llq_tree(struct dt_buf *o, const int64_t *lb, size_t lo, size_t hi)
{
	size_t mid;

	if (lo == hi) {
		dt_buf_printf(o, "%zu", lo);
		return;
	}
	mid = (lo + hi + 1) / 2;
	dt_buf_add(o, "($__v < ", 8);
	emit_i64(o, lb[mid]);
	dt_buf_add(o, " ? ", 3);
	llq_tree(o, lb, lo, mid - 1);
	dt_buf_add(o, " : ", 3);
	llq_tree(o, lb, mid, hi);
	dt_buf_add(o, ")", 1);
}

static void emit_agg_assign(struct tr *t, struct dt_node *n, struct dt_buf *o, const char *ind)
{
	static const struct {
		const char *d, *bt;
		enum dt_afn fn;
		size_t nargs;
	} fns[] = {
	    {"count", "count", F_COUNT, 0},
	    {"sum", "sum", F_SUM, 1},
	    {"avg", "avg", F_AVG, 1},
	    {"min", "min", F_MIN, 1},
	    {"max", "max", F_MAX, 1},
	    {"quantize", "hist", F_QUANTIZE, 1},
	    {"lquantize", "lhist", F_LQUANTIZE, 4},
	    {"llquantize", "count", F_LLQUANTIZE, 5},
	    {"stddev", "count", F_STDDEV, 1},
	};
	struct dt_node *lhs = n->a, *f = n->b;
	struct leaves l = {0};
	struct dt_agg *a;
	size_t i, ai, fi;

	if (strcmp(n->op, "=")) {
		err(t, n, "an aggregation is only assigned with '=': @%s = count()", lhs->name);
		return;
	}
	if (f->kind != N_CALL) {
		err(t, f,
		    "an aggregation is assigned an aggregating function (count(), sum(), "
		    "quantize(), ...)%s",
		    "");
		return;
	}
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!strcmp(f->name, fns[i].d))
			break;
	if (i == sizeof(fns) / sizeof(fns[0])) {
		err(t, f, "%s() is not an aggregating function", f->name);
		return;
	}
	fi = i;
	if (f->nargs != fns[i].nargs && !(fns[i].fn == F_LLQUANTIZE && f->nargs == 6)) {
		err(t, f, "%s() takes the wrong number of arguments", f->name);
		return;
	}
	a = agg_get(t, lhs->name, &ai);
	if (a->fn_set && a->fn != fns[i].fn) {
		err(t, f, "@%s is used with two different aggregating functions", lhs->name);
		return;
	}
	a->fn = fns[i].fn;
	a->fn_set = true;
	if (fns[i].fn == F_LQUANTIZE) {
		size_t k;

		for (k = 1; k < 4; k++) {
			if (f->args[k]->kind != N_INT) {
				err(t, f->args[k], "lquantize() needs constant bounds and step%s",
				    "");
				return;
			}
			a->lq[k - 1] = f->args[k]->ival;
		}
	}
	if (fns[i].fn == F_LLQUANTIZE) {
		int64_t lb[1024];
		size_t k;

		for (k = 1; k < 5; k++) {
			if (f->args[k]->kind != N_INT) {
				err(t, f->args[k],
				    "llquantize() needs a constant factor, magnitudes and steps%s",
				    "");
				return;
			}
			a->llq[k - 1] = f->args[k]->ival;
		}
		if (!dt_llq_bounds(a->llq, lb, sizeof(lb) / sizeof(lb[0]))) {
			err(t, f,
			    "llquantize(): the factor must be at least 2, the low magnitude below "
			    "the high one, the steps a multiple of the factor that divides each "
			    "power of it%s",
			    "");
			return;
		}
	}
	/* keys */
	{
		struct dt_value *keys = dt_xmalloc((lhs->nargs + 1) * sizeof(*keys));

		memset(keys, 0, (lhs->nargs + 1) * sizeof(*keys));
		t->in_key = true;
		/* stddev()'s three maps each have the key on the stack */
		t->key_maps = !strcmp(f->name, "stddev") ? 3 : 1;
		for (i = 0; i < lhs->nargs; i++)
			keys[i].r = value(t, lhs->args[i], &l, &keys[i]);
		t->in_key = false;
		if (!a->keys && !a->nfields && !a->keyed) {
			a->keys = keys;
			a->nkeys = lhs->nargs;
			a->nfields = l.n;
			a->keyed = lhs->nargs > 0;
			a->field_type = dt_xmalloc((l.n + 1) * sizeof(*a->field_type));
			for (i = 0; i < l.n; i++)
				a->field_type[i] = l.type[i];
		} else {
			if (a->nkeys != lhs->nargs || a->nfields != l.n)
				err(t, n, "@%s is used with keys of different signatures",
				    lhs->name);
			dt_free(keys); /* recipes leak only on this error path */
		}
	}
	if (t->failed)
		goto out;
	emit_pre(&l, o, ind);
	if (a->fn == F_STDDEV || a->fn == F_LLQUANTIZE) {
		struct dt_buf v = {0};

		emit(t, f->args[0], &v);
		if (!t->failed && f->args[0]->type == TY_STR)
			err(t, f, "%s() of a string", f->name);
		/* $__v = 0 first: an int64 (no cast: emit_i64()) */
		dt_buf_printf(o, "%s$__v = 0;\n%s$__v = %s;\n", ind, ind, v.s ? v.s : "0");
		dt_free(v.s);
		if (t->failed)
			goto out;
	}
	if (a->fn == F_STDDEV) {
		/* count, sum and sum of squares (DTrace's keeps 128 bits of it) */
		static const char *const part[] = {"", "__s", "__q"};
		static const char *const fn[] = {"count()", "sum($__v)", "sum($__v * $__v)"};

		for (size_t k = 0; k < 3; k++) {
			dt_buf_printf(o, "%s@a_%s%s", ind, lhs->name, part[k]);
			if (l.n) {
				dt_buf_add(o, "[", 1);
				for (i = 0; i < l.n; i++)
					dt_buf_printf(o, "%s%s", i ? ", " : "", l.v[i].s);
				dt_buf_add(o, "]", 1);
			}
			dt_buf_printf(o, " = %s;\n", fn[k]);
		}
		goto out;
	}
	if (a->fn == F_LLQUANTIZE) {
		/* a count per (keys, bucket): the renderer draws the histogram */
		a->field_type[l.n] = TY_INT; /* the bucket, after the keys' fields */
		int64_t lb[1024];
		size_t nb = dt_llq_bounds(a->llq, lb, sizeof(lb) / sizeof(lb[0]));

		dt_buf_printf(o, "%s@a_%s[", ind, lhs->name);
		for (i = 0; i < l.n; i++)
			dt_buf_printf(o, "%s, ", l.v[i].s);
		dt_buf_add(o, "($__v < ", 8);
		emit_i64(o, lb[1]);
		dt_buf_add(o, " ? 0 : ", 7);
		llq_tree(o, lb, 1, nb - 1);
		dt_buf_add(o, ")] = ", 5);
		if (f->nargs == 6) {
			dt_buf_add(o, "sum(", 4);
			emit(t, f->args[5], o);
			dt_buf_add(o, ");\n", 3);
		} else {
			dt_buf_add(o, "count();\n", 9);
		}
		goto out;
	}
	dt_buf_printf(o, "%s@a_%s", ind, lhs->name);
	if (l.n) {
		dt_buf_add(o, "[", 1);
		for (i = 0; i < l.n; i++)
			dt_buf_printf(o, "%s%s", i ? ", " : "", l.v[i].s);
		dt_buf_add(o, "]", 1);
	}
	dt_buf_printf(o, " = %s(", fns[fi].bt);
	if (f->nargs) {
		size_t k;

		for (k = 0; k < f->nargs; k++) {
			if (k)
				dt_buf_add(o, ", ", 2);
			emit(t, f->args[k], o);
		}
		if (f->args[0]->type == TY_STR)
			err(t, f, "%s() of a string", f->name);
	}
	dt_buf_add(o, ");\n", 3);
out:
	leaves_free(&l);
}

/* ---- statements ---- */

static void emit_stmts(struct tr *t, struct dt_stmt **v, size_t n, struct dt_buf *o,
		       const char *ind);

static void emit_printf(struct tr *t, struct dt_node *n, struct dt_buf *o, const char *ind,
			bool is_trace)
{
	struct leaves l = {0};
	size_t act, i, first = is_trace ? 0 : 1;

	if (!is_trace && (n->nargs < 1 || n->args[0]->kind != N_STR)) {
		err(t, n, "printf() needs a format string as its first argument%s", "");
		return;
	}
	if (is_trace && n->nargs != 1) {
		err(t, n, "trace() takes one argument%s", "");
		return;
	}
	act = new_action(t, is_trace ? A_TRACE : A_PRINTF);
	if (!is_trace)
		t->t->acts[act].fmt = dt_xstrdup(n->args[0]->str);
	t->t->acts[act].nargs = n->nargs - first;
	t->t->acts[act].args = dt_xmalloc((n->nargs + 1) * sizeof(struct dt_value));
	memset(t->t->acts[act].args, 0, (n->nargs + 1) * sizeof(struct dt_value));
	for (i = first; i < n->nargs; i++) {
		struct dt_value *v = &t->t->acts[act].args[i - first];

		v->r = value(t, n->args[i], &l, v);
	}
	if (!t->failed)
		emit_record(t, act, &l, o, ind);
	leaves_free(&l);
}

static bool agg_arg(struct tr *t, struct dt_node *n, size_t *ai)
{
	if (n->kind != N_AGG || n->nargs) {
		err(t, n, "expected an aggregation (@name)%s", "");
		return false;
	}
	agg_get(t, n->name, ai);
	return true;
}

static void emit_action(struct tr *t, struct dt_node *n, struct dt_buf *o, const char *ind)
{
	const char *f = n->name;
	size_t ai, act;

	if (!strcmp(f, "printf")) {
		emit_printf(t, n, o, ind, false);
	} else if (!strcmp(f, "trace")) {
		emit_printf(t, n, o, ind, true);
	} else if (!strcmp(f, "printa")) {
		struct dt_node *ag = n->nargs ? n->args[n->nargs - 1] : NULL;

		if (n->nargs < 1 || n->nargs > 2 || (n->nargs == 2 && n->args[0]->kind != N_STR)) {
			err(t, n, "printa() takes an optional format and one aggregation%s", "");
			return;
		}
		if (!agg_arg(t, ag, &ai))
			return;
		act = new_action(t, A_PRINTA);
		t->t->acts[act].agg = ai;
		if (n->nargs == 2)
			t->t->acts[act].fmt = dt_xstrdup(n->args[0]->str);
		dt_buf_printf(o, "%sprintf(\"\\036%zu\");\n", ind, act);
		agg_maps(t, o, ind, "print", ag->name);
		act = new_action(t, A_PRINTA_END);
		t->t->acts[act].agg = ai;
		dt_buf_printf(o, "%sprintf(\"\\036%zu\");\n", ind, act);
	} else if (!strcmp(f, "exit")) {
		struct leaves l = {0};
		struct dt_value v = {0};

		if (n->nargs != 1) {
			err(t, n, "exit() takes the exit status%s", "");
			return;
		}
		act = new_action(t, A_EXIT);
		value(t, n->args[0], &l, &v);
		if (!t->failed) {
			emit_record(t, act, &l, o, ind);
			dt_buf_printf(o, "%sexit();\n", ind);
		}
		leaves_free(&l);
	} else if (!strcmp(f, "normalize") || !strcmp(f, "denormalize") || !strcmp(f, "trunc")) {
		bool norm = f[0] == 'n', denorm = f[0] == 'd';
		struct leaves l = {0};
		struct dt_value v = {0};

		if (n->nargs < 1 || n->nargs > 2 || (norm && n->nargs != 2) ||
		    (denorm && n->nargs != 1)) {
			err(t, n, "%s() takes the wrong number of arguments", f);
			return;
		}
		if (!agg_arg(t, n->args[0], &ai))
			return;
		if (!strcmp(f, "trunc") && n->nargs == 1) {
			act = new_action(t, A_CLEAR);
			t->t->acts[act].agg = ai;
			dt_buf_printf(o, "%sprintf(\"\\036%zu\\0371\");\n", ind, act);
			agg_maps(t, o, ind, "clear", n->args[0]->name);
			return;
		}
		act = new_action(t, norm ? A_NORMALIZE : denorm ? A_DENORMALIZE : A_TRUNC);
		t->t->acts[act].agg = ai;
		if (n->nargs == 2)
			value(t, n->args[1], &l, &v);
		if (!t->failed)
			emit_record(t, act, &l, o, ind);
		leaves_free(&l);
	} else if (!strcmp(f, "ustack")) {
		struct leaves l = {0};
		struct dt_buf b = {0};

		if (!ustack_frames(t, n, &b))
			return;
		act = new_action(t, A_USTACK);
		add_leaf(&l, &b, TY_STR);
		emit_record(t, act, &l, o, ind);
		leaves_free(&l);
	} else if (!strcmp(f, "clear")) {
		if (n->nargs != 1 || !agg_arg(t, n->args[0], &ai)) {
			err(t, n, "clear() takes one aggregation%s", "");
			return;
		}
		act = new_action(t, A_CLEAR);
		t->t->acts[act].agg = ai;
		dt_buf_printf(o, "%sprintf(\"\\036%zu\\0370\");\n", ind, act);
		agg_maps(t, o, ind, "zero", n->args[0]->name);
	} else {
		static const char *const unsupported[] = {
		    "stack",  "jstack",	 "system",    "raise",	    "stop",	  "speculate",
		    "commit", "discard", "copyout",   "copyoutstr", "breakpoint", "panic",
		    "chill",  "freopen", "ftruncate", "setopt",	    "tracemem",	  "printm",
		    "print",  "func",	 "ufunc",     "usym",	    "mod",	  "umod",
		    "sym",    NULL};

		static const char *const values[] = {
		    "copyinstr", "stringof", "strjoin", "basename", "dirname", "lltostr", "rand",
		    "copyin",	 "strlen",   "strstr",	"substr",   "strtoll", NULL};

		if (in_list(unsupported, f) || !in_list(values, f))
			err(t, n,
			    "%s() is not supported by this D consumer (README: what is "
			    "supported)",
			    f);
		else
			err(t, n, "%s() as a statement: its value would be thrown away", f);
	}
}

static void emit_assign(struct tr *t, struct dt_node *n, struct dt_buf *o, const char *ind)
{
	struct dt_node *lhs = n->kind == N_ASSIGN ? n->a : n->a;
	struct dt_buf l = {0}, r = {0};
	struct var *v = NULL;

	if (lhs->kind == N_AGG) {
		emit_agg_assign(t, n, o, ind);
		return;
	}
	if (lhs->kind == N_INDEX && !lhs->name[0]) {
		err(t, lhs, "'[ ]' of a pointer: pointers are the BPF engine's (-x engine=bpf)%s",
		    "");
		return;
	}
	if (lhs->kind == N_INDEX && lhs->a && n->kind == N_ASSIGN) {
		/* s[n] = '\0' after s = copyin(p, m): s is the string str(p, n) */
		char kind = lhs->a->kind == N_THIS ? 't' : 's';
		struct var *sv = var_get(t, kind, lhs->name, false);

		if (sv && sv->type == TY_STR) {
			if (strcmp(n->op, "=") || n->b->kind != N_INT || n->b->ival != 0 ||
			    lhs->nargs != 1 || (!sv->copyin_ptr && !t->infer)) {
				err(t, n,
				    "%s->%s[...] = ...: only the terminating '\\0' of a string "
				    "read by copyin() is supported",
				    kind == 't' ? "this" : "self", lhs->name);
				return;
			}
			if (t->infer)
				return;
			emit(t, lhs->args[0], &r);
			if (!t->failed && lhs->args[0]->type == TY_STR)
				err(t, lhs->args[0], "a string used as an index%s", "");
			if (!t->failed && kind == 't')
				dt_buf_printf(o, "%s$t_%s = str(%s, %s);\n", ind, lhs->name,
					      sv->copyin_ptr, r.s);
			else if (!t->failed)
				dt_buf_printf(o, "%s@s_%s[tid] = str(%s, %s);\n", ind, lhs->name,
					      sv->copyin_ptr, r.s);
			dt_free(sv->copyin_len);
			sv->copyin_len = r.s;
			return;
		}
		if (lhs->a->kind == N_THIS) {
			err(t, n, "this->%s[...]: this-> arrays are not supported", lhs->name);
			return;
		}
	}
	if (lhs->kind == N_ARGS || (lhs->kind == N_IDENT && emit_builtin(t, lhs, &l) &&
				    !var_get(t, 'g', lhs->name, false))) {
		dt_free(l.s);
		err(t, lhs, "'%s' cannot be assigned to", lhs->name ? lhs->name : "args[]");
		return;
	}
	dt_free(l.s);
	memset(&l, 0, sizeof(l));
	if (n->kind == N_INCDEC) {
		v = var_get(t,
			    lhs->kind == N_SELF		     ? 's'
			    : lhs->kind == N_THIS	     ? 't'
			    : lhs->kind == N_INDEX && lhs->a ? 's'
							     : 'g',
			    lhs->name, true);
		if (t->infer)
			v->assigned = true;
		t->lvalue = true;
		emit_var_ref(t, lhs, &l);
		t->lvalue = false;
		if (lhs->type == TY_STR)
			err(t, n, "'%s' on a string", n->op);
		else if (!t->failed)
			dt_buf_printf(o, "%s%s = %s %c 1;\n", ind, l.s, l.s, n->op[0]);
		dt_free(l.s);
		return;
	}
	emit(t, n->b, &r);
	if (t->failed)
		goto out;
	switch (lhs->kind) {
	case N_IDENT:
		v = var_get(t, 'g', lhs->name, true);
		break;
	case N_SELF:
		v = var_get(t, 's', lhs->name, true);
		break;
	case N_THIS:
		v = var_get(t, 't', lhs->name, true);
		break;
	case N_INDEX:
		v = var_get(t, lhs->a ? 's' : 'g', lhs->name, true);
		break;
	default:
		err(t, lhs, "this expression cannot be assigned to%s", "");
		goto out;
	}
	/* DTrace frees a thread-local or associative element set to 0. */
	if (t->infer)
		v->assigned = true;
	if (!strcmp(n->op, "=") && n->b->kind == N_INT && n->b->ival == 0 &&
	    (lhs->kind == N_SELF || lhs->kind == N_INDEX)) {
		t->lvalue = true;
		emit_var_ref(t, lhs, &l);
		t->lvalue = false;
		if (!t->failed)
			dt_buf_printf(o, "%sdelete(%s);\n", ind, l.s);
		goto out;
	}
	if (!strcmp(n->op, "=")) {
		if (t->infer) {
			v->type = n->b->type;
			if (n->b->type == TY_INT && (n->b->size > v->size || !v->size))
				v->size = n->b->size;
			v->is_unsigned = n->b->is_unsigned;
		}
	}
	t->lvalue = true;
	emit_var_ref(t, lhs, &l);
	t->lvalue = false;
	if (t->failed)
		goto out;
	if (lhs->type != n->b->type) {
		t->tag = "D_OP_INCOMPAT";
		err(t, n, "'%s' holds a string and an integer: a D variable has one type",
		    lhs->name ? lhs->name : "?");
		goto out;
	}
	if (!strcmp(n->op, "=")) {
		struct dt_node *b = n->b;

		dt_buf_printf(o, "%s%s = %s;\n", ind, l.s, r.s);
		while (b->kind == N_CAST)
			b = b->a;
		dt_free(v->copyin_ptr);
		dt_free(v->copyin_len);
		v->copyin_ptr = v->copyin_len = NULL;
		if (b->kind == N_CALL && !strcmp(b->name, "copyin") && b->nargs == 2) {
			struct dt_buf p = {0}, len = {0};

			emit(t, b->args[0], &p);
			emit(t, b->args[1], &len);
			v->copyin_ptr = p.s;
			v->copyin_len = len.s;
		}
	} else {
		char op[4];

		snprintf(op, sizeof(op), "%.*s", (int)strlen(n->op) - 1, n->op);
		if (lhs->type == TY_STR)
			err(t, n, "'%s' on a string", n->op);
		else
			dt_buf_printf(o, "%s%s = %s %s (%s);\n", ind, l.s, l.s, op, r.s);
	}
out:
	dt_free(l.s);
	dt_free(r.s);
}

static void emit_stmt(struct tr *t, struct dt_stmt *s, struct dt_buf *o, const char *ind)
{
	char deeper[64];

	snprintf(deeper, sizeof(deeper), "%s\t", ind);
	if (s->is_if) {
		struct dt_buf c = {0};

		emit(t, s->e, &c);
		if (!t->failed && s->e->type == TY_STR)
			err(t, s->e, "a string used as a condition: compare it with == or !=%s",
			    "");
		dt_buf_printf(o, "%sif (%s) {\n", ind, c.s ? c.s : "0");
		dt_free(c.s);
		emit_stmts(t, s->then, s->nthen, o, deeper);
		dt_buf_printf(o, "%s}", ind);
		if (s->nels) {
			dt_buf_printf(o, " else {\n");
			emit_stmts(t, s->els, s->nels, o, deeper);
			dt_buf_printf(o, "%s}", ind);
		}
		dt_buf_add(o, "\n", 1);
		return;
	}
	switch (s->e->kind) {
	case N_ASSIGN:
	case N_INCDEC:
		emit_assign(t, s->e, o, ind);
		return;
	case N_CALL:
		emit_action(t, s->e, o, ind);
		return;
	default:
		err(t, s->e,
		    "this statement has no effect: D statements are actions, "
		    "subroutines or assignments%s",
		    "");
	}
}

static void emit_stmts(struct tr *t, struct dt_stmt **v, size_t n, struct dt_buf *o,
		       const char *ind)
{
	size_t i;

	for (i = 0; i < n && !t->failed; i++)
		emit_stmt(t, v[i], o, ind);
}

static void emit_clause(struct tr *t, const struct dt_pclause *pc, struct dt_buf *o)
{
	const struct dt_clause *c = t->prog->clauses[pc->clause];
	struct dt_buf cond = {0};
	size_t k;

	t->clause = pc->clause;
	t->pc = pc;
	if (!pc->any_pid) {
		dt_buf_add(&cond, "(", 1);
		for (k = 0; k < pc->npids; k++)
			dt_buf_printf(&cond, "%spid == %d", k ? " || " : "", pc->pids[k]);
		dt_buf_add(&cond, ")", 1);
	}
	if (c->pred) {
		struct dt_buf p = {0};

		emit(t, c->pred, &p);
		if (!t->failed && c->pred->type == TY_STR)
			err(t, c->pred, "a string used as a predicate: compare it with == or !=%s",
			    "");
		dt_buf_printf(&cond, "%s(%s)", cond.n ? " && " : "", p.s ? p.s : "0");
		dt_free(p.s);
	}
	dt_buf_printf(o, "\tif (%s) {\n", cond.n ? cond.s : "1");
	dt_free(cond.s);
	if (!t->prog->o->quiet && !dt_clause_only_aggs(c)) {
		size_t act = new_action(t, A_CLAUSE);

		dt_buf_printf(o, "\t\tprintf(\"\\036%zu\\037%%d\", cpu);\n", act);
	}
	emit_stmts(t, c->body, c->nbody, o, "\t\t");
	if (!t->prog->o->quiet && !dt_clause_only_aggs(c)) {
		size_t act = new_action(t, A_CLAUSE_END);

		dt_buf_printf(o, "\t\tprintf(\"\\036%zu\");\n", act);
	}
	dt_buf_add(o, "\t}\n", 3);
}

/*
 * The variable's map is in the program written so far: a variable only a
 * clause without probes assigns (-Z; a file that appears later) has none,
 * and bpftrace refuses to clear a map it does not know.
 */
static bool map_used(const struct dt_buf *o, const struct var *v)
{
	char ref[300];
	const char *p = o->s;
	size_t n;

	n = (size_t)snprintf(ref, sizeof(ref), "@%c_%s", v->key[0], v->key + 2);
	while (p && (p = strstr(p, ref))) {
		char c = p[n];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return true;
		p += n;
	}
	return false;
}

static void emit_probe(struct tr *t, const struct dt_probe *p, struct dt_buf *o, bool is_end)
{
	struct dt_buf body = {0};
	size_t i;

	t->probe = p;
	t->key_room = 320; /* LLVM gives each map update's key its own stack */
	t->nscratch = 0;
	for (i = 0; i < USDT_SDT_MAX_ARGS; i++) {
		dt_free(t->arg_int[i]);
		t->arg_int[i] = NULL;
	}
	t->nlong = 0;
	t->block_long = 1000;
	t->block_keys = 320;
	for (i = 0; i < t->nblk; i++)
		if (!strcmp(t->blk[i].bt, p->bt)) {
			t->block_keys = t->blk[i].bytes;
			t->block_long = t->blk[i].nlong;
		}
	/* what copyin() put in a this-> variable is known within one firing */
	for (i = 0; i < t->nvars; i++) {
		dt_free(t->vars[i].copyin_ptr);
		dt_free(t->vars[i].copyin_len);
		t->vars[i].copyin_ptr = t->vars[i].copyin_len = NULL;
	}
	for (i = 0; i < p->npc && !t->failed; i++)
		emit_clause(t, &p->pc[i], &body);
	if (t->infer) {
		struct blk_keys b = {p->bt, 320 - t->key_room, t->nlong};

		for (i = 0; i < t->nblk; i++)
			if (!strcmp(t->blk[i].bt, p->bt))
				break;
		if (i < t->nblk)
			t->blk[i] = b;
		else
			DT_PUSH(t->blk, t->nblk, b);
		dt_free(body.s);
		return;
	}
	dt_buf_printf(o, "%s\n{\n", p->bt);
	if (p->kind == P_BEGIN) {
		/*
		 * bpftrace runs BEGIN once every probe is attached (its
		 * "attached_probes" line comes before): the start of tracing.
		 */
		dt_buf_printf(o, "\tprintf(\"\\036%zu\");\n", new_action(t, A_STARTED));
	}
	/* this-> variables: D reads an unset one as 0 (bpftrace: declare first) */
	for (i = 0; i < t->nvars; i++) {
		const struct var *v = &t->vars[i];

		if (v->key[0] != 't')
			continue;
		char ref[300];

		snprintf(ref, sizeof(ref), "$t_%s", v->key + 2);
		if (body.s && strstr(body.s, ref))
			dt_buf_printf(o, "\t$t_%s = %s;\n", v->key + 2,
				      v->type == TY_STR ? "\"\"" : "0");
	}
	/* the registers the note's operands read (emit_usdt_arg) */
	if (body.s) {
		static const char *const regs[] = {"ax",  "bx",	 "cx",	"dx",  "si",  "di",
						   "bp",  "sp",	 "ip",	"r8",  "r9",  "r10",
						   "r11", "r12", "r13", "r14", "r15", NULL};

		for (i = 0; regs[i]; i++) {
			char ref[16];

			snprintf(ref, sizeof(ref), "$__r_%s", regs[i]);
			if (strstr(body.s, ref))
				dt_buf_printf(o, "\t%s = reg(\"%s\");\n", ref, regs[i]);
		}
	}
	/* args[K] as int64s (emit_typed_arg), read once for the block */
	for (i = 0; i < USDT_SDT_MAX_ARGS; i++)
		if (t->arg_int[i])
			dt_buf_printf(o, "\t$__a%zu = 0;\n\t$__a%zu = %s;\n", i, i, t->arg_int[i]);
	if (body.s)
		dt_buf_add(o, body.s, body.n);
	dt_free(body.s);
	if (is_end) {
		size_t act;

		/* The exit dump: every aggregation, in order; then no map is left. */
		act = new_action(t, A_DUMP);
		dt_buf_printf(o, "\tprintf(\"\\036%zu\");\n", act);
		for (i = 0; i < t->t->naggs; i++) {
			act = new_action(t, A_PRINTA);
			t->t->acts[act].agg = i;
			t->t->acts[act].clause = (size_t)-1; /* the dump's */
			dt_buf_printf(o, "\tprintf(\"\\036%zu\");\n", act);
			agg_maps(t, o, "\t", "print", t->t->aggs[i].name);
			act = new_action(t, A_PRINTA_END);
			t->t->acts[act].agg = i;
			dt_buf_printf(o, "\tprintf(\"\\036%zu\");\n", act);
		}
		for (i = 0; i < t->t->naggs; i++)
			agg_maps(t, o, "\t", "clear", t->t->aggs[i].name);
		for (i = 0; i < t->nvars; i++)
			if (t->vars[i].key[0] != 't' && map_used(o, &t->vars[i]))
				dt_buf_printf(o, "\tclear(@%c_%s);\n", t->vars[i].key[0],
					      t->vars[i].key + 2);
	}
	dt_buf_add(o, "}\n\n", 3);
}

static void free_tables(struct dt_tables *t)
{
	/* recipes and actions live until the run ends: freed with the process */
	(void)t;
}

/*
 * An aggregation only clauses without probes assign (-Z: their file may
 * appear later, retain.c) has no map in this program, and bpftrace refuses
 * print(), zero() and clear() of a map it does not know: those lines go.
 * Their records stay, so printa() still prints what later instances add.
 */
static void drop_undefined_maps(struct dt_tables *tables, struct dt_buf *out)
{
	struct dt_buf nb = {0};
	size_t i;
	const char *p;
	bool any = false;

	for (i = 0; i < tables->naggs; i++) {
		char set[300], idx[300];

		snprintf(set, sizeof(set), "@a_%s = ", tables->aggs[i].name);
		snprintf(idx, sizeof(idx), "@a_%s[", tables->aggs[i].name);
		tables->aggs[i].unset = out->s && !strstr(out->s, set) && !strstr(out->s, idx);
		any |= tables->aggs[i].unset;
	}
	if (!any || !out->s)
		return;
	for (p = out->s; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p + 1) : strlen(p);
		bool drop = false;

		for (i = 0; i < tables->naggs && !drop; i++) {
			char ref[300];
			const char *c;

			if (!tables->aggs[i].unset)
				continue;
			snprintf(ref, sizeof(ref), "(@a_%s);", tables->aggs[i].name);
			c = memmem(p, n, ref, strlen(ref));
			drop = c && c - p >= 5 && (size_t)(c - p) + strlen(ref) + 1 == n &&
			       (!memcmp(c - 5, "print", 5) || !memcmp(c - 4, "zero", 4) ||
				!memcmp(c - 5, "clear", 5));
		}
		if (!drop)
			dt_buf_add(&nb, p, n);
		p += n;
	}
	dt_free(out->s);
	*out = nb;
}

/* The variable's map is assigned somewhere in out ("@g_x = ", "@s_x[tid] = "). */
static bool map_assigned(const char *out, const struct var *v)
{
	char ref[300];
	const char *p = out;
	size_t n = (size_t)snprintf(ref, sizeof(ref), "@%c_%s", v->key[0], v->key + 2);

	while (p && (p = strstr(p, ref))) {
		const char *q = p + n;

		if (*q == '[') {
			int depth = 0;

			for (; *q; q++) {
				depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
				if (!depth)
					break;
			}
			if (*q)
				q++;
		}
		if (q[0] == ' ' && q[1] == '=' && q[2] == ' ')
			return true;
		p += n;
	}
	return false;
}

/*
 * A global or thread-local that this program reads but only clauses
 * without probes assign (-Z) has no map, and bpftrace refuses the program:
 * BEGIN gives it its type and leaves it unset (D reads it as 0 or "").
 * Associative arrays are left as they are.
 */
static void init_unset_vars(struct tr *t, struct dt_buf *out)
{
	struct dt_buf init = {0}, nb = {0};
	const char *at;
	size_t i;

	for (i = 0; out->s && i < t->nvars; i++) {
		const struct var *v = &t->vars[i];
		const char *z = v->type == TY_STR ? "\"\"" : "0";

		if ((v->key[0] != 'g' && v->key[0] != 's') || v->keyed || !map_used(out, v) ||
		    map_assigned(out->s, v))
			continue;
		if (v->key[0] == 'g')
			dt_buf_printf(&init, "\t@g_%s = %s;\n\tclear(@g_%s);\n", v->key + 2, z,
				      v->key + 2);
		else
			dt_buf_printf(&init, "\t@s_%s[tid] = %s;\n\tdelete(@s_%s[tid]);\n",
				      v->key + 2, z, v->key + 2);
	}
	at = init.n ? strstr(out->s, "BEGIN\n{\n") : NULL;
	if (at && (at == out->s || at[-1] == '\n')) {
		size_t head = (size_t)(at - out->s) + strlen("BEGIN\n{\n");

		dt_buf_add(&nb, out->s, head);
		dt_buf_add(&nb, init.s, init.n);
		dt_buf_add(&nb, out->s + head, out->n - head);
		dt_free(out->s);
		*out = nb;
	}
	dt_free(init.s);
}

/* The clauses no probe of this program has, each against an untyped USDT probe. */
static void unmatched_clauses(struct tr *t)
{
	size_t i;

	for (i = 0; i < t->prog->nclauses && !t->failed; i++) {
		struct dt_probe dummy = {.kind = P_USDT, .bt = "usdt:unmatched"};
		struct dt_pclause pc = {.clause = i, .any_pid = true};
		struct dt_buf scratch = {0};
		size_t k, j;
		bool used = false;

		for (k = 0; k < t->probes->n && !used; k++)
			for (j = 0; j < t->probes->v[k].npc; j++)
				used |= t->probes->v[k].pc[j].clause == i;
		if (used)
			continue;
		dummy.name = dummy.func = dummy.mod = dummy.prov = "";
		dummy.pc = &pc;
		dummy.npc = 1;
		emit_probe(t, &dummy, &scratch, false);
		dt_free(scratch.s);
	}
}

int dt_translate(struct dt_program *prog, struct dt_probes *probes, struct dt_tables *tables,
		 struct dt_buf *out, struct usdt_diag *diag)
{
	struct tr t = {.prog = prog, .probes = probes, .t = tables, .diag = diag};
	struct dt_probe end = {0};
	struct dt_probe *endp = NULL;
	size_t i;

	tables->strsize = d_strsize(prog->o);
	tables->wall_offset = usdt_wall_offset_ns();
	/* Pass 1: the types of variables, from their assignments (twice: uses
	 * before the assignment in script order). */
	t.infer = true;
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < probes->n; i++) {
			t.failed = false;
			emit_probe(&t, &probes->v[i], out, false);
		}
		/* variables a -Z clause (or a later file's probes) assigns */
		t.failed = false;
		unmatched_clauses(&t);
	}
	/* what pass 1 recorded is thrown away, but for the functions */
	t.fns = tables->aggs;
	t.nfns = tables->naggs;
	tables->aggs = NULL;
	tables->nacts = 0;
	tables->naggs = 0;
	t.infer = false;
	t.failed = false;
	for (i = 0; i < probes->n && !t.failed; i++) {
		if (probes->v[i].kind == P_END) {
			endp = &probes->v[i];
			continue;
		}
		emit_probe(&t, &probes->v[i], out, false);
	}
	if (!t.failed && (!probes->n || probes->v[0].kind != P_BEGIN)) {
		bool has_begin = false;

		for (i = 0; i < probes->n; i++)
			has_begin |= probes->v[i].kind == P_BEGIN;
		if (!has_begin) {
			struct dt_probe begin = {.kind = P_BEGIN, .bt = "BEGIN", .id = 1};

			begin.name = "BEGIN";
			begin.func = begin.mod = "";
			begin.prov = "dtrace";
			emit_probe(&t, &begin, out, false);
		}
	}
	if (!endp) {
		end.kind = P_END;
		end.bt = "END";
		end.name = "END";
		end.func = end.mod = "";
		end.prov = "dtrace";
		end.id = 2;
		endp = &end;
	}
	if (!t.failed)
		emit_probe(&t, endp, out, true);
	/*
	 * A clause that matched nothing (-Z) is still checked, as DTrace
	 * compiles it: against a USDT probe with untyped arguments.
	 */
	if (!t.failed)
		unmatched_clauses(&t);
	if (!t.failed) {
		drop_undefined_maps(tables, out);
		init_unset_vars(&t, out);
	}
	for (i = 0; i < t.nvars; i++) {
		dt_free(t.vars[i].key);
		dt_free(t.vars[i].copyin_ptr);
		dt_free(t.vars[i].copyin_len);
	}
	dt_free(t.vars);
	for (i = 0; i < t.nps; i++) {
		usdt_notes_free(t.ps[i].notes);
		dt_free(t.ps[i].v);
		dt_free(t.ps[i].path);
	}
	dt_free(t.ps);
	dt_free(t.blk);
	for (i = 0; i < USDT_SDT_MAX_ARGS; i++)
		dt_free(t.arg_int[i]);
	if (t.failed)
		free_tables(tables);
	return t.failed ? -1 : 0;
}

void dt_ctype_size(const char *ty, unsigned *size, bool *is_unsigned)
{
	ctype_size(ty, size, is_unsigned);
}

bool dt_ctype_is_string(const char *ty)
{
	return is_string_type(ty);
}
