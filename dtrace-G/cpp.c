/* SPDX-License-Identifier: MIT */
/* cpp.c: not written yet. */
typedef int usdt_cpp_placeholder;
