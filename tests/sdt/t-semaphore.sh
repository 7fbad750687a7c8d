#!/bin/bash
# A semaphore-guarded probe is enabled only while a tracer is attached: the program (already
# running, its library loaded) sees its semaphore 0, then non-zero once bpftrace attaches with
# -p and fires the probe (bpftrace reads its argument), then 0 again after bpftrace exits.
# Both for the probe in the executable and in a shared library.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

need_bpftrace
for kind in pie shared; do
	dir="$T/$kind"
	echo "== gcc -O2 $kind"
	build_probes gcc "$kind" "$dir" -O2
	"$PROG" "$dir/exp" wait-semaphore &
	pid=$!
	wait_until 10 "the program to map $ELF" grep -qF "$ELF" "/proc/$pid/maps"
	timeout 60 bpftrace -p $pid -e "usdt:$ELF:sdttest:guarded { printf(\"@@guarded %ld\\n\", arg0); }
		interval:s:1 { exit(); }" >"$dir/bt.out" 2>&1 || { cat "$dir/bt.out" >&2; fail "bpftrace failed"; }
	rc=0
	wait $pid || rc=$?
	cat "$dir/exp"
	expect_grep '^semaphore-initial 0$' "$dir/exp" "semaphore before attaching"
	expect_grep '^semaphore-on [1-9][0-9]*$' "$dir/exp" "semaphore while attached"
	expect_grep '^semaphore-off-after-detach 1$' "$dir/exp" "semaphore after detaching"
	expect_grep '^@@guarded 4242$' "$dir/bt.out" "bpftrace reading the guarded probe"
	[ $rc -eq 0 ] || fail "program exited with $rc"
done
echo "ok: semaphores set only while bpftrace is attached (executable and shared library)"
