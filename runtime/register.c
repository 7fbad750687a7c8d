/* SPDX-License-Identifier: MIT */
/* Placeholder: the runtime library lands in the next commit. */
typedef int usdtkit_placeholder_register;
