#!/bin/bash
# A program written in libstapsdt's documented style (progs/demo.c: its
# README's providerInit / providerAddProbe / providerLoad / probeIsEnabled /
# probeFire / providerUnload / providerDestroy), built by gcc and clang
# against <libstapsdt.h> with <errno.h> first, traced by bpftrace -p: every
# argument size reads back exactly, probeIsEnabled() turns 1 while bpftrace
# is attached and 0 after, and a probe named "req-done" is seen as req__done
# (usdtkit's spelling of '-', where libstapsdt kept the '-').
. "$USDTKIT_SRCDIR/tests/runtime-stapsdt/lib.sh"
need_bpftrace

DEMO_PID=""
BT=""
at_exit 'stop_bg "$BT" INT 5; [ -n "$DEMO_PID" ] && kill "$DEMO_PID" 2>/dev/null; stop_bg "$DEMO_JOB" TERM 5'
DEMO_JOB=""

demo_pid() { DEMO_PID=$(sed -n 's/^loaded pid=\([0-9]*\) enabled=0$/\1/p' "$OUT"); [ -n "$DEMO_PID" ]; }
bt_ready() { grep -q '^bt-ready' "$BTOUT"; }
bt_has() { [ "$(grep -c "^$1 " "$BTOUT" || true)" -ge 3 ]; }
bt_lines() { bt_has sizes && bt_has pair && bt_has done; }

for cc in $COMPILERS; do
	prov=stdemo_$cc
	OUT=$T/demo-$cc.out
	BTOUT=$T/bt-$cc.out
	stapsdt_cc "$cc" "$PROGS/demo.c" "$T/demo-$cc"
	stapsdt_run "$cc" "$T/demo-$cc" "$prov" >"$OUT" 2>&1 &
	DEMO_JOB=$!
	wait_until 20 "$cc demo to load (it prints 'loaded pid=N enabled=0')" demo_pid

	bpftrace -p "$DEMO_PID" -e "BEGIN { printf(\"bt-ready\\n\"); }
		usdt:*:$prov:sizes { printf(\"sizes %d %d %d %d %d %ld\\n\", arg0, arg1, arg2, arg3, arg4, arg5); }
		usdt:*:$prov:pair { printf(\"pair %lu %ld\\n\", arg0, arg1); }
		usdt:*:$prov:req__done { printf(\"done %lu\\n\", arg0); }" >"$BTOUT" 2>&1 &
	BT=$!
	wait_until 30 "bpftrace to attach" bt_ready
	wait_until 20 "probeIsEnabled() to turn 1 under bpftrace" grep -qx 'enabled=1' "$OUT"
	wait_until 20 "bpftrace to print 3 firings of each probe" bt_lines
	expect_no_grep '^enabled=0$' "$OUT" "$cc: probeIsEnabled() while bpftrace is attached"
	stop_bg "$BT" INT
	BT=""
	wait_until 20 "probeIsEnabled() to turn 0 after bpftrace" grep -qx 'enabled=0' "$OUT"
	rc=0
	wait "$DEMO_JOB" || rc=$?
	DEMO_JOB=""
	DEMO_PID=""
	[ $rc -eq 0 ] || { cat "$OUT" >&2; fail "$cc demo exited $rc"; }

	# Every line bpftrace printed is one of the rounds the program fired,
	# exactly (round i: see progs/demo.c).
	rounds=$(sed -n 's/^rounds=//p' "$OUT")
	[ -n "$rounds" ] && [ "$rounds" -ge 3 ] || fail "$cc demo fired '$rounds' rounds"
	for ((i = 0; i < rounds; i++)); do
		echo "sizes $((200 + i % 50)) -5 65000 -300 -100000 $(((1 << 40) + i))"
		echo "pair $i $((-5000000000 - i))"
		echo "done $((4000000000 + i))"
	done >"$T/want-$cc"
	grep -E "^(sizes|pair|done) " "$BTOUT" >"$T/got-$cc"
	if grep -vxFf "$T/want-$cc" "$T/got-$cc" >"$T/bad-$cc"; then
		cat "$T/bad-$cc" >&2
		fail "$cc: bpftrace read values the program did not fire (above)"
	fi
	n=$(wc -l <"$T/got-$cc")
	echo "$cc: $n firings in $rounds rounds read exactly; probeIsEnabled 0 -> 1 -> 0"
done
