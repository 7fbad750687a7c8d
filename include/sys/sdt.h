/* SPDX-License-Identifier: CC0-1.0 */
/* <sys/sdt.h>: being written (issue 2). */
