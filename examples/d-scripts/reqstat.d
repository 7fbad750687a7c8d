#!/usr/sbin/dtrace -qs
/*
 * reqstat.d - quickstart requests by status and by directory, with a
 * latency distribution, printed when tracing ends.
 *
 * USAGE: reqstat.d -c './quickstart 20 10'
 *
 * Shows aggregations keyed by several values, dirname() on a key (done by
 * dtrace: bpftrace has no string functions), quantize, and printa with a
 * format.
 */

#pragma D option quiet

quickstart$target:::request-start
{
	@dirs[dirname(copyinstr(arg1))] = count();
}

quickstart$target:::request-done
{
	@status[args[1] == 200 ? "ok" : "error", args[1]] = count();
	@lat = quantize(args[2]);
}

dtrace:::END
{
	printf("%-12s %6s %8s\n", "RESULT", "STATUS", "COUNT");
	printa("%-12s %6d %@8d\n", @status);
	printf("\n%-20s %8s\n", "DIRECTORY", "COUNT");
	printa("%-20s %@8d\n", @dirs);
	printf("\nlatency (us):");
}
