#!/usr/bin/env python3
"""Reads what a real-world build left behind (tests/realworld/README.md).

  analyze.py warnings LOG NAME...   the compiler warnings of a build log that
                                    mention one of the NAMEs (sdt.h, the
                                    generated header): one line per warning,
                                    "KIND PROBE_MACRO FILE:LINE: TEXT", KIND
                                    "typecheck" for a warning the header's
                                    argument type checks raised, "header"
                                    for any other ("-" when no probe macro
                                    is named)
  analyze.py notes FILE...          the .note.stapsdt entries of ELF files
                                    (readelf -n), as "PROVIDER COUNT" lines

A gcc or clang warning is a block of lines: the "In file included from"
lines before it, the "FILE:LINE:COL: warning:" line, then its notes ("in
expansion of macro", "note:") and source excerpts up to the next
diagnostic. A block mentions a NAME when any of its lines does: a warning in
a .c file raised by a macro of sdt.h names sdt.h only in its notes.
"""
import re
import subprocess
import sys

DIAG = re.compile(r"^(\S+?):(\d+):(?:\d+:)? (warning|error|note): (.*)$")
INCLUDED = re.compile(r"^(In file included from|\s+from) ")
IN_FUNCTION = re.compile(r"^\S+: (In function|In member function|At top level|In instantiation)")
EXPANSION = re.compile(r"in expansion of macro ['\u2018`]([A-Za-z0-9_]+)['\u2019]")
# What marks a warning as the generated header's argument type check: its
# helper macro (usdtkit's header, before and after the check names the
# probe), or the C++ overload's deprecation message.
TYPECHECK = re.compile(r"__usdt_hdr_|probe argument does not convert|usdt_check_")


# Colours (meson passes -fdiagnostics-color=always to gcc and clang).
ANSI = re.compile(r"\x1b\[[0-9;]*[mK]")


def blocks(lines):
    """Splits a build log into diagnostic blocks: lists of lines."""
    block = []
    head = []  # "In file included from" lines waiting for their diagnostic
    for line in lines:
        line = ANSI.sub("", line.rstrip("\n"))
        m = DIAG.match(line)
        if INCLUDED.match(line) or IN_FUNCTION.match(line):
            if block:
                yield block
                block = []
            head.append(line)
        elif m and m.group(3) != "note":
            if block:
                yield block
            block = head + [line]
            head = []
        elif block and (m or line.startswith((" ", "\t", "|")) or re.match(r"^\s*\d+ \|", line)):
            block.append(line)
        else:
            if block:
                yield block
                block = []
            head = []
    if block:
        yield block


def warnings(log, names):
    with open(log, errors="replace") as f:
        for block in blocks(f):
            main = next(l for l in block if DIAG.match(l) and DIAG.match(l).group(3) != "note")
            m = DIAG.match(main)
            if m.group(3) != "warning":
                continue
            if not any(n in l for l in block for n in names):
                continue
            where = "%s:%s: %s" % (m.group(1), m.group(2), m.group(4))
            # The probe: the outermost upper-case macro the notes name
            # (PROVIDER_PROBE), not the header's helpers.
            probes = [p for l in block for p in EXPANSION.findall(l)
                      if p == p.upper() and not p.startswith(("_", "STAP_", "DTRACE_PROBE"))]
            kind = "typecheck" if any(TYPECHECK.search(l) for l in block) else "header"
            print("%s %s %s" % (kind, probes[-1] if probes else "-", where))


def notes(files):
    counts = {}
    for f in files:
        out = subprocess.run(["readelf", "-n", "--wide", f], capture_output=True,
                             text=True, check=True).stdout
        for m in re.finditer(r"Provider: (\S+)", out):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    for prov in sorted(counts):
        print(prov, counts[prov])


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "warnings":
        warnings(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "notes":
        notes(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
