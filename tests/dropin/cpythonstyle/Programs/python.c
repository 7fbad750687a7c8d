#include <stdio.h>
#include <stdlib.h>

int eval_function(const char *filename, const char *funcname, int firstline, int nlines);
long gc_collect(int generation, long objects);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	/*
	 * Names live in memory the program has written, as in CPython (its
	 * code objects' strings): bpftrace cannot read a literal from a
	 * .rodata page the process never touched.
	 */
	char file[16], func[16];

	snprintf(file, sizeof(file), "%s", "spam.py");
	snprintf(func, sizeof(func), "%s", "eggs");
	for (int i = 0; i < n; i++) {
		eval_function(file, func, 10 * (i + 1), 3);
		gc_collect(i % 3, 1000L + i);
	}
	printf("ok\n");
	return 0;
}
