# SPDX-License-Identifier: MIT
"""usdtkit._library: finding libusdtkit-runtime and declaring its functions.

The binding is pure Python: it loads the C library with ctypes, from
$USDTKIT_RUNTIME_LIB when set (a path: tests, an uninstalled build), else
by its soname through the dynamic loader, else wherever
ctypes.util.find_library finds it. The prototypes below are those of
<usdtkit/runtime.h>; every pointer is passed and returned as a c_void_p
(an int), so no ctypes object of ours ever points into the library.
"""

import ctypes
import ctypes.util
import os

SONAME = "libusdtkit-runtime.so.0"

_P = ctypes.c_void_p
_PROTOTYPES = {
    # name: (restype, argtypes)
    "usdtkit_provider_create": (_P, (ctypes.c_char_p, ctypes.c_char_p)),
    "usdtkit_probe_addv": (_P, (_P, ctypes.c_char_p, ctypes.c_int, _P)),
    "usdtkit_provider_load": (ctypes.c_int, (_P,)),
    "usdtkit_provider_unload": (ctypes.c_int, (_P,)),
    "usdtkit_provider_destroy": (None, (_P,)),
    "usdtkit_provider_error": (ctypes.c_char_p, (_P,)),
    "usdtkit_provider_loaded": (ctypes.c_int, (_P,)),
    "usdtkit_probe_fire_argv": (ctypes.c_int, (_P, ctypes.c_int, _P)),
    "usdtkit_probe_enabled": (ctypes.c_int, (_P,)),
    "usdtkit_probe_semaphore": (_P, (_P,)),
}

_lib = None


def _open():
    path = os.environ.get("USDTKIT_RUNTIME_LIB")
    if path:
        return ctypes.CDLL(path, use_errno=True)
    try:
        return ctypes.CDLL(SONAME, use_errno=True)
    except OSError:
        found = ctypes.util.find_library("usdtkit-runtime")
        if not found:
            raise
        return ctypes.CDLL(found, use_errno=True)


def library():
    """The loaded library with its prototypes set (loaded at the first call).

    Raises OSError (the loader's message) when it cannot be found or lacks
    a function.
    """
    global _lib
    if _lib is None:
        lib = _open()
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        _lib = lib
    return _lib
