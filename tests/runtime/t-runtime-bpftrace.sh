#!/bin/bash
# A runtime provider seen by the tracers that read the notes themselves, with
# no helper running: bpftrace by pid reads exact values of every argument type
# it can reach (arg0..arg5 on x86-64) and strings as strings; the probe's
# `enabled` flips to 1 while bpftrace is attached and back to 0 after; gdb
# lists the probes of the in-memory object.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime/lib.sh"
need_tracefs
need_bpftrace

# Its lifetime is a bound (stdin ends it), scaled: under the emulated arm64
# machine bpftrace took most of 120 s to attach. On one CPU: bpftrace reads
# one buffer per CPU, and firings from two CPUs can reach its output out of
# order (25 after 26, once, under the sanitizer run), which the order check
# below must not take for a wrong count.
prog_start rt taskset -c 0 "$RTPROG" fire $((120 * TIME_FACTOR))
pid=$(awk '$1 == "pid" { print $2 }' "$T/rt.out")
prog_wait rt '^enabled 0$'
# The object is a memfd mapping named after the provider, no file anywhere.
grep -q "/memfd:usdtkit:$RP (deleted)\$" "/proc/$pid/maps" || fail "no memfd mapping usdtkit:$RP"

BT_ARGS="-p $pid" bt_start "$T/bt.out" "
usdt:*:$RP:hit { printf(\"hit %d %s\\n\", arg0, str(arg1)); }
usdt:*:$RP:all__types { printf(\"all %d %u %d %u %d %u\\n\", arg0, arg1, arg2, arg3, arg4, arg5); }"
prog_wait rt '^enabled 1$'
bt_stop '^hit [0-9]+ hello from rtc$' 5 '^all ' 5
prog_wait rt '^enabled 0$' 2
expect_grep '^all -128 255 -32768 65535 -2147483648 4294967295$' "$T/bt.out" "bpftrace: all-types"
if grep '^all ' "$T/bt.out" | grep -qv '^all -128 255 -32768 65535 -2147483648 4294967295$'; then
	fail "bpftrace: an all-types line with other values: $(grep '^all ' "$T/bt.out" | sort -u)"
fi
# hit's first argument is the firing count: increasing from firing to firing
# (not always consecutive: bpftrace 0.17 says it is attached a moment before
# every probe is).
grep '^hit ' "$T/bt.out" | awk 'NR > 1 && $2 <= prev { bad = 1 } { prev = $2 } END { exit bad }' ||
	fail "bpftrace: hit's counts do not increase: $(grep '^hit ' "$T/bt.out" | tr '\n' ' ')"

# gdb sees the probes of the mapped object (SystemTap's probe interface).
timeout 60 gdb -nx -q -batch -p "$pid" -ex "info probes stap $RP" >"$T/gdb.out" 2>&1 || true
expect_grep "stap +$RP +all__types .*/proc/$pid/fd/[0-9]+" "$T/gdb.out" "gdb: all__types"
expect_grep "stap +$RP +hit .*/proc/$pid/fd/[0-9]+" "$T/gdb.out" "gdb: hit"

prog_stop rt
running "$pid" && fail "rtprog did not exit at the end of its input"
grep -q 'FAIL' "$T/rt.err" && { cat "$T/rt.err" >&2; fail "rtprog's own checks failed"; }
HD_OK=1
exit 0
