/* SPDX-License-Identifier: MIT */
#include "comdat.h"
int main(int argc, char **) { return comdat_a(argc) + comdat_inl(argc + 1) == 3 ? 0 : 1; }
