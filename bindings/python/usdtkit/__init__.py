# SPDX-License-Identifier: MIT
"""usdtkit: USDT probes declared while a Python program runs.

A pure-Python binding of libusdtkit-runtime (<usdtkit/runtime.h>) through
ctypes: nothing to compile. A Provider holds probes with typed arguments;
load() builds and maps their ELF object in memory, after which bpftrace,
perf, gdb and `dtrace -l` see them as they see compiled probes:

    import usdtkit
    with usdtkit.Provider("myapp") as p:
        start = p.add_probe("request-start", "string", "int64")
        p.load()
        ...
        start.fire(path, size)   # tracer attached: fires; else returns at once

How fire() stays cheap. Each loaded probe has a semaphore, an unsigned
short in the mapped object that the kernel increments for each attached
tracer. A Probe keeps a memoryview over it, so fire() reads it without a
ctypes call and returns False when it is 0, before looking at its
arguments. While the provider is not loaded the view is a constant
nonzero one: fire() then takes the slow path, and the library's refusal
(not loaded) becomes an Error. Only a traced fire converts its arguments
(into one ctypes structure laid out as the uint64_t array that
usdtkit_probe_fire_argv() takes) and makes the call.

Arguments of a traced fire, one per declared type (a wrong count is a
TypeError):
  integer types  any int (or __index__ object), converted as C converts it
                 (masked, never range-checked: a tracer attached never
                 makes fire() raise for a value); the tracer reads the
                 declared width, so 300 fired as uint8 reads 44, -1 as
                 uint32 reads 4294967295
  pointer        an int (the address, masked to 64 bits) or None (0)
  string         str (encoded UTF-8, 'surrogateescape' so os-decoded file
                 names come back as their bytes), bytes or bytearray as
                 they are (up to a NUL), None (NULL)
Anything else is a TypeError naming the argument.

Lifetime. A Probe keeps its Provider alive; destroy() (also close(), the
end of a `with` block, or garbage collection) unloads and frees the
library's objects, after which the probes refuse to fire. As with free(),
destroy() must not run while another thread still fires the provider's
probes; the collector never does that (nothing then refers to them).

Errors the library reports raise usdtkit.Error, an OSError carrying the
library's errno and its one-line message (usdtkit_provider_error()).
"""

import ctypes
import enum
import errno as _errno
import os
import types as _types

from . import _library

__all__ = [
    "Error", "Provider", "Probe", "Type", "MAX_ARGS", "INT8", "UINT8", "INT16", "UINT16",
    "INT32", "UINT32", "INT64", "UINT64", "POINTER", "STRING",
]


class Type(enum.IntEnum):
    """Argument types: the values of usdtkit_type (SystemTap's [-]SIZE)."""
    INT8 = -1
    UINT8 = 1
    INT16 = -2
    UINT16 = 2
    INT32 = -4
    UINT32 = 4
    INT64 = -8
    UINT64 = 8
    POINTER = 16
    STRING = 17


INT8, UINT8, INT16, UINT16 = Type.INT8, Type.UINT8, Type.INT16, Type.UINT16
INT32, UINT32, INT64, UINT64 = Type.INT32, Type.UINT32, Type.INT64, Type.UINT64
POINTER, STRING = Type.POINTER, Type.STRING

# USDTKIT_MAX_ARGS: the library refuses more.
MAX_ARGS = 12

# Type names add_probe() accepts, compared lower-case without spaces.
_TYPE_NAMES = {"int": INT32, "long": INT64, "pointer": POINTER, "void*": POINTER,
               "char*": STRING, "string": STRING, "str": STRING}
for _t in Type:
    if _t not in (POINTER, STRING):
        _TYPE_NAMES[_t.name.lower()] = _t
        _TYPE_NAMES[_t.name.lower() + "_t"] = _t

# The ctypes field each type takes in the argument structure: 8 bytes each,
# so the structure is the uint64_t array usdtkit_probe_fire_argv() reads.
_FIELDS = {STRING: ctypes.c_char_p, POINTER: ctypes.c_void_p}
for _t in Type:
    if _t not in _FIELDS:
        _FIELDS[_t] = ctypes.c_int64 if _t < 0 else ctypes.c_uint64

# The semaphore a probe reads while its provider is not loaded: nonzero, so
# that fire() goes to the library, which refuses.
_NOT_LOADED = memoryview(b"\x01\x00").cast("H")


class Error(OSError):
    """The library refused: errno and its message (e.strerror), as an OSError."""


def _encode_name(what, name):
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, not {type(name).__name__}")
    return name.encode("utf-8")


def _type_of(t):
    if isinstance(t, str):
        key = "".join(t.lower().split())
        if key not in _TYPE_NAMES:
            raise ValueError(f"unknown argument type {t!r} (int8..int64, uint8..uint64, "
                             "int, long, pointer, 'char *', string)")
        return _TYPE_NAMES[key]
    if isinstance(t, bool) or not isinstance(t, int):
        raise TypeError(f"an argument type is a str or a usdtkit.Type, not {type(t).__name__}")
    return t


class Provider:
    """A provider of run-time probes: usdtkit_provider_create(name, module).

    `name` and probe names are what DTrace users write ("myapp",
    "request-start"); `module` names the in-memory object ("usdtkit:<name>"
    by default). Used as a context manager, it is destroyed at the end of
    the block.
    """

    def __init__(self, name, module=None):
        self._p = None
        cname = _encode_name("a provider name", name)
        cmodule = None if module is None else _encode_name("a module name", module)
        try:
            self._lib = _library.library()
        except OSError as e:
            raise Error(_errno.ENOENT, f"usdtkit: cannot load {_library.SONAME} (set USDTKIT_RUNTIME_LIB "
                        f"to its path): {e}") from None
        self._name = name
        self._module = module
        self._probes = {}
        self._loaded = False
        p = self._lib.usdtkit_provider_create(cname, cmodule)
        if not p:
            err = ctypes.get_errno()
            what = "bad name or module" if err == _errno.EINVAL else _errno_text(err)
            raise Error(err, f"usdtkit: cannot create provider {name!r}: {what}")
        self._p = p

    def __repr__(self):
        state = "destroyed" if self._p is None else "loaded" if self._loaded else "not loaded"
        return f"<usdtkit.Provider {self._name!r}, {len(self._probes)} probes, {state}>"

    @property
    def name(self):
        return self._name

    @property
    def module(self):
        return self._module

    @property
    def loaded(self):
        return self._loaded

    @property
    def probes(self):
        """The probes by name (read-only)."""
        return _types.MappingProxyType(self._probes)

    def add_probe(self, name, *types):
        """A new Probe with arguments of these types (strings or usdtkit.Type)."""
        p = self._live()
        cname = _encode_name("a probe name", name)
        codes = [_type_of(t) for t in types]
        array = (ctypes.c_int * max(len(codes), 1))(*codes)
        q = self._lib.usdtkit_probe_addv(p, cname, len(codes), array)
        if not q:
            raise self._error()
        probe = Probe(self, q, name, tuple(Type(c) for c in codes))
        self._probes[name] = probe
        return probe

    def load(self):
        """Builds, maps and registers the object; the probes can then fire."""
        p = self._live()
        if self._lib.usdtkit_provider_load(p) != 0:
            raise self._error()
        self._loaded = True
        # A load with probes added since maps a new object: new semaphores.
        for probe in self._probes.values():
            probe._watch(self._lib.usdtkit_probe_semaphore(probe._q))

    def unload(self):
        """Unregisters the object; its probes refuse to fire until the next load."""
        p = self._live()
        if self._lib.usdtkit_provider_unload(p) != 0:
            raise self._error()
        self._loaded = False
        for probe in self._probes.values():
            probe._watch(None)

    def destroy(self):
        """Unloads if loaded and frees the library's objects. Idempotent."""
        p = self._p
        if p is None:
            return
        # The views go first: the semaphores are freed with the provider.
        for probe in self._probes.values():
            probe._watch(None)
            probe._q = None
        self._p = None
        self._loaded = False
        self._lib.usdtkit_provider_destroy(p)

    close = destroy

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False

    def __del__(self):
        # Only when nothing refers to the provider or its probes (a probe
        # holds its provider): no fire() can be running. Also during the
        # interpreter's shutdown, hence self._lib rather than the module's.
        if getattr(self, "_p", None) is not None:
            self.destroy()

    def _live(self):
        if self._p is None:
            raise Error(_errno.ESRCH, f"usdtkit: provider {self._name!r}: destroyed already")
        return self._p

    def _error(self):
        # errno first: the next foreign call may change ctypes' copy.
        err = ctypes.get_errno()
        msg = self._lib.usdtkit_provider_error(self._p) if self._p is not None else None
        text = msg.decode("utf-8", "replace") if msg else _errno_text(err)
        return Error(err, text)


class Probe:
    """A probe of a Provider, made by Provider.add_probe()."""

    __slots__ = ("_sem", "_q", "_provider", "_name", "_types", "_argv", "_strings", "__weakref__")

    def __init__(self, provider, q, name, types):
        self._provider = provider
        self._q = q
        self._name = name
        self._types = types
        self._sem = _NOT_LOADED
        fields = [(f"a{i}", _FIELDS[t]) for i, t in enumerate(types)]
        self._argv = type("argv", (ctypes.Structure,), {"_fields_": fields})
        self._strings = tuple(i for i, t in enumerate(types) if t == STRING)

    def fire(self, *args):
        """Fires with these arguments when a tracer is attached: True if one
        was when it looked, False (at once, arguments untouched) if not."""
        if self._sem[0]:
            return self._fire_traced(args)
        return False

    @property
    def enabled(self):
        """Whether a tracer is attached: the semaphore, read without a call."""
        sem = self._sem
        return sem is not _NOT_LOADED and sem[0] != 0

    @property
    def name(self):
        return self._name

    @property
    def types(self):
        return self._types

    @property
    def provider(self):
        return self._provider

    def __repr__(self):
        types = ", ".join(t.name.lower() for t in self._types)
        return f"<usdtkit.Probe {self._provider.name}:{self._name}({types})>"

    def _watch(self, address):
        if address is None:
            self._sem = _NOT_LOADED
        else:
            cell = (ctypes.c_uint16 * 1).from_address(address)
            self._sem = memoryview(cell).cast("B").cast("H")

    def _fire_traced(self, args):
        sem = self._sem
        if sem is not _NOT_LOADED and not sem[0]:
            return False  # a load or a detach since fire() looked
        provider = self._provider
        q = self._q
        if q is None:
            raise Error(_errno.ESRCH, f"usdtkit: provider {provider.name!r}: probe "
                        f"{self._name!r} fired after the provider was destroyed")
        n = len(self._types)
        if len(args) != n:
            raise TypeError(f"probe {self._name!r} takes {n} arguments ({len(args)} given)")
        if self._strings:
            args = list(args)
            for i in self._strings:
                a = args[i]
                if isinstance(a, str):
                    args[i] = a.encode("utf-8", "surrogateescape")
                elif isinstance(a, (bytearray, memoryview)):
                    args[i] = bytes(a)
        try:
            argv = self._argv(*args)
        except TypeError:
            raise self._argument_error(args) from None
        if provider._lib.usdtkit_probe_fire_argv(q, n, ctypes.byref(argv)) != 0:
            # Firing keeps no message (it may run in any thread): ours.
            raise Error(ctypes.get_errno(), f"usdtkit: provider {provider.name!r}: probe "
                        f"{self._name!r} fired while the provider is not loaded")
        return True

    def _argument_error(self, args):
        # Which argument: set them one by one (only on this error path).
        argv = self._argv()
        for i, a in enumerate(args):
            try:
                setattr(argv, f"a{i}", a)
            except TypeError as e:
                kind = self._types[i].name.lower()
                return TypeError(f"probe {self._name!r}, argument {i} ({kind}): "
                                 f"{type(a).__name__} not accepted ({e})")
        return TypeError(f"probe {self._name!r}: bad arguments")


def _errno_text(err):
    return os.strerror(err) if err else "unknown error"
