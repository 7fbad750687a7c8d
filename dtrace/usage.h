/* SPDX-License-Identifier: MIT */
/* `dtrace --help` (usage.c). */
#ifndef USDT_DTRACE_USAGE_H
#define USDT_DTRACE_USAGE_H

extern const char usdt_dtrace_usage[];

#endif
