# SPDX-License-Identifier: MIT
"""libstapsdt.so used from Python the way python-stapsdt 0.1.1 uses it:
cdll.LoadLibrary of the unversioned libstapsdt.so, the same ctypes
declarations (only providerInit's and providerAddProbe's first arguments
typed, variadic ints as C ints), and providerLoad's 0 on success, which
python-stapsdt's Provider.load() turns into False. The struct fields are
read as DynamicProbes (.NET) reads them, by layout.

    stapsdt_ctypes.py /path/to/libstapsdt.so [trace]

Prints "python ok". With "trace": after loading, prints "loaded pid=PID",
waits (20 s at most) for probeIsEnabled() to be 1, fires round i with
(1000 + i, -7 - i, "hello-i"), the str encoded to c_char_p as python-stapsdt
does, every 20 ms while it stays 1, then prints "rounds=N" and "enabled=0".
"""
import ctypes
import os
import sys
import time
from ctypes import POINTER, Structure, c_char_p, c_int, c_uint64, c_void_p, cdll
from enum import IntEnum

lib = cdll.LoadLibrary(sys.argv[1])

providerInit = lib.providerInit
providerInit.argtypes = [c_char_p]
providerInit.restype = c_void_p
providerAddProbe = lib.providerAddProbe
providerAddProbe.argtypes = [c_void_p, c_char_p]
providerAddProbe.restype = c_void_p
providerLoad = lib.providerLoad
providerLoad.argtypes = [c_void_p]
providerLoad.restype = c_int
providerUnload = lib.providerUnload
providerUnload.argtypes = [c_void_p]
providerUnload.restype = c_int
providerDestroy = lib.providerDestroy
providerDestroy.argtypes = [c_void_p]
probeFire = lib.probeFire
probeFire.argtypes = [c_void_p]
probeFire.restype = c_void_p
probeIsEnabled = lib.probeIsEnabled
probeIsEnabled.argtypes = [c_void_p]
probeIsEnabled.restype = c_int


class ArgTypes(IntEnum):
    noarg = 0
    uint8 = 1
    int8 = -1
    uint16 = 2
    int16 = -2
    uint32 = 4
    int32 = -4
    uint64 = 8
    int64 = -8


class SDTProbe(Structure):
    _fields_ = [("name", c_char_p), ("argFmt", c_int * 6), ("_fire", c_void_p),
                ("provider", c_void_p), ("argCount", c_int)]


class SDTProbeList(Structure):
    pass


SDTProbeList._fields_ = [("probe", SDTProbe), ("next", POINTER(SDTProbeList))]


class SDTProvider(Structure):
    _fields_ = [("name", c_char_p), ("probes", POINTER(SDTProbeList)), ("errno", c_int),
                ("error", c_char_p), ("_handle", c_void_p), ("_filename", c_char_p),
                ("_memfd", c_int), ("_use_memfd", c_int)]


def check(cond, what):
    if not cond:
        print("FAILED:", what)
        sys.exit(1)


def wait_enabled(probe, want):
    for _ in range(2000):
        if probeIsEnabled(probe) == want:
            return
        time.sleep(0.01)
    check(False, "probeIsEnabled() did not become %d" % want)


check(ctypes.sizeof(SDTProvider) == 56 and ctypes.sizeof(SDTProbeList) == 64, "sizes")
p = providerInit(c_char_p(b"pystap"))
check(p, "providerInit")
hit = providerAddProbe(p, c_char_p(b"hit"), 3, ArgTypes.uint64, ArgTypes.int32, ArgTypes.uint64)
check(hit, "providerAddProbe")
bad = providerAddProbe(p, c_char_p(b"seven"), 7, *([ArgTypes.int8] * 7))
prov = SDTProvider.from_address(p)
check(bad is None, "a 7-argument probe is refused")
check(prov.error == b"usdtkit: provider 'pystap': probe 'seven': 7 arguments; "
      b"libstapsdt has 0 to 6" and prov.errno == -1, "the refusal's message: %r" % prov.error)

rc = providerLoad(p)
check(rc == 0, "providerLoad returned %d" % rc)
check(bool(rc) is False, "python-stapsdt's Provider.load() is False on success")
check(prov.name == b"pystap" and prov.probes, "provider fields")
node = prov.probes.contents
check(node.probe.name == b"hit" and node.probe.argCount == 3 and not node.next, "probe list")
check(list(node.probe.argFmt) == [8, -4, 8, 0, 0, 0], "argFmt %r" % list(node.probe.argFmt))
check(node.probe.provider == p and node.probe._fire and prov._handle, "loaded fields")
check(prov._filename == ("/proc/%d/fd/%d" % (os.getpid(), prov._memfd)).encode(), "_filename")
check(probeIsEnabled(hit) == 0, "not enabled without a tracer")
probeFire(hit, 1, -2, c_char_p(b"x"))  # no tracer: nothing happens

if len(sys.argv) > 2 and sys.argv[2] == "trace":
    print("loaded pid=%d" % os.getpid(), flush=True)
    wait_enabled(hit, 1)
    # A tracer's semaphore count rises a little before its programs run:
    # fire a round every 20 ms while it stays attached.
    i = 0
    while probeIsEnabled(hit) and i < 1000:
        # python-stapsdt: a str becomes c_char_p; ints go as C ints.
        probeFire(hit, c_uint64(1000 + i), -7 - i, c_char_p(("hello-%d" % i).encode("utf-8")))
        i += 1
        time.sleep(0.02)
    print("rounds=%d" % i, flush=True)
    wait_enabled(hit, 0)
    print("enabled=0", flush=True)

check(providerUnload(p) == 0 and not prov._handle and not node.probe._fire, "unload")
check(providerUnload(p) == 0, "unload when not loaded")
providerDestroy(p)
print("python ok")
