#include "pydtrace.h"

long gc_collect(int generation, long objects);

long gc_collect(int generation, long objects)
{
	long collected = objects / (generation + 1);
	char event[] = "gc.collect"; /* written: see Programs/python.c */

	if (PyDTrace_GC_START_ENABLED())
		PyDTrace_GC_START(generation);
	if (PyDTrace_GC_DONE_ENABLED())
		PyDTrace_GC_DONE(collected);
	if (PyDTrace_AUDIT_ENABLED())
		PyDTrace_AUDIT(event, (void *)0);
	return collected;
}
