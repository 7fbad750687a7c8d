#!/bin/bash
# libstapsdt.so.0's ABI is libstapsdt 0.1.1's: the struct offsets and sizes,
# enum values and function types bindings rely on (progs/abi.c, checked at
# compile time by gcc and clang, with <errno.h> included before the header
# and not), the header also in C++, exactly libstapsdt's eight functions
# exported, unversioned, the sonames and links python-stapsdt and -lstapsdt
# find, and the pkg-config file.
. "$USDTKIT_SRCDIR/tests/runtime-stapsdt/lib.sh"

for cc in $COMPILERS; do
	for order in errno-first errno-after; do
		flags=()
		[ $order = errno-first ] && flags=(-DERRNO_FIRST)
		stapsdt_cc "$cc" "$PROGS/abi.c" "$T/abi-$cc-$order" "${flags[@]}"
		out=$(stapsdt_run "$cc" "$T/abi-$cc-$order") || fail "$cc $order: abi exited $?"
		expect_eq "$out" "abi ok" "$cc, $order"
	done
done

# C++ (libstapsdt's own header has no extern "C"; ours must link from C++).
for cxx in g++ clang++; do
	printf '#include <cerrno>\n#include <libstapsdt.h>\nint main() { SDTProvider_t *p = providerInit("x"); int e = p->sdtErrno; providerDestroy(p); return e == noError ? 0 : 1; }\n' >"$T/c.cc"
	san=()
	if [ -n "$ASAN_RT" ]; then
		[ $cxx = clang++ ] && san=(-fsanitize=address,undefined) || san=(-Wl,--allow-shlib-undefined)
	fi
	$cxx -Wall -Wextra -Werror -I"$STAPSDT_INC" "${san[@]}" "$T/c.cc" -o "$T/c-$cxx" \
		-L"$STAPSDT_LIBDIR" -lstapsdt -Wl,-rpath,"$STAPSDT_LIBDIR" || fail "$cxx: the header in C++"
	stapsdt_run "${cxx%++}" "$T/c-$cxx" || fail "$cxx: the C++ program failed"
done

# Exactly libstapsdt's functions, with no symbol versions (as libstapsdt's own).
nm -D --defined-only "$STAPSDT_LIBDIR/libstapsdt.so.0" | awk '{print $2, $3}' | sort >"$T/syms"
expect_eq "$(tr '\n' ' ' <"$T/syms")" "T probeFire T probeIsEnabled T providerAddProbe T providerDestroy T providerInit T providerLoad T providerUnload T providerUseMemfd " "exported symbols"
readelf -V "$STAPSDT_LIBDIR/libstapsdt.so.0" >"$T/versions"
expect_no_grep 'Version definition' "$T/versions" "symbol versions"
readelf -d "$STAPSDT_LIBDIR/libstapsdt.so.0" >"$T/dyn"
expect_grep 'SONAME.*\[libstapsdt\.so\.0\]' "$T/dyn" "soname"
expect_grep 'NEEDED.*\[libusdtkit-runtime\.so\.0\]' "$T/dyn" "links libusdtkit-runtime.so.0"
expect_eq "$(readlink -f "$STAPSDT_LIBDIR/libstapsdt.so")" "$(readlink -f "$STAPSDT_LIBDIR/libstapsdt.so.0")" \
	"libstapsdt.so (python-stapsdt's name) is libstapsdt.so.0"

# pkg-config, uninstalled as installed: -lstapsdt and the header's directory.
PKG_CONFIG_PATH=$USDTKIT_BUILDDIR/meson-uninstalled pkg-config --libs --cflags libstapsdt >"$T/pc" ||
	fail "pkg-config libstapsdt"
expect_grep "-lstapsdt" "$T/pc" "pkg-config libs"
expect_eq "$(PKG_CONFIG_PATH=$USDTKIT_BUILDDIR/meson-uninstalled pkg-config --modversion libstapsdt)" "0.1.1" "pkg-config version"
echo "ABI, symbols, sonames and pkg-config are libstapsdt's"
