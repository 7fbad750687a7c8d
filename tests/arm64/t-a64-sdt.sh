#!/bin/bash
# arm64, run on an arm64 kernel (scripts/arm64-test.sh): every operand kind
# arm64 compilers put in .note.stapsdt, read with the exact values the
# program passed by every consumer. The probe test program of tests/sdt
# (probes.c: registers, literals, globals, the stack, strings, a
# semaphore-guarded probe) is built with gcc and clang at -O0 and -O2 under
# three headers: usdtkit's (constraint "r": always xN), usdtkit's with
# STAP_SDT_ARG_CONSTRAINT=nor and SystemTap's own (both "nor": immediates,
# [sp, N], [xN, N], [xN]). Together the builds must show every one of those
# kinds (a compiler that stopped emitting one would leave it untested), and
# for each build:
#  - readelf: sizes and signs as the program's types, forms arm64 consumers
#    parse, a .stapsdt.base;
#  - gdb ($_probe_argN), bpftrace (arg0..arg5, str()): every value;
#  - usdtkit-probes: every site accepted, registered as tracefs uprobe events
#    whose fetches name arm64 registers (%xN, %sp), enabled in a private
#    instance: every argument of every firing (strings through ustring) as
#    the program passed it, and the guarded probe's semaphore set by the
#    kernel (ref_ctr) so that it fires.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"
[ "$(uname -m)" = aarch64 ] || skip "not an arm64 machine (scripts/arm64-test.sh runs this on one)"
need_bpftrace
PROBES="$USDTKIT_BUILDDIR/kernel-helper/tools/usdtkit-probes"
EVENTS="python3 $USDTKIT_SRCDIR/tests/arm64/events.py"
[ -x "$PROBES" ] || fail "no $PROBES: build first"
# bcc before 0.31 (bpftrace's argument parser; Debian 12 has 0.26) reads a memory
# operand without an offset, "8@[x1]", as the register x1 itself: check.py's bpftrace
# program then dereferences such operands itself (tests/sdt/check.py, bt_arg).
bcc=$(dpkg-query -W -f '${Version}' libbpfcc 2>/dev/null || true)
if [ -n "$bcc" ] && dpkg --compare-versions "$bcc" lt 0.31; then
	export USDTKIT_BCC_BARE_BRACKET=reg
	echo "note: bcc $bcc reads [xN] as xN: bpftrace's program reads such operands through the register"
fi
STAP_H=/usr/include/aarch64-linux-gnu/sys/sdt.h
[ -e "$STAP_H" ] || fail "$STAP_H missing (systemtap-sdt-dev)"
STAP_INC="$T/stapinc"
mkdir -p "$STAP_INC/sys"
ln -s "$STAP_H" "$(dirname "$STAP_H")/sdt-config.h" "$STAP_INC/sys/"

inst="$TRACEFS/instances/usdtkit_a64_$$"
REGISTERED=
cleanup() {
	[ -e "$inst/events/sdt_sdttest/enable" ] && echo 0 >"$inst/events/sdt_sdttest/enable"
	[ -d "$inst" ] && rmdir "$inst"
	[ -n "$REGISTERED" ] && "$PROBES" unregister "$REGISTERED" >/dev/null 2>&1
	return 0
}
at_exit cleanup

# check_events DIR: the tracefs events of $ELF, fired by one run of $PROG.
check_events() {
	local dir=$1 strs
	"$PROBES" list "$ELF" >"$dir/list" 2>&1 || { cat "$dir/list" >&2; fail "usdtkit-probes list $ELF"; }
	grep -qE 'arch=aarch64 .* probes=([0-9]+) accepted=\1( |$)' "$dir/list" ||
		{ cat "$dir/list" >&2; fail "$ELF: not every site accepted"; }
	strs=$($EVENTS strings "$dir/exp")
	REGISTERED=$ELF
	# shellcheck disable=SC2086
	"$PROBES" register $strs "$ELF" >"$dir/reg" 2>&1 || { cat "$dir/reg" >&2; fail "register $ELF"; }
	grep -qE '%(x[0-9]+|sp)' "$dir/reg" || { cat "$dir/reg" >&2; fail "$ELF: no arm64 register fetch"; }
	mkdir "$inst"
	echo 1 >"$inst/events/sdt_sdttest/enable"
	timeout -k 10 120 "$PROG" "$dir/exp-ev" guarded || fail "$PROG exited with $? under the events"
	echo 0 >"$inst/events/sdt_sdttest/enable"
	cp "$inst/trace" "$dir/trace"
	rmdir "$inst"
	"$PROBES" unregister "$ELF" >"$dir/unreg" 2>&1 || { cat "$dir/unreg" >&2; fail "unregister $ELF"; }
	REGISTERED=
	$EVENTS check "$dir/exp-ev" "$dir/trace" ||
		{ cat "$dir/reg" >&2; fail "$ELF: tracefs read wrong values"; }
	grep -qE '^#semaphore [1-9][0-9]* fired 1$' "$dir/exp-ev" ||
		fail "guarded probe's semaphore not set by the enabled event: $(grep '^#sema' "$dir/exp-ev")"
}

# A64_SDT_CONFIGS (HEADER:CC:OPT ...) runs some of the 12: under TCG each
# takes minutes. The default is all of them.
configs=${A64_SDT_CONFIGS:-}
if [ -z "$configs" ]; then
	for hdr in ours ours-nor stap; do
		for cc in gcc clang; do
	for opt in -O0 -O2; do configs="$configs $hdr:$cc:$opt"; done
		done
	done
fi
: >"$T/kinds"
for cfg in $configs; do
	IFS=: read -r hdr cc opt <<<"$cfg"
	dir="$T/$hdr-$cc$opt"
	echo "== $hdr $cc $opt"
	extra=""
	inc=$USDTKIT_SRCDIR/include
	unset USDTKIT_SDT_STAP_FLOATS
	case $hdr in
	ours-nor) extra=-DSTAP_SDT_ARG_CONSTRAINT=nor ;;
	# its float and double arguments are SIZEf@OPERAND: tests/sdt/check.py, STAP_FLOATS
	stap) inc=$STAP_INC; export USDTKIT_SDT_STAP_FLOATS=1 ;;
	esac
	SDT_INC=$inc
	# shellcheck disable=SC2086
	build_probes "$cc" pie "$dir" "$opt" -g $extra
	check_notes aarch64 "$dir"
	check_gdb "$dir"
	check_bpftrace "$dir"
	check_events "$dir"
	readelf -n --wide "$ELF" | sed -n 's/^ *Arguments: //p' |
		grep -oE '[0-9]f?@(\[[^]]*\]|[^ ]+)' | sed -E 's/^[0-9]f?@//;
		s/^x[0-9]+$/xN/; s/^w[0-9]+$/wN/; s/^-?[0-9]+$/imm/;
		s/^\[sp, -?[0-9]+\]$/[sp, N]/; s/^\[x[0-9]+, -?[0-9]+\]$/[xN, N]/;
		s/^\[x[0-9]+\]$/[xN]/' >>"$T/kinds"
done
sort "$T/kinds" | uniq -c
for k in xN imm '[sp, N]' '[xN, N]' '[xN]'; do
	grep -qxF "$k" "$T/kinds" || fail "no build emitted the operand kind '$k'"
done
echo "ok: $(echo $configs | wc -w) builds, every operand kind, readelf + gdb + bpftrace + tracefs"
