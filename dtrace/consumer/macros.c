/* SPDX-License-Identifier: MIT */
/*
 * D's macro variables of the dtrace process itself ($pid, $ppid, $uid,
 * $gid, $euid, $egid, $sid, $pgid): integers, as DTrace defines them, the
 * values when the program is compiled. ($target and $N are lex.c's.)
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "d.h"

bool dt_macro_process(const char *s, char *buf, size_t n, size_t *len)
{
	size_t k = 0;
	long v;

	while (isalnum((unsigned char)s[k]) || s[k] == '_')
		k++;
#define IS(name) (k == sizeof(name) - 1 && !strncmp(s, name, k))
	if (IS("pid"))
		v = (long)getpid();
	else if (IS("ppid"))
		v = (long)getppid();
	else if (IS("uid"))
		v = (long)getuid();
	else if (IS("gid"))
		v = (long)getgid();
	else if (IS("euid"))
		v = (long)geteuid();
	else if (IS("egid"))
		v = (long)getegid();
	else if (IS("sid"))
		v = (long)getsid(0);
	else if (IS("pgid"))
		v = (long)getpgrp();
	else
		return false;
#undef IS
	snprintf(buf, n, "%ld", v);
	*len = k;
	return true;
}
