#!/bin/bash
# The usdtkit Python binding without a tracer (no root needed):
#  - types: every name and constant maps to its usdtkit_type value, unknown
#    names and non-types are refused;
#  - errors the library reports (bad names, more than 12 arguments, a
#    duplicate probe, a probe added while loaded, load twice, unload twice,
#    fire after unload, use after destroy) raise usdtkit.Error with the
#    library's errno and exactly its message (read here through ctypes
#    from the same provider);
#  - a disabled fire() returns False without looking at its arguments; a
#    not-loaded one raises;
#  - the context manager destroys: the object leaves /proc/self/maps; so
#    does garbage collection of a dropped provider;
#  - 100 providers loaded at once, and one provider with 1,000 probes;
#  - the library is found through USDTKIT_RUNTIME_LIB, and a missing one is
#    a clear usdtkit.Error.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-python/lib.sh"

py - "$PROV" >"$T/out" 2>&1 <<'PYEOF' || { cat "$T/out" >&2; fail "the API checks failed"; }
import ctypes, errno, gc, os, sys, weakref
import usdtkit

prov = sys.argv[1]
bad = 0
def check(cond, what):
    global bad
    if not cond:
        print("FAIL:", what)
        bad = 1

# An independent reader of the library's message for a provider.
lib = ctypes.CDLL(os.environ["USDTKIT_RUNTIME_LIB"])
lib.usdtkit_provider_error.restype = ctypes.c_char_p
lib.usdtkit_provider_error.argtypes = [ctypes.c_void_p]
def lib_message(p):
    return lib.usdtkit_provider_error(p._p).decode()

def raises(what, fn, exc=usdtkit.Error, err=None, provider=None, msg=None):
    try:
        fn()
    except exc as e:
        if err is not None:
            check(e.errno == err, f"{what}: errno {e.errno} ({e}), expected {errno.errorcode[err]}")
        if msg is not None:
            check(e.strerror == msg, f"{what}: message {e.strerror!r}, expected {msg!r}")
        if provider is not None:
            msg = lib_message(provider)
            check(msg != "", f"{what}: the library left no message")
            check(e.strerror == msg, f"{what}: message {e.strerror!r}, the library's {msg!r}")
            check(str(e) == f"[Errno {err}] {msg}", f"{what}: str(e) {str(e)!r}")
        print(f"ok {what}: {type(e).__name__}: {e}")
        return e
    except Exception as e:
        check(False, f"{what}: raised {type(e).__name__}: {e}, expected {exc.__name__}")
        return None
    check(False, f"{what}: did not raise")

def mapped(name):
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if f"/memfd:usdtkit:{name} " in line)

# --- types ---
T = usdtkit.Type
want = {"int8": -1, "uint8": 1, "int16": -2, "uint16": 2, "int32": -4, "uint32": 4,
        "int64": -8, "uint64": 8, "int": -4, "long": -8, "pointer": 16, "void *": 16,
        "char *": 17, "char*": 17, "string": 17, "str": 17, "INT8": -1, "uint64_t": 8}
check(issubclass(usdtkit.Error, OSError), "usdtkit.Error is an OSError")
consts = [usdtkit.INT8, usdtkit.UINT8, usdtkit.INT16, usdtkit.UINT16, usdtkit.INT32,
          usdtkit.UINT32, usdtkit.INT64, usdtkit.UINT64, usdtkit.POINTER, usdtkit.STRING]
check([int(c) for c in consts] == [-1, 1, -2, 2, -4, 4, -8, 8, 16, 17], "constants' values")
p = usdtkit.Provider(prov + "types")
for i, (name, value) in enumerate(want.items()):
    q = p.add_probe(f"t{i}", name)
    check(q.types == (value,), f"type {name!r}: {q.types}, expected ({value},)")
q = p.add_probe("all", *consts)
check(q.types == tuple(consts), f"constants as types: {q.types}")
check(q.name == "all" and q.provider is p, "probe name and provider")
check(p.add_probe("none").types == (), "no argument")
raises("unknown type name", lambda: p.add_probe("u", "float"), ValueError)
raises("a float as type", lambda: p.add_probe("u", 1.5), TypeError)
raises("a type the library refuses", lambda: p.add_probe("u", 3), usdtkit.Error, errno.EINVAL, p)
raises("a bytes probe name", lambda: p.add_probe(b"u"), TypeError)
p.destroy()

# --- errors from the library ---
raises("bad provider name", lambda: usdtkit.Provider("9lives"), usdtkit.Error, errno.EINVAL,
       msg="usdtkit: cannot create provider '9lives': bad name or module")
raises("bad provider name (space)", lambda: usdtkit.Provider("a b"), usdtkit.Error, errno.EINVAL)
raises("bad module name", lambda: usdtkit.Provider("ok", module="a\nb"), usdtkit.Error, errno.EINVAL)
raises("too long a name", lambda: usdtkit.Provider("x" * 64), usdtkit.Error, errno.EINVAL)
p = usdtkit.Provider(prov + "-errors", module="pyerrors")
check(p.name == prov + "-errors" and p.module == "pyerrors", "provider name and module")
raises("bad probe name", lambda: p.add_probe("no.dots"), usdtkit.Error, errno.EINVAL, p)
raises("13 arguments", lambda: p.add_probe("many", *["int"] * 13), usdtkit.Error, errno.E2BIG, p)
twelve = p.add_probe("twelve", *["int64"] * 12)
check(len(twelve.types) == 12, "12 arguments accepted")
first = p.add_probe("request-start", "string", "int")
raises("duplicate probe", lambda: p.add_probe("request-start", "int"), usdtkit.Error, errno.EEXIST, p)
check(list(p.probes) == ["twelve", "request-start"], f"probes: {list(p.probes)}")
check(not p.loaded and not first.enabled, "not loaded, not enabled before load")
not_loaded = f"usdtkit: provider '{prov}-errors': probe 'request-start' fired while the provider is not loaded"
raises("fire before load", lambda: first.fire("x", 1), usdtkit.Error, errno.ESRCH, msg=not_loaded)
raises("unload before load", p.unload, usdtkit.Error, errno.EALREADY, p)
p.load()
check(p.loaded, "loaded after load")
check(mapped("pyerrors") > 0, "the object (module pyerrors) is mapped")
check(first.enabled is False, "enabled is False without a tracer")
raises("load twice", p.load, usdtkit.Error, errno.EALREADY, p)
raises("add while loaded", lambda: p.add_probe("late", "int"), usdtkit.Error, errno.EBUSY, p)
check(first.fire("x", 1) is False, "fire without a tracer returns False")

# A disabled fire does not look at its arguments.
class Exploding:
    def __index__(self): raise AssertionError("converted")
    def __str__(self): raise AssertionError("converted")
check(first.fire(Exploding(), Exploding()) is False, "disabled fire converts nothing")
check(first.fire() is False and first.fire(1, 2, 3, 4) is False, "disabled fire ignores the count")

p.unload()
check(not p.loaded and not first.enabled, "not loaded after unload")
raises("fire after unload", lambda: first.fire("x", 1), usdtkit.Error, errno.ESRCH, msg=not_loaded)
p.load()
check(p.loaded and first.fire("x", 1) is False, "load again")
late = None
p.unload()
late = p.add_probe("late", "int")
p.load()
check(late.fire(1) is False and first.fire("y", 2) is False, "a probe added between loads")
p.destroy()
check(mapped("pyerrors") == 0, "destroy unmaps the object")
check(not p.loaded, "not loaded after destroy")
p.destroy()   # idempotent
raises("fire after destroy", lambda: first.fire("x", 1), usdtkit.Error, errno.ESRCH,
       msg=f"usdtkit: provider '{prov}-errors': probe 'request-start' fired after the provider was destroyed")
gone = f"usdtkit: provider '{prov}-errors': destroyed already"
raises("load after destroy", p.load, usdtkit.Error, errno.ESRCH, msg=gone)
raises("add after destroy", lambda: p.add_probe("x"), usdtkit.Error, errno.ESRCH, msg=gone)
check(first.enabled is False, "enabled after destroy")

# --- context manager ---
with usdtkit.Provider(prov + "cm", module="pycm") as p:
    q = p.add_probe("hit", "int")
    p.load()
    check(mapped("pycm") > 0, "mapped inside with")
check(p.loaded is False and mapped("pycm") == 0, "with: unloaded and unmapped at exit")
raises("fire after with", lambda: q.fire(1), usdtkit.Error, errno.ESRCH)
try:
    with usdtkit.Provider(prov + "cm2", module="pycm2") as p:
        p.add_probe("hit")
        p.load()
        raise KeyError("inside")
except KeyError:
    pass
check(mapped("pycm2") == 0, "with: destroyed when the block raises")

# --- garbage collection ---
p = usdtkit.Provider(prov + "gc", module="pygc")
q = p.add_probe("hit", "int")
p.load()
ref = weakref.ref(p)
check(mapped("pygc") > 0, "gc: mapped")
del p
check(ref() is not None, "a probe keeps its provider alive")
del q
gc.collect()
check(ref() is None and mapped("pygc") == 0, "gc: dropped provider destroyed")

# --- many providers, many probes ---
ps = []
for i in range(100):
    p = usdtkit.Provider(f"{prov}m{i}", module=f"pymany{i}")
    p.add_probe("hit", "int", "string")
    p.load()
    ps.append(p)
check(all(p.loaded for p in ps), "100 providers loaded")
check(sum(mapped(f"pymany{i}") > 0 for i in range(100)) == 100, "100 objects mapped")
for p in ps:
    check(p.probes["hit"].fire(1, "x") is False, "fire in many")
    p.close()
check(sum(mapped(f"pymany{i}") for i in range(100)) == 0, "100 objects unmapped")

p = usdtkit.Provider(prov + "k", module="pythousand")
qs = [p.add_probe(f"probe{i}", "int", "uint64") for i in range(1000)]
p.load()
check(len(p.probes) == 1000 and all(not q.enabled for q in qs), "1,000 probes loaded")
check(all(q.fire(i, i) is False for i, q in enumerate(qs)), "1,000 probes fire")
p.destroy()

# --- threads: fires in another thread while this one loads and unloads:
# each returns or raises ESRCH (not loaded when it looked), nothing else ---
import threading
p = usdtkit.Provider(prov + "threads", module="pythreads")
q = p.add_probe("hit", "string", "int")
stop = False
counts = {"returned": 0, "refused": 0}
def firing():
    while not stop:
        try:
            q.fire("x", 1)
            counts["returned"] += 1
        except usdtkit.Error as e:
            counts["refused"] += 1
            check(e.errno == errno.ESRCH, f"a fire during unload: {e}")
t = threading.Thread(target=firing)
t.start()
import time
for i in range(100):
    p.load()
    time.sleep(0.002)   # lets the other thread run
    p.unload()
    time.sleep(0.001)
stop = True
t.join()
check(counts["returned"] > 0 and counts["refused"] > 0, f"the firing thread ran: {counts}")
print("threads", counts)
p.destroy()

# A provider still loaded when the interpreter exits: destroyed by the
# collector at shutdown, without a word (the shell checks stderr).
left = usdtkit.Provider(prov + "left", module="pyleft")
left_probe = left.add_probe("hit", "int")
left.load()
sys.exit(bad)
PYEOF
expect_no_grep '^(Exception ignored|Traceback)' "$T/out" "the interpreter's exit with a provider loaded"
expect_grep '^ok fire after unload: Error: \[Errno 3\] ' "$T/out" "fire after unload: the message"
# The missing library: usdtkit.Error naming it and USDTKIT_RUNTIME_LIB.
USDTKIT_RUNTIME_LIB="$T/nowhere.so" py -c '
import usdtkit
try:
    usdtkit.Provider("x")
except usdtkit.Error as e:
    print(e)
' >"$T/nolib" 2>&1 || { cat "$T/nolib" >&2; fail "a missing library: exit $?"; }
expect_grep "^\[Errno 2\] usdtkit: cannot load libusdtkit-runtime.so.0 \(set USDTKIT_RUNTIME_LIB to its path\): .*$T/nowhere.so" \
	"$T/nolib" "a missing library"
# Importing needs no library: the types are there without it.
USDTKIT_RUNTIME_LIB="$T/nowhere.so" py -c 'import usdtkit; print(int(usdtkit.STRING))' >"$T/imp" 2>&1 ||
	{ cat "$T/imp" >&2; fail "import without the library"; }
expect_eq "$(cat "$T/imp")" 17 "import without the library"
