#include "pydtrace.h"

int eval_function(const char *filename, const char *funcname, int firstline, int nlines);

/* "Runs" a function of nlines lines, firing the probes CPython's eval loop does. */
int eval_function(const char *filename, const char *funcname, int firstline, int nlines)
{
	int line;

	if (PyDTrace_FUNCTION_ENTRY_ENABLED())
		PyDTrace_FUNCTION_ENTRY(filename, funcname, firstline);
	for (line = firstline; line < firstline + nlines; line++)
		if (PyDTrace_LINE_ENABLED())
			PyDTrace_LINE(filename, funcname, line);
	if (PyDTrace_FUNCTION_RETURN_ENABLED())
		PyDTrace_FUNCTION_RETURN(filename, funcname, firstline + nlines - 1);
	return nlines;
}
