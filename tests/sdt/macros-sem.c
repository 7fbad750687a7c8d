/* SPDX-License-Identifier: MIT */
/*
 * What a `dtrace -h` header does: _SDT_HAS_SEMAPHORES (and the deprecated STAP_HAS_SEMAPHORES),
 * hidden unsigned short semaphores in .probes, DTRACE_PROBEn / STAP_PROBEn, and an
 * _ENABLED() test. Also the STAP_SDT_ARG_CONSTRAINT override (-DCONSTRAINT=...).
 */
#define _SDT_HAS_SEMAPHORES 1
#define STAP_HAS_SEMAPHORES 1 /* deprecated */
#ifdef CONSTRAINT
#define STAP_SDT_ARG_CONSTRAINT CONSTRAINT
#endif
#include <sys/sdt.h>

__extension__ extern unsigned short sem_req__start_semaphore __attribute__((unused))
__attribute__((section(".probes"))) __attribute__((visibility("hidden")));
__extension__ extern unsigned short sem_done_semaphore __attribute__((unused))
__attribute__((section(".probes"))) __attribute__((visibility("hidden")));
unsigned short sem_req__start_semaphore, sem_done_semaphore;

#define SEM_REQ_START_ENABLED() __builtin_expect(sem_req__start_semaphore, 0)
#define SEM_REQ_START(arg1, arg2) DTRACE_PROBE2(sem, req__start, arg1, arg2)
#define SEM_DONE(arg1) STAP_PROBE1(sem, done, arg1)

int sem_run(int id, const char *path);

int sem_run(int id, const char *path)
{
	if (SEM_REQ_START_ENABLED())
		SEM_REQ_START(id, path);
	SEM_DONE(id);
	return id;
}
