/* Counts the length of the names greeter greets, firing a probe each. */
#include <string.h>

#include "counter_probes.h"

unsigned long counter_add(const char *name);

static unsigned long total;

unsigned long counter_add(const char *name)
{
	unsigned long n = strlen(name);

	total += n;
	COUNTER_ADD(n, total);
	return total;
}
