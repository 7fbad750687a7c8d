/* SPDX-License-Identifier: MIT */
/* The JSON reader for bpftrace's -f json lines (json.c). */
#ifndef DT_JSON_H
#define DT_JSON_H

#include "d.h"

enum dt_jkind { J_OBJECT, J_ARRAY, J_STRING, J_NUMBER };

struct dt_json {
	enum dt_jkind kind;
	char *key; /* a member's name */
	char *s;   /* a string (NUL-terminated; len without it) */
	size_t len;
	int64_t i;
	struct dt_json **v; /* members or elements, in order */
	size_t n;
};

struct dt_json *dt_json_parse(const char *text);
const struct dt_json *dt_json_get(const struct dt_json *j, const char *key);
void dt_json_free(struct dt_json *j);

#endif /* DT_JSON_H */
