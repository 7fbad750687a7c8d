/* SPDX-License-Identifier: MIT */
/*
 * A semaphore-guarded probe, as a `dtrace -h` header writes it: _SDT_HAS_SEMAPHORES makes every
 * probe of this file reference <provider>_<name>_semaphore, an unsigned short in .probes that
 * `dtrace -G` would define (defined here by hand). Tracers increment it while attached.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <time.h>

__attribute__((visibility("hidden")))
__attribute__((section(".probes"))) unsigned short sdttest_guarded_semaphore;

unsigned short sdttest_guarded_state(void);
int sdttest_fire_guarded(long value);

#define SDTTEST_GUARDED_ENABLED() __builtin_expect(sdttest_guarded_semaphore, 0)

unsigned short sdttest_guarded_state(void)
{
	return *(volatile unsigned short *)&sdttest_guarded_semaphore;
}

/* Fires the probe if enabled (returns 1), then sleeps 10 ms. */
int sdttest_fire_guarded(long value)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	int fired = 0;

	if (SDTTEST_GUARDED_ENABLED()) {
		STAP_PROBE1(sdttest, guarded, value);
		fired = 1;
	}
	nanosleep(&ts, 0);
	return fired;
}
