/* SPDX-License-Identifier: MIT */
/* lexer.c: not written yet. */
typedef int usdt_lexer_placeholder;
