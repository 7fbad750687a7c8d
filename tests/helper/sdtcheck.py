#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent expectations for the helper tests, from binutils' readelf.

  sdtcheck.py compare-list FILE LISTOUT   check `usdtkit-probes list FILE` output
  sdtcheck.py expect-events FILE          print "GROUP EVENT FILEOFF REFOFF" per site

Notes come from `readelf -nW`, segments from `readelf -lW`, the .stapsdt.base
address from `readelf -SW`; file offsets are computed here from the PT_LOAD
that contains each address (uprobes.md §5), never taken from the code under test.
"""
import re
import subprocess
import sys


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def notes(path):
    out, cur = [], None
    for line in run("readelf", "-nW", path).splitlines():
        s = line.strip()
        if s.startswith("stapsdt") and "NT_STAPSDT" in s:
            cur = {}
            out.append(cur)
        if cur is not None and "Provider:" in s:
            # readelf -W prints it on the owner's line
            cur["provider"] = s.split("Provider:", 1)[1].strip()
        elif cur is not None and s.startswith("Name:"):
            cur["name"] = s.split(":", 1)[1].strip()
        elif cur is not None and s.startswith("Location:"):
            m = re.match(r"Location: (0x[0-9a-f]+), Base: (0x[0-9a-f]+), Semaphore: (0x[0-9a-f]+)", s)
            cur["loc"], cur["base"], cur["sema"] = (int(x, 16) for x in m.groups())
        elif cur is not None and line.startswith("    Arguments:"):
            cur["args"] = line.split(":", 1)[1].strip()
    for n in out:
        n.setdefault("args", "")
    return out


def loads(path):
    segs = []
    for line in run("readelf", "-lW", path).splitlines():
        m = re.match(r"\s*LOAD\s+(0x\S+)\s+(0x\S+)\s+0x\S+\s+(0x\S+)\s+(0x\S+)\s+(.+?)\s+0x\S+\s*$", line)
        if m:
            off, vaddr, filesz, _memsz = (int(x, 16) for x in m.groups()[:4])
            segs.append((off, vaddr, filesz, m.group(5)))
    return segs


def base_section(path):
    for line in run("readelf", "-SW", path).splitlines():
        m = re.search(r"\]\s+\.stapsdt\.base\s+\S+\s+([0-9a-f]+)", line)
        if m:
            return int(m.group(1), 16)
    return None


def file_offset(segs, addr, flag):
    for off, vaddr, filesz, flags in segs:
        if flag in flags and vaddr <= addr < vaddr + filesz:
            return addr - vaddr + off
    return None


def expected(path):
    segs, bsec = loads(path), base_section(path)
    out = []
    for n in notes(path):
        pc, sema = n["loc"], n["sema"]
        if bsec is not None and n["base"] != 0:
            pc += bsec - n["base"]
            if sema:
                sema += bsec - n["base"]
        n["pc"], n["sema_adj"] = pc, sema
        n["pc_off"] = file_offset(segs, pc, "E")
        n["sema_off"] = file_offset(segs, sema, "W") if sema else 0
        out.append(n)
    return out


def parse_list(listout):
    probes = []
    for line in open(listout):
        m = re.match(r"(probe|reject) (\S+) (\S+) (.*)$", line.rstrip("\n"))
        if not m:
            continue
        kind, prov, name, rest = m.groups()
        fields = dict(re.findall(r"(\w+)=(\S*)", rest.split(" args=")[0]))
        fields.update(kind=kind, provider=prov, name=name)
        fields["args"] = rest.split(" args=", 1)[1] if " args=" in rest else None
        probes.append(fields)
    return probes


def compare_list(path, listout):
    want, got = expected(path), parse_list(listout)
    errors = []
    if not want:
        errors.append("readelf finds no stapsdt notes: the test binary is wrong")
    if len(want) != len(got):
        errors.append(f"readelf finds {len(want)} notes, the list has {len(got)}")
    data = open(path, "rb").read()
    # The NOP sdt.h emits: x86 0x90, aarch64 d503201f (little-endian instruction words).
    nop = b"\x1f\x20\x03\xd5" if "AArch64" in run("readelf", "-h", path) else b"\x90"
    for i, (w, g) in enumerate(zip(want, got)):
        where = f"note {i} ({w['provider']}:{w['name']})"
        if g["kind"] != "probe":
            errors.append(f"{where}: rejected: {g.get('reason')}")
            continue
        checks = [
            ("provider", w["provider"], g["provider"]),
            ("name", w["name"], g["name"]),
            ("pc", w["pc"], int(g["pc"], 16)),
            ("sema", w["sema_adj"], int(g["sema"], 16)),
            ("pc_off", w["pc_off"], int(g["pc_off"], 16)),
            ("sema_off", w["sema_off"], int(g["sema_off"], 16)),
            ("args", w["args"], g["args"]),
        ]
        for what, a, b in checks:
            if a != b:
                errors.append(f"{where}: {what}: readelf gives {a!r}, list gives {b!r}")
        if w["pc_off"] is not None and data[w["pc_off"]:w["pc_off"] + len(nop)] != nop:
            errors.append(f"{where}: byte at 0x{w['pc_off']:x} is not a nop")
        if w["sema_off"] and w["sema_off"] % 2:
            errors.append(f"{where}: semaphore offset odd")
    for e in errors:
        print("FAIL:", e, file=sys.stderr)
    return 1 if errors else 0


def expect_events(path):
    for n in expected(path):
        print(f"sdt_{n['provider']} {n['name']} 0x{n['pc_off']:x} 0x{n['sema_off']:x}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "compare-list":
        sys.exit(compare_list(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "expect-events":
        sys.exit(expect_events(sys.argv[2]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
