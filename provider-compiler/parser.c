/* SPDX-License-Identifier: MIT */
/*
 * The D provider language front end: usdt_parse().
 *
 * Theory. A .d file given to `dtrace -h`/`-G` declares providers:
 *
 *	provider NAME { probe NAME(params) [: (params)]; ... };
 *
 * around which real projects write everything else D and C allow: comments,
 * typedefs, struct/union/enum definitions, `#pragma D attributes`, cpp line
 * markers, and consumer-side D (translators, inlines, probe clauses) that a
 * provider compiler must step over. The parser is recursive descent over
 * the tokens of lexer.c, in these files (parse_internal.h declares what
 * they share):
 *
 *  - parser.c: this statement; the top level, which decides what each
 *    declaration is; consumer-side D and system-header text, skipped; the
 *    entry point and the state kept between calls;
 *  - parse_stream.c: the token stream, diagnostics, error limit, recovery;
 *  - parse_directive.c: line markers, pragmas and other directive lines;
 *  - parse_decl.c: C declarations, struct/union/enum definitions, typedefs;
 *  - parse_provider.c: the provider and probe grammar;
 *  - parse_merge.c: providers and probes added to the model, across calls
 *    (redeclarations, macro-name collisions, translated-argument mapping).
 *
 * types.c resolves declaration specifiers and declarators into the model's
 * argument types.
 *
 * Rules (DTrace's, plus what Linux needs):
 *  - provider names: not ending in a digit (DTrace appends the pid); at most
 *    59 characters, so that the tracefs group `sdt_<provider>` stays within
 *    its 63-character limit (DTrace allows 63; no real provider comes near).
 *  - probe names: at most 63 characters as written (`__` kept), which is both
 *    DTrace's limit after hyphenation and tracefs' limit for event names.
 *    Two probes whose macro names collide (`a__b`, `a_b`) are an error.
 *  - parameters: names optional but distinct; `void` only as the sole,
 *    unnamed parameter; no `...`; at most 255. A translated list `: (...)`
 *    maps each translated argument to the native argument of the same name
 *    (names may repeat there); an unnamed or unknown name is an error, as in
 *    DTrace (dt_decl_prototype() requires names in an output prototype, so
 *    its fallback to mapping by position is never reached).
 *  - a probe declared again in another `provider { }` block (the same
 *    provider in another -s file, a header included twice) with the same
 *    signature is accepted; with another signature it is an error. Twice in
 *    one block it is an error whatever the signature, as DTrace's "probe
 *    redeclared": that is a slip, never a split file. A provider declared
 *    again gains the new probes (DTrace would require the same probes; real
 *    projects split one provider across files, docs/compat.md, grammar item 13).
 *  - `#pragma D attributes A/B/C provider P which` may come before or after
 *    the provider, even in another parse call.
 *  - preprocessor conditionals and includes are not run here: the command
 *    runs cpp, for -C and for a file that needs it (usdt_needs_cpp() in
 *    lexer.c decides). Seeing one here is an error rather than a silent
 *    probe inside `#if 0`. `#define`/`#undef` are skipped (SystemTap does
 *    the same); a type that only a skipped macro defines is then reported
 *    as unknown, with a note to pass -C.
 *  - text cpp took from a system header (line marker flag 3: glibc's GNU C,
 *    with `__attribute__`, `__extension__`, inline functions) is read
 *    silently and only for its typedefs and struct/union/enum definitions
 *    (sys_declaration()); a typedef not fully read is left unchecked. A
 *    system header's typedef of a well-known name (`uint8_t`) keeps the
 *    table's entry and its standard C spelling.
 *
 * Errors are reported through diag as they are found, with recovery to the
 * next `;` or `}` so that one run reports all of them; usdt_parse() then
 * returns -1. Nothing here prints or exits.
 */
#include "front.h"
#include "parse_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- consumer-side D, skipped ---------------------------------------------- */

/*
 * A probe clause: descriptions (`syscall::read:entry`, `BEGIN`, `profile-97`,
 * separated by commas), an optional /predicate/ and a { body }. Two words in
 * a row cannot start one, which catches a misspelt `provider`.
 */
static void skip_clause(struct parser *ps)
{
	struct token start = ps->cur;
	bool word = false, in_pred = false;

	while (ps->cur.kind != T_EOF) {
		if (at_punct(ps, '{')) {
			skip_balanced(ps);
			if (at_punct(ps, ';'))
				advance(ps);
			return;
		}
		if (at_punct(ps, ';')) {
			advance(ps);
			return;
		}
		if (at_punct(ps, '}') && !in_pred) {
			error_tok(ps, &ps->cur, "unexpected '}'");
			advance(ps);
			return;
		}
		if (at_punct(ps, '/'))
			in_pred = true;
		if (!in_pred && word && (ps->cur.kind == T_IDENT)) {
			error_tok(
			    ps, &start,
			    "expected 'provider', a declaration or a probe clause, found '%.*s'",
			    (int)start.len, start.start);
			skip_statement(ps);
			return;
		}
		word = ps->cur.kind == T_IDENT || ps->cur.kind == T_NUMBER;
		if (in_pred && (at_punct(ps, '(') || at_punct(ps, '[')))
			skip_balanced(ps);
		else
			advance(ps);
	}
}

/* `translator out < in x > { ... };` */
static void skip_translator(struct parser *ps)
{
	while (ps->cur.kind != T_EOF && !at_punct(ps, '{') && !at_punct(ps, ';')) {
		advance(ps);
	}
	if (at_punct(ps, '{'))
		skip_balanced(ps);
	if (at_punct(ps, ';'))
		advance(ps);
}

static bool starts_d_declaration(const struct parser *ps)
{
	static const char *const words[] = {
	    "extern",	"static", "register", "self",  "this",	"const",
	    "volatile", "signed", "unsigned", "short", "long",	"int",
	    "char",	"float",  "double",   "void",  "_Bool",
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (at_ident(ps, words[i]))
			return true;
	return types_lookup(&ps->fe->types, ps->cur.start, ps->cur.len) != NULL;
}

/*
 * Skips one C declaration or function definition: up to a ';' at bracket
 * depth 0, or the body of a function (a '{' group right after a ')', as in
 * `int f(int x) __attribute__((pure)) { ... }`), whichever comes first.
 * Stops where system-header text ends, so the .d itself is never skipped.
 */
static void skip_c_declaration(struct parser *ps)
{
	bool after_paren = false;

	while (ps->cur.kind != T_EOF && ps->cur.sys) {
		if (at_punct(ps, ';')) {
			advance(ps);
			return;
		}
		if (at_punct(ps, '{')) {
			skip_balanced(ps);
			if (after_paren)
				return;
			continue;
		}
		after_paren = at_punct(ps, '(');
		if (after_paren || at_punct(ps, '['))
			skip_balanced(ps);
		else
			advance(ps); /* a stray closer included */
	}
}

/*
 * A declaration from a system header (`#include <sys/types.h>`, run through
 * cpp): glibc's C, with GNU extensions (`__extension__`, `__attribute__`,
 * inline functions, array sizes computed with sizeof) that a .d never needs
 * and this parser does not read. Typedefs and struct/union/enum definitions
 * are read for the types a probe may name (`socklen_t`, `struct timeval *`),
 * without reporting anything (parse_typedef() leaves a typedef it could not
 * fully read unchecked). Functions and variables are skipped. (SystemTap's
 * tool skips every non-provider text alike.)
 */
static void sys_declaration(struct parser *ps)
{
	ps->quiet++;
	while (at_ident(ps, "__extension__"))
		advance(ps);
	if (at_ident(ps, "typedef"))
		parse_typedef(ps);
	else if (at_ident(ps, "struct") || at_ident(ps, "union") || at_ident(ps, "enum"))
		parse_tag_declaration(ps);
	else
		skip_c_declaration(ps);
	ps->quiet--;
}

static void parse_top(struct parser *ps)
{
	char buf[64];

	while (ps->cur.kind != T_EOF && !ps->oom) {
		if (ps->cur.kind == T_EOL || at_punct(ps, ';')) {
			advance(ps);
		} else if (ps->cur.sys && !at_ident(ps, "provider")) {
			sys_declaration(ps);
		} else if (at_ident(ps, "provider")) {
			parse_provider(ps);
		} else if (at_ident(ps, "typedef")) {
			parse_typedef(ps);
		} else if (at_ident(ps, "struct") || at_ident(ps, "union") ||
			   at_ident(ps, "enum")) {
			parse_tag_declaration(ps);
		} else if (at_ident(ps, "translator")) {
			skip_translator(ps);
		} else if (at_ident(ps, "inline")) {
			skip_statement_to(ps, true);
		} else if (at_ident(ps, "probe")) {
			error_tok(ps, &ps->cur, "probe declared outside a provider");
			skip_statement(ps);
		} else if (ps->cur.kind == T_IDENT && starts_d_declaration(ps)) {
			skip_statement_to(ps, true);
		} else if (ps->cur.kind == T_IDENT || at_punct(ps, ':') || at_punct(ps, '*') ||
			   at_punct(ps, '$') || at_punct(ps, '?') || at_punct(ps, '[') ||
			   at_punct(ps, '-')) {
			skip_clause(ps);
		} else {
			error_tok(ps, &ps->cur, "unexpected %s",
				  tok_desc(&ps->cur, buf, sizeof(buf)));
			if (at_punct(ps, '{') || at_punct(ps, '(') || at_punct(ps, '['))
				skip_balanced(ps);
			else
				advance(ps);
		}
	}
}

/* ---- entry point and state ----------------------------------------------- */

void fe_free(void *priv)
{
	struct front *fe = priv;
	size_t i;

	if (!fe)
		return;
	types_free(&fe->types);
	free(fe->slots);
	for (i = 0; i < fe->nstrings; i++)
		free(fe->strings[i]);
	free(fe->strings);
	for (i = 0; i < fe->npending; i++)
		free(fe->pending[i].provider);
	free(fe->pending);
	free(fe);
}

int usdt_parse(struct usdt_program *prog, const char *file, const char *text, size_t len,
	       struct usdt_diag *diag)
{
	struct parser ps;
	unsigned errors = diag->errors;
	char *copy;
	size_t i;

	if (!prog->priv) {
		prog->priv = calloc(1, sizeof(struct front));
		if (!prog->priv) {
			usdt_error(diag, "out of memory");
			return -1;
		}
		prog->priv_free = fe_free;
	}
	memset(&ps, 0, sizeof(ps));
	ps.prog = prog;
	ps.fe = prog->priv;
	ps.diag = diag;
	ps.directive = directive_line;
	file = fe_intern(ps.fe, file ? file : "<input>", strlen(file ? file : "<input>"));
	/* A NUL-terminated copy: diagnostics print source lines with str*(). */
	copy = malloc(len + 1);
	if (!file || !copy) {
		free(copy);
		usdt_error(diag, "out of memory");
		return -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	lex_init(&ps.lx, file, copy, len, diag);
	advance(&ps);
	parse_top(&ps);
	for (i = 0; i < ps.nmacros; i++)
		free(ps.macros[i]);
	free(ps.macros);
	free(copy);
	return diag->errors != errors || ps.oom ? -1 : 0;
}
