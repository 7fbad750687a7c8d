#!/bin/bash
# aarch64 (cross, not run): the probe program compiles and links with aarch64-linux-gnu-gcc and
# clang --target=aarch64-linux-gnu, and every operand is a form aarch64 consumers parse (xN,
# sp, immediate, [xN, off]) with the sizes and signs the x86-64 run of the same program
# expects (both are LP64).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

command -v aarch64-linux-gnu-gcc >/dev/null || fail "aarch64-linux-gnu-gcc is not installed"
build_probes gcc pie "$T/host" -O2
"$PROG" "$T/host/exp" guarded
for cfg in "aarch64-linux-gnu-gcc" "clang --target=aarch64-linux-gnu -fuse-ld=lld"; do
	for opt in -O0 -O2; do
		dir="$T/a64-${cfg%% *}$opt"
		build_probes "$cfg" pie "$dir" $opt
		readelf -h "$ELF" | grep -q "Machine: *AArch64" || fail "$ELF is not an aarch64 program"
		sdt_check notes aarch64 "$ELF" "$T/host/exp" || fail "$cfg $opt: aarch64 notes"
		readelf -n "$ELF" | grep 'Arguments: .*@x' >/dev/null || fail "no x registers?"
		echo "ok: $cfg $opt: $(readelf -n "$ELF" | grep -m1 -A2 'Name: twelve' | tail -1)"
	done
done
