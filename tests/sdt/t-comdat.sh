#!/bin/bash
# A probe in a C++ inline function: the note joins the function's COMDAT group ("?" section
# flag), so the copies the linker discards take their notes along and exactly one note is
# left, pointing into the kept copy, where gdb stops. Without "?" the link fails ("referenced
# in section .note.stapsdt ... defined in discarded section"), which shows the test can fail.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

for cxx in g++ clang++; do
	for opt in -O0 -O2; do
		$cxx $opt -fno-inline -I"$SDT_INC" "$SDT_DIR/comdat-a.cc" "$SDT_DIR/comdat-b.cc" \
			-o "$T/prog" || fail "$cxx $opt: link failed"
		n=$(readelf -n "$T/prog" | grep -c 'Name: inl$' || true)
		[ "$n" -eq 1 ] || fail "$cxx $opt: $n notes for cx:inl, expected 1"
		hits=$(gdb -batch -nx -ex 'break -probe-stap cx:inl' -ex run -ex 'output $_probe_arg0' \
			-ex 'echo \n' -ex continue -ex 'output $_probe_arg0' -ex 'echo \n' "$T/prog" 2>&1 |
			grep -cE '^[12]$' || true)
		[ "$hits" -eq 2 ] || fail "$cxx $opt: gdb did not stop twice at cx:inl"
		if $cxx $opt -fno-inline -I"$SDT_INC" -D_SDT_ASM_SECTION_AUTOGROUP_SUPPORT=0 \
			"$SDT_DIR/comdat-a.cc" "$SDT_DIR/comdat-b.cc" -o "$T/prog0" 2>/dev/null; then
			fail "$cxx $opt: linked without the COMDAT trick: the test cannot fail"
		fi
		echo "ok: $cxx $opt"
	done
done
