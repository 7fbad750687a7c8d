#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile ELF files for the note reader, made by mutating a real binary.

  hostile.py SRC OUTDIR PROBES [VALGRIND_COUNT]

Each mutant gets `PROBES list MUTANT`; the expectation is written next to the
mutation, from what the mutation breaks (not from what the reader printed):
a rejection reason, an error exit (2), or an accepted probe. Every run must
end by exit status 0 or 2, never by a signal. Then a bounded number of seeded
random mutants (bytes flipped in the ELF header, program headers and note
section), and the first VALGRIND_COUNT mutants again under valgrind memcheck.
"""
import os
import random
import re
import struct
import subprocess
import sys

SRC, OUT, PROBES = sys.argv[1], sys.argv[2], sys.argv[3]
VG = int(sys.argv[4]) if len(sys.argv) > 4 else 0
data = bytearray(open(SRC, "rb").read())
failures = []


class Elf:
    def __init__(self, b):
        assert b[:4] == b"\x7fELF" and b[5] == 1, "little-endian ELF expected"
        self.is64 = b[4] == 2
        if self.is64:
            (self.e_type, _, _, self.entry, self.phoff, self.shoff, _, _, self.phentsize,
             self.phnum, self.shentsize, self.shnum, self.shstrndx) = struct.unpack_from(
                "<HHIQQQIHHHHHH", b, 16)
        else:
            (self.e_type, _, _, self.entry, self.phoff, self.shoff, _, _, self.phentsize,
             self.phnum, self.shentsize, self.shnum, self.shstrndx) = struct.unpack_from(
                "<HHIIIIIHHHHHH", b, 16)
        self.asz = 8 if self.is64 else 4
        self.sections = {}
        shstr = self.shdr(b, self.shstrndx)
        for i in range(self.shnum):
            sh = self.shdr(b, i)
            end = b.index(0, shstr["offset"] + sh["name"])
            sh["hdr"] = self.shoff + i * self.shentsize
            self.sections[b[shstr["offset"] + sh["name"]:end].decode()] = sh

    def shdr(self, b, i):
        o = self.shoff + i * self.shentsize
        if self.is64:
            name, typ, _, addr, off, size = struct.unpack_from("<IIQQQQ", b, o)
        else:
            name, typ, _, addr, off, size = struct.unpack_from("<IIIIII", b, o)
        return dict(name=name, type=typ, addr=addr, offset=off, size=size)

    def notes(self, b):
        sec = self.sections[".note.stapsdt"]
        o, end, out = sec["offset"], sec["offset"] + sec["size"], []
        while o + 12 <= end:
            namesz, descsz, typ = struct.unpack_from("<III", b, o)
            desc = o + 12 + ((namesz + 3) & ~3)
            n = dict(hdr=o, desc=desc, descsz=descsz, pc=desc, base=desc + self.asz,
                     sema=desc + 2 * self.asz)
            s = n["sema"] + self.asz
            n["prov"] = s
            n["name"] = b.index(0, s) + 1
            n["args"] = b.index(0, n["name"]) + 1
            n["args_end"] = b.index(0, n["args"])
            out.append(n)
            o = desc + ((descsz + 3) & ~3)
        return out


elf = Elf(data)
notes = elf.notes(data)
afmt = "<Q" if elf.is64 else "<I"


def rd(b, off):
    return struct.unpack_from(afmt, b, off)[0]


def wr(b, off, v):
    struct.pack_into(afmt, b, off, v & ((1 << (8 * elf.asz)) - 1))


with_sema = next(n for n in notes if rd(data, n["sema"]))
with_args = next(n for n in notes if n["args_end"] - n["args"] > 8)


def list_of(path, valgrind=False):
    cmd = [PROBES, "list", path]
    if valgrind:
        cmd = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
               "--errors-for-leak-kinds=definite"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
    return p.returncode, p.stdout, p.stderr


mutants = []  # (name, bytes, check)


def mutant(name, check):
    def deco(f):
        b = bytearray(data)
        r = f(b)
        mutants.append((name, r if r is not None else b, check))
        return f
    return deco


def expect_reason(reason):
    def check(rc, out, err):
        if rc != 0:
            return f"exit {rc}, want 0 and a reject with reason={reason}: {err.strip()}"
        if not re.search(rf"^reject .* reason={re.escape(reason)} ", out, re.M):
            return f"no reject with reason={reason}"
        return None
    return check


def expect_exit2(rc, out, err):
    if rc != 2 or "usdtkit-probes: error: " not in err:
        return f"exit {rc}, want 2 with an error message"
    return None


def expect_any(rc, out, err):
    return None if rc in (0, 2) else f"exit {rc}"


for cut in (16, 40, 64, 200, len(data) // 2, elf.sections[".note.stapsdt"]["offset"] + 20,
            len(data) - 1):
    mutants.append((f"truncated-{cut}", bytearray(data[:cut]), expect_any))


@mutant("descsz-huge", expect_reason("bad-note-header"))
def _(b):
    struct.pack_into("<I", b, notes[0]["hdr"] + 4, 0xfffffff0)


@mutant("namesz-huge", expect_reason("bad-note-header"))
def _(b):
    struct.pack_into("<I", b, notes[0]["hdr"], 0x7ffffff0)


@mutant("descsz-too-small", expect_reason("bad-desc"))
def _(b):
    struct.pack_into("<I", b, notes[0]["hdr"] + 4, 2 * elf.asz)


@mutant("pc-outside-segments", expect_reason("pc-outside-code"))
def _(b):
    wr(b, notes[0]["pc"], 0x7ead0000)


@mutant("pc-not-on-nop", expect_reason("pc-not-nop"))
def _(b):
    wr(b, notes[0]["pc"], elf.entry)


@mutant("semaphore-odd", expect_reason("semaphore-misaligned"))
def _(b):
    wr(b, with_sema["sema"], rd(b, with_sema["sema"]) + 1)


@mutant("semaphore-in-code", expect_reason("semaphore-outside-data"))
def _(b):
    wr(b, with_sema["sema"], elf.entry & ~1)


@mutant("strings-unterminated", expect_reason("bad-desc"))
def _(b):
    n = notes[-1]  # the last note: its desc ends where the section does
    for i in range(n["prov"], n["desc"] + n["descsz"]):
        if b[i] == 0:
            b[i] = ord("A")


@mutant("note-type-2", expect_reason("bad-note-type"))
def _(b):
    struct.pack_into("<I", b, notes[0]["hdr"] + 8, 2)


@mutant("provider-not-identifier", expect_reason("bad-name"))
def _(b):
    b[notes[0]["prov"]] = ord("-")


def garbage_args():
    def check(rc, out, err):
        if rc != 0:
            return f"exit {rc}"
        if "unsupported" not in out:
            return "garbage arguments not marked unsupported"
        if any(ord(c) < 0x20 and c != "\n" for c in out):
            return "a control character reached the output"
        return None
    return check


@mutant("args-garbage", garbage_args())
def _(b):
    junk = b"@%(,)$#[]-8@(%rax,%rbx) 99@ @@ 4@$ 8f@%xmm0 "
    for i in range(with_args["args"], with_args["args_end"]):
        b[i] = junk[(i - with_args["args"]) % len(junk)]


@mutant("args-control-bytes", garbage_args())
def _(b):
    for i in range(with_args["args"], with_args["args_end"]):
        b[i] = 1 + (i % 30)


def same_as_original(note, flag=None):
    """The probe must be accepted with the pc and semaphore of the original file."""
    pc, sema = rd(data, note["pc"]), rd(data, note["sema"])

    def check(rc, out, err):
        if rc != 0:
            return f"exit {rc}"
        lines = [l for l in out.splitlines() if l.startswith(("probe ", "reject "))]
        line = lines[notes.index(note)]
        if not line.startswith("probe ") or f" pc=0x{pc:x} " not in line or \
                f" sema=0x{sema:x} " not in line:
            return f"want pc=0x{pc:x} sema=0x{sema:x}: {line}"
        if flag and flag not in line:
            return f"want {flag}: {line}"
        return None
    return check


D = 0x100000


@mutant("prelinked", same_as_original(with_sema))
def _(b):
    # What prelink does: every address in the note moved by D; the section not.
    for f in ("pc", "base", "sema"):
        wr(b, with_sema[f], rd(b, with_sema[f]) - D)


@mutant("base-zeroed", same_as_original(with_sema, "base-zero"))
def _(b):
    wr(b, with_sema["base"], 0)


@mutant("note-section-past-eof", expect_reason("bad-note-header"))
def _(b):
    sh = elf.sections[".note.stapsdt"]
    off = sh["hdr"] + (32 if elf.is64 else 20)
    wr(b, off, len(data) * 4)


@mutant("phoff-garbage", expect_exit2)
def _(b):
    wr(b, 32 if elf.is64 else 28, 0x7ffffff0)


@mutant("relocatable", expect_exit2)
def _(b):
    struct.pack_into("<H", b, 16, 1)


@mutant("not-elf", expect_exit2)
def _(b):
    b[1] = ord("X")


os.makedirs(OUT, exist_ok=True)


def run_one(name, b, check, valgrind=False):
    path = os.path.join(OUT, name)
    open(path, "wb").write(b)
    rc, out, err = list_of(path, valgrind)
    if valgrind and rc == 99:
        failures.append(f"{name}: valgrind reported errors:\n{err}")
        return
    if rc < 0 or rc > 2:
        failures.append(f"{name}: exit {rc} (crash?)\n{err}")
        return
    why = check(rc, out, err)
    if why:
        failures.append(f"{name}: {why}\n{out}{err}")


for name, b, check in mutants:
    run_one(name, b, check)
print(f"{len(mutants)} named mutants checked")

# Seeded random mutants: a few bytes changed in the parts the reader trusts least.
rng = random.Random(5)
sec = elf.sections[".note.stapsdt"]
regions = [(0, 64), (elf.phoff, elf.phoff + elf.phnum * elf.phentsize),
           (sec["offset"], sec["offset"] + sec["size"]),
           (elf.shoff, elf.shoff + elf.shnum * elf.shentsize)]
NRANDOM = 150
for i in range(NRANDOM):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        lo, hi = rng.choice(regions)
        b[rng.randrange(lo, hi)] = rng.randrange(256)
    mutants.append((f"random-{i}", b, expect_any))
    run_one(f"random-{i}", b, expect_any)
print(f"{NRANDOM} random mutants checked")

for name, b, check in mutants[:VG]:
    run_one(name, b, check, valgrind=True)
for name, b, check in mutants[-5:] if VG else []:
    run_one(name, b, check, valgrind=True)
if VG:
    print(f"{VG + 5} mutants checked under valgrind memcheck")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
