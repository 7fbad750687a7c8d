/* SPDX-License-Identifier: MIT */
/*
 * An interpreter's execute hook (PHP's zend_dtrace.c): the file name and line number are only
 * computed when a probe is enabled, so on the other path they are unset when the probe's
 * arguments are read. And a status set in every case of a switch but the default.
 */
#include "probes.h"

struct wp_frame {
	int depth;
};
extern int wp_enabled(void);
extern const char *wp_executed_filename(void);
extern int wp_executed_lineno(void);
extern void wp_execute(struct wp_frame *frame);

void wp_dtrace_execute(struct wp_frame *frame)
{
	int lineno;
	const char *filename;

	if (wp_enabled()) {
		filename = wp_executed_filename();
		lineno = wp_executed_lineno();
	}
	if (wp_enabled())
		WARNPAT_EXECUTE_ENTRY((char *)filename, lineno);
	wp_execute(frame);
	if (wp_enabled())
		WARNPAT_EXECUTE_RETURN((char *)filename, lineno);
}

int wp_request(int kind, const char *path)
{
	long bytes;
	int status;

	switch (kind) {
	case 0:
		status = 200;
		bytes = 10;
		break;
	case 1:
		status = 404;
		bytes = 0;
		break;
	default:
		break;
	}
	WARNPAT_REQUEST_DONE(status, (char *)path, bytes);
	return kind;
}
