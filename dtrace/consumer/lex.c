/* SPDX-License-Identifier: MIT */
/*
 * The D lexer: C's tokens (integers in every C base and suffix, strings and
 * characters with C's escapes, operators longest first), `@name`
 * aggregations, macro variables, and the two things that are D's own: a
 * probe description is read raw (it is not made of C tokens: `php*:::
 * function-entry`), and `#pragma D option` lines set options.
 *
 * Macro variables are DTrace's: `$target` is the -c/-p process, `$1`...`$9`
 * the operands after the script (an integer if it reads as one, else an
 * identifier), `$$1` the operand as a string; an operand not given is an
 * error unless -x defaultargs (then 0 and ""). In probe descriptions they
 * are expanded as text. `#` lines that are not `#pragma` (cpp's line
 * markers excepted) are not D: DTrace rejects them; real scripts shipped with
 * MySQL and MariaDB have them as comments, so they are skipped with a
 * warning.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"

void dt_error_at(struct usdt_diag *diag, const struct dt_pos *pos, const char *tag, const char *fmt,
		 ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	usdt_error_tag_at(diag, tag, diag->tags && pos->src->what ? pos->src->what : pos->src->file,
			  pos->line, pos->col, pos->line_start, "%s", msg);
}

void dt_lex_init(struct dt_lex *lx, const struct dt_src *src, struct dt_consumer_opts *o,
		 struct usdt_diag *diag)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = src;
	lx->p = src->text;
	lx->line = 1;
	lx->line_start = src->text;
	lx->o = o;
	lx->diag = diag;
	/* A #! line is the shell's: its options were read by dtrace.c. */
	if (lx->p[0] == '#' && lx->p[1] == '!')
		while (*lx->p && *lx->p != '\n')
			lx->p++;
}

struct dt_pos dt_lex_here(const struct dt_lex *lx)
{
	struct dt_pos pos = {lx->src, lx->line, (unsigned)(lx->p - lx->line_start) + 1,
			     lx->line_start};

	return pos;
}

static void newline(struct dt_lex *lx)
{
	lx->line++;
	lx->line_start = lx->p + 1;
}

/* `#pragma D option name[=value]` and the other '#' lines. */
static void control_line(struct dt_lex *lx)
{
	struct dt_pos pos = dt_lex_here(lx);
	const char *s = lx->p + 1, *e = strchr(lx->p, '\n');
	char line[512];
	size_t n;

	if (!e)
		e = lx->p + strlen(lx->p);
	n = (size_t)(e - s) < sizeof(line) - 1 ? (size_t)(e - s) : sizeof(line) - 1;
	memcpy(line, s, n);
	line[n] = '\0';
	lx->p = e;
	s = line + strspn(line, " \t");
	if (isdigit((unsigned char)*s) || !strncmp(s, "line", 4) || !*s)
		return; /* cpp's line markers */
	if (!strncmp(s, "pragma", 6)) {
		char opt[256], val[256] = "";
		bool had_error;
		int rc;

		s += 6 + strspn(s + 6, " \t");
		if (strncmp(s, "D", 1) || !isspace((unsigned char)s[1]))
			return; /* another compiler's pragma: ignored, as DTrace does */
		s += 1 + strspn(s + 1, " \t");
		if (!strncmp(s, "error", 5) && !isalnum((unsigned char)s[5])) {
			s += 5 + strspn(s + 5, " \t");
			dt_error_at(lx->diag, &pos, "D_PRAGERR", "#pragma D error: %.*s",
				    (int)strcspn(s, "\n"), s);
			lx->err = true;
			return;
		}
		if (!strncmp(s, "attributes", 10) && !isalnum((unsigned char)s[10])) {
			char attr[128], name[64], part[64];
			unsigned char lvl[3];
			int nw = sscanf(s + 10, "%127s %63s %63s", attr, name, part);

			if (nw < 2) {
				dt_error_at(lx->diag, &pos, "D_PRAGMA_MALFORM",
					    "malformed #pragma attributes <attributes> <ident>");
				lx->err = true;
			} else if (!dt_attr_parse(attr, lvl)) {
				dt_error_at(lx->diag, &pos, "D_PRAGMA_INVAL",
					    "invalid attributes specified by #pragma attributes: "
					    "name/data/class expected (Stable/Stable/Common)");
				lx->err = true;
			} else if (nw == 2) {
				/* `A/B/C name`: a name the program declared (parse_decl.c) */
				name[strcspn(name, ";")] = '\0';
				snprintf(lx->attr_name, sizeof(lx->attr_name), "%s", name);
				lx->attr_pos = pos;
			}
			return;
		}
		if (!strncmp(s, "depends_on", 10) && isspace((unsigned char)s[10]) &&
		    !strncmp(s + 11 + strspn(s + 11, " \t"), "library", 7)) {
			/* a main program: only a library (-L's files) depends on another */
			dt_error_at(lx->diag, &pos, "D_PRAGMA_DEPEND",
				    "main program may not explicitly depend on a library");
			lx->err = true;
			return;
		}
		if (strncmp(s, "option", 6))
			return; /* depends_on, binding: nothing to do here */
		s += 6 + strspn(s + 6, " \t");
		n = strlen(s);
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
			n--;
		if (memchr(s, ' ', n) || memchr(s, '\t', n)) {
			dt_error_at(lx->diag, &pos, "D_PRAGMA_MALFORM",
				    "malformed #pragma D option: one name[=value] expected");
			lx->err = true;
			return;
		}
		if (sscanf(s, "%255[^= \t]=%255s", opt, val) < 1) {
			dt_error_at(lx->diag, &pos, "D_PRAGMA_MALFORM",
				    "#pragma D option needs an option name");
			lx->err = true;
			return;
		}
		had_error = lx->o->opt_error[0] != '\0';
		rc = dt_set_option(lx->o, opt, val[0] ? val : NULL);
		if (!had_error && lx->o->opt_error[0]) {
			/* refused by options.c (engine=bpftrace...): said here, at the pragma */
			dt_error_at(lx->diag, &pos, "D_PRAGMA_OPTSET", "%s", lx->o->opt_error);
			lx->o->opt_error[0] = '\0';
			lx->err = true;
		} else if (rc == -2) {
			dt_error_at(
			    lx->diag, &pos, "D_PRAGMA_OPTSET",
			    "failed to set option '%s' to '%s': Invalid value for specified "
			    "option",
			    opt, val);
			lx->err = true;
		} else if (rc)
			usdt_warning_at(lx->diag, pos.src->file, pos.line, pos.col, pos.line_start,
					"ignoring unsupported option '%s'", opt);
		return;
	}
	if (!strncmp(s, "ident", 5) && !isalnum((unsigned char)s[5]))
		return; /* `#ident "..."`, left by cpp: ignored, as DTrace does */
	/* `#if`, `#define`... without -C (cpp's work), or a '#' comment D does not have */
	dt_error_at(lx->diag, &pos, "D_PRAGCTL_INVAL",
		    "invalid control directive: #%.*s (the C preprocessor's lines need -C)",
		    (int)strcspn(s, " \t\r"), s);
	lx->err = true;
}

/* Skips blanks, comments and control lines; false at the end of the text. */
bool dt_lex_skip(struct dt_lex *lx)
{
	for (;;) {
		char c = *lx->p;

		if (c == '\n') {
			newline(lx);
			lx->p++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			lx->p++;
		} else if (c == '/' && lx->p[1] == '*') {
			struct dt_pos pos = dt_lex_here(lx);

			lx->p += 2;
			while (*lx->p && !(lx->p[0] == '*' && lx->p[1] == '/')) {
				if (*lx->p == '\n')
					newline(lx);
				lx->p++;
			}
			if (!*lx->p) {
				dt_error_at(lx->diag, &pos, "D_SYNTAX",
					    "unterminated comment: add '*/'");
				lx->err = true;
				return false;
			}
			lx->p += 2;
		} else if (c == '/' && lx->p[1] == '/') {
			while (*lx->p && *lx->p != '\n')
				lx->p++;
		} else if (c == '#' &&
			   (lx->p == lx->line_start || !lx->p[-1] ||
			    strspn(lx->line_start, " \t") == (size_t)(lx->p - lx->line_start))) {
			control_line(lx);
			if (lx->err)
				return false; /* the first error stops, as in DTrace */
		} else {
			return c != '\0';
		}
	}
}

/* A macro variable at lx->p ('$'): its value as text, or NULL (reported). */
static const char *macro_value(struct dt_lex *lx, bool *is_string, size_t *len)
{
	struct dt_pos pos = dt_lex_here(lx);
	const char *s = lx->p + 1;
	static char buf[32];

	*is_string = false;
	if (*s == '$') {
		*is_string = true;
		s++;
	}
	if (!strncmp(s, "target", 6) && !isalnum((unsigned char)s[6]) && s[6] != '_') {
		*len = (size_t)(s + 6 - lx->p);
		/* without -c or -p, 0 (DTrace's: the kernel's idle threads are pid 0) */
		snprintf(buf, sizeof(buf), "%d", lx->o->target);
		return buf;
	}
	if (dt_macro_process(s, buf, sizeof(buf), len)) {
		*len += (size_t)(s - lx->p);
		return buf;
	}
	if (isdigit((unsigned char)*s)) {
		char *end;
		unsigned long n = strtoul(s, &end, 10);

		*len = (size_t)(end - lx->p);
		if (n == 0)
			return lx->o->nsources && lx->o->sources[0].kind == 's'
				   ? lx->o->sources[0].name
				   : "dtrace";
		if (n <= lx->o->nmacros) {
			if (n <= 64)
				lx->o->macros_used |= 1ULL << (n - 1);
			return lx->o->macros[n - 1];
		}
		if (lx->o->defaultargs)
			return *is_string ? "" : "0";
		dt_error_at(lx->diag, &pos, "D_MACRO_UNDEF",
			    "macro argument $%lu is not given: pass it after the script, or use "
			    "-x defaultargs",
			    n);
		return NULL;
	}
	*len = 1;
	dt_error_at(lx->diag, &pos, "D_MACRO_UNDEF",
		    "unknown macro variable: $target, $pid, $ppid, $uid, $gid, $euid, $egid, "
		    "$sid, $pgid and $1...$9 are known");
	return NULL;
}

static bool is_desc_char(char c)
{
	return isalnum((unsigned char)c) || strchr("_-:*?[]!.~`\\+", c);
}

char *dt_lex_pdesc(struct dt_lex *lx, struct dt_pos *pos)
{
	struct dt_buf b = {0};

	if (!dt_lex_skip(lx))
		return NULL;
	*pos = dt_lex_here(lx);
	while (*lx->p) {
		if (*lx->p == '$') {
			bool str;
			size_t len;
			const char *v = macro_value(lx, &str, &len);

			if (!v) {
				lx->err = true;
				dt_free(b.s);
				return NULL;
			}
			dt_buf_add(&b, v, strlen(v));
			lx->p += len;
		} else if (is_desc_char(*lx->p)) {
			dt_buf_add(&b, lx->p, 1);
			lx->p++;
		} else {
			break;
		}
	}
	if (!b.n) {
		dt_free(b.s);
		return NULL;
	}
	return b.s;
}

static const char *const ops[] = {
    "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||",  "^^",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "(",	")",
    "[",   "]",	  "{",	"}",  ",",  ";",  "?",	":",  "=",  "<",  ">",	"+",
    "-",   "*",	  "/",	"%",  "&",  "|",  "^",	"!",  "~",  ".",  NULL,
};

/* The escapes a character constant or a string knows (after its backslash). */
static const char char_escapes[] = "ntrabfvx01234567\"\\";

static int escape(const char **pp)
{
	const char *p = *pp;
	int c = *p++;

	switch (c) {
	case 'n':
		c = '\n';
		break;
	case 't':
		c = '\t';
		break;
	case 'r':
		c = '\r';
		break;
	case 'a':
		c = '\a';
		break;
	case 'b':
		c = '\b';
		break;
	case 'f':
		c = '\f';
		break;
	case 'v':
		c = '\v';
		break;
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7': {
		int v = c - '0', i;

		for (i = 0; i < 2 && *p >= '0' && *p <= '7'; i++)
			v = v * 8 + (*p++ - '0');
		c = v;
		break;
	}
	case 'x': {
		int v = 0;

		while (isxdigit((unsigned char)*p)) {
			v = v * 16 +
			    (isdigit((unsigned char)*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
			p++;
		}
		c = v & 0xff;
		break;
	}
	default:
		break;
	}
	*pp = p;
	return c;
}

/*
 * An integer constant's type, as C gives it: a decimal one is int, else
 * long; an octal or hexadecimal one int, unsigned int, long, unsigned long;
 * a 'u' suffix skips the signed, an 'l' the 4-byte ones.
 */
static void int_type(struct dt_lex *lx, const char *s, const char *end)
{
	uint64_t v = (uint64_t)lx->ival;
	bool dec = s[0] != '0' || end == s + 1, u = false, l = false;

	for (; *end == 'u' || *end == 'U' || *end == 'l' || *end == 'L'; end++)
		if (*end == 'u' || *end == 'U')
			u = true;
		else
			l = true;
	if (!l && v <= (u ? UINT32_MAX : INT32_MAX))
		lx->isize = 4, lx->iuns = u;
	else if (!l && !u && !dec && v <= UINT32_MAX)
		lx->isize = 4, lx->iuns = true;
	else
		lx->isize = 8, lx->iuns = u || v > INT64_MAX;
}

int dt_lex_next(struct dt_lex *lx)
{
	const char *s;
	size_t i;

	dt_free(lx->text);
	lx->text = NULL;
	lx->len = 0;
	if (!dt_lex_skip(lx)) {
		lx->pos = dt_lex_here(lx);
		return lx->tok = T_EOF;
	}
	lx->pos = dt_lex_here(lx);
	s = lx->p;
	if (*s == '$') {
		bool str;
		size_t len;
		const char *v = macro_value(lx, &str, &len);
		char *end;

		if (!v) {
			lx->err = true;
			lx->p += len;
			return lx->tok = T_ERROR;
		}
		lx->p += len;
		if (str) {
			lx->text = dt_xstrdup(v);
			lx->len = strlen(v);
			return lx->tok = T_STR;
		}
		errno = 0;
		lx->ival = strtoll(v, &end, 0);
		lx->isize = lx->ival > INT32_MAX || lx->ival < INT32_MIN ? 8 : 4;
		lx->iuns = false;
		if (*v && !*end && !errno)
			return lx->tok = T_INT;
		lx->text = dt_xstrdup(v);
		return lx->tok = T_IDENT;
	}
	if (isalpha((unsigned char)*s) || *s == '_' || *s == '`') {
		while (isalnum((unsigned char)*lx->p) || *lx->p == '_' || *lx->p == '`')
			lx->p++;
		if (s[0] == 'D' && s[1] == '`' && lx->p > s + 2)
			s += 2; /* D`name: a type of the D module, the program's or DTrace's
				   library's */
		lx->len = (size_t)(lx->p - s);
		lx->text = dt_xmalloc(lx->len + 1);
		memcpy(lx->text, s, lx->len);
		lx->text[lx->len] = '\0';
		/* D`name: the D module's scope, where the program's own types are */
		if (lx->len > 2 && !strncmp(lx->text, "D`", 2) && lx->text[2] != '`')
			memmove(lx->text, lx->text + 2, lx->len - 1);
		return lx->tok = T_IDENT;
	}
	if (*s == '@') {
		lx->p++;
		while (isalnum((unsigned char)*lx->p) || *lx->p == '_')
			lx->p++;
		lx->len = (size_t)(lx->p - s - 1);
		lx->text = dt_xmalloc(lx->len + 1);
		memcpy(lx->text, s + 1, lx->len);
		lx->text[lx->len] = '\0';
		return lx->tok = T_AGG;
	}
	if (isdigit((unsigned char)*s)) {
		char *end;

		errno = 0;
		lx->ival = (int64_t)strtoull(s, &end, 0);
		if (errno) {
			dt_error_at(lx->diag, &lx->pos, "D_INT_OFLOW",
				    "integer constant out of range");
			lx->err = true;
		}
		int_type(lx, s, end);
		while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
			end++;
		if (isalnum((unsigned char)*end) || *end == '.') {
			dt_error_at(
			    lx->diag, &lx->pos,
			    isdigit((unsigned char)*end) ? "D_INT_DIGIT" : "D_SYNTAX",
			    "invalid number: D has integers (floating point is not supported)");
			lx->err = true;
			while (isalnum((unsigned char)*end) || *end == '.')
				end++;
		}
		lx->p = end;
		return lx->tok = T_INT;
	}
	if (*s == '"' || *s == '\'') {
		struct dt_buf b = {0};
		char q = *s;

		lx->p++;
		while (*lx->p && *lx->p != q && *lx->p != '\n') {
			if (*lx->p == '\\' && lx->p[1] && !strchr(char_escapes, lx->p[1])) {
				/* DTrace's constants keep the backslash of \? \' \c (stresc2chr) */
				dt_buf_add(&b, lx->p, 2);
				lx->p += 2;
			} else if (*lx->p == '\\' && lx->p[1]) {
				const char *p = lx->p + 1;
				char c = (char)escape(&p);

				dt_buf_add(&b, &c, 1);
				lx->p = p;
			} else {
				dt_buf_add(&b, lx->p++, 1);
			}
		}
		if (*lx->p != q) {
			dt_error_at(lx->diag, &lx->pos,
				    *lx->p == '\n' ? (q == '"' ? "D_STR_NL" : "D_CHR_NL")
						   : "D_SYNTAX",
				    "unterminated %s: add the closing %c",
				    q == '"' ? "string" : "character constant", q);
			lx->err = true;
			dt_free(b.s);
			return lx->tok = T_ERROR;
		}
		lx->p++;
		if (q == '\'' && (!b.n || b.n > 8)) {
			dt_error_at(lx->diag, &lx->pos, b.n ? "D_CHR_OFLOW" : "D_CHR_NULL",
				    b.n ? "character constant is too long"
					: "empty character constant");
			lx->err = true;
			dt_free(b.s);
			return lx->tok = T_ERROR;
		}
		if (q == '\'') {
			/* 'ab': its bytes, the first the most significant (an int, a long past 4)
			 */
			uint64_t v = 0;
			size_t k;

			if (b.n > 8) {
				dt_error_at(lx->diag, &lx->pos, "D_CHR_OFLOW",
					    "character constant is too long");
				lx->err = true;
			}
			for (k = 0; k < b.n && k < 8; k++)
				v = v << 8 | (unsigned char)b.s[k];
			lx->ival = (int64_t)v;
			lx->isize = b.n > 4 ? 8 : 4;
			lx->iuns = false;
			dt_free(b.s);
			return lx->tok = T_INT;
		}
		dt_buf_add(&b, "", 1);
		lx->text = b.s;
		lx->len = b.n - 1;
		return lx->tok = T_STR;
	}
	for (i = 0; ops[i]; i++) {
		size_t n = strlen(ops[i]);

		if (!strncmp(s, ops[i], n)) {
			memcpy(lx->op, ops[i], n + 1);
			lx->p += n;
			return lx->tok = T_OP;
		}
	}
	dt_error_at(lx->diag, &lx->pos, "D_SYNTAX", "invalid character '%c' in a D program", *s);
	lx->err = true;
	lx->p++;
	return lx->tok = T_ERROR;
}

bool dt_lex_is(const struct dt_lex *lx, const char *op)
{
	return lx->tok == T_OP && !strcmp(lx->op, op);
}

bool dt_lex_is_word(const struct dt_lex *lx, const char *w)
{
	return lx->tok == T_IDENT && !strcmp(lx->text, w);
}

/* ---- small helpers shared by every file ---- */

/*
 * Every allocation of the consumer is on one list (an arena): the tree, the
 * tables and the recipes live for the whole run and are shared between them,
 * so they are released at once at the end (dt_arena_release) instead of
 * each by its owner.
 */
union arena_hdr {
	struct {
		union arena_hdr *prev, *next;
	} l;
	max_align_t align;
};

static union arena_hdr arena = {.l = {&arena, &arena}};

static void *link_in(union arena_hdr *h)
{
	h->l.next = arena.l.next;
	h->l.prev = &arena;
	arena.l.next->l.prev = h;
	arena.l.next = h;
	return h + 1;
}

static void unlink_out(union arena_hdr *h)
{
	h->l.prev->l.next = h->l.next;
	h->l.next->l.prev = h->l.prev;
}

static void nomem(void)
{
	fputs("dtrace: out of memory\n", stderr);
	exit(1);
}

void *dt_xmalloc(size_t n)
{
	union arena_hdr *h = malloc(sizeof(*h) + (n ? n : 1));

	if (!h)
		nomem();
	return link_in(h);
}

void *dt_xrealloc(void *p, size_t n)
{
	union arena_hdr *h;

	if (!p)
		return dt_xmalloc(n);
	h = (union arena_hdr *)p - 1;
	unlink_out(h);
	h = realloc(h, sizeof(*h) + (n ? n : 1));
	if (!h)
		nomem();
	return link_in(h);
}

void *dt_xgrow(void *p, size_t n)
{
	size_t have =
	    p ? malloc_usable_size((union arena_hdr *)p - 1) - sizeof(union arena_hdr) : 0;

	if (n <= have)
		return p;
	return dt_xrealloc(p, n > 2 * have ? n : 2 * have);
}

void dt_free(void *p)
{
	union arena_hdr *h;

	if (!p)
		return;
	h = (union arena_hdr *)p - 1;
	unlink_out(h);
	free(h);
}

void dt_arena_release(void)
{
	while (arena.l.next != &arena) {
		union arena_hdr *h = arena.l.next;

		unlink_out(h);
		free(h);
	}
}

char *dt_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(dt_xmalloc(n), s, n);
}

void dt_buf_add(struct dt_buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = dt_xrealloc(b->s, b->cap);
	}
	if (n) /* s may be NULL then: an empty buffer's */
		memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void dt_buf_printf(struct dt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (b->n + (size_t)n + 1 > b->cap) {
		b->cap = (b->n + (size_t)n + 1) * 2;
		b->s = dt_xrealloc(b->s, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}
