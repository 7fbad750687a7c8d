#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helpers of the sdt consumer tests: read what real consumers printed and compare it with
the expectations file written by probes.c (see its head comment).

  check.py notes ARCH ELF EXP [SEMA_PROBES]  readelf -n of ELF vs EXP; argument forms for ARCH
  check.py gen-gdb EXP                       a gdb command file reading every probe's arguments
  check.py gdb EXP GDBOUT                    gdb's output (from gen-gdb's script) vs EXP
  check.py gen-bt ELF EXP                    a bpftrace program printing arg0..arg5 and strings
  check.py bt EXP BTOUT                      bpftrace's output vs EXP
  check.py forms ARCH ELF                    only the operand-form check, for every note
  check.py summary ELF                       provider name sem|nosem [-]SIZE... per note

Exit 0 when everything matches, 1 with one line per mismatch on stderr.
"""
import os
import re
import subprocess
import sys

PROVIDER = "sdttest"
BT_MAX_ARGS = 6  # bpftrace 0.17 reads arg0..arg5 on x86-64

# Our header names x86-64 registers by their 64-bit names only (gdb 13 rejects %r8b..%r15b).
REG64 = r"%(?:r[abcd]x|r[sd]i|r[sb]p|r[89]|r1[0-5])"
FORMS = {
    # register, immediate, or displacement(register) with the displacement written
    "x86_64": re.compile(r"^-?[1248]@(?:" + REG64 + r"|\$-?[0-9]+|-?[0-9]+\(" + REG64 + r"\))$"),
    "i386": re.compile(r"^-?[1248]@(?:%e[a-z]+|%[a-d][lhx]|%[sd]i|%[sb]p|\$-?[0-9]+"
                       r"|-?[0-9]+\(%e[a-z]+\))$"),
    "aarch64": re.compile(r"^-?[1248]@(?:x[0-9]+|sp|-?[0-9]+|\[(?:x[0-9]+|sp)(?:, ?-?[0-9]+)?\])$"),
}
BELOW_SP = re.compile(r"@-[0-9]+\(%[re]sp\)")

# SystemTap's header writes a float or double argument as SIZEf@OPERAND (its _SDT_TYPE
# macro: an "f" for __builtin_classify_type's real class, on every architecture); ours never
# does (it passes the bits). With USDTKIT_SDT_STAP_FLOATS=1 (the header is SystemTap's) the
# notes must carry the "f" exactly on the arguments probes.c writes as kind f, and the
# consumers that cannot read such an operand are not asked to: gdb 13 rejects the whole
# argument string ("Unknown numeric token"), bcc 0.26 (bpftrace 0.17) too ("Parse error"),
# usdtkit-probes leaves the argument out ("floating-point argument"). Every other value is
# still compared exactly.
STAP_FLOATS = os.environ.get("USDTKIT_SDT_STAP_FLOATS") == "1"


def float_exempt(kind):
    return STAP_FLOATS and kind == "f"


def say_exempt(who, name, j, reason):
    print(f"check.py: {who}: {name} argument {j} (a float, SystemTap's SIZEf@ operand) "
          f"not compared: {reason}")

errors = []


def err(msg):
    errors.append(msg)


def read_exp(path):
    """[(name, [(kind, size, value, text)])] in firing order; '#' lines are comments."""
    probes = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or line.startswith("semaphore"):
                continue
            words = line.split(" ")
            args = []
            for w in words[1:]:
                m = re.match(r"^([iusf])([0-9]+)=(.*)$", w)
                if not m:
                    sys.exit(f"check.py: bad expectation '{w}' in {path}")
                kind, size, rest = m.group(1), int(m.group(2)), m.group(3)
                text = None
                if kind == "s":
                    rest, text = rest.split(":", 1)
                args.append((kind, size, int(rest), text))
            probes.append((words[0], args))
    return probes


def read_notes(elf):
    out = subprocess.run(["readelf", "-n", "--wide", elf], check=True, capture_output=True,
                         text=True).stdout
    notes, cur = [], None
    for line in out.splitlines():
        m = re.search(r"NT_STAPSDT.*Provider: (\S+)", line)
        if m:
            cur = {"provider": m.group(1)}
            notes.append(cur)
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("Name: "):
            cur["name"] = s[6:]
        elif s.startswith("Location: "):
            m = re.match(r"Location: (0x[0-9a-f]+), Base: (0x[0-9a-f]+), Semaphore: (0x[0-9a-f]+)", s)
            cur["pc"], cur["base"], cur["sema"] = (int(x, 16) for x in m.groups())
        elif s.startswith("Arguments:"):
            # aarch64 memory operands hold a space: "-4@[sp, 28]".
            cur["args"] = re.findall(r"-?[0-9]+f?@(?:\[[^]]*\]|\S+)", s[len("Arguments:"):])
            cur = None
    return notes


def check_forms(arch, notes):
    form = FORMS[arch]
    for n in notes:
        for a in n.get("args", []):
            if STAP_FLOATS:
                # where the "f" may be is cmd_notes' check (the sizes against probes.c's kinds)
                a = re.sub(r"^(-?[0-9]+)f@", r"\1@", a)
            if not form.match(a):
                err(f"{n['provider']}:{n['name']}: operand '{a}' is not a plain register, "
                    f"immediate or disp(reg) form for {arch}")
            if BELOW_SP.search(a):
                err(f"{n['provider']}:{n['name']}: operand '{a}' is below the stack pointer")
            if re.match(r"^-?[0-9]+f@", a):
                err(f"{n['provider']}:{n['name']}: float suffix in '{a}'")


def cmd_notes(arch, elf, exp, sema_probes="guarded"):
    notes = [n for n in read_notes(elf) if n["provider"] == PROVIDER]
    sema = set(sema_probes.split(",")) if sema_probes else set()
    check_forms(arch, notes)
    byname = {}
    for n in notes:
        byname.setdefault(n["name"], []).append(n)
        if n["base"] == 0:
            err(f"{n['name']}: note base is 0 (.stapsdt.base missing)")
        if (n["sema"] != 0) != (n["name"] in sema):
            err(f"{n['name']}: semaphore 0x{n['sema']:x}, expected "
                f"{'non-zero' if n['name'] in sema else '0'}")
    for name, args in read_exp(exp):
        if name not in byname:
            err(f"{name}: no note")
            continue
        for n in byname[name]:
            want = [("-" if k == "i" else "") + f"{size}" + ("f" if float_exempt(k) else "") + "@"
                    for k, size, _, _ in args]
            got = [re.match(r"^(-?[0-9]+f?)", a).group(1) + "@" for a in n["args"]]
            if want != got:
                err(f"{name}: argument sizes {got}, expected {want} ({' '.join(n['args'])})")


def cmd_gen_gdb(exp):
    lines = ["set pagination off", "set confirm off", "set breakpoint pending on",
             "set print address on"]
    for name, args in read_exp(exp):
        lines += [f"break -probe-stap {PROVIDER}:{name}", "commands", "silent"]
        if name == "zero":
            lines += ['printf "@@info-probes\\n"', f"info probes stap {PROVIDER}",
                      'printf "@@end-info-probes\\n"']
        lines.append(f'printf "@@{name}\\n"')
        for i, (kind, _, _, _) in enumerate(args):
            if float_exempt(kind):
                # an error here would end the command list before its "continue"
                lines.append('echo -')
            elif kind == "s":
                lines.append(f"output (char *)$_probe_arg{i}")
            else:
                lines.append(f"output $_probe_arg{i}")
            lines.append('echo \\n')
        lines += ["continue", "end"]
    lines += ["run", "quit"]
    print("\n".join(lines))


def parse_value(kind, s):
    """gdb prints 1-byte values as `-5 '\\373'` and strings as `0x55... "alpha"`."""
    s = s.strip()
    if kind == "s":
        m = re.match(r'^(0x[0-9a-f]+) "(.*)"$', s)
        return (int(m.group(1), 16), m.group(2)) if m else (None, s)
    m = re.match(r"^(-?[0-9]+)", s)
    return (int(m.group(1)) if m else None, None)


def cmd_gdb(exp, gdbout):
    with open(gdbout, errors="replace") as f:
        out = f.read().splitlines()
    probes = read_exp(exp)
    if "@@info-probes" in out:
        start, end = out.index("@@info-probes"), out.index("@@end-info-probes")
        listing = "\n".join(out[start:end])
        for name, _ in probes:
            if not re.search(rf"\bstap\s+{PROVIDER}\s+{name}\b", listing):
                err(f"gdb info probes does not list {PROVIDER}:{name}")
    else:
        err("gdb never stopped at sdttest:zero (no 'info probes' output)")
    for name, args in probes:
        key = f"@@{name}"
        if key not in out:
            err(f"gdb: probe {name} never hit")
            continue
        i = out.index(key)
        for j, (kind, size, value, text) in enumerate(args):
            if float_exempt(kind):
                say_exempt("gdb", name, j, "gdb 13 cannot parse it (\"Unknown numeric token\")")
                continue
            got, gtext = parse_value(kind, out[i + 1 + j] if i + 1 + j < len(out) else "")
            if got != value or (kind == "s" and gtext != text):
                err(f"gdb: {name} $_probe_arg{j}: got '{out[i + 1 + j]}', expected "
                    f"{value}{' ' + text if text else ''}")


# aarch64 memory operands without an offset ("8@[x1]"): bcc before 0.31, whose parser
# bpftrace uses, takes them for the register itself (bcc pull request 5034, fixed in 0.31).
# With USDTKIT_BCC_BARE_BRACKET=reg (t-a64-sdt.sh sets it for such a bcc) the program reads
# them through the register, as a fixed bcc would, so every value is still checked exactly.
# The register is read by its name (bpftrace's reg("rN")), not as argI: bcc gives argI the
# operand's size, so a 4-byte "-4@[x9]" was the address cut to 32 bits (SystemTap's header
# under clang -O2 read 0). [sp] stays argI (8-byte only: bpftrace 0.17 misplaces "sp").
BARE_BRACKET = re.compile(r"^(-?)([1248])@\[(x[0-9]+|sp)\]$")
BT_INT = {"1": "int8", "2": "int16", "4": "int32", "8": "int64"}


def bt_arg(i, operand):
    m = BARE_BRACKET.match(operand or "")
    if not m or os.environ.get("USDTKIT_BCC_BARE_BRACKET") != "reg":
        return f"arg{i}"
    addr = f'reg("r{m.group(3)[1:]}")' if m.group(3) != "sp" else f"arg{i}"
    return f"*({'' if m.group(1) else 'u'}{BT_INT[m.group(2)]} *){addr}"


def cmd_gen_bt(elf, exp):
    operands = {n.get("name"): n.get("args", []) for n in read_notes(elf)}
    for name, args in read_exp(exp):
        fmt, vals = [], []
        ops = operands.get(name, [])
        for i, (kind, _, _, _) in enumerate(args[:BT_MAX_ARGS]):
            a = bt_arg(i, ops[i] if i < len(ops) else None)
            if float_exempt(kind):
                fmt.append("-")
            elif kind == "s":
                fmt.append("%lu:%s")
                vals += [a, f"str({a})"]
            else:
                fmt.append("%ld" if kind == "i" else "%lu")
                vals.append(a)
        text = " ".join([f"@@{name}"] + fmt)
        body = f'printf("{text}\\n"{"".join(", " + v for v in vals)});'
        print(f"usdt:{elf}:{PROVIDER}:{name} {{ {body} }}")


def cmd_bt(exp, btout):
    with open(btout, errors="replace") as f:
        out = [l.rstrip("\n") for l in f]
    for name, args in read_exp(exp):
        lines = [l for l in out if l == f"@@{name}" or l.startswith(f"@@{name} ")]
        if len(lines) != 1:
            err(f"bpftrace: probe {name} printed {len(lines)} times")
            continue
        got = lines[0].split(" ")[1:]
        want = []
        for j, (kind, _, value, text) in enumerate(args[:BT_MAX_ARGS]):
            if float_exempt(kind):
                say_exempt("bpftrace", name, j, "bcc 0.26, bpftrace's parser, cannot parse it "
                           "(\"Parse error\"); the probe must still fire once")
                want.append("-")
            else:
                want.append(f"{value}:{text}" if kind == "s" else str(value))
        if got != want:
            err(f"bpftrace: {name}: got {got}, expected {want}")


def cmd_summary(elf):
    """provider, name, semaphore or not, [-]SIZE of each argument: one note per line, for
    comparing two headers' notes of the same source."""
    for n in read_notes(elf):
        sizes = [m.group(1) if m else "?"
                 for m in (re.match(r"^(-?[0-9]+f?)@", a) for a in n.get("args", []))]
        print(n["provider"], n["name"], "sem" if n["sema"] else "nosem", *sizes)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"notes": cmd_notes, "gen-gdb": cmd_gen_gdb, "gdb": cmd_gdb, "gen-bt": cmd_gen_bt,
     "bt": cmd_bt, "summary": cmd_summary,
     "forms": lambda arch, elf: check_forms(arch, read_notes(elf))}[cmd](*args)
    for e in errors:
        print(f"check.py {cmd}: {e}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
