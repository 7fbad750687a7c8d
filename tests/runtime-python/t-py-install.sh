#!/bin/bash
# meson install places the usdtkit package where the Python that ran meson
# looks for it, and the installed package works with the installed library:
#  - usdtkit/__init__.py and _library.py, identical to the sources, in one
#    directory under PREFIX/lib; with the prefixes a Debian python3 searches
#    (/usr, /usr/local) that directory is in its sys.path (-I: no
#    PYTHONPATH);
#  - from DESTDIR, with PYTHONPATH on that directory only, `import usdtkit`
#    takes the installed files, and without USDTKIT_RUNTIME_LIB it finds
#    the installed libusdtkit-runtime.so.0 by its soname
#    (LD_LIBRARY_PATH), loads a provider and maps that very library.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-python/lib.sh"

B=$USDTKIT_BUILDDIR
D="$T/dest"
option() { meson introspect "$B" --buildoptions |
	"$PY" -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"; }
prefix=$(option prefix)
libdir=$(option libdir)
case $libdir in /*) ;; *) libdir="$prefix/$libdir" ;; esac
# Only the package and the library (the rest of the install is tests/install's).
DESTDIR="$D" meson install -C "$B" --no-rebuild --tags python-runtime,runtime >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "meson install --tags python-runtime,runtime"; }

found=$(cd "$D" && find . -path '*/usdtkit/__init__.py' | sed 's|^\.||')
[ -n "$found" ] || fail "no usdtkit/__init__.py under DESTDIR"
[ "$(wc -l <<<"$found")" -eq 1 ] || fail "usdtkit installed twice: $found"
pkgdir=${found%/usdtkit/__init__.py}
case $pkgdir in "$prefix"/lib/*) ;; *) fail "the package is in $pkgdir, not under $prefix/lib" ;; esac
for f in __init__.py _library.py; do
	cmp "$D$pkgdir/usdtkit/$f" "$USDTKIT_SRCDIR/bindings/python/usdtkit/$f" ||
		fail "the installed usdtkit/$f differs from the source"
done
expect_eq "$(cd "$D$pkgdir/usdtkit" && ls)" "__init__.py
_library.py" "the installed package's files"
case $prefix in
/usr | /usr/local)
	"$PY" -I -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$pkgdir" ||
		fail "$PY does not search $pkgdir (its sys.path: $("$PY" -I -c 'import sys; print(sys.path)'))"
	;;
esac

[ -e "$D$libdir/libusdtkit-runtime.so.0" ] || fail "no $libdir/libusdtkit-runtime.so.0 under DESTDIR"
(
	unset USDTKIT_RUNTIME_LIB
	export PYTHONPATH="$D$pkgdir" LD_LIBRARY_PATH="$D$libdir"
	py - "$PROV" <<'PYEOF'
import os, sys
import usdtkit
print("package", os.path.dirname(usdtkit.__file__))
with usdtkit.Provider(sys.argv[1], module="pyinstalled") as p:
    q = p.add_probe("hit", "string")
    p.load()
    print("fired", q.fire("x"))
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "libusdtkit-runtime" in line}
        print("library", *sorted(libs))
PYEOF
) >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "the installed package failed"; }
expect_eq "$(cat "$T/out")" "package $D$pkgdir/usdtkit
fired False
library $(readlink -f "$D$libdir/libusdtkit-runtime.so.0")" "the installed package and library"
