/* Probes without semaphores (a translation unit without _SDT_HAS_SEMAPHORES). */
#include <sys/sdt.h>

void hlpt_nosema(int i);

void hlpt_nosema(int i)
{
	STAP_PROBE(hlpt, plain);
	STAP_PROBE2(hlpt, nosema, i, (long)i * 3);
}
