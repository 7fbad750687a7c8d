#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent expectations for the header tests.

A deliberately small reader of the test providers in tests/header/providers
(it knows only what those files use), written apart from the provider
compiler so that the tests compare usdtkit against this, not against itself.

  hdrtest.py expect FILE.d             provider probe nargs kinds, one per line
  hdrtest.py program FILE.d c|c++ HDR [--rename OLD NEW] [--lower PREFIX]
                                       a program calling every macro and _ENABLED()
  hdrtest.py semaphores FILE.d         C definitions of every semaphore
  hdrtest.py check-notes FILE.d BINARY [--no-semaphores]
                                       readelf -n BINARY matches FILE.d
"""
import re
import subprocess
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))


def split_args(s):
    s = s.strip()
    if s in ("", "void"):
        return []
    return [a.strip() for a in s.split(",")]


def kind(arg, typedefs):
    # Drop a trailing parameter name (an identifier after the type).
    words = arg.replace("*", " * ").split()
    if len(words) > 1 and re.match(r"^[A-Za-z_]\w*$", words[-1]) and words[-2] != "struct" \
            and words[-1] not in ("int", "long", "short", "char", "unsigned", "signed",
                                  "const", "double", "float") and words[-1] not in typedefs \
            and not re.match(r"^u?int\d+_t$", words[-1]):
        words = words[:-1]
    words = [w for w in words if w != "const"]
    base = [w for w in words if w != "*"]
    stars = words.count("*")
    if len(base) == 1 and base[0] in typedefs:
        k = typedefs[base[0]]
        if stars == 0:
            return k
        return "s" if (k == "c" and stars == 1) else "p"
    if base == ["string"] and stars == 0:
        return "s"
    if stars == 1 and base == ["char"]:
        return "s"
    if stars:
        return "p"
    if base and base[-1] in ("float", "double"):
        return "f"
    return "i"


def parse(path):
    text = strip_comments(open(path, newline="").read().replace("\r", ""))
    typedefs = {}
    for m in re.finditer(r"typedef\s+([^;{]*?)\s*(\w+)\s*;", text):
        t = m.group(1)
        typedefs[m.group(2)] = "s" if re.fullmatch(r"char\s*\*", t) else (
            "p" if "*" in t else ("c" if t == "char" else "i"))
    for m in re.finditer(r"typedef\s+struct\s*\{.*?\}\s*(\w+)\s*;", text, flags=re.S):
        typedefs[m.group(1)] = "i"
    provs = []
    for m in re.finditer(r"provider\s+(\w+)\s*\{(.*?)\}\s*;", text, flags=re.S):
        probes = []
        for p in re.finditer(r"probe\s+(\w+)\s*\(([^)]*)\)\s*(:\s*\([^)]*\))?\s*;", m.group(2)):
            args = split_args(p.group(2))
            probes.append((p.group(1), [kind(a, typedefs) for a in args]))
        provs.append((m.group(1), probes))
    return provs


def macro(prov, probe):
    return (prov + "_" + probe.replace("__", "_")).upper()


def program(path, lang, header, renames, lower):
    out = ['#include "%s"' % header, "", "int main(void)", "{",
           "\tchar *s = (char *)\"str\";", "\tint r = 0;", "", "\t(void)s;"]
    val = {"s": "s", "p": "0", "f": "1.5", "i": "1"}
    for prov, probes in parse(path):
        for name, kinds in probes:
            m = macro(prov, name)
            for old, new in renames:
                m = m.replace(old, new)
            if lower and m.startswith(lower):
                m = m.lower()
            en = m + ("_enabled" if m.islower() or (lower and m.startswith(lower.lower())) else "_ENABLED")
            out.append("\tif (%s())" % en)
            out.append("\t\tr++;")
            out.append("\t%s(%s);" % (m, ", ".join(val[k] for k in kinds)))
    out += ["\treturn r == 12345;", "}"]
    return "\n".join(out) + "\n"


def semaphores(path):
    lines = []
    for prov, probes in parse(path):
        for name, _ in probes:
            lines.append('unsigned short %s_%s_semaphore __attribute__((section(".probes")));'
                         % (prov, name))
    return "\n".join(lines) + "\n"


def read_notes(binary):
    txt = subprocess.run(["readelf", "-n", binary], check=True, capture_output=True,
                         text=True).stdout
    notes = []
    cur = None
    for line in txt.splitlines():
        line = line.strip()
        if line.startswith("Provider:"):
            cur = {"provider": line.split(None, 1)[1]}
            notes.append(cur)
        elif line.startswith("Name:") and cur is not None:
            cur["name"] = line.split(None, 1)[1]
        elif line.startswith("Location:") and cur is not None:
            cur["sem"] = int(line.rsplit("Semaphore:", 1)[1].strip(), 16)
        elif line.startswith("Arguments:") and cur is not None:
            rest = line.split(":", 1)[1].strip()
            cur["nargs"] = len(rest.split()) if rest else 0
    for n in notes:
        n.setdefault("nargs", 0)
    return notes


def check_notes(path, binary, want_sem):
    notes = read_notes(binary)
    expected = {(prov, name): len(kinds) for prov, probes in parse(path) for name, kinds in probes}
    seen = {}
    bad = []
    for n in notes:
        key = (n["provider"], n["name"])
        seen[key] = seen.get(key, 0) + 1
        if key not in expected:
            bad.append("unexpected note %s:%s" % key)
            continue
        if n["nargs"] != expected[key]:
            bad.append("%s:%s has %d arguments, expected %d" % (key + (n["nargs"], expected[key])))
        if want_sem and n["sem"] == 0:
            bad.append("%s:%s has no semaphore" % key)
        if not want_sem and n["sem"] != 0:
            bad.append("%s:%s has a semaphore, expected none" % key)
    for key in expected:
        if seen.get(key, 0) != 1:
            bad.append("%s:%s: %d notes, expected 1" % (key + (seen.get(key, 0),)))
    if bad:
        sys.stderr.write("\n".join(bad) + "\n")
        sys.exit(1)
    print("%d probes checked" % len(expected))


def main(argv):
    cmd = argv[1]
    if cmd == "expect":
        for prov, probes in parse(argv[2]):
            for name, kinds in probes:
                print(prov, name, len(kinds), "".join(kinds))
    elif cmd == "program":
        renames, lower, rest = [], None, argv[5:]
        while rest:
            if rest[0] == "--rename":
                renames.append((rest[1], rest[2]))
                rest = rest[3:]
            elif rest[0] == "--lower":
                lower = rest[1]
                rest = rest[2:]
            else:
                raise SystemExit("bad option " + rest[0])
        sys.stdout.write(program(argv[2], argv[3], argv[4], renames, lower))
    elif cmd == "semaphores":
        sys.stdout.write(semaphores(argv[2]))
    elif cmd == "check-notes":
        check_notes(argv[2], argv[3], "--no-semaphores" not in argv)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
