#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rewrites a little-endian ELF64 aarch64 file as big-endian (aarch64_be).

  elf-to-be.py IN OUT

No big-endian toolchain is installed, and AArch64 instructions stay
little-endian in big-endian mode, so swapping the data the note reader reads
gives a faithful aarch64_be file for the fuzz seeds: the ELF header, program
and section headers, the .note.stapsdt notes (header words and the three
addresses) and the .note.usdtkit notes (header words and the desc's word
tables; its string table is bytes). Nothing else is touched.
"""
import struct
import sys

b = bytearray(open(sys.argv[1], "rb").read())
assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "ELF64 little-endian expected"


def swap(fmt, off):
    vals = struct.unpack_from("<" + fmt, b, off)
    struct.pack_into(">" + fmt, b, off, *vals)
    return vals


EH = "HHIQQQIHHHHHH"
(_, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, shstrndx) = swap(EH, 16)
b[5] = 2  # ELFDATA2MSB
for i in range(phnum):
    swap("IIQQQQQQ", phoff + i * phentsize)
shdrs = [swap("IIQQQQIIQQ", shoff + i * shentsize) for i in range(shnum)]
stroff = shdrs[shstrndx][4]


def name(sh):
    o = stroff + sh[0]
    return bytes(b[o:b.index(0, o)]).decode()


for sh in shdrs:
    if sh[1] != 7:  # SHT_NOTE
        continue
    off, size, align = sh[4], sh[5], 8 if sh[8] == 8 else 4
    pos = off
    while pos + 12 <= off + size:
        namesz, descsz, typ = swap("III", pos)
        d = pos + 12 + ((namesz + align - 1) & ~(align - 1))
        owner = bytes(b[pos + 12:pos + 12 + namesz])
        if owner == b"stapsdt\0":
            swap("QQQ", d)
        elif owner == b"usdtkit\0" and descsz >= 48:
            strtab_off = struct.unpack_from("<I", b, d + 40)[0]
            nwords = min(strtab_off, descsz) // 4
            swap("%dI" % nwords, d)
        pos = d + ((descsz + align - 1) & ~(align - 1))
open(sys.argv[2], "wb").write(b)
