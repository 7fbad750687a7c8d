#!/bin/bash
# i386 (-m32): 4-byte address fields in the notes, every argument in a register, an immediate
# or disp(%esp/%ebp) with the displacement written (8-byte values included), and gdb reads
# them all. gcc and clang, -O0 and -O2, PIE and non-PIE. Where the kernel cannot run 32-bit
# programs, the notes (operand forms, bases, semaphores) are checked without the program's
# run, which gives the argument sizes and the values gdb must read, and gdb is not run.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

echo 'int main(void) { return 0; }' >"$T/m32.c"
gcc -m32 "$T/m32.c" -o "$T/m32" 2>/dev/null || fail "gcc -m32 cannot link (gcc-12-multilib missing)"
run=yes
can_exec_m32 ||
	{ run=no; echo "note: $M32_NO_EXEC (argument sizes against the program's, gdb's values)"; }
for cc in gcc clang; do
	for opt in -O0 -O2; do
		for kind in pie nopie; do
			dir="$T/$cc$opt-$kind"
			build_probes $cc $kind "$dir" -m32 $opt -g
			readelf -h "$PROG" | grep -q "Class: *ELF32" || fail "$PROG is not a 32-bit program"
			if [ $run = yes ]; then
				check_notes i386 "$dir"
			else
				: >"$dir/exp-none"
				sdt_check notes i386 "$ELF" "$dir/exp-none" || fail "notes of $ELF (see above)"
			fi
			# 4-byte address fields: a 3-address note with "stapsdt\0" is 12+8+12 bytes + strings
			readelf -n "$ELF" | grep -A1 'NT_STAPSDT' | grep -q 'Provider: sdttest' ||
				fail "readelf cannot parse the 32-bit notes"
			if [ $run = yes ]; then
				check_gdb "$dir"
				echo "ok: $cc -m32 $opt $kind"
			else
				echo "ok: $cc -m32 $opt $kind: notes (not run)"
			fi
		done
	done
done
# The standards' extremes build warning-free for i386 too (STAP_PROBEV, in-asm macros).
for c in "gcc -std=c89" "clang -std=c89" "g++ -x c++ -std=c++98" "clang++ -x c++ -std=c++11"; do
	$c -m32 -O2 -I"$SDT_INC" -Wall -Wextra -Wpedantic -Werror -c "$SDT_DIR/std.c" -o "$T/std.o" ||
		fail "$c -m32: std.c"
	sdt_check forms i386 "$T/std.o" || fail "$c -m32: operand forms"
done
# The "(%esp)" a compiler prints for a zero displacement is written "0(%esp)".
printf '#include <sys/sdt.h>\nvoid f(int a) { STAP_PROBE1(z, d, a); }\n' >"$T/zero.c"
clang -m32 -O2 -I"$SDT_INC" -c "$T/zero.c" -o "$T/zero.o"
readelf -n "$T/zero.o" | grep -q 'Arguments: -4@0(%esp)$' ||
	{ readelf -n "$T/zero.o" >&2; fail "clang -m32: expected -4@0(%esp)"; }
echo "ok: zero displacement written as 0(%esp)"
