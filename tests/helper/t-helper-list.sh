#!/bin/bash
# `usdtkit-probes list` against real binaries (gcc and clang, PIE, non-PIE,
# -O0, a shared object, -m32), compared with readelf -n (an independent note
# reader) and with file offsets computed from readelf -lW's segments.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helper/lib.sh"

variants="gcc-pie gcc-nopie gcc-O0 gcc-so gcc-m32 clang-pie clang-nopie clang-so clang-m32"
for v in $variants; do
	build_variant "$v" || fail "$v: the test program does not build"
	"$PROBES" list "$PFILE" >"$T/$v.list" || fail "$v: list failed"
	expect_no_grep '^reject' "$T/$v.list" "$v: a probe of a well-formed binary was rejected"
	python3 "$SDTCHECK" compare-list "$PFILE" "$T/$v.list" ||
		{ cat "$T/$v.list" >&2; fail "$v: list differs from readelf"; }
	# Every argument the test program passes is of a supported form.
	expect_no_grep '^  arg[0-9]+ unsupported' "$T/$v.list" "$v: unsupported argument"
	echo "ok $v: $(grep -c '^probe' "$T/$v.list") probes match readelf"
done

# aarch64 (cross-compiled; listed, not run): [sp, N] memory operands, xN/wN.
if command -v aarch64-linux-gnu-gcc >/dev/null; then
	for o in O2 O0; do
		aarch64-linux-gnu-gcc -$o -I"$STAP_INC" -o "$T/a64$o" \
			"$PROGS/probes.c" "$PROGS/nosema.c" "$PROGS/main.c" || fail "aarch64 -$o build"
		"$PROBES" list "$T/a64$o" >"$T/a64$o.list" || fail "aarch64 -$o: list failed"
		expect_grep '^file .* arch=aarch64 ' "$T/a64$o.list" "aarch64 recognised"
		expect_no_grep '^reject|^  arg[0-9]+ unsupported' "$T/a64$o.list" "aarch64 -$o"
		python3 "$SDTCHECK" compare-list "$T/a64$o" "$T/a64$o.list" ||
			fail "aarch64 -$o: list differs from readelf"
		echo "ok aarch64 -$o: $(grep -c '^probe' "$T/a64$o.list") probes match readelf"
	done
else
	fail "aarch64-linux-gnu-gcc is not installed (scripts/deps.sh installs it)"
fi

# Our own header, once it builds the program (it is being rewritten).
if build_variant gcc-pie-ours 2>"$T/ours.err" && readelf -nW "$PFILE" | grep -q NT_STAPSDT; then
	"$PROBES" list "$PFILE" >"$T/ours.list" || fail "ours: list failed"
	python3 "$SDTCHECK" compare-list "$PFILE" "$T/ours.list" ||
		fail "include/sys/sdt.h: list differs from readelf"
	echo "ok gcc-pie-ours: include/sys/sdt.h"
else
	echo "note: include/sys/sdt.h does not build the test program yet; only SystemTap's header tested"
fi

# Binaries built by others (Debian's python3, libstdc++, the JDK's libjvm with
# hundreds of probes), where installed: same comparison with readelf.
others=0
for f in /usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
	/usr/lib/jvm/*/lib/server/libjvm.so; do
	[ -f "$f" ] && readelf -nW "$f" 2>/dev/null | grep -q NT_STAPSDT || continue
	"$PROBES" list "$f" >"$T/other.list" || fail "$f: list failed"
	expect_no_grep '^reject' "$T/other.list" "$f: a probe was rejected"
	python3 "$SDTCHECK" compare-list "$f" "$T/other.list" || fail "$f: list differs from readelf"
	echo "ok $f: $(grep -c '^probe' "$T/other.list") probes match readelf"
	others=$((others + 1))
done
[ "$others" -gt 0 ] || echo "note: no distribution binary with stapsdt notes installed"

# A module linked with a `dtrace -G` object: its metadata note
# (.note.usdtkit, core/METADATA-NOTE.md) is kept for the daemon.
qs="$USDTKIT_SRCDIR/examples/quickstart"
if "$DTRACE" -h -s "$qs/quickstart.d" -o "$T/quickstart_probes.h" 2>"$T/g.err" &&
	gcc -O2 -I"$SDT_INC" -I"$T" -c "$qs/quickstart.c" -o "$T/qs.o" 2>>"$T/g.err" &&
	"$DTRACE" -G -s "$qs/quickstart.d" -o "$T/qsprov.o" "$T/qs.o" 2>>"$T/g.err" &&
	gcc -o "$T/qs" "$T/qs.o" "$T/qsprov.o" 2>>"$T/g.err"; then
	nmeta=$(readelf -nW "$T/qs" | grep -c '^ *usdtkit ')
	[ "$nmeta" -ge 1 ] || fail "dtrace -G output has no usdtkit note"
	"$PROBES" list "$T/qs" >"$T/qs.list"
	expect_grep "^file .* metadata_notes=$nmeta( |\$)" "$T/qs.list" "metadata notes kept"
	python3 "$SDTCHECK" compare-list "$T/qs" "$T/qs.list" || fail "quickstart: list differs from readelf"
	echo "ok dtrace -G module: $nmeta metadata note(s) kept, probes match readelf"
else
	echo "note: dtrace -G does not build the quickstart yet: $(tail -1 "$T/g.err")"
fi

# Names longer than tracefs takes are shortened: 54 characters, '_', and the
# FNV-1a hash of the whole name, recomputed here from its definition.
long_p=$(printf 'p%.0s' $(seq 1 70))
cat >"$T/long.c" <<EOC
#include <sys/sdt.h>
int main(void) { STAP_PROBE(prov, $long_p); return 0; }
EOC
gcc -O2 -I"$STAP_INC" -o "$T/long" "$T/long.c"
"$PROBES" list "$T/long" >"$T/long.list"
want=$(python3 -c '
import sys
n = sys.argv[1]
h = 0x811c9dc5
for b in n.encode():
    h = ((h ^ b) * 0x01000193) & 0xffffffff
print("%s_%08x" % (n[:54], h))' "$long_p")
expect_grep "^probe prov $long_p .* event=$want flags=shortened" "$T/long.list" "shortened event name"
echo "ok long names shortened to $want"

# A file that is not ELF, a directory, a missing file: errors, exit 2, no crash.
echo "not elf" >"$T/text"
for f in "$T/text" "$T" "$T/missing"; do
	rc=0
	"$PROBES" list "$f" >/dev/null 2>"$T/err" || rc=$?
	expect_eq "$rc" 2 "list $f exit status"
	expect_grep 'usdtkit-probes: error: ' "$T/err" "list $f message"
done
echo "ok bad files"
