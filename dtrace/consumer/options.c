/* SPDX-License-Identifier: MIT */
/*
 * The consumer's options (-x NAME[=VALUE], #pragma D option): what each does
 * to struct dt_consumer_opts, and which DTrace options are accepted and have
 * no effect here. The bottom layer: the lexer (pragmas) and the driver
 * (dtrace.c's -x) both call it, and it calls nothing of the consumer.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

static void refuse(struct dt_consumer_opts *o, const char *fmt, ...) USDT_PRINTF(2, 3);
static void refuse(struct dt_consumer_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->opt_error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(o->opt_error, sizeof(o->opt_error), fmt, ap);
	va_end(ap);
}

/* A boolean option's value as DTrace reads it: 1 set, 0 unset, -1 neither. */
static int bool_value(const char *v)
{
	static const char *const on[] = {"yes", "true", "enable", "enabled", "on", "set", NULL};
	static const char *const off[] = {"no",	 "false", "disable", "disabled",
					  "off", "unset", NULL};
	size_t i;

	if (!v)
		return 1;
	for (i = 0; on[i]; i++)
		if (!strcasecmp(v, on[i]))
			return 1;
	for (i = 0; off[i]; i++)
		if (!strcasecmp(v, off[i]))
			return 0;
	return -1;
}

/* A rate as DTrace's dt_opt_rate reads it, in ns (a bare number or hz: per second); -1 */
static long long rate_ns(const char *v)
{
	static const struct {
		const char *u;
		long long ns;
	} units[] = {{"ns", 1},
		     {"nsec", 1},
		     {"us", 1000},
		     {"usec", 1000},
		     {"ms", 1000000},
		     {"msec", 1000000},
		     {"s", 1000000000},
		     {"sec", 1000000000},
		     {"m", 60000000000},
		     {"min", 60000000000},
		     {"h", 3600000000000},
		     {"hour", 3600000000000},
		     {"d", 86400000000000},
		     {"day", 86400000000000}};
	unsigned long long n;
	char *end;
	size_t i;

	if (!v || *v < '0' || *v > '9')
		return -1;
	n = strtoull(v, &end, 10);
	if (!*end || !strcmp(end, "hz"))
		return n ? 1000000000LL / (long long)n : -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].u))
			return (long long)n * units[i].ns;
	return -1;
}

int dt_set_option(struct dt_consumer_opts *o, const char *opt, const char *val)
{
	static const char *const ignored[] = {
	    "switchrate",  "aggrate",	   "cleanrate",	   "statusrate",
	    "stackframes", "ustackframes", "jstackframes", "jstackstrsize",
	    "zdefs",	   "evaltime",	   "nolibs",	   "bufresize",
	    "grabanon",	   "linkmode",	   "maxframes",	   NULL};
	/* DTrace's options that change what is printed, which this consumer does not do */
	static const char *const refused[] = {"aggpercpu", "aggzoom",	 "aggpack",
					      "agghist",   "flowindent", "stackindent",
					      "cpu",	   "temporal",	 NULL};
	static const char *const bools[] = {"quiet",	  "destructive", "defaultargs", "zdefs",
					    "aggsortkey", "aggsortrev",	 "aggpercpu",	"aggzoom",
					    "aggpack",	  "agghist",	 "flowindent",	"rawbytes",
					    "temporal",	  NULL};
	/* flags that take no value (the booleans above take DTrace's words) */
	static const char *const flags[] = {"errtags", "argref", NULL};
	/* nspec is a count, the others sizes */
	static const char *const sizes[] = {"nspec",	  "specsize",	 "aggsize",
					    "dynvarsize", "scratchsize", "bufsize",
					    "strsize",	  "printsize",	 NULL};
	struct stat st;
	size_t i;

	for (i = 0; flags[i]; i++)
		if (!strcmp(opt, flags[i]) && val)
			return -2; /* a flag takes no value */
	for (i = 0; sizes[i]; i++)
		if (!strcmp(opt, sizes[i]) && val && !valid_size(val, i == 0))
			return -2;
	if ((!strcmp(opt, "ldpath") || !strcmp(opt, "modpath")) &&
	    (!val || stat(val, &st) || !S_ISDIR(st.st_mode)))
		return -2;

	for (i = 0; bools[i]; i++)
		if (!strcmp(opt, bools[i])) {
			int b = bool_value(val);

			if (b < 0)
				return -2; /* a value DTrace refuses */
			if (!b) {	   /* unset: DTrace's default, which is ours */
				if (!strcmp(opt, "quiet"))
					o->quiet = false;
				else if (!strcmp(opt, "aggsortkey"))
					o->aggsortkey = false;
				else if (!strcmp(opt, "aggsortrev"))
					o->aggsortrev = false;
				else if (!strcmp(opt, "rawbytes"))
					o->rawbytes = false;
				else if (!strcmp(opt, "destructive"))
					o->destructive = false;
				else if (!strcmp(opt, "defaultargs"))
					o->defaultargs = false;
				return 0;
			}
			val = NULL;
		}
	for (i = 0; refused[i]; i++)
		if (!strcmp(opt, refused[i])) {
			refuse(o,
			       "-x %s: this option changes DTrace's output, and this D consumer "
			       "does not do it: refused rather than ignored",
			       opt);
			return 0;
		}
	if (!strcmp(opt, "bufpolicy")) { /* the reader keeps what ring and fill keep (records.c) */
		if (val && !strcmp(val, "switch"))
			o->bufpolicy = DT_BUF_SWITCH;
		else if (val && !strcmp(val, "ring"))
			o->bufpolicy = DT_BUF_RING;
		else if (val && !strcmp(val, "fill"))
			o->bufpolicy = DT_BUF_FILL;
		else
			refuse(o, "failed to set -x bufpolicy: Invalid value for specified option");
		return 0;
	}
	if ((!strcmp(opt, "strsize") || !strcmp(opt, "bufsize")) &&
	    (!val || parse_size(val) < (opt[0] == 's' ? 2 : 1))) {
		refuse(o, "failed to set -x %s: Invalid value for specified option", opt);
		return 0;
	}
	if (!strcmp(opt, "amin")) {
		if (!val || !dt_attr_parse(val, o->amin))
			return -2;
		o->amin_set = true;
		return 0;
	}
	if (!strcmp(opt, "iregs")) {
		/* DTrace's BPF has 8 registers a clause may use (r0-r8 less one): 1 to 8 */
		char *end = NULL;
		long n = val ? strtol(val, &end, 0) : 0;

		return n >= 1 && n <= 8 && end && !*end ? 0 : -2;
	}
	if (!strcmp(opt, "rawbytes")) {
		o->rawbytes = true;
		return 0;
	}
	if (!strcmp(opt, "aggsortkey") || !strcmp(opt, "aggsortrev")) {
		*(opt[7] == 'k' ? &o->aggsortkey : &o->aggsortrev) = true;
		return 0;
	}
	if (!strcmp(opt, "aggsortkeypos") || !strcmp(opt, "aggsortpos")) {
		long n = val ? strtol(val, NULL, 10) : -1;

		if (n < 0)
			refuse(o, "failed to set -x %s: Invalid value for specified option", opt);
		else
			*(opt[7] == 'k' ? &o->aggsortkeypos : &o->aggsortpos) = n;
		return 0;
	}

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
	} else if (!strcmp(opt, "engine")) {
		/* one engine: engine=bpf names it (scripts wrote it), anything else is gone */
		if (!val || strcmp(val, "bpf"))
			refuse(o,
			       "-x engine=%s: dtrace has one engine, BPF C through clang and "
			       "libbpf (the bpftrace backend was removed)",
			       val ? val : "");
	} else if (!strcmp(opt, "bpftrace")) {
		refuse(o, "-x bpftrace: the bpftrace backend was removed (-x bpfc prints the "
			  "engine's BPF C)");
	} else if (!strcmp(opt, "bpfc")) {
		o->show_program = true;
	} else if (!strcmp(opt, "strsize") && val) {
		o->strsize = parse_size(val);
	} else if (!strcmp(opt, "bufsize") && val) {
		o->bufsize = parse_size(val);
	} else if (!strcmp(opt, "aggsize") && val) {
		o->aggsize = parse_size(val);
	} else if (!strcmp(opt, "scratchsize") && val) {
		o->scratchsize = parse_size(val);
	} else if (!strcmp(opt, "nspec") && val) {
		o->nspec = parse_size(val);
		o->nspec_set = true;
	} else if (!strcmp(opt, "specsize") && val) {
		o->specsize = parse_size(val);
	} else if (!strcmp(opt, "printsize") && val) {
		o->printsize = parse_size(val);
	} else if (!strcmp(opt, "dynvarsize") && val) {
		o->dynvarsize = parse_size(val);
	} else if (!strcmp(opt, "statusrate")) {
		o->statusrate_ns = rate_ns(val);
		if (o->statusrate_ns < 0)
			return -2;
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

/* DTrace's rate: digits and a unit it knows (dt_opt_rate) */
static bool valid_rate(const char *v)
{
	static const char *const units[] = {"",	    "ns", "nsec", "us", "usec", "ms",
					    "msec", "s",  "sec",  "m",	"min",	"h",
					    "hour", "d",  "day",  "hz", NULL};
	char *end;
	size_t i;

	if (!v || *v < '0' || *v > '9')
		return false;
	strtoull(v, &end, 10);
	for (i = 0; units[i]; i++)
		if (!strcmp(end, units[i]))
			return true;
	return false;
}

/*
 * setopt() while tracing: DTrace's dynamic run-time options. Those that
 * change the output are honoured (printa's order, quiet, rawbytes), the
 * rates checked and accepted (nothing printed depends on them); DTrace's
 * other run-time options cannot change while tracing, and a name DTrace
 * does not know is refused. Returns NULL when the option is set, else
 * DTrace's reason.
 */
const char *dt_set_runtime_option(struct dt_consumer_opts *o, const char *opt, const char *val)
{
	static const char *const rates[] = {"aggrate", "switchrate", NULL};
	static const char *const undone[] = {"flowindent", "stackindent", NULL};
	static const char *const fixed[] = {
	    "aggsize",	  "bpflog",	  "bpflogsize",	   "bufsize",	  "bufpolicy",
	    "bufresize",  "cleanrate",	  "cpu",	   "destructive", "dynvarsize",
	    "grabanon",	  "jstackframes", "jstackstrsize", "lockmem",	  "maxframes",
	    "nspec",	  "pcapsize",	  "scratchsize",   "specsize",	  "stackframes",
	    "statusrate", "strsize",	  "ustackframes",  "noresolve",	  NULL};
	static const char *const compile[] = {
	    "amin",	"argref",   "core",    "cpp",	      "cpphdrs",   "cpppath",	  "ctypes",
	    "define",	"dtypes",   "debug",   "debugassert", "disasm",	   "droptags",	  "empty",
	    "errtags",	"evaltime", "incdir",  "iregs",	      "kdefs",	   "knodefs",	  "late",
	    "lazyload", "ldpath",   "libdir",  "linkmode",    "linktype",  "nolibs",	  "pgmax",
	    "procfs",	"pspec",    "stdc",    "strip",	      "syslibdir", "tregs",	  "udefs",
	    "undef",	"unodefs",  "verbose", "version",     "zdefs",	   "quietresize", NULL};
	int b = val && *val >= '0' && *val <= '9' ? 1 : bool_value(val);
	size_t i;

	for (i = 0; rates[i]; i++)
		if (!strcmp(opt, rates[i]))
			return val && valid_rate(val) ? NULL : "Invalid value for specified option";
	for (i = 0; compile[i]; i++)
		if (!strcmp(opt, compile[i]))
			return NULL; /* DTrace's compile-time options: no effect now */
	for (i = 0; fixed[i]; i++)
		if (!strcmp(opt, fixed[i]))
			return "Operation illegal when tracing is active";
	for (i = 0; undone[i]; i++)
		if (!strcmp(opt, undone[i]))
			return "this D consumer does not do this option";
	if (!strcmp(opt, "printsize")) { /* print()'s bytes: read as each print() renders */
		if (!val || !valid_size(val, false))
			return "Invalid value for specified option";
		o->printsize = parse_size(val);
		return NULL;
	}
	if (!strcmp(opt, "aggsortkeypos") || !strcmp(opt, "aggsortpos")) {
		long n = val ? strtol(val, NULL, 10) : -1;

		if (n < 0)
			return "Invalid value for specified option";
		*(opt[7] == 'k' ? &o->aggsortkeypos : &o->aggsortpos) = n;
		return NULL;
	}
	if (strcmp(opt, "aggsortkey") && strcmp(opt, "aggsortrev") && strcmp(opt, "quiet") &&
	    strcmp(opt, "rawbytes"))
		return "Invalid option name";
	if (b < 0)
		return "Invalid value for specified option";
	if (!strcmp(opt, "aggsortkey"))
		o->aggsortkey = b;
	else if (!strcmp(opt, "aggsortrev"))
		o->aggsortrev = b;
	else if (!strcmp(opt, "quiet"))
		o->quiet = b;
	else
		o->rawbytes = b;
	return NULL;
}

bool dt_attr_parse(const char *s, unsigned char attr[3])
{
	static const char *const stab[] = {"internal", "private",  "obsolete", "external",
					   "unstable", "evolving", "stable",   "standard"};
	static const char *const cls[] = {"unknown", "cpu", "platform", "group", "isa", "common"};
	int part = 0;

	attr[0] = attr[1] = attr[2] = 0;
	while (*s) {
		size_t n = strcspn(s, "/"), i, nw = part < 2 ? 8 : 6;
		const char *const *w = part < 2 ? stab : cls;

		if (part > 2)
			return false;
		for (i = 0; i < nw; i++)
			if (strlen(w[i]) == n && !strncasecmp(s, w[i], n))
				break;
		if (i == nw)
			return false;
		attr[part++] = (unsigned char)i;
		s += n + (s[n] == '/');
	}
	return part > 0;
}
