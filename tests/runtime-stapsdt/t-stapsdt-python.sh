#!/bin/bash
# python-stapsdt's way in (progs/stapsdt_ctypes.py): Python ctypes loads the
# unversioned libstapsdt.so by path, declares the functions as
# python-stapsdt 0.1.1 does, gets 0 from providerLoad on success (its
# Provider.load() is then False), and reads the struct fields by layout.
. "$USDTKIT_SRCDIR/tests/runtime-stapsdt/lib.sh"
command -v python3 >/dev/null || fail "python3 is not installed"

rc=0
stapsdt_run python python3 "$PROGS/stapsdt_ctypes.py" "$STAPSDT_LIBDIR/libstapsdt.so" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/out" >&2; fail "stapsdt_ctypes.py exited $rc"; }
expect_eq "$(cat "$T/out")" "python ok" "stapsdt_ctypes.py"
echo "python ctypes: libstapsdt.so loads, providerLoad returns 0, the fields read by layout"
