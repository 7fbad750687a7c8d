# SPDX-License-Identifier: MIT
"""The traced program of the runtime-python tests.

    tracee.py PROVIDER trace [GOFILE]   probes of every type; prints "ready
        PID" and whether each is enabled, waits until a tracer enables them
        all (and GOFILE exists, when given: a probe's semaphore is raised
        when its uprobe is, a moment before bpftrace's program is attached
        to it, so the test says when bpftrace is ready), fires each once
        with the values of VALUES, waits until the tracer
        has gone (all disabled again), and leaves the provider's `with`
        block: "unmapped" if its object is then gone from /proc/self/maps.
    tracee.py PROVIDER hold GOFILE   loads the probes and waits until
        GOFILE exists (the tests' `dtrace -l` and daemon checks), then until
        request-start is enabled; fires it once and exits when it is
        disabled again.
Each step prints one line; anything unexpected exits 1 with a message.
"""

import os
import sys
import time

import usdtkit

# probe: (types, values fired); the tests expect these exact values back.
PROBES = {
    "ints8": (("int8", "int8", "int8", "uint8", "uint8"), (-128, 127, -1, 0, 255)),
    "ints16": (("int16", "int16", "uint16", "uint16"), (-32768, 32767, 0, 65535)),
    "ints32": (("int32", "int32", "uint32", "int"), (-2147483648, 2147483647, 4294967295, -7)),
    "ints64": (("int64", "int64", "uint64", "long"), (-2**63, 2**63 - 1, 2**64 - 1, -5)),
    "masked": (("uint8", "int8", "uint32", "int16"), (300, 200, -1, 2**40 + 5)),
    "pointers": (("pointer", "pointer", "pointer"), (None, 0xdeadbeefcafe, 2**64 - 1)),
    "strings": (("string", "str", "char *", usdtkit.STRING, "string"),
                ("hello", b"by\xfftes", "\u00fcnic\u00f8de", "", None)),
    "request-start": ((usdtkit.STRING, usdtkit.INT64), ("/index.html", 42)),
}


def wait_for(cond, what, seconds=60):
    # Scaled as the tests' bounds are (tests/lib/common.sh): under the emulated arm64
    # machine bpftrace's attach alone outlasted 60 s, and the tracee exited under it.
    end = time.monotonic() + seconds * float(os.environ.get("USDTKIT_TIME_FACTOR") or 1)
    while not cond():
        if time.monotonic() > end:
            sys.exit(f"tracee: timed out waiting for {what}")
        time.sleep(0.01)


def main():
    name, mode = sys.argv[1], sys.argv[2]
    with usdtkit.Provider(name, module=f"{name}mod") as p:
        probes = [p.add_probe(probe, *types) for probe, (types, _) in PROBES.items()]
        p.load()
        print("ready", os.getpid(), flush=True)
        if mode == "hold":
            wait_for(lambda: os.path.exists(sys.argv[3]), "the go file", 120)
            start = probes[-1]
            wait_for(lambda: start.enabled, "request-start to be enabled")
            print("enabled", start.enabled, flush=True)
            print("fired", start.fire("/index.html", 42), flush=True)
            wait_for(lambda: not start.enabled, "request-start to be disabled")
            print("disabled", start.enabled, flush=True)
            return
        print("enabled-before", *[q.enabled for q in probes], flush=True)
        wait_for(lambda: all(q.enabled for q in probes), "a tracer to enable every probe")
        print("enabled", *[q.enabled for q in probes], flush=True)
        if len(sys.argv) > 3:
            wait_for(lambda: os.path.exists(sys.argv[3]), "the go file", 120)
        print("fired", *[q.fire(*PROBES[q.name][1]) for q in probes], flush=True)
        wait_for(lambda: not any(q.enabled for q in probes), "the tracer to go")
        print("disabled", *[q.enabled for q in probes], flush=True)
    with open("/proc/self/maps") as f:
        left = [line for line in f if f"/memfd:usdtkit:{name}mod " in line]
    print("unmapped" if not left else f"still mapped: {left}", flush=True)


main()
