/* SPDX-License-Identifier: MIT */
/* types.c: not written yet. */
typedef int usdt_types_placeholder;
