#!/bin/bash
# The object a runtime provider maps on aarch64, written here (rtimage) and
# checked with the aarch64 binutils and usdtkit's own note reader: an
# AArch64 shared object with 64 KiB-aligned segments (the largest page the
# loader may use), a `nop; ret` stub at every probe site, argument specs that
# read array slots through x0, every site accepted (no pc-not-nop, no
# misaligned pc or semaphore). The x86-64 object is checked the same way
# (its loading and tracing are t-runtime-bpftrace's and t-runtime-helper's).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
RTIMAGE="$USDTKIT_BUILDDIR/tests/runtime/rtimage"
PROBES="$USDTKIT_BUILDDIR/kernel-helper/tools/usdtkit-probes"
command -v aarch64-linux-gnu-objdump >/dev/null ||
	fail "no aarch64 binutils (scripts/deps.sh installs gcc-aarch64-linux-gnu)"

"$RTIMAGE" aarch64 "$T/a64.so" >"$T/a64.addr" || fail "rtimage aarch64"
aarch64-linux-gnu-readelf -hlW "$T/a64.so" >"$T/a64.hdr" 2>&1 || { cat "$T/a64.hdr" >&2; fail "readelf"; }
expect_grep 'Machine: +AArch64' "$T/a64.hdr" "machine"
expect_grep 'Type: +DYN ' "$T/a64.hdr" "a shared object"
expect_eq "$(grep -cE '^ +LOAD .* 0x10000$' "$T/a64.hdr")" 2 "two PT_LOADs aligned to 64 KiB"
expect_grep '^ +LOAD +0x010000 0x0000000000010000 .* RW +0x10000$' "$T/a64.hdr" "the data segment on its own 64 KiB page"
expect_grep '^ +GNU_STACK .* RW ' "$T/a64.hdr" "a non-executable stack"
read -r _ s0 s1 _ sem0 sem1 <"$T/a64.addr"
aarch64-linux-gnu-objdump -d "$T/a64.so" >"$T/a64.dis" 2>&1 || { cat "$T/a64.dis" >&2; fail "objdump"; }
for s in "$s0" "$s1"; do
	a=$(printf '%x' "$s")
	b=$(printf '%x' $((s + 4)))
	expect_grep "^ +$a:	d503201f 	nop\$" "$T/a64.dis" "nop at $a"
	expect_grep "^ +$b:	d65f03c0 	ret\$" "$T/a64.dis" "ret at $b"
done
"$PROBES" list "$T/a64.so" >"$T/a64.list" 2>&1 || { cat "$T/a64.list" >&2; fail "usdtkit-probes list"; }
expect_grep 'arch=aarch64 type=dyn .* probes=2 accepted=2 metadata_notes=1$' "$T/a64.list" "both sites accepted"
expect_grep "^probe rtimg first pc=$s0 .* sema=$sem0 .* nargs=2 args=-4@\[x0, 0\] 8@\[x0, 8\]\$" "$T/a64.list" "first"
expect_grep '^  arg2 mem u64 reg=x0 disp=8 fetch=\+8\(%x0\)$' "$T/a64.list" "a slot read through x0"
# The first slot too is a memory operand with its offset, `[x0, 0]`: bcc before
# 0.31 (bpftrace 0.17's parser) reads `[x0]` as the register x0 itself.
expect_grep '^  arg1 mem s32 reg=x0 disp=0 fetch=\+0\(%x0\)$' "$T/a64.list" "the first slot read through x0"
expect_grep "^probe rtimg second pc=$s1 .* nargs=12 args=8@\[x0, 0\] .* 8@\[x0, 88\]\$" "$T/a64.list" "twelve slots"

"$RTIMAGE" x86_64 "$T/x64.so" >"$T/x64.addr" || fail "rtimage x86_64"
"$PROBES" list "$T/x64.so" >"$T/x64.list" 2>&1 || { cat "$T/x64.list" >&2; fail "usdtkit-probes list x86_64"; }
expect_grep 'arch=x86_64 type=dyn .* probes=2 accepted=2 metadata_notes=1$' "$T/x64.list" "x86-64: both sites accepted"
expect_grep '^probe rtimg first .* args=-4@\(%rdi\) 8@8\(%rdi\)$' "$T/x64.list" "x86-64: slots through rdi"
exit 0
