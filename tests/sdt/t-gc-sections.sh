#!/bin/bash
# .stapsdt.base survives --gc-sections with ld.lld and gold (note base non-zero, gdb lists the
# probes), where SystemTap's header loses it (base 0, gdb lists nothing): the same checks run
# on SystemTap's build must fail, which shows they can.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

# gdb_lists PROG: number of sdttest probes `info probes` shows without running the program.
gdb_lists() {
	gdb -batch -nx -ex 'info probes stap sdttest' "$1" 2>/dev/null | grep -c '^stap *sdttest ' || true
}

for cc in gcc clang; do
	for ld in lld gold; do
		flags="-O2 -ffunction-sections -fdata-sections -fuse-ld=$ld -Wl,--gc-sections"
		# ours
		build_probes $cc pie "$T/ours-$cc-$ld" $flags
		check_notes x86_64 "$T/ours-$cc-$ld"
		n=$(gdb_lists "$PROG")
		[ "$n" -eq 11 ] || fail "$cc $ld: gdb lists $n of our 11 probes"
		readelf -SW "$PROG" | grep -q ' \.stapsdt\.base ' || fail "$cc $ld: .stapsdt.base dropped"
		# SystemTap's header, same source and flags: base 0, gdb sees nothing.
		dir="$T/stap-$cc-$ld"
		mkdir -p "$dir"
		$cc $flags -fPIE -pie "${SDT_SRCS[@]}" -o "$dir/prog" || fail "$cc $ld: SystemTap build failed"
		"$dir/prog" "$dir/exp" guarded
		if sdt_check notes x86_64 "$dir/prog" "$dir/exp" 2>"$dir/notes.err"; then
			fail "$cc $ld: SystemTap's notes passed the base check: the test cannot fail"
		fi
		expect_grep 'note base is 0' "$dir/notes.err" "$cc $ld: SystemTap's base"
		n=$(gdb_lists "$dir/prog")
		[ "$n" -eq 0 ] || fail "$cc $ld: gdb lists $n of SystemTap's probes with base 0 (expected none)"
		echo "ok: $cc -fuse-ld=$ld --gc-sections: ours kept .stapsdt.base, SystemTap's lost it"
	done
done
