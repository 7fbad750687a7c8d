#!/bin/bash
# libstapsdt's behaviours through usdtkit's libstapsdt.so.0 (progs/behaviour.c,
# built by gcc and clang with <errno.h> first): loading with no probes or
# twice, unloading when not loaded, probes added while loaded, the fields
# bindings read (_handle, _fire, _filename, _memfd, the probe list), its
# error strings and codes, and the refusals libstapsdt lacks (7 arguments,
# unknown types, names usdtkit cannot carry), with their exact messages.
. "$USDTKIT_SRCDIR/tests/runtime-stapsdt/lib.sh"

for cc in $COMPILERS; do
	stapsdt_cc "$cc" "$PROGS/behaviour.c" "$T/behaviour-$cc"
	rc=0
	stapsdt_run "$cc" "$T/behaviour-$cc" >"$T/out-$cc" 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat "$T/out-$cc" >&2; fail "$cc: behaviour exited $rc"; }
	expect_eq "$(cat "$T/out-$cc")" "behaviour ok" "$cc"
done
echo "libstapsdt's behaviours hold with gcc and clang"
