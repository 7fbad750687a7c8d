/* SPDX-License-Identifier: MIT */
/*
 * The consumer's options (-x NAME[=VALUE], #pragma D option): what each does
 * to struct dt_consumer_opts, and which DTrace options are accepted and have
 * no effect here. The bottom layer: the lexer (pragmas) and the driver
 * (dtrace.c's -x) both call it, and it calls nothing of the consumer.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "consumer.h"

static long parse_size(const char *v)
{
	char *end;
	long n = strtol(v, &end, 10);

	switch (*end) {
	case 'k':
	case 'K':
		n <<= 10;
		break;
	case 'm':
	case 'M':
		n <<= 20;
		break;
	case 'g':
	case 'G':
		n <<= 30;
		break;
	default:
		break;
	}
	return n;
}

/* DTrace's sizes: digits, then k, m, g or t; a count: digits; in range. */
static bool valid_size(const char *v, bool count)
{
	char *end;
	unsigned long long n;

	if (!v || !isdigit((unsigned char)*v))
		return false;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || n > (1ULL << 40))
		return false;
	if (!count && *end && strchr("kKmMgGtT", *end))
		end++;
	return !*end;
}

int dt_set_option(struct dt_consumer_opts *o, const char *opt, const char *val)
{
	static const char *const ignored[] = {
	    "switchrate",   "aggrate",	     "cleanrate", "statusrate",	 "nspec",
	    "specsize",	    "aggsize",	     "cpu",	  "stackframes", "ustackframes",
	    "jstackframes", "jstackstrsize", "zdefs",	  "evaltime",	 "nolibs",
	    "bufpolicy",    "bufresize",     "grabanon",  "linkmode",	 "rawbytes",
	    "aggpercpu",    "stackindent",   NULL};
	static const char *const flags[] = {"quiet",   "destructive", "defaultargs", "zdefs",
					    "errtags", "argref",      NULL};
	/* nspec is a count, the others sizes */
	static const char *const sizes[] = {"nspec",	   "specsize", "aggsize", "dynvarsize",
					    "scratchsize", "bufsize",  "strsize", NULL};
	struct stat st;
	size_t i;

	for (i = 0; flags[i]; i++)
		if (!strcmp(opt, flags[i]) && val)
			return -2; /* a flag takes no value */
	if ((!strcmp(opt, "bufsize") || !strcmp(opt, "strsize")) && (!val || parse_size(val) <= 0))
		return -2;
	if (!strcmp(opt, "strsize") && parse_size(val) < 2)
		return -2; /* the NUL and one byte */
	for (i = 0; sizes[i]; i++)
		if (!strcmp(opt, sizes[i]) && !valid_size(val, i == 0))
			return -2;
	if ((!strcmp(opt, "ldpath") || !strcmp(opt, "modpath")) &&
	    (!val || stat(val, &st) || !S_ISDIR(st.st_mode)))
		return -2;
	if (!strcmp(opt, "quiet")) {
		o->quiet = true;
	} else if (!strcmp(opt, "destructive")) {
		o->destructive = true;
	} else if (!strcmp(opt, "errtags")) {
		o->errtags = true;
	} else if (!strcmp(opt, "argref")) {
		o->argref = true;
	} else if (!strcmp(opt, "stdc")) {
		return val && strlen(val) == 1 && strchr("acst", val[0]) ? 0 : -2;
	} else if (!strcmp(opt, "version")) {
		/* D's versions: 1.0 ... 2.0 */
		return val && (!strcmp(val, "2.0") || (!strncmp(val, "1.", 2) && val[2] >= '0' &&
						       val[2] <= '9' && !val[3]))
			   ? 0
			   : -2;
	} else if (!strcmp(opt, "defaultargs")) {
		o->defaultargs = true;
	} else if (!strcmp(opt, "bpftrace")) {
		o->engine = DT_ENGINE_BPFTRACE;
		o->show_program = true;
	} else if (!strcmp(opt, "engine") && val && !strcmp(val, "bpf")) {
		o->engine = DT_ENGINE_BPF;
	} else if (!strcmp(opt, "engine") && val && !strcmp(val, "bpftrace")) {
		o->engine = DT_ENGINE_BPFTRACE;
	} else if (!strcmp(opt, "bpfc")) {
		o->engine = DT_ENGINE_BPF;
		o->show_program = true;
	} else if (!strcmp(opt, "strsize") && val) {
		o->strsize = parse_size(val);
	} else if (!strcmp(opt, "bufsize") && val) {
		o->bufsize = parse_size(val);
	} else if (!strcmp(opt, "dynvarsize") && val) {
		o->dynvarsize = parse_size(val);
	} else if (!strcmp(opt, "zdefs")) {
		o->zero_ok = true;
	} else {
		for (i = 0; ignored[i]; i++)
			if (!strcmp(opt, ignored[i]))
				return 0;
		return -1;
	}
	return 0;
}
