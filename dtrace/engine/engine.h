/* SPDX-License-Identifier: MIT */
/*
 * The BPF engine's layers (README.md in this directory is the theory):
 * codegen (the D program to BPF C and the layouts of what it writes),
 * loader (clang, libbpf: load, attach, BEGIN/END), records (the ring
 * buffer's records and the aggregation maps, handed to the renderer) and
 * the driver (engine.c) on top. Each layer calls only the ones below it.
 */
#ifndef DT_ENGINE_H
#define DT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "d.h"
#include "model.h"

/* Strings past this are cut (-x strsize); DTrace's default is 256. */
#define EG_STRSIZE_MAX 1024
#define EG_STRSIZE_DEFAULT 256
#define EG_NQ 128 /* quantize buckets, as render.c draws them (index 64: zero) */

/* One value in a record or an aggregation key: where it is and what it is. */
struct eg_field {
	enum dt_type type; /* TY_INT (8 bytes, or 4: the record's CPU) or TY_STR */
	unsigned off, size;
	bool is_stack;	   /* TY_STR written as ustack()'s {pid, bytes, addresses} */
	bool is_bytes;	   /* TY_STR of raw bytes (tracemem()): read as their hex digits */
	unsigned nat;	   /* an integer's size in its D type (DTrace records that many bytes) */
	unsigned char sym; /* EG_SYM_SYM...: {pid, 8, address} read as sym()'s text (ksyms.c) */
};
/* A stack-like value's kind: stack() (the kernel's), sym() ... uaddr() of one address. */
enum {
	EG_SYM_NONE,
	EG_SYM_KSTACK,
	EG_SYM_SYM,
	EG_SYM_FUNC,
	EG_SYM_MOD,
	EG_SYM_USYM,
	EG_SYM_UFUNC,
	EG_SYM_UMOD,
	EG_SYM_UADDR,
};
#define EG_KERNEL_PID 0xffffffffu /* a stack's pid word: the kernel's addresses */

/* One action of a record: its renderer action and its fields. */
struct eg_item {
	size_t act;
	size_t first, n;   /* in the record's fields */
	unsigned mask_off; /* the mask word with its bit (item % 64): 8, the header's, or past it */
};

/* A record: what one clause writes when it fires on one probe. */
struct eg_rec {
	struct eg_item *items;
	size_t nitems;
	struct eg_field *f;
	size_t nf;
	unsigned size;
	unsigned const_bytes; /* constant strings, which DTrace records and this does not */
	unsigned dsize;	      /* the size DTrace counts against specsize (codegen_spec.c) */
	unsigned bsize;	      /* the size DTrace counts against bufsize (codegen_buf.c) */
};

/* An aggregation's BPF map: the key's parts, the value's size. */
struct eg_agg {
	struct eg_field *keys;
	size_t nkeys;
	unsigned key_size, val_size;
	char map[24];
	bool used; /* some clause updates it: the map exists */
	/*
	 * A program of many aggregations (past what a BPF program may use of
	 * maps): those of one shape share a map, each key led by the 8-byte
	 * tag of its aggregation (prefix 8; codegen_aggargs.c). Else 0.
	 */
	unsigned prefix;
	uint64_t tag;
};

/*
 * What a USDT program reads of the site that fired it, from the map
 * `sites` at the link's BPF cookie (the generated `struct site` is this
 * one): the record's probe (an index of eg_prog's probes), its ID, each
 * argument's place (codegen_args.c: EG_ARG_*), the probe's names.
 */
#define EG_SITE_STR 128
enum { EG_ARG_NONE, EG_ARG_IMM, EG_ARG_REG, EG_ARG_MEM, EG_ARG_IP };
struct eg_site_arg {
	int64_t val;
	uint16_t reg; /* the pt_regs field's index */
	uint8_t kind, size, sign, pad[3];
};
struct eg_site_val {
	uint32_t probe, id;
	struct eg_site_arg arg[USDT_SDT_MAX_ARGS];
	char prov[EG_SITE_STR], mod[EG_SITE_STR], func[EG_SITE_STR], name[EG_SITE_STR];
};

/* A uprobe to attach: a program of the object at one site of a file, its cookie. */
struct eg_site {
	char prog[32];
	char *path;
	uint64_t off, sema_off;
	uint32_t cookie;
	struct eg_site_val val;
};

/*
 * A USDT program: one per clause set (which clauses, for which processes,
 * and the argument types where args[] is read: eg_group_key()), shared by
 * every site of every probe with that set, now or in a file that comes
 * later.
 */
struct eg_group {
	char *key;
	char prog[32];
	const struct dt_node *arg_used[USDT_SDT_MAX_ARGS]; /* what the clauses read, and where */
};

/* A tick-N probe's program: a CPU clock on one CPU every period_ns (profile-N: on every CPU). */
struct eg_timer {
	char prog[32];
	uint64_t period_ns;
	bool every_cpu;
};

/* A syscall:: probe's program: a tracepoint (syscalls/sys_enter_read). */
struct eg_tracepoint {
	char prog[32];
	char category[32];
	char name[96];
};

/*
 * A run-time error (codegen_fault.c): a clause stopped, the ring buffer's record
 * numbered EG_FAULT_REC: {id, cpu, fault site, fault, value}, each 8 bytes
 * past the first 8. A fault site is a clause of a probe's program.
 */
#define EG_FAULT_REC 0xffffffffu
#define EG_FAULT_SIZE 32
#define EG_ERROR_ID 3 /* the ERROR probe's ID, as DTrace's */
struct eg_fault_site {
	unsigned probe_id;
	size_t clause;	/* DTrace's dt_clause_N: a clause per probe description */
	char desc[256]; /* prov:mod:func:name */
};
/*
 * commit() or discard() (codegen_spec.c): the record numbered EG_SPEC_REC,
 * {id, cpu, speculation ID, EG_SPEC_COMMIT or EG_SPEC_DISCARD}; a record
 * speculate() tagged has its speculation's ID at byte 20 of its header.
 */
#define EG_SPEC_REC 0xfffffffeu
#define EG_SPEC_COMMIT 2
#define EG_SPEC_DISCARD 3
#define EG_NSPEC_MAX 1024
/*
 * Under ring and fill, a record numbered with this bit set is the space a
 * clause whose predicate was false reserved (codegen_buf.c): no action.
 */
#define EG_PHANTOM_BIT 0x80000000u
/* A fault's words, as DTrace's messages have them ("divide-by-zero"). */
const char *eg_fault_name(uint64_t kind);

struct usdt_notes;
struct eg_prog {
	struct dt_buf c; /* the BPF C source */
	struct eg_rec *recs;
	size_t nrecs;
	struct eg_agg *aggs; /* beside the tables' aggregations, same index */
	struct eg_site *sites;
	size_t nsites;
	uint32_t next_cookie;
	struct eg_group *groups;
	size_t ngroups;
	const struct dt_probe **probes; /* a record's probe, by the index it holds */
	size_t nprobes;
	struct eg_timer *timers;
	size_t ntimers;
	struct eg_tracepoint *tps;
	size_t ntps;
	bool has_begin, has_end, has_error;
	struct eg_fault_site *faults;
	size_t nfaults;
	size_t started_act, dump_act;
	size_t *dump_printa; /* per aggregation: its A_PRINTA (A_PRINTA_END is the next) */
	long strsize;
	/*
	 * The last file whose sites were made (eg_probe_sites): its notes, and
	 * each site's function once asked, so that a file's probes read it
	 * once (a new file's hold pays for every read). eg_probe_sites_end()
	 * lets it go.
	 */
	struct {
		char *path;
		uint64_t dev, ino;
		struct usdt_notes *notes;
		char **funcs; /* [notes->nsites], or NULL: not asked yet */
	} last;
	long nspec, specsize; /* a program that speculates: its options' values */
	int bufpolicy;	      /* DT_BUF_*: the reader keeps what ring and fill keep */
	long bufsize;	      /* DTrace's bufsize (the BPF ring buffer is bigger) */
	unsigned end_bytes;   /* END's records (bsize): what fill keeps for END */
};

/*
 * codegen.c: the program, its layouts and the renderer's tables. 0, or -1
 * (reported: one error, at the construct).
 */
int eg_codegen(struct dt_program *prog, struct dt_probes *probes, struct dt_tables *t,
	       struct eg_prog *out, struct usdt_diag *diag);
/*
 * codegen_args.c: the clause set of a probe, as a key of eg_prog's groups;
 * a probe's sites for group gi, its index in p->probes, into p->sites from
 * p->nsites on (0, or -1: reported, with the position of the argument that
 * cannot be read).
 */
void eg_group_key(const struct dt_program *prog, const struct dt_probe *pr, struct dt_buf *key);
bool eg_group_uses_args(const struct dt_program *prog, const struct dt_probe *pr);
long eg_group_find(const struct eg_prog *p, const char *key);
int eg_probe_sites(struct eg_prog *p, const struct dt_probe *pr, size_t gi, uint32_t probe,
		   struct usdt_diag *diag);
void eg_probe_sites_end(struct eg_prog *p);
/* codegen_prelude.c: what every generated file starts with. */
void eg_prelude(struct dt_buf *o, long strsize, unsigned scratch_size);

/* cache.c: compiled objects by source, clang and kernel (its head comment is the theory). */
struct eg_cache {
	int dfd;	   /* the trusted directory, or -1 (no cache: why says) */
	bool warn;	   /* why is worth a warning: a directory not trusted */
	bool hit;	   /* eg_cache_get() found the object */
	struct dt_buf key; /* what an entry must hold to be used */
	char name[32];	   /* the entry's file name */
	char why[4400];
};
/* Finds clang as execvp() would (a name with a slash as it is): 0, or -1. */
int eg_cache_find_clang(const char *name, char *out, size_t n);
/* Opens the user's cache for this source, compiled by that clang. */
void eg_cache_open(struct eg_cache *c, const char *clang, const char *src, size_t n);
/* The object for the key: 0, or -1 (a miss). */
int eg_cache_get(struct eg_cache *c, struct dt_buf *obj);
void eg_cache_put(struct eg_cache *c, const struct dt_buf *obj);
void eg_cache_close(struct eg_cache *c);

/* loader.c */
struct eg_loaded;
/* Compiles, loads and attaches BEGIN and END: NULL on failure (reported). */
struct eg_loaded *eg_load(const struct eg_prog *p, struct usdt_diag *diag);
/* Then, once BEGIN ran, everything else: 0, or -1 (reported). */
int eg_attach(struct eg_loaded *l, const struct eg_prog *p, struct usdt_diag *diag);
/* Compiles and loads (the verifier runs) without attaching: -e. */
struct eg_loaded *eg_check(const struct eg_prog *p, struct usdt_diag *diag);
/* Attaches p->sites from `first` on (new files' sites): 0, or -1 (reported). */
int eg_attach_sites(struct eg_loaded *l, const struct eg_prog *p, size_t first,
		    struct usdt_diag *diag);
/* Runs BEGIN or END in this process (their uprobes are on a function of ours). */
void eg_fire_begin(struct eg_loaded *l);
void eg_fire_end(struct eg_loaded *l);
/* Runs ERROR with its arguments (arg0..arg5), if a clause has it. */
void eg_fire_error(struct eg_loaded *l, const uint64_t arg[6]);
/* A map's descriptor by name, or -1. */
int eg_map_fd(const struct eg_loaded *l, const char *name);
/* Detaches and closes everything. */
void eg_unload(struct eg_loaded *l);
/* Milliseconds clang took, and load plus attach (USDTKIT_ENGINE_TIMES prints them). */
void eg_times(const struct eg_loaded *l, double *clang_ms, double *load_ms);
/* Milliseconds spent so far in the kernel's link calls (bpf(BPF_LINK_CREATE), perf uprobes). */
double eg_links_ms(const struct eg_loaded *l);

/*
 * ustack.c: a recorded user stack as the renderer reads stacks (bpftrace's
 * perf text), its files' symbols kept in an eg_syms between calls.
 */
struct eg_syms;
struct eg_syms *eg_syms_new(void);
void eg_syms_free(struct eg_syms *s);
char *eg_ustack_text(struct eg_syms *s, const unsigned char *p, size_t size);
/* addr in pid: its file's basename in mod, and 0 (its function), 1 (file only) or -1 */
int eg_uaddr_name(struct eg_syms *s, uint32_t pid, uint64_t a, char *mod, size_t modlen,
		  const char **sym, uint64_t *into);
/* sym(), usym()... ({pid, 8, address}, EG_SYM_*) as DTrace prints them ("mod`func", "0x0") */
char *eg_sym_text(struct eg_syms *s, const unsigned char *p, size_t size, int kind);
/*
 * ksyms.c: a kernel address named from /proc/kallsyms (0, or -1); a kernel
 * stack (its pid word EG_KERNEL_PID) as eg_ustack_text()'s text.
 */
int eg_ksym_name(uint64_t a, const char **mod, const char **sym, uint64_t *into);
char *eg_kstack_text(const unsigned char *p, size_t size);

/* records_spec.c: the reader's speculative buffers, by speculation ID */
struct eg_spec_rec {
	unsigned char *data;
	size_t size;
};
struct eg_specbuf;
struct eg_specbuf *eg_specbuf_new(long nspec, long specsize, int stats_fd);
/*
 * records_buf.c: ring and fill kept by the reader (NULL under switch). A
 * record (or a phantom, a false predicate's reservation) on a CPU is
 * printed now, kept (ring: printed by eg_bufkeep_flush) or dropped.
 */
enum { EG_BUF_PRINT, EG_BUF_KEPT, EG_BUF_DROP };
struct eg_bufkeep;
struct eg_bufkeep *eg_bufkeep_new(int policy, long bufsize, unsigned end_bytes, int ncpus);
int eg_bufkeep_add(struct eg_bufkeep *kb, unsigned cpu, bool is_end, unsigned bsize, const void *d,
		   size_t size, bool phantom);
bool eg_bufkeep_filled(const struct eg_bufkeep *kb);
void eg_bufkeep_flush(struct eg_bufkeep *kb, void (*fn)(void *, void *, size_t), void *arg);
void eg_bufkeep_free(struct eg_bufkeep *kb);

/* A tagged record kept (dsize: its size as DTrace counts it), or a speculative drop. */
void eg_specbuf_add(struct eg_specbuf *sb, uint32_t id, const void *d, size_t size, size_t dsize);
/* commit() or discard() read: id's records, in order, handed over (eg_spec_recs_free). */
struct eg_spec_rec *eg_specbuf_take(struct eg_specbuf *sb, uint32_t id, size_t *n);
void eg_spec_recs_free(struct eg_spec_rec *v, size_t n);
/* New failed speculations and speculative drops, reported as DTrace does. */
void eg_specbuf_report(struct eg_specbuf *sb);
void eg_specbuf_free(struct eg_specbuf *sb);

/* records.c */
struct eg_reader;
struct eg_reader *eg_reader_new(const struct eg_prog *p, struct eg_loaded *l, struct dt_render *r,
				struct usdt_diag *diag);
/* A descriptor readable when records are there (to poll beside others). */
int eg_reader_fd(const struct eg_reader *rd);
/* Reads what is there, waiting up to timeout_ms. Returns records read, or -1. */
int eg_reader_poll(struct eg_reader *rd, int timeout_ms);
/* New drops since the last call, reported as DTrace does. */
void eg_reader_drops(struct eg_reader *rd);
/* The exit dump: every aggregation no printa() printed. */
void eg_reader_dump(struct eg_reader *rd);
/* -x bufpolicy=fill: a CPU's buffer is full, the run ends (records_buf.c) */
bool eg_reader_filled(const struct eg_reader *rd);
void eg_reader_free(struct eg_reader *rd);

#endif /* DT_ENGINE_H */
