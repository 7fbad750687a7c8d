/* SPDX-License-Identifier: MIT */
/* Running the C preprocessor over a .d file for `dtrace -C`: see cpp.c. */
#ifndef USDT_CPP_H
#define USDT_CPP_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

struct usdt_cpp_opts {
	const char *cpp;   /* $CPP (may hold arguments: "gcc -E"), or NULL for "cc -E" */
	char *const *args; /* "-Idir", "-DNAME=V", "-UNAME", in command-line order */
	size_t nargs;
	/*
	 * For a D program to trace (not -h/-G): DTrace's predefined macros
	 * (__linux, __unix, __SVR4, __SUNW_D, __SUNW_D_64; __GNUC__ undefined) and
	 * its -x stdc mode, 'a' (ISO C: -std=c99), 'c', 't' (the compiler's
	 * default) or 's' (K&R: -traditional-cpp, no __STDC__). 0: none of it.
	 */
	char dstdc;
};

/*
 * Preprocess `file` and return its output, NUL-terminated, in *text (caller
 * frees) and its length in *len. The preprocessor's own messages go straight
 * to our stderr. Returns 0, or -1 after reporting to diag.
 */
int usdt_cpp_run(const struct usdt_cpp_opts *opts, const char *file, char **text, size_t *len,
		 struct usdt_diag *diag);

/*
 * One source file's text, NUL-terminated, in *text (caller frees): through
 * cpp when with_cpp, or when auto_cpp and the file needs it (a warning, once
 * while *cpp_warned is false), else as it is. Returns 0, or -1 after
 * reporting to diag.
 */
int usdt_read_source(const struct usdt_cpp_opts *co, bool with_cpp, bool auto_cpp, const char *src,
		     char **text, size_t *len, bool *cpp_warned, struct usdt_diag *diag);

#endif
