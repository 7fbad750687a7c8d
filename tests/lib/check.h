/* SPDX-License-Identifier: MIT */
/*
 * The check harness of usdtkit's C unit tests: a failed check is reported
 * with its file and line and counted, and the test goes on; main ends with
 * `return check_result();` (exit 1 when any check failed).
 *
 *   CHECK(cond)                 reports "FILE:LINE: FAIL: cond"
 *   CHECKF(cond, fmt, ...)      reports "FILE:LINE: FAIL: " and the message
 *
 * Include it from a test's directory as "../lib/check.h" (or "../../lib/...").
 */
#ifndef USDTKIT_TESTS_CHECK_H
#define USDTKIT_TESTS_CHECK_H

#include <stdio.h>

/* Checks failed so far. */
static int check_failures;

#define CHECKF(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                      \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK(cond) CHECKF(cond, "%s", #cond)

/* main's exit status: 1 (and the count, on stderr) when a check failed. */
static inline int check_result(void)
{
	if (check_failures)
		fprintf(stderr, "%d check(s) failed\n", check_failures);
	return check_failures ? 1 : 0;
}

#endif /* USDTKIT_TESTS_CHECK_H */
