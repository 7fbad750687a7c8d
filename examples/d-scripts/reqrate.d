#!/usr/sbin/dtrace -qs
/*
 * reqrate.d - requests per second of every quickstart process the helper
 * daemon knows (the provider glob also matches the pid: quickstart1234),
 * printed each second, for $1 seconds.
 *
 * USAGE: reqrate.d 5
 */

#pragma D option quiet

quickstart*:::request-done
{
	@rate[probeprov] = count();
}

profile:::tick-1sec
{
	printa("%-24s %@6d/s\n", @rate);
	trunc(@rate);
	secs++;
}

profile:::tick-1sec
/secs == $1/
{
	exit(0);
}
