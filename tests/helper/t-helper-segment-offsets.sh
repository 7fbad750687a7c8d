#!/bin/bash
# The note reader checks a semaphore by the file offset the kernel is given,
# not only by its address (found by tests/fuzz/fuzz-notes.c): a writable
# PT_LOAD whose p_offset no longer matches p_vaddr in parity makes every
# even semaphore address an odd offset (semaphore-misaligned), and one mapped
# from file offset 0 puts a semaphore on the ELF header, which tracefs.c
# would read as "no semaphore" (semaphore-outside-data). Probes without a
# semaphore stay accepted in both.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helper/lib.sh"

build_variant gcc-pie || fail "gcc-pie does not build"
# mutate.py IN OUT MODE: rewrites the writable PT_LOAD; prints the semaphore
# addresses it expects to be rejected (one per line).
cat >"$T/mutate.py" <<'EOF2'
import struct, sys
src, dst, mode = sys.argv[1:]
b = bytearray(open(src, "rb").read())
phoff, = struct.unpack_from("<Q", b, 32)
phentsize, phnum = struct.unpack_from("<HH", b, 54)
shoff, = struct.unpack_from("<Q", b, 40)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 58)
sh = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
stroff = sh[shstrndx][4]
name = lambda s: bytes(b[stroff + s[0]:b.index(0, stroff + s[0])]).decode()
notes = next(s for s in sh if name(s) == ".note.stapsdt")
semas, o = [], notes[4]
while o + 12 <= notes[4] + notes[5]:
    namesz, descsz, typ = struct.unpack_from("<III", b, o)
    d = o + 12 + ((namesz + 3) & ~3)
    sema = struct.unpack_from("<QQQ", b, d)[2]
    if sema:
        semas.append(sema)
    o = d + ((descsz + 3) & ~3)
assert semas, "no semaphores in the test program"
for i in range(phnum):
    p = phoff + i * phentsize
    typ, flags, off, va, pa, fs, ms, al = struct.unpack_from("<IIQQQQQQ", b, p)
    if typ != 1 or not flags & 2:
        continue
    if mode == "odd":
        # Same addresses, every offset one byte further: all odd.
        struct.pack_into("<Q", b, p + 8, off + 1)
        expect = semas
    else:
        # Mapped from offset 0 starting at the lowest semaphore.
        s0 = min(semas)
        struct.pack_into("<IIQQQQQQ", b, p, typ, flags, 0, s0, s0, 16, 16, al)
        expect = [s0]
open(dst, "wb").write(b)
print("\n".join("0x%x" % s for s in expect))
EOF2

for mode in odd zero; do
	python3 "$T/mutate.py" "$PFILE" "$T/$mode" "$mode" >"$T/$mode.expect" ||
		fail "$mode: cannot build the mutant"
	"$PROBES" list "$T/$mode" >"$T/$mode.out" 2>&1 || fail "$mode: usdtkit-probes list failed"
	reason=semaphore-misaligned
	[ "$mode" = zero ] && reason=semaphore-outside-data
	while read -r sema; do
		grep -q "^reject .* sema=$sema reason=$reason" "$T/$mode.out" ||
			{ cat "$T/$mode.out" >&2; fail "$mode: semaphore $sema not rejected ($reason)"; }
	done <"$T/$mode.expect"
	# The probes without a semaphore (nosema.c) are still accepted.
	grep -q "^probe $HPROV nosema " "$T/$mode.out" ||
		{ cat "$T/$mode.out" >&2; fail "$mode: the probe without a semaphore was not accepted"; }
done
echo "ok: semaphores at odd and zero file offsets rejected, others accepted"
