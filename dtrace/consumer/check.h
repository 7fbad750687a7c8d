/* SPDX-License-Identifier: MIT */
/*
 * D's compile-time checks (check.c: calls against D's prototypes;
 * check_fmt.c: printf()/printa() formats and aggregations), shared by
 * their two files only.
 */
#ifndef DT_CHECK_H
#define DT_CHECK_H

#include <stdint.h>

#include "d.h"

/* What the checks know of an expression's type. */
enum dt_ctype { CT_UNKNOWN, CT_INT, CT_STR, CT_VOID, CT_AGG, CT_PTR, CT_STACK };

struct chk {
	struct usdt_diag *diag;
	bool failed;
	bool in_agg;	  /* the value of an aggregation assignment */
	bool in_key;	  /* a key of an array or an aggregation */
	bool no_args;	  /* the clause's probes have no args[] (BEGIN, END, ERROR) */
	bool in_fmt_args; /* a printf()'s arguments, cooked before its format is read */
	const struct dt_program *prog;
	const char **defined; /* globals the program assigns somewhere */
	size_t ndefined;
	struct vty {
		char kind; /* 'g' global, 's' self->, 't' this->, 'a' array, 'S' self-> array */
		const char *name;
		enum dt_ctype type;
	} * vars;
	size_t nvars;
	/* aggregations: the first assignment's function, keys and parameters */
	struct aggty {
		const char *name;
		const char *fn;
		const struct dt_node *call;
		size_t nkeys;
		enum dt_ctype keys[8];
	} * aggs;
	size_t naggs;
	/* associative arrays: their first use's keys */
	struct arrty {
		char kind; /* 'a' global, 'S' self-> */
		const char *name;
		size_t nkeys;
		enum dt_ctype keys[8];
	} * arrs;
	size_t narrs;
	/* variables that hold a pointer: alloca()'s or another's (check_alloca.c) */
	struct allocavar {
		enum dt_nkind kind; /* N_IDENT, N_SELF, N_THIS */
		const char *name;
		int taint;
	} * allocas;
	size_t nallocas;
};

/*
 * D's functions. args: one letter per argument: i an integer, s a string,
 * p an address (an integer or a pointer), a an aggregation, v any value,
 * c a constant integer; the names are DTrace's, for the messages.
 */
struct proto {
	const char *name;
	char kind;    /* 'a' action, 's' subroutine, 'g' aggregating function */
	int min, max; /* max -1: any number */
	const char *args;
	const char *names[6];
	enum dt_ctype ret;
};

/* check_type.c: the bottom */
const struct proto *dt_check_proto(const char *name);
bool dt_check_in_list(const char *const *l, const char *name);
void dt_check_note_assign(struct chk *k, const struct dt_node *lhs, const struct dt_node *rhs);
/* A global's name read (D_IDENT_UNDEF unless the program assigns or declares it), or written. */
void dt_check_ident_read(struct chk *k, const struct dt_node *n, const char *tag);
/* name is a builtin or a global assigned or declared so far */
bool dt_check_ident_defined(const struct chk *k, const char *name);
void dt_check_ident_written(struct chk *k, const struct dt_node *n);
enum dt_ctype dt_check_type(struct chk *k, const struct dt_node *n);
const char *dt_ctype_name(enum dt_ctype t);
void dt_check_proto_fail(struct chk *k, const struct dt_node *at, const char *tag, const char *fn,
			 size_t argno, const char *proto, const char *arg);
void dt_check_conv_fail(struct chk *k, const struct dt_node *at, const char *tag, const char *fn,
			size_t argno, int conv, const char *conv_text, const char *proto);
void dt_check_fail(struct chk *k, const struct dt_node *n, const char *tag, const char *fmt, ...)
    USDT_PRINTF(4, 5);
/* check_ops.c */
void dt_check_ops(struct chk *k, const struct dt_node *n);
void dt_check_index(struct chk *k, const struct dt_node *n);
bool dt_check_known(const char *name);
/* check_spec.c: speculate(), commit() and what may come before and after them */
void dt_check_spec_order(struct chk *k, const struct dt_clause *c);
/* check_fmt.c */
bool dt_check_agg_known(struct chk *k, const char *name);
void dt_check_printf(struct chk *k, const struct dt_node *call);
void dt_check_printa(struct chk *k, const struct dt_node *call);
void dt_check_aggfn(struct chk *k, const struct dt_node *call);
/* An aggregation's assignment: its keys and function (before its arguments' checks)... */
bool dt_check_aggfn_of(struct chk *k, const struct dt_node *assign);
/* ... and, after them, as the aggregation's earlier uses. */
void dt_check_aggassign(struct chk *k, const struct dt_node *assign);

/* check_alloca.c: an assignment of alloca()'s pointers and others' to one variable. */
void dt_check_alloca_assign(struct chk *k, const struct dt_node *assign);
/* ... and arithmetic on alloca()'s void * (D_OP_VFPTR). */
void dt_check_alloca_arith(struct chk *k, const struct dt_node *n);

#endif /* DT_CHECK_H */
