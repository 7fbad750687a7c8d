/* SPDX-License-Identifier: MIT */
/*
 * `dtrace -n` / `dtrace -s`: D programs run on the consumer's engine
 * (dtrace/engine: BPF C, clang, libbpf; README.md here is the theory). dtrace.c parses the command
 * line into these options and calls dt_consume().
 */
#ifndef DT_CONSUMER_H
#define DT_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

/* One -n description or -s script, in command-line order. */
struct dt_source {
	char kind;	  /* 'n' or 's' */
	const char *name; /* the description as given, or the script's path */
	char *text;	  /* the program text (owned) */
};

struct dt_consumer_opts {
	struct dt_source *sources;
	size_t nsources;
	bool quiet;	   /* -q, #pragma D option quiet */
	bool zero_ok;	   /* -Z */
	bool destructive;  /* -w */
	bool compile_only; /* -e */
	bool verbose;	   /* -v: DTrace's stability report of each program */
	bool show_program; /* -x bpfc: print the generated BPF C, run nothing */
	bool defaultargs;
	bool errtags;	 /* -xerrtags: errors in DTrace's form, with their [D_...] tags */
	const int *pids; /* -p */
	size_t npids;
	const char *cmd;	   /* -c (one) */
	const char *const *macros; /* $1... (operands after the options) */
	size_t nmacros;
	unsigned long long macros_used; /* $1..$64 the program refers to */
	bool argref;			/* -x argref: macro arguments may go unused */
	long strsize;			/* 0: default */
	long scratchsize;		/* alloca()'s bytes; 0: default */
	long bufsize;			/* bytes; 0: default */
	int bufpolicy;		 /* DT_BUF_SWITCH (DTrace's default), DT_BUF_RING, DT_BUF_FILL */
	long long statusrate_ns; /* -x statusrate: exit() is seen at the next status; 0: at once */
	long dynvarsize;
	long aggsize; /* bytes; 0: default (only a size too small matters: refused) */
	long nspec;   /* speculations (-x nspec), when nspec_set; DTrace's default: 1 */
	bool nspec_set;
	long specsize; /* bytes a speculation buffers; 0: default */
	int target;    /* $target once known */
	/* printa's order (DTrace's aggsortkey, aggsortkeypos, aggsortrev) */
	bool aggsortkey, aggsortrev;
	bool rawbytes;	/* trace() of a string as a hex dump */
	long printsize; /* print()'s most bytes of an object; 0: all of it */
	bool testing;	/* $_DTRACE_TESTING: records without the CPU and ID columns */
	long aggsortkeypos;
	long aggsortpos; /* printa() of several aggregations: the one sorted by first */
	/* -x amin: the least stability attributes a clause may have (stability.c) */
	unsigned char amin[3];
	bool amin_set;
	/* an option DTrace has that this consumer would get wrong: dt_consume refuses */
	char opt_error[200];
};

enum { DT_BUF_SWITCH, DT_BUF_RING, DT_BUF_FILL };

/* Returns the exit status: 0, exit(n)'s n, 1 an error, 2 a usage error. */
int dt_consume(struct dt_consumer_opts *o, struct usdt_diag *diag);

/*
 * `-x opt[=val]` and `#pragma D option`: returns 0, -1 for an option not
 * known (the caller warns), or -2 for a value DTrace refuses (an error).
 * An option DTrace has whose effect on the output this consumer does not
 * give is noted in o->opt_error (the first), which dt_consume() reports
 * before running.
 */
int dt_set_option(struct dt_consumer_opts *o, const char *opt, const char *val);

/*
 * DTrace's stability attributes `name[/data[/class]]` (Internal ... Standard,
 * Unknown ... Common; any case) as levels 0-7, 0-7, 0-5; false if not that.
 * A part left out is the lowest level.
 */
bool dt_attr_parse(const char *s, unsigned char attr[3]);

/* setopt() while tracing: NULL, or why DTrace would not set it (in its words) */
const char *dt_set_runtime_option(struct dt_consumer_opts *o, const char *opt, const char *val);

#endif /* DT_CONSUMER_H */
