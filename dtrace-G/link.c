/* SPDX-License-Identifier: MIT */
/* link.c: not written yet. */
typedef int usdt_link_placeholder;
