#!/bin/bash
# Link-time optimisation keeps the notes right: gcc -flto and clang -flto with ld.lld, as a
# program and as a shared library; readelf checks the notes, gdb reads every argument.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

for cfg in "gcc -flto" "clang -flto -fuse-ld=lld"; do
	set -- $cfg
	cc=$1
	shift
	for kind in pie shared; do
		dir="$T/$cc-$kind"
		build_probes $cc $kind "$dir" -O2 "$@"
		check_notes x86_64 "$dir"
		check_gdb "$dir"
		echo "ok: $cfg $kind"
	done
done
