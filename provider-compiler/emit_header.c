/* SPDX-License-Identifier: MIT */
/* emit_header.c: not written yet. */
typedef int usdt_emit_header_placeholder;
