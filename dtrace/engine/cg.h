/* SPDX-License-Identifier: MIT */
/*
 * Between the code generator's files (codegen*.c): the generator's state
 * (struct cg), a value (struct cv), and each layer's functions, from the
 * bottom (codegen_value.c) up to codegen.c (README.md here: Layers). It is
 * named for none of them: every layer includes it, and each calls only the
 * layers below its own.
 */
#ifndef DT_CG_H
#define DT_CG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "model.h"

/* Where a string value comes from. */
enum sv_kind {
	SV_CONST, /* text: the string */
	SV_USER,  /* text: the process's address */
	SV_COMM,  /* the task's comm */
	SV_MEM,	  /* text: a pointer to a string in BPF memory (a variable) */
	SV_COND,  /* text: a condition choosing between sub[0] and sub[1] */
	SV_STACK, /* ustack(): size is its frames (codegen_stack.c) */
	SV_BYTES, /* a struct or union: text its address, size its bytes, ptr its type (a key) */
};

/* A value: an integer's C expression, or a string's source. */
struct cv {
	enum dt_type type;
	unsigned size;
	bool is_unsigned;
	bool is_float; /* a declared float or double variable's bits (D has no float arithmetic) */
	enum sv_kind skind;
	char *text; /* the integer's expression; the constant; the user address */
	struct cv *sub;
	char *ptr;   /* a pointer: its pointee's type words ("int", "struct rec", "void") */
	bool marked; /* SV_MEM: a variable's area, null where its marker is (strnull()) */
	bool kernel; /* a pointer, SV_USER's address, known to be the kernel's: read there alone */
	unsigned char symfn; /* SV_STACK: EG_SYM_* (stack(), sym(), usym()...: codegen_stack.c) */
};

/* A D variable: global ('g'), thread-local ('s') or clause-local ('t'); integers only yet. */
struct cg_var {
	char kind;
	char *name;
	unsigned size;
	bool is_unsigned;
	bool typed;
	bool is_str;
	char *cname;	/* its C name: a struct member's "s.m" is s__m */
	unsigned bits;	/* a bit-field's width */
	char *ptr;	/* a pointer: its pointee's type words */
	unsigned bytes; /* a global memory object (scalar array, union): its size, else 0 */
};

/* An associative array: global ('g') or a thread's ('s'). */
struct cg_array {
	char kind;
	char *name;
	size_t nkeys;
	enum dt_type ktype[8];
	unsigned off[8];
	unsigned key_size;
	bool is_str;
	unsigned size;
	bool is_unsigned;
	char *kname[8]; /* a key that is a struct or union: its type */
};

struct btf;

struct cg {
	struct dt_program *prog;
	struct dt_tables *t;
	struct eg_prog *out;
	struct usdt_diag *diag;
	const struct dt_probe *probe;
	long strsize; /* the bytes of a string area: -x strsize + 1, the NUL */
	bool failed;

	const char *tag; /* cg_refuse()'s D_ tag for cg_fail(), else NULL (D_OP_INCOMPAT) */
	/* the arguments the probe's clauses read, and where (for an error) */
	const struct dt_node *arg_used[USDT_SDT_MAX_ARGS];
	unsigned scratch; /* the largest key */
	struct cg_var *vars;
	size_t nvars;
	bool scanning;	 /* cg_vars_scan(): typing, nothing emitted */
	size_t clause;	 /* the clause being written */
	size_t dclause;	 /* DTrace's number of it: one per probe description (dt_clause_N) */
	unsigned nstrfn; /* string function calls: a slot each */
	struct cg_array *arrays;
	size_t narrays;
	/* arrays' keys being built, one inside another's (a[b[k]]), and the most at once */
	unsigned key_depth, key_depth_max;
	bool dmem;	    /* D's memory is used (codegen_ptr.c): its map and functions */
	struct btf *btf;    /* the kernel's, once a builtin needs it (codegen_btf.c) */
	unsigned bvar_maps; /* what codegen_bvar.c's builtins use: 1 a stack, 2 cpuinfo, 4 numa */
	/* the expression layer (codegen_expr.c's cg_expr_value), set by codegen.c: cg_value() */
	void (*expr)(struct cg *g, const struct dt_node *n, struct cv *v);
	int aggs_shared;  /* 0 not counted yet, 1 no, 2 aggregations share maps (codegen_aggargs.c)
			   */
	bool spec_used;	  /* some clause speculates, commits or discards (codegen_spec.c) */
	bool clause_spec; /* the clause being written calls speculate() */
};

/*
 * Values (codegen_value.c, under every other layer): errors, a value's
 * end, a string stored, and cg_value()/cg_int(): a sub-expression lowered
 * by the expression layer through g->expr (so no layer calls up to it).
 */
void cg_err(struct cg *g, const struct dt_node *n, const char *what);
/* A clause writes a record: a data-recording action, or no statement (codegen_acts.c). */
bool cg_clause_records(const struct dt_clause *c);
/* system() and the other destructive actions: allowed (-w), else refused as DTrace refuses */
bool cg_destructive(struct cg *g, const struct dt_node *n);
/* A subroutine's call as a statement: its value computed and dropped */
bool cg_call_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);
/* Any other expression as a statement (not a store): computed and dropped */
bool cg_expr_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);
/* caller, stackdepth, curthread, curcpu, errno, ipl...: the helpers' (codegen_bvar.c) */
bool cg_bvar(struct cg *g, const struct dt_node *n, struct cv *v);
void cg_bvar_maps(const struct cg *g, struct dt_buf *o);
/* uregs[R_*]: a register of the thread's user mode (false: n is not uregs[]) */
bool cg_uregs(struct cg *g, const struct dt_node *n, struct cv *v);
/* A call of a function the engine has no code for: its error. */
void cg_unknown_call(struct cg *g, const struct dt_node *n, const char *what);
void cg_fail(struct cg *g, const struct dt_node *n, const char *what);
/* An error of the program that DTrace refuses at compile time, with its tag. */
void cg_refuse(struct cg *g, const struct dt_node *n, const char *tag, const char *what);
/* A name no clause assigns and no builtin has: D_IDENT_UNDEF */
void cg_refuse_undef(struct cg *g, const struct dt_node *n);
void cg_value(struct cg *g, const struct dt_node *n, struct cv *v);
void cg_int(struct cg *g, const struct dt_node *n, struct cv *v);
/* A value where a string is wanted: a char pointer's is the string it points at. */
void cg_strval(struct cg *g, const struct dt_node *n, struct cv *v);
void cv_free(struct cv *v);

/* ---- D's types and C's arithmetic on them (codegen_types.c) ---- */
struct cg_type {
	unsigned size, align;
	bool is_unsigned, is_str, is_void, is_ptr, is_float, is_aggr;
	unsigned bits; /* a bit-field member's width */
};
/* A type by its words (typedefs, structs and unions the program's); -1 unknown. */
int cg_type(struct cg *g, const char *ty, struct cg_type *t);
/* A member of struct or union type ty: 0; -1 unknown type; -2 not a struct; -3 no member. */
int cg_type_member(struct cg *g, const char *ty, const char *member, struct cg_type *t,
		   unsigned *offset);
const char *cg_decl_type(const struct cg *g, char kind, const char *name);
/* A struct with bit-field members (its variables stay members of their own). */
bool cg_type_has_bits(struct cg *g, const char *ty);
/* A pointer type's pointee ("int *" -> "int", typedefs undone), else NULL. */
char *cg_type_pointee(struct cg *g, const char *ty);
/* The declaration of struct, union or enum ty (typedefs undone; the kernel's too), else NULL. */
const struct dt_decl *cg_type_decl(struct cg *g, const char *ty);
/* The type words of member `member` of struct or union ty, else NULL. */
char *cg_type_member_words(struct cg *g, const char *ty, const char *member);
unsigned cg_decl_bits(const struct cg *g, char kind, const char *name);
/* An integer value cast to (size, signedness), as DTrace casts. */
void cg_conv(struct cv *v, unsigned size, bool is_unsigned);
/* An integer value narrowed to its type's width (where it is stored). */
void cg_narrow(struct cv *v);
/* a op b on integers as C does it (its conversions, its widths); v gets the result. */
void cg_arith(const char *op, struct cv *a, struct cv *b, struct cv *v);
void cg_unary(const char *op, struct cv *a, struct cv *v);
bool cg_const(struct cg *g, const struct dt_node *n, int64_t *val);
/* A string stored into a variable's area: DTrace's NULL kept by a marker byte (strnull()). */
void cg_store_strvar(struct cg *g, const struct cv *v, const char *dst, struct dt_buf *o,
		     const char *ind);
/* A string recorded: a variable's NULL is a fault (DTrace's: bad address 0). */
void cg_store_rec_str(struct cg *g, const struct cv *v, const char *dst, struct dt_buf *o,
		      const char *ind);
/* The same, the fault's address `addr` (NULL's s[i]: i) */
void cg_store_str_fault(struct cg *g, const struct cv *v, const char *dst, const char *addr,
			struct dt_buf *o, const char *ind);
/* D's NULL where a string is wanted (a string variable given NULL or 0). */
void cg_null_str(struct cv *v);
/* n is NULL or the constant 0 (what a string variable takes as DTrace's NULL) */
bool cg_is_null(const struct dt_node *n);
void cg_store_str(struct cg *g, const struct cv *v, const char *dst, bool zeroed, struct dt_buf *o,
		  const char *ind);
/* codegen_expr.c: a D expression as C (the g->expr of every code generation). */
void cg_expr_value(struct cg *g, const struct dt_node *n, struct cv *v);
void cg_use_arg(struct cg *g, const struct dt_node *n, unsigned k);

/* String functions (codegen_strfn.c): true when n is one (its value in v, or refused). */
bool cg_strfn(struct cg *g, const struct dt_node *n, struct cv *v);
/* s[i] of a string variable or builtin: its character (codegen_strfn.c) */
bool cg_str_index(struct cg *g, const struct dt_node *n, struct cv *v);
/* codegen_btf.c: a kernel struct member's byte offset ("se.sum_exec_runtime"): 0 or -1. */
int cg_btf_offset(struct cg *g, const char *strct, const char *path, unsigned *off);
void cg_btf_free(struct cg *g);
/* codegen_procfs.c: a member of DTrace's psinfo_t/lwpsinfo_t translators (N_KTASK). */
void cg_ktask(struct cg *g, const struct dt_node *n, struct cv *v);
/*
 * codegen_vars.c: what can be checked in a clause no probe matched (-Z),
 * for which no code is written: argN past arg11. 0, or -1 (reported).
 */
int cg_check_unmatched(struct cg *g, struct dt_probes *ps);
/* codegen_progs.c: BEGIN, END, tick-N, profile-N and syscall:: programs. 0 or -1. */
int cg_other_program(struct cg *g, size_t pi, const char *body, struct dt_buf *o);
/* codegen_stack.c: ustack([n]) where D allows it (false: n is not ustack()). */
bool cg_ustack(struct cg *g, const struct dt_node *n, struct cv *v);
/* ustack, jstack, stack, sym, func, mod, usym, ufunc, umod, uaddr */
bool cg_is_stack_call(const struct dt_node *n);
/* The bytes a stack value takes in a record or a key. */
unsigned cg_stack_bytes(const struct cv *v);
void cg_strfn_maps(const struct cg *g, struct dt_buf *o);
void cg_usdt_probeprov(struct cg *g, const struct dt_node *n, struct cv *v);
/* codegen_strfn2.c: strstr index rindex substr toupper tolower lltostr, in slot j. */
bool cg_is_strfn2(const char *f);
bool cg_strfn2(struct cg *g, const struct dt_node *n, struct cv *v, unsigned j);
void cg_strfn2_functions(struct dt_buf *o);
/* codegen_netfn.c: htons() and the other swaps, getmajor/getminor, inet_ntoa/ntoa6/ntop, link_ntop
 */
bool cg_is_netfn(const char *f);
bool cg_netfn_has_slot(const char *f);
void cg_netfn(struct cg *g, const struct dt_node *n, struct cv *v, unsigned j);
void cg_netfn_functions(struct dt_buf *o);
/* codegen_cleanpath.c: cleanpath()'s dcleanpath(t, r) */
void cg_cleanpath_functions(struct dt_buf *o);

/* Pointers, D's memory (codegen_ptr.c): its scratch bytes a CPU. */
#define CG_DMEM_SCRATCH 4096u
#define CG_DMEM_MAX 16000u /* a per-CPU map's value holds 32 KiB: twice this and more */
/* codegen_vars.c: alloca()'s scratch, -x scratchsize (8-byte multiple) or the default */
unsigned cg_dmem_size(const struct cg *g);
/* A call (alloca, copyin) asking for a constant `size` over the scratch: refused, true
 * (D_ALLOCA_SIZE). */
bool cg_dmem_refuse_size(struct cg *g, const struct dt_node *n, const struct dt_node *size);
bool cg_ptr_value(struct cg *g, const struct dt_node *n, struct cv *v);
/* n is a place in memory (`*p`, `p->m`, `p[i]`, `a[i]` of a scalar array, a union's member). */
bool cg_ptr_is_place(struct cg *g, const struct dt_node *n);
/* n as a place in memory: its address and type (false: n is none, or reported). */
bool cg_ptr_lvalue(struct cg *g, const struct dt_node *n, struct cv *addr, char **ty);
/* The type of n when it is a place in memory (`*p`, `p->m`, `a[i]`), else NULL. */
char *cg_ptr_type(struct cg *g, const struct dt_node *n);
bool cg_ptr_arith(struct cg *g, const struct dt_node *n, struct cv *a, struct cv *b, struct cv *v);
bool cg_ptr_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);
/* codegen_dmem.c: D's memory's map and functions; tracemem()'s fields (its action begun). */
void cg_dmem_maps(const struct cg *g, struct dt_buf *o);
void cg_tracemem(struct cg *g, const struct dt_node *n, struct eg_rec *r, struct dt_buf *o);
/* codegen_print.c: print(p): *p's bytes and p, its type's layout in the action's fmt */
void cg_print(struct cg *g, const struct dt_node *n, size_t act, struct eg_rec *r,
	      struct dt_buf *o);
/* trace() of a struct or union (in memory): its bytes, as tracemem() prints them. */
bool cg_trace_object(struct cg *g, const struct dt_node *n);

/* Associative arrays (codegen_arrays.c). */
void cg_array_scan(struct cg *g, const struct dt_node *n);
void cg_arrays_maps(const struct cg *g, struct dt_buf *o);
bool cg_array_read(struct cg *g, const struct dt_node *n, struct cv *v);
bool cg_array_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);

/* Variables (codegen_vars.c). */
const struct cg_var *cg_var_find(struct cg *g, char kind, const char *name);
void cg_vars_scan(struct cg *g, struct dt_probes *ps);
void cg_vars_maps(const struct cg *g, struct dt_buf *o);
unsigned cg_vars_size(const struct cg *g);
void cg_vars_body_top(const struct cg *g, struct dt_buf *o);
/* n is a variable (self->x, this->x, a global): its value in v. */
bool cg_var_read(struct cg *g, const struct dt_node *n, struct cv *v);
/* An assignment or ++/-- statement to a variable: true when n is one (emitted or refused). */
bool cg_var_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);
/* `this->s[i] = '\0'` on a string: false when n is not that. */
bool cg_var_byte_stmt(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);

/*
 * USDT programs (codegen_args.c): group gi's program, its clauses in
 * `body`, each site's entry read at the link's cookie; the sites' map and
 * functions, once a file; a USDT probe's builtins read from its site
 * (probeprov, probemod, probefunc, probename, id): false when n is none.
 */
long cg_usdt_group(struct cg *g, bool *added);
const struct dt_probe *cg_spare_probe(struct cg *g, size_t clause);
void cg_group_program(struct cg *g, size_t gi, const char *body, struct dt_buf *o);
void cg_sites_prelude(struct dt_buf *o);
bool cg_site_builtin(struct cg *g, const struct dt_node *n, struct cv *v);
/* codegen_progs.c: a map a firing adds elements to: its map_flags (allocated beforehand in a
 * program with a tick-/profile- probe, NMI) and its size (n, fewer for elements over 64 bytes) */
int cg_map_flags(const struct cg *g);
unsigned cg_map_entries(const struct cg *g, unsigned n, unsigned elem);
/* codegen_aggargs.c: the aggregations' maps */
void cg_agg_maps(const struct cg *g, struct dt_buf *o);
/* The aggregation lhs names, made at its first use with this shape: its index, or -1 */
long cg_agg_get(struct cg *g, const struct dt_node *lhs, enum dt_afn fn, struct cv *keys,
		const int64_t lq[4]);
struct dt_recipe *cg_field_recipe(size_t field);
struct dt_recipe *cg_stack_recipe(size_t field, const struct cv *v);
/* Too many aggregations for a map each (a BPF program uses 64 maps at most): they share */
bool cg_aggs_shared(struct cg *g);
/* codegen_aggargs.c: l(l)quantize()'s constant parameters, checked (false: reported) */
bool cg_llq_params(struct cg *g, const struct dt_node *fn, int64_t llq[4]);
size_t cg_llq_nbuckets(const int64_t llq[4]);
void cg_llq_bucket(struct dt_buf *o, const int64_t llq[4]);
bool cg_lq_params(struct cg *g, const struct dt_node *fn, int64_t lq[3]);
/* codegen_fault.c: run-time errors */
void cg_fault_functions(struct dt_buf *o);
/* chill(ns): a bounded busy wait, DTrace's limits (a fault past them) */
void cg_chill(struct cg *g, const struct dt_node *n, struct dt_buf *o, const char *ind);
/* A new fault site of the clause being written (0 while scanning): FAULT()'s first argument. */
size_t cg_fault_site(struct cg *g);
int cg_fault_sizes(struct cg *g, const struct dt_probes *ps);
bool cg_fault_const(const char *name, long long *value);
void cg_fault_read_str(struct cg *g, const char *dst, const char *addr, bool kernel,
		       struct dt_buf *o, const char *ind);
/* A new fault site of the clause being written: its number (from 1). */
size_t cg_fault_site(struct cg *g);
void cg_divide(struct cg *g, struct cv *v, const char *op, bool un, const char *a, const char *b);
/* A new fault site of the clause being written: its number, from 1. */
size_t cg_fault_site(struct cg *g);
/* codegen_spec.c: speculation(), speculate(), commit(), discard() */
bool cg_spec_call(struct cg *g, const struct dt_node *n, struct cv *v);
bool cg_spec_stmt(struct cg *g, const struct dt_node *n, bool has_rec, size_t rec, struct dt_buf *o,
		  const char *ind);
void cg_spec_clause_head(struct cg *g, struct dt_buf *o, size_t recno, struct eg_rec *rec);
void cg_spec_clause_end(struct cg *g, struct dt_buf *o, bool recs);
int cg_spec_functions(struct cg *g, struct dt_buf *o);
/* codegen_buf.c: a record's size as DTrace counts it; ring and fill's reservations */
void cg_buf_size(struct cg *g, struct eg_rec *rec);
void cg_buf_phantom(struct cg *g, struct dt_buf *o, const char *cond0, size_t recno);
void cg_buf_functions(struct cg *g, struct dt_buf *o);

#endif /* DT_CG_H */
