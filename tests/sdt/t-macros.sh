#!/bin/bash
# Every public macro of SystemTap's <sys/sdt.h> (numbered, DTRACE_, variadic, in-asm, glibc's
# wrappers, internals, semaphores, the constraint override, .S files) builds with usdtkit's
# header and gives the same notes as SystemTap's own header on the same source: provider,
# name, argument count, sizes and signs, semaphore or not.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

require_stap_sdt

compare() { # what cc src flags...
	local what=$1 cc=$2 src=$3
	shift 3
	$cc -I"$SDT_INC" -c "$src" "$@" -o "$T/ours.o" 2>"$T/ours.err" ||
		{ cat "$T/ours.err" >&2; fail "$what: does not build with usdtkit's header"; }
	$cc -c "$src" "$@" -o "$T/stap.o" 2>/dev/null ||
		fail "$what: does not build with SystemTap's header"
	sdt_check summary "$T/ours.o" >"$T/ours.txt"
	sdt_check summary "$T/stap.o" >"$T/stap.txt"
	[ -s "$T/stap.txt" ] || fail "$what: no notes from SystemTap's header"
	diff -u "$T/stap.txt" "$T/ours.txt" >&2 || fail "$what: notes differ from SystemTap's (- theirs, + ours)"
	echo "ok: $what ($(wc -l <"$T/ours.txt") notes)"
}

for cc in gcc clang; do
	for opt in -O0 -O2; do
		compare "$cc $opt macros.c" $cc "$SDT_DIR/macros.c" $opt -std=gnu11 -Wall -Wextra
		compare "$cc $opt macros-sem.c" $cc "$SDT_DIR/macros-sem.c" $opt
		compare "$cc $opt asmprobe.S" $cc "$SDT_DIR/asmprobe.S" $opt
	done
	for c in nor g; do
		compare "$cc STAP_SDT_ARG_CONSTRAINT=$c" $cc "$SDT_DIR/macros-sem.c" -O2 -DCONSTRAINT=$c
	done
	# C++ too (the signedness tables differ from C's); ours also has the in-asm macros there.
	cxx=${cc/gcc/g++}
	cxx=${cxx/clang/clang++}
	compare "$cxx macros.c" $cxx -x c++ "$SDT_DIR/macros.c" -O2 -std=gnu++17 -DNO_ASM_MACROS
	$cxx -I"$SDT_INC" -x c++ -std=c++11 -c "$SDT_DIR/macros.c" -o "$T/cxx.o" ||
		fail "$cxx: the in-asm macros do not build in C++11 with usdtkit's header"
	[ "$(sdt_check summary "$T/cxx.o" | wc -l)" -eq 36 ] || fail "$cxx: expected 36 notes in C++11"
done
# The comparison can fail: SystemTap records a double as "8f", usdtkit as raw bits "8".
printf '#include <sys/sdt.h>\nvoid f(double d) { STAP_PROBE1(x, d, d); }\n' >"$T/dbl.c"
if (compare "double" gcc "$T/dbl.c" -O2) >/dev/null 2>&1; then
	fail "a double argument compared equal with SystemTap's 8f: the comparison cannot fail"
fi
# The note for the semaphore probe really points at the semaphore.
gcc -I"$SDT_INC" -O2 -c "$SDT_DIR/macros-sem.c" -o "$T/sem.o"
readelf -rW "$T/sem.o" >"$T/relocs"
expect_grep 'sem_req__start_semaphore' "$T/relocs" "relocation to the semaphore"
expect_grep 'sem_done_semaphore' "$T/relocs" "relocation to the semaphore"
echo "ok: every macro matches SystemTap's notes"
