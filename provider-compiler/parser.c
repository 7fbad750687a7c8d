/* SPDX-License-Identifier: MIT */
/* parser.c: not written yet. */
typedef int usdt_parser_placeholder;
