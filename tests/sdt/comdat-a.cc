/* SPDX-License-Identifier: MIT */
#include "comdat.h"
int comdat_a(int v) { return comdat_inl(v); }
