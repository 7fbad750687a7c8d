/* SPDX-License-Identifier: MIT */
/*
 * A small JSON reader for bpftrace's `-f json` lines: one value per line,
 * objects keep their members in order (a map's entries, a histogram's
 * buckets). Strings are decoded (\uXXXX to UTF-8; bpftrace escapes control
 * bytes that way, and the records' separators are control bytes).
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static char *string(const char **pp, size_t *len)
{
	const char *p = *pp + 1;
	struct dt_buf b = {0};

	dt_buf_add(&b, "", 0);
	while (*p && *p != '"') {
		if (*p == '\\') {
			p++;
			switch (*p) {
			case 'n':
				dt_buf_add(&b, "\n", 1);
				break;
			case 't':
				dt_buf_add(&b, "\t", 1);
				break;
			case 'r':
				dt_buf_add(&b, "\r", 1);
				break;
			case 'b':
				dt_buf_add(&b, "\b", 1);
				break;
			case 'f':
				dt_buf_add(&b, "\f", 1);
				break;
			case 'u': {
				unsigned v = 0;
				int i;
				char u[4];

				for (i = 1; i <= 4 && p[i]; i++) {
					char c = p[i];

					v = v * 16 +
					    (unsigned)(c >= '0' && c <= '9'   ? c - '0'
						       : c >= 'a' && c <= 'f' ? c - 'a' + 10
						       : c >= 'A' && c <= 'F' ? c - 'A' + 10
									      : 0);
				}
				p += 4;
				if (v < 0x80) {
					u[0] = (char)v;
					dt_buf_add(&b, u, 1);
				} else if (v < 0x800) {
					u[0] = (char)(0xc0 | (v >> 6));
					u[1] = (char)(0x80 | (v & 0x3f));
					dt_buf_add(&b, u, 2);
				} else {
					u[0] = (char)(0xe0 | (v >> 12));
					u[1] = (char)(0x80 | ((v >> 6) & 0x3f));
					u[2] = (char)(0x80 | (v & 0x3f));
					dt_buf_add(&b, u, 3);
				}
				break;
			}
			case '\0':
				dt_free(b.s);
				return NULL;
			default:
				dt_buf_add(&b, p, 1);
				break;
			}
			p++;
		} else {
			dt_buf_add(&b, p++, 1);
		}
	}
	if (*p != '"') {
		dt_free(b.s);
		return NULL;
	}
	*pp = p + 1;
	*len = b.n;
	return b.s;
}

static struct dt_json *value(const char **p, int depth)
{
	struct dt_json *j;

	if (depth > 32)
		return NULL;
	ws(p);
	j = dt_xmalloc(sizeof(*j));
	memset(j, 0, sizeof(*j));
	if (**p == '{' || **p == '[') {
		char close = **p == '{' ? '}' : ']';

		j->kind = close == '}' ? J_OBJECT : J_ARRAY;
		(*p)++;
		ws(p);
		if (**p == close) {
			(*p)++;
			return j;
		}
		for (;;) {
			char *key = NULL;
			size_t len;
			struct dt_json *v;

			ws(p);
			if (j->kind == J_OBJECT) {
				if (**p != '"' || !(key = string(p, &len)))
					goto bad;
				ws(p);
				if (**p != ':') {
					dt_free(key);
					goto bad;
				}
				(*p)++;
			}
			v = value(p, depth + 1);
			if (!v) {
				dt_free(key);
				goto bad;
			}
			v->key = key;
			DT_PUSH(j->v, j->n, v);
			ws(p);
			if (**p == ',') {
				(*p)++;
				continue;
			}
			if (**p == close) {
				(*p)++;
				return j;
			}
			goto bad;
		}
	}
	if (**p == '"') {
		j->kind = J_STRING;
		j->s = string(p, &j->len);
		if (!j->s)
			goto bad;
		return j;
	}
	if (**p == '-' || (**p >= '0' && **p <= '9')) {
		char *end;

		j->kind = J_NUMBER;
		j->i = strtoll(*p, &end, 10);
		if (*end == '.' || *end == 'e' || *end == 'E')
			j->i = (int64_t)strtod(*p, &end);
		else if (**p != '-' && j->i == INT64_MAX)
			j->i = (int64_t)strtoull(*p, &end, 10);
		*p = end;
		return j;
	}
	if (!strncmp(*p, "true", 4) || !strncmp(*p, "false", 5) || !strncmp(*p, "null", 4)) {
		j->kind = J_NUMBER;
		j->i = **p == 't';
		*p += **p == 'f' ? 5 : 4;
		return j;
	}
bad:
	dt_json_free(j);
	return NULL;
}

struct dt_json *dt_json_parse(const char *text)
{
	return value(&text, 0);
}

const struct dt_json *dt_json_get(const struct dt_json *j, const char *key)
{
	size_t i;

	if (!j || j->kind != J_OBJECT)
		return NULL;
	for (i = 0; i < j->n; i++)
		if (!strcmp(j->v[i]->key, key))
			return j->v[i];
	return NULL;
}

void dt_json_free(struct dt_json *j)
{
	size_t i;

	if (!j)
		return;
	for (i = 0; i < j->n; i++)
		dt_json_free(j->v[i]);
	dt_free(j->v);
	dt_free(j->key);
	dt_free(j->s);
	dt_free(j);
}
