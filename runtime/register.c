/* SPDX-License-Identifier: MIT */
/*
 * Registration of runtime providers' objects: drti's own code
 * (kernel-helper/drti/drti_lib.h) behind a lock, so that providers loaded by
 * several threads at once take turns, and with the environment read at the
 * first load instead of in a constructor. A build without the helper
 * (-Dhelper=disabled) registers nothing, as its -G objects do.
 */
#include "register.h"

#ifdef USDTKIT_HAVE_HELPER
#include <pthread.h>

#include "drti_lib.h"

static pthread_once_t configured = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void configure(void)
{
	(void)usdt_drti_lib_configure();
}

int usdt_rt_register(const void *addr)
{
	int r;

	(void)pthread_once(&configured, configure);
	pthread_mutex_lock(&lock);
	r = usdt_drti_lib_register(addr);
	pthread_mutex_unlock(&lock);
	return r;
}

void usdt_rt_unregister(const void *addr)
{
	(void)pthread_once(&configured, configure);
	pthread_mutex_lock(&lock);
	usdt_drti_lib_unregister(addr);
	pthread_mutex_unlock(&lock);
}
#else
int usdt_rt_register(const void *addr)
{
	(void)addr;
	return 0;
}

void usdt_rt_unregister(const void *addr)
{
	(void)addr;
}
#endif
