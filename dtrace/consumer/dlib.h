/* SPDX-License-Identifier: MIT */
/* DTrace's own D library (dlib.c): its text, and its builtin translators' members. */
#ifndef DT_DLIB_H
#define DT_DLIB_H

/* The builtin translators, from struct task_struct * (struct dt_xlator's builtin). */
enum { DT_XL_PSINFO = 1, DT_XL_LWPSINFO = 2 };

struct dt_dlib_member {
	const char *name;
	char kind; /* 'k' the engine's from the task (N_KTASK), 'a' the task's address, 'z' value */
	int value;
};

struct dt_dlib_xlator {
	const char *out; /* the output type, canonical ("struct psinfo") */
	int builtin;
	const struct dt_dlib_member *members;
};

extern const char dt_dlib_name[];
/* The types (parsed once a program) and the inlines (with each source, as a program's). */
extern const char dt_dlib_types[];
extern const char dt_dlib_inlines[];
extern const struct dt_dlib_xlator dt_dlib_xlators[];

/* The member `name` builtin translator `builtin` defines, or NULL (D_XLATE_NOCONV). */
const struct dt_dlib_member *dt_dlib_member(int builtin, const char *name);

#endif /* DT_DLIB_H */
