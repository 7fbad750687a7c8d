# SPDX-License-Identifier: MIT
"""What Probe.fire() costs in Python, beside what it is measured against.

    bench.py disabled        no tracer: prints "NAME NS" lines
    bench.py enabled         prints "ready PID", waits until a tracer has
                             enabled both probes, then measures them traced

Each case is `obj.fire(path, 7)` timed by timeit (best of REPEAT runs of N
calls, ns per call, the loop's own cost included in every row alike):
  baseline     a method that reads one attribute and returns it
  usdtkit      usdtkit's Probe.fire (the semaphore read without a call)
  guard        `if probe.enabled: probe.fire(...)`, usdtkit's property
  ctypes       a binding that asks the library on every fire through a
               ctypes call, the shape of python-stapsdt's Probe.fire
               (is_enabled property -> probeIsEnabled(), then the variadic
               probeFire() with c_char_p strings), written here over
               usdtkit_probe_enabled() and usdtkit_probe_fire()
"""

import ctypes
import os
import sys
import time
import timeit

import usdtkit


class Baseline:
    __slots__ = ("_x",)

    def __init__(self):
        self._x = 0

    def fire(self, *args):
        return self._x


class CtypesPerFire:
    """A ctypes call each fire, as python-stapsdt does (our code, its shape)."""

    def __init__(self, lib, q):
        self._q = q
        self._enabled = lib.usdtkit_probe_enabled
        self._fire = lib.usdtkit_probe_fire
        self._fire.argtypes = [ctypes.c_void_p]
        self._fire.restype = ctypes.c_int

    def fire(self, *args):
        if not self._q:
            return False
        if not self.is_enabled:
            return False
        args = [ctypes.c_char_p(a.encode("utf-8")) if isinstance(a, str) else a for a in args]
        self._fire(self._q, *args)
        return True

    @property
    def is_enabled(self):
        if not self._q:
            return False
        return bool(self._enabled(self._q))


def measure(stmt, env, n, repeat):
    best = min(timeit.repeat(stmt, globals=env, number=n, repeat=repeat))
    return best / n * 1e9


def main():
    mode = sys.argv[1]
    n = int(os.environ.get("N", "2000000" if mode == "disabled" else "200000"))
    repeat = int(os.environ.get("REPEAT", "7"))
    with usdtkit.Provider("pybench") as p:
        ours = p.add_probe("usdtkit", "string", "int")
        theirs = p.add_probe("ctypes", "string", "int")
        p.load()
        env = {"base": Baseline(), "ours": ours, "path": "/index.html",
               "theirs": CtypesPerFire(p._lib, theirs._q)}
        cases = [("baseline", "base.fire(path, 7)"), ("usdtkit", "ours.fire(path, 7)"),
                 ("guard", "if ours.enabled: ours.fire(path, 7)"),
                 ("ctypes", "theirs.fire(path, 7)")]
        if mode == "enabled":
            print("ready", os.getpid(), flush=True)
            end = time.monotonic() + 60
            while not (ours.enabled and theirs.enabled):
                if time.monotonic() > end:
                    sys.exit("bench.py: no tracer enabled the probes in 60 s")
                time.sleep(0.01)
            cases = [c for c in cases if c[0] != "baseline"]
        for name, stmt in cases:
            print(name, f"{measure(stmt, env, n, repeat):.1f}", flush=True)


main()
