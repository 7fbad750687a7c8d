#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tracefs side of the arm64 operand test (t-a64-sdt.sh): what
`usdtkit-probes register` made of every note must read, through the arm64
kernel's uprobe fetches, exactly what the program passed.

  events.py strings EXP          -s PROVIDER:PROBE:N options for every string argument
  events.py check EXP TRACE      the trace (an instance's `trace` file) vs EXP

EXP is the expectations file tests/sdt/probes.c writes (read with
tests/sdt/check.py's reader). Each firing in EXP must be matched, in order,
by one line of its event (NAME, or NAME_2... where one probe's sites differ
in signature) with argN equal to the value, as a signed or unsigned integer
of the argument's size, or the string itself for a string argument (a float
argument of SystemTap's header, SIZEf@, may be missing: check.py, STAP_FLOATS).
Exit 0 when everything matches, 1 with one line per mismatch on stderr.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdt"))
import check  # noqa: E402  (tests/sdt/check.py: read_exp, PROVIDER)

LINE = re.compile(r" ([A-Za-z_][A-Za-z0-9_]*): \(0x[0-9a-f]+\)(.*)$")
ARG = re.compile(r'arg([0-9]+)=("(?:[^"\\]|\\.)*"|\S+)')


def strings(exp):
    opts = set()
    for name, args in check.read_exp(exp):
        for i, (kind, _, _, _) in enumerate(args):
            if kind == "s":
                opts.add(f"-s {check.PROVIDER}:{name}:{i + 1}")
    print(" ".join(sorted(opts)))


def as_int(text):
    return int(text, 16) if text.startswith("0x") else int(text)


def cmd_check(exp, trace):
    fired = {}
    with open(trace, errors="replace") as f:
        for line in f:
            m = LINE.search(line.rstrip("\n"))
            if not m:
                continue
            name = re.sub(r"_[0-9]+$", "", m.group(1))
            fired.setdefault(name, []).append(dict(ARG.findall(m.group(2))))
    seen = {}
    errors = []
    for name, args in check.read_exp(exp):
        k = seen.get(name, 0)
        seen[name] = k + 1
        got = fired.get(name, [])
        if k >= len(got):
            errors.append(f"tracefs: {name} firing {k + 1} not in the trace")
            continue
        g = got[k]
        for j, (kind, size, value, text) in enumerate(args):
            v = g.get(str(j + 1))
            if v is None and check.float_exempt(kind):
                check.say_exempt("tracefs", name, j, "usdtkit-probes leaves it out of the event "
                                 "(\"floating-point argument\")")
            elif v is None:
                errors.append(f"tracefs: {name}: no arg{j + 1}")
            elif kind == "s":
                if v != f'"{text}"':
                    errors.append(f"tracefs: {name} arg{j + 1}: got {v}, expected \"{text}\"")
            else:
                try:
                    n = as_int(v)
                except ValueError:
                    errors.append(f"tracefs: {name} arg{j + 1}: got '{v}', not an integer")
                    continue
                mask = (1 << (8 * size)) - 1
                if n & mask != value & mask:
                    errors.append(f"tracefs: {name} arg{j + 1}: got {v}, expected {value}")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "strings":
        strings(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return cmd_check(sys.argv[2], sys.argv[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
