#!/usr/sbin/dtrace -qs
/*
 * reqsnoop.d - snoop quickstart requests as they finish.
 *
 * USAGE: reqsnoop.d -c './quickstart 5 100'     (or -p PID)
 *
 * FIELDS:
 *		TIME		wall clock time the request finished
 *		ID		request id
 *		STATUS		HTTP-style status
 *		LAT(us)		latency the program measured, microseconds
 *		PATH		path asked for
 */

#pragma D option quiet

dtrace:::BEGIN
{
	printf("%-20s %4s %6s %8s %s\n", "TIME", "ID", "STATUS", "LAT(us)", "PATH");
}

quickstart$target:::request-start
{
	self->path = copyinstr(arg1);
}

quickstart$target:::request-done
/self->path != ""/
{
	printf("%-20Y %4d %6d %8d %s\n", walltimestamp, args[0], args[1], args[2],
	    self->path);
	self->path = 0;
}
