/* SPDX-License-Identifier: MIT */
/*
 * The D consumer's internals (README.md in this directory is the theory):
 * the syntax tree the parser builds (parse.c), the probes it matches
 * (match.c), and the tables the engine's code generator hands to the
 * renderer (render.c): which record carries which action, which
 * aggregation is which.
 */
#ifndef DT_D_H
#define DT_D_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "consumer.h"
#include "diag.h"

/* ---- growable text ---- */
struct dt_buf {
	char *s;
	size_t n, cap;
};
void dt_buf_add(struct dt_buf *b, const char *s, size_t n);
void dt_buf_printf(struct dt_buf *b, const char *fmt, ...) USDT_PRINTF(2, 3);
void *dt_xmalloc(size_t n);
void *dt_xrealloc(void *p, size_t n);
/* dt_xrealloc() to at least n bytes, doubling: pushing N items costs O(N). */
void *dt_xgrow(void *p, size_t n);
char *dt_xstrdup(const char *s);
/* Frees what dt_x*() allocated; dt_arena_release() frees all of it at once. */
void dt_free(void *p);
void dt_arena_release(void);
#define DT_PUSH(arr, n, v)                                                                         \
	do {                                                                                       \
		(arr) = dt_xgrow((arr), ((n) + 1) * sizeof(*(arr)));                               \
		(arr)[(n)++] = (v);                                                                \
	} while (0)

/* ---- where a construct is ---- */
struct dt_src {
	const char *file; /* "-n" descriptions: "description N" */
	const char *text; /* the whole text (for the caret line) */
	const char *what; /* DTrace's phrase under -xerrtags: "failed to compile script x.d" */
	bool library;	  /* the D library (dlib.c): its declarations yield to the
			     program's */
};
struct dt_pos {
	const struct dt_src *src;
	unsigned line, col;
	const char *line_start;
};

/* ---- types ---- */
enum dt_type { TY_INT, TY_STR, TY_AGG, TY_VOID };

/* ---- expressions ---- */
enum dt_nkind {
	N_INT,
	N_STR,
	N_IDENT,  /* a builtin or a global */
	N_SELF,	  /* self->name */
	N_THIS,	  /* this->name */
	N_INDEX,  /* name[args] (global), self->name[args] (a: N_SELF) */
	N_AGG,	  /* @name[args] */
	N_CALL,	  /* name(args) */
	N_ARGS,	  /* args[N] */
	N_UNARY,  /* op a */
	N_BINARY, /* a op b */
	N_TERNARY,
	N_ASSIGN, /* a op= b (op '=' for plain) */
	N_INCDEC, /* ++a, a++ (op "++"/"--", ival 1 post) */
	N_CAST,	  /* (type) a: name is the type */
	N_MEMBER, /* a->name or a.name: refused */
	N_SIZEOF, /* sizeof(type) (name: the type) or sizeof expr (a) */
	N_XLATE,  /* xlate <name> (a): lowered by the parser, never reaches the engine */
	N_KTASK,  /* a member of DTrace's own translators (dlib.c): name, of task a; ival builtin */
};

struct dt_node {
	enum dt_nkind kind;
	struct dt_pos pos;
	char op[4];
	char *name;
	int64_t ival;
	char *str;
	size_t slen;
	struct dt_node *a, *b, *c;
	struct dt_node **args;
	size_t nargs;
	/* typing */
	enum dt_type type;
	unsigned size; /* of an integer: 1, 2, 4 or 8 */
	bool is_unsigned;
};

/* A statement: an expression, or if/else. */
struct dt_stmt {
	struct dt_node *e;     /* the expression, or the if's condition */
	struct dt_stmt **then; /* if */
	size_t nthen;
	struct dt_stmt **els;
	size_t nels;
	bool is_if;
};

struct dt_pdesc {
	struct dt_pos pos;
	char *text; /* as written, macros expanded */
	char *field[4];
};

struct dt_clause {
	struct dt_pdesc *descs;
	size_t ndescs;
	struct dt_node *pred;
	struct dt_stmt **body;
	size_t nbody;
	struct dt_pos pos;
	size_t source;	/* which -n/-s it came from */
	bool only_aggs; /* no record prefix: only aggregating statements */
};

/*
 * A declaration the engine types by: a variable's declared type (kind 'g'
 * global, 's' self->, 't' this->, 'a' a global associative array: its
 * value's type), a typedef ('T': name is the new name),
 * a struct or union ('S', 'U': name is "struct tag", its members kind 'm'
 * with their bit-field widths, 0 for none), an enum ('E': name "enum tag",
 * its members the enumerators, each's type its value in decimal, for
 * print()). type: the type's words joined
 * by one space ("unsigned short", "struct rec", "int *").
 */
struct dt_decl {
	char kind;
	char *name;
	char *type;
	struct dt_pos pos;
	unsigned bits;
	struct dt_decl *members;
	size_t nmembers;
	unsigned ksize; /* a kernel struct or union (kbtf.c): its bytes; its members at boff */
	unsigned boff;	/* a kernel type's member: its bit offset */
};

struct dt_program {
	struct dt_clause **clauses;
	size_t nclauses;
	struct dt_decl *decls;
	size_t ndecls;
	struct dt_consumer_opts *o; /* options, pragmas update them */
	/* every name top-level declarations wrote (parse.c), for check.c's D_IDENT_UNDEF */
	char **declared;
	size_t ndeclared;
};

/*
 * Parses one -n description or -s script into prog; errors reported through
 * diag with file:line:col. Returns 0 or -1.
 */
int dt_parse(struct dt_program *prog, const struct dt_src *src, size_t source_index, bool is_script,
	     struct usdt_diag *diag);
/*
 * A compile error at pos, of the kind `tag`: DTrace's name for it ("D_SYNTAX",
 * "D_PROTO_LEN", ...; errtags.h), or usdtkit's own "D_UNSUPPORTED" for what
 * is valid D this consumer does not do. Under -xerrtags it is printed in
 * DTrace's form, "dtrace: failed to compile script x.d: [D_SYNTAX] line 3: ...".
 */
void dt_error_at(struct usdt_diag *diag, const struct dt_pos *pos, const char *tag, const char *fmt,
		 ...) USDT_PRINTF(4, 5);
/*
 * D's compile-time checks of a parsed program (check.c): what DTrace refuses
 * is reported with its tag. Returns 0 or -1.
 */
int dt_check(struct dt_program *prog, struct usdt_diag *diag);
/* A constant integer expression's value: literals, unary and binary + - * (check_type.c). */
bool dt_check_const(const struct dt_node *n, int64_t *v);
/*
 * True when a clause holds only aggregating statements (@x = f(...), no
 * if): DTrace prints no record for its firing, whichever engine runs it.
 */
bool dt_clause_only_aggs(const struct dt_clause *c);

/* macros.c: $pid, $ppid, $uid... at s (past the '$'): the value, the name's length. */
bool dt_macro_process(const char *s, char *buf, size_t n, size_t *len);

/* ---- probes a description matched (match.c) ---- */
enum dt_pkind { P_BEGIN, P_END, P_TICK, P_PROFILE, P_USDT, P_TRACEPOINT, P_ERROR };

struct dt_probe {
	enum dt_pkind kind;
	char *attach;	   /* where it attaches, its kind and place: "usdt:/path:prov:name",
			      "interval:s:1" */
	char *func;	   /* probefunc */
	char *name;	   /* probename */
	char *mod;	   /* probemod */
	char *prov;	   /* probeprov without pid (USDT: the pid is added at run time) */
	unsigned id;	   /* DTrace's probe ID column */
	uint64_t dev, ino; /* USDT: the file */
	size_t nfuncs;	   /* USDT: the functions its sites are in, in that file */
	unsigned nargs;
	unsigned ntypes;
	char **types;	  /* args[N] declared types */
	char **tp_fields; /* tracepoint: argN's field */
	size_t ntp_fields;
	/* clauses matching it, in script order, each with its processes */
	struct dt_pclause *pc;
	size_t npc;
};

struct dt_pclause {
	size_t clause;
	size_t desc;  /* which of the clause's descriptions: each one an enabling */
	bool any_pid; /* every process mapping the file, present and future */
	int *pids;
	size_t npids;
};

struct dt_probes {
	struct dt_probe *v;
	size_t n;
	size_t *matched; /* per source (-n/-s), for the notices */
	size_t nsources;
	unsigned next_id;
};

int dt_match(struct dt_program *prog, struct dt_probes *probes, struct usdt_diag *diag);

/* ---- retained enablings: files that appear after the start (retain.c) ---- */
struct dt_file_id {
	uint64_t dev, ino; /* makedev(major, minor), as /proc/PID/maps says */
};
/* The file was in a listing already (its probes are traced, or matched nothing). */
bool dt_match_known(uint64_t dev, uint64_t ino);
/* A description match_desc() matches against USDT probes. */
bool dt_match_is_usdt(const struct dt_pdesc *d);
/*
 * The probes of files no listing showed before (the daemon's processes, or
 * with npids the processes `pids` read directly), matched against prog's
 * USDT descriptions into the empty `probes`. Returns how many, or -1.
 */
long dt_match_new(struct dt_program *prog, struct dt_probes *probes, const int *pids, size_t npids,
		  struct usdt_diag *diag);
/* A file the daemon announced (NOTICE) and its registrant. */
struct dt_noticed {
	int pid;
	uint64_t dev, ino; /* makedev(major, minor) */
};
/*
 * The same for those files alone, each read through its registrant (one
 * mapping opened, its notes read once): how many probes, or -1 (a process
 * that no longer maps its file: the caller lists the daemon instead).
 */
long dt_match_files(struct dt_program *prog, struct dt_probes *probes, const struct dt_noticed *f,
		    size_t n, struct usdt_diag *diag);

struct dt_retain;
struct dt_tables;

/* NULL when nothing can appear later: no USDT description. */
struct dt_retain *dt_retain_start(struct dt_program *prog);
/*
 * Called every few milliseconds, and whenever dt_retain_fd() is readable:
 * the matched probes of new files into the empty *ps, the batch's number
 * (1, 2, ...) returned (0: none); the caller attaches them, then calls
 * dt_retain_started() with it.
 */
int dt_retain_poll_probes(struct dt_retain *rt, struct dt_probes *ps);
/* The daemon's WATCH connection (its NOTICEs wake the caller), or -1. */
int dt_retain_fd(const struct dt_retain *rt);
/*
 * Batch `batch` is attached, or never will be (it failed): the
 * registrations it held may go on.
 */
void dt_retain_started(struct dt_retain *rt, unsigned batch);
/* Tracing ends: the daemon holds nothing more for us. */
void dt_retain_unwatch(struct dt_retain *rt);

/* ---- what the renderer needs (the engine's code generator fills, render.c reads) ---- */

/* How a printed value is made from the record's fields. */
enum dt_rop {
	R_FIELD,  /* field `field`, as the dt_value types it */
	R_CONST,  /* the string str */
	R_USTACK, /* field `field`: a user stack's frames (dtrace/engine/ustack.c) */
	R_SYM,	  /* field `field`: sym(), usym(), uaddr()...'s text, printed "  %-50s" */
};
struct dt_recipe {
	enum dt_rop op;
	size_t field;
	char *str;
};

struct dt_value {
	struct dt_recipe *r;
	enum dt_type type;
	unsigned size;
	bool is_unsigned;
	bool is_float; /* float or double: the bits (printf's %e %f %g) */
};

enum dt_akind {
	A_CLAUSE, /* a record's start: cpu, probe */
	A_PRINTF,
	A_TRACE,
	A_PRINTA,     /* before print(@a) */
	A_PRINTA_END, /* after it */
	A_EXIT,
	A_NORMALIZE,
	A_DENORMALIZE,
	A_TRUNC,
	A_DUMP,	      /* END: the exit dump follows */
	A_CLAUSE_END, /* the record's end (not quiet) */
	A_STARTED,    /* first in BEGIN: every probe is attached */
	A_USTACK,     /* ustack(): its frames as text (dtrace/engine/ustack.c), DTrace's */
	A_CLEAR,      /* clear(): the engine zeroes the map; nothing printed */
	A_TRACEMEM,   /* tracemem(): the bytes as hex digits, how many to print */
	A_SYSTEM,     /* system(): printf's format and arguments, the command run by the reader */
	A_FREOPEN,    /* freopen(): printf's format and arguments, the file output goes to */
	A_SETOPT,     /* setopt(): fmt is "name" or "name=value" */
	A_PRINT,      /* print(): the pointer, the bytes; fmt the type's layout (codegen_print.c) */
};

struct dt_action {
	enum dt_akind kind;
	char *fmt; /* printf, printa (NULL: default format) */
	struct dt_value *args;
	size_t nargs;
	size_t agg;
	size_t *more; /* printa(fmt, @a, @b, ...): the aggregations after agg, joined by key */
	size_t nmore;
	const struct dt_probe *probe; /* A_CLAUSE */
	size_t clause;
};

enum dt_afn {
	F_COUNT,
	F_SUM,
	F_AVG,
	F_MIN,
	F_MAX,
	F_QUANTIZE,
	F_LQUANTIZE,
	F_LLQUANTIZE,
	F_STDDEV
};

struct dt_agg {
	char *name; /* as in D, without '@' ("" anonymous) */
	enum dt_afn fn;
	bool fn_set;
	int64_t lq[3];	       /* lquantize base, limit, step */
	int64_t llq[4];	       /* llquantize factor, low, high, nsteps */
	struct dt_value *keys; /* the key's parts, recipes over the entry's key fields */
	size_t nkeys;
	bool keyed;
	/* renderer state */
	bool printed;
	int64_t normal;
	int64_t trunc;
	bool has_trunc;
};

struct dt_tables {
	struct dt_action *acts;
	size_t nacts;
	struct dt_agg *aggs;
	size_t naggs;
	int64_t wall_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC at translation */
	long strsize;	     /* DTrace's: substr() cuts at it */
};

/* llquantize.c: DTrace's symmetric layout: P positive buckets' bounds lb[1..P], 2P + 1 in all */
size_t dt_llq_layout(const int64_t p[4], uint64_t *lb, bool *ghost, size_t max);

/* ---- rendering (render.c) ---- */
struct dt_render {
	const struct dt_consumer_opts *o; /* &run_opts */
	struct dt_consumer_opts run_opts; /* the options, as setopt() changes them */
	struct dt_tables *t;
	FILE *out;
	bool header_done;
	bool in_record; /* a record's prefix printed, its "\n" not yet */
	bool have_exit;
	int exit_status;
	bool dumping;	 /* A_DUMP seen: the exit dump */
	long printa_agg; /* -1, or the aggregation a printa is printing */
	size_t printa_act;
	struct dt_entry *ents; /* entries gathered for the printa */
	struct dt_joined {     /* a printa of several: the entries of those before */
		size_t agg;
		struct dt_entry *ents;
		size_t nents;
	} * joined;
	size_t njoined;
	size_t nents;
};

void dt_render_init(struct dt_render *r, const struct dt_consumer_opts *o, struct dt_tables *t,
		    FILE *out);
/* The run's end: a record's newline, if one is open. */
void dt_render_finish(struct dt_render *r);

/*
 * The engine's way in (dtrace/engine/records.c): one action with its
 * fields as text; and, between an A_PRINTA and its A_PRINTA_END, one
 * aggregation entry (key fields as text, the value merged across CPUs, a
 * quantize()'s buckets; a stddev()'s v is its sum and its two "buckets"
 * its count and sum of squares).
 */
void dt_render_record(struct dt_render *r, size_t act, char **f, size_t nf);
/* printa() of several aggregations: the entries that follow are aggregation agg's */
void dt_render_join_next(struct dt_render *r, size_t agg);
/* A histogram's rank among its aggregation's entries (DTrace's sort): the sum, then *zero */
long double dt_hist_rank(const struct dt_agg *a, const int64_t *buckets, size_t nb, int64_t *zero);
void dt_render_agg_entry(struct dt_render *r, char **keys, size_t nkeys, int64_t v,
			 const int64_t *buckets, size_t nbuckets);

/* ---- below the engine and the driver ---- */
/* C type names as D sizes them (ctype.c). */
void dt_ctype_size(const char *ty, unsigned *size, bool *is_unsigned);
bool dt_ctype_is_string(const char *ty);
/* "dtrace: description '...' matched N probes" (procs.c). */
void dt_notices(const struct dt_consumer_opts *o, const struct dt_probes *ps);
/* The process is gone (child: ours, reaped), said as DTrace says it (procs.c). */
bool dt_pid_gone(int pid, bool child, bool quiet);
/*
 * The engine: runs the matched program (dtrace/engine/engine.c) and returns
 * the exit status, the -c process let go or destroyed. What it cannot
 * compile is one error at the construct (file:line:col, its tag).
 */
int dt_engine_run(struct dt_consumer_opts *o, struct dt_program *prog, struct dt_probes *ps,
		  int created, struct usdt_diag *diag);

#endif /* DT_D_H */
