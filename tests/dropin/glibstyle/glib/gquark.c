#include <string.h>

#include "gtrace-private.h"
#include "miniglib.h"

static const char *quarks[64];
static unsigned int nquarks;

unsigned int g_quark_from_string(const char *s)
{
	unsigned int i;

	for (i = 0; i < nquarks; i++)
		if (!strcmp(quarks[i], s))
			return i + 1;
	if (nquarks == 64)
		return 0;
	quarks[nquarks++] = s;
	TRACE(GLIB_QUARK_NEW(s, nquarks));
	return nquarks;
}
