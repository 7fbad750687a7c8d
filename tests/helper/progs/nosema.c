/* Probes without semaphores (a translation unit without _SDT_HAS_SEMAPHORES). */
#include <sys/sdt.h>

#ifndef PROV
#define PROV hlpt
#endif

void hlpt_nosema(int i);

void hlpt_nosema(int i)
{
	STAP_PROBE(PROV, plain);
	STAP_PROBE2(PROV, nosema, i, (long)i * 3);
}
