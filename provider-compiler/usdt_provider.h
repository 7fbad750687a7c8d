/* SPDX-License-Identifier: MIT */
/*
 * The provider compiler's interface: D provider source in, the declarations
 * of the probe model (core/model.h) out, and the spellings the header
 * emitter derives from them.
 *
 * Data flows one way: the parser (lexer.c, parser.c, types.c) builds a
 * struct usdt_program from one or more .d sources; the emitters (the header
 * emitter for `dtrace -h`, the object builder for `dtrace -G`, the metadata
 * note's writer) read it and never re-parse.
 */
#ifndef USDT_PROVIDER_H
#define USDT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "model.h"

/*
 * Parse one D source into prog. `file` names the input for diagnostics; the
 * text may contain cpp line markers (`# 12 "x.d"`), which re-point later
 * diagnostics. Calling it again with another source adds to the same program:
 * a provider named again gains the new probes; a probe declared again (in
 * another `provider { }` block) with the same signature is accepted, with
 * another signature is an error, and twice in one block is always an error.
 *
 * Returns 0, or -1 after reporting every error found to diag. On error the
 * program may hold part of the input and must not be emitted.
 */
int usdt_parse(struct usdt_program *prog, const char *file, const char *text, size_t len,
	       struct usdt_diag *diag);

/* A directive that only the C preprocessor can give its meaning. */
struct usdt_cpp_need {
	unsigned line, col;    /* physical position of the directive's name */
	const char *directive; /* "ifdef", "include", "define"... (static) */
};

/*
 * Whether a D source needs the C preprocessor (lexer.c): true, with the first
 * such line in *need, when it has a conditional (#if, #ifdef, #ifndef, #elif,
 * #elifdef, #elifndef, #else, #endif), an inclusion (#include, #include_next,
 * #import), or a #define whose macro is used after it outside directives.
 * Line markers, #line, #pragma, unused #defines, #undef and `#` comment
 * lines do not count: usdt_parse() reads them alone. Reports nothing.
 */
bool usdt_needs_cpp(const char *text, size_t len, struct usdt_cpp_need *need);

/* ("pg", "query__start") -> "PG_QUERY_START" (header macro). Caller frees. */
char *usdt_probe_macro_name(const char *provider, const char *probe);
/* ("pg", "query__start") -> "pg_query__start_semaphore" (SystemTap's name). Caller frees. */
char *usdt_probe_semaphore_name(const char *provider, const char *probe);

#endif /* USDT_PROVIDER_H */
