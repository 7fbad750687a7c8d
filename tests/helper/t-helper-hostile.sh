#!/bin/bash
# Hostile files for the note reader: mutants of real binaries (64- and
# 32-bit) with truncations, out-of-range note sizes, pc outside the segments
# or not on a NOP, odd or misplaced semaphores, garbage argument strings,
# bad names, prelinked and zeroed bases, broken headers, random byte flips
# (hostile.py), some under valgrind memcheck (in the sanitizer run, all
# under ASan and UBSan instead); and a file with more notes than
# the reader's cap. Each is rejected or read cleanly, never a crash.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helper/lib.sh"
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/deps.sh installs it)"

# valgrind cannot run AddressSanitizer's binaries: in the sanitizer run,
# ASan and UBSan check every mutant's run instead of valgrind checking 17.
vg=12
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	vg=0
	echo "sanitizer run: every mutant runs under $USDTKIT_SANITIZE instead of 17 under valgrind"
fi

build_variant gcc-pie || fail "gcc-pie does not build"
python3 "$USDTKIT_SRCDIR/tests/helper/hostile.py" "$PFILE" "$T/m64" "$PROBES" "$vg" ||
	fail "64-bit mutants"
build_variant gcc-m32 || fail "gcc-m32 does not build"
python3 "$USDTKIT_SRCDIR/tests/helper/hostile.py" "$PFILE" "$T/m32" "$PROBES" 0 ||
	fail "32-bit mutants"

# 70,000 notes (all on one nop): the reader stops at its cap of 65,536 and says so.
cat >"$T/many.c" <<'EOC'
int main(void)
{
	__asm__ volatile(
		"990: nop\n"
		".pushsection .note.stapsdt,\"\",\"note\"\n"
		".rept 70000\n"
		".balign 4\n"
		".4byte 992f-991f, 994f-993f, 3\n"
		"991: .asciz \"stapsdt\"\n"
		"992: .balign 4\n"
		"993: .8byte 990b, _.stapsdt.base, 0\n"
		".asciz \"many\"\n.asciz \"n\"\n.asciz \"-4@%edi\"\n"
		"994: .balign 4\n"
		".endr\n"
		".popsection\n"
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
		".weak _.stapsdt.base\n.hidden _.stapsdt.base\n"
		"_.stapsdt.base: .space 1\n.size _.stapsdt.base, 1\n"
		".popsection\n");
	return 0;
}
EOC
gcc -O2 -o "$T/many" "$T/many.c"
[ "$(readelf -nW "$T/many" | grep -c NT_STAPSDT)" -eq 70000 ] || fail "the many-notes file has not 70000 notes"
"$PROBES" list "$T/many" >"$T/many.list" || fail "list of 70,000 notes"
expect_grep '^file .* probes=65536 accepted=65536 flags=too-many-notes' "$T/many.list" "note cap"
echo "ok 70,000 notes: 65,536 read, flagged too-many-notes"
