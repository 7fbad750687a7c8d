#!/usr/bin/env python3
"""Writes a large provider modelled on the shape of Erlang/OTP's
erlang_dtrace.d (not its text): about 60 probes with their own argument
lists (strings and integers, 1 to 7 arguments, named parameters), then
951 'user trace' probes that all take the same 10 named arguments, 1,011
probes in all; and a C file with one site per probe and a second site for
the first ten (1,021 sites, as beam.smp has).

usage: gen.py DIR     writes DIR/big.d and DIR/big.c
"""
import os
import sys

out = sys.argv[1]
probes = []
kinds = [("char *", "s"), ("int", "i"), ("uint32_t", "u"), ("char *", "name"),
         ("int", "depth"), ("uint64_t", "bytes")]
for n in range(60):
    nargs = 1 + n % 7
    args = []
    for k in range(nargs):
        t, base = kinds[(n + k * 3) % len(kinds)]
        args.append((t, "%s%d" % (base, k)))
    probes.append(("event%02d__%s" % (n, ("start", "done", "queued")[n % 3]), args))
user = [("char *", "proc"), ("char *", "user_tag"), ("int", "i1"), ("int", "i2"),
        ("int", "i3"), ("int", "i4"), ("char *", "s1"), ("char *", "s2"),
        ("char *", "s3"), ("char *", "s4")]
for n in range(951):
    probes.append(("user_trace__n%d" % n, user))

with open(os.path.join(out, "big.d"), "w") as f:
    f.write("provider big {\n")
    for name, args in probes:
        f.write("\tprobe %s(%s);\n" % (name, ", ".join("%s %s" % a for a in args)))
    f.write("};\n")

with open(os.path.join(out, "big.c"), "w") as f:
    f.write('#include <stdint.h>\n#include "big.h"\n\n')
    f.write("void fire(char *s, int i, uint64_t b);\n")
    f.write("void fire(char *s, int i, uint64_t b)\n{\n")
    for n, (name, args) in enumerate(probes):
        vals = []
        for t, _ in args:
            vals.append({"char *": "s", "int": "i", "uint32_t": "(uint32_t)i",
                         "uint64_t": "b"}[t])
        macro = "BIG_" + name.replace("__", "_").upper()
        for _ in range(2 if n < 10 else 1):
            f.write("\t%s(%s);\n" % (macro, ", ".join(vals)))
    f.write("}\n\nint main(int argc, char **argv)\n{\n\tfire(argv[0], argc, 1);\n\treturn 0;\n}\n")
