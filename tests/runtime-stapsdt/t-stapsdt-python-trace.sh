#!/bin/bash
# A probe of a Python program on libstapsdt.so (progs/stapsdt_ctypes.py
# trace), traced by bpftrace -p: probeIsEnabled() turns 1 (and 0 after), and the values
# python-stapsdt passes (a c_uint64, a Python int as a C int read as int32,
# a str as c_char_p) read back exactly, the string with str().
. "$USDTKIT_SRCDIR/tests/runtime-stapsdt/lib.sh"
command -v python3 >/dev/null || fail "python3 is not installed"
need_bpftrace

PY_JOB=""
BT=""
at_exit 'stop_bg "$BT" INT 5; stop_bg "$PY_JOB" TERM 5'
py_pid() { PY_PID=$(sed -n 's/^loaded pid=\([0-9]*\)$/\1/p' "$T/out"); [ -n "$PY_PID" ]; }
bt_ready() { grep -q '^bt-ready' "$T/bt"; }
bt_lines() { [ "$(grep -c '^hit ' "$T/bt" || true)" -ge 3 ]; }
show() { echo "--- the program:" >&2; cat "$T/out" >&2; echo "--- bpftrace:" >&2; cat "$T/bt" >&2; }
at_exit '[ -e "$T/ok" ] || show' 

stapsdt_run python python3 "$PROGS/stapsdt_ctypes.py" "$STAPSDT_LIBDIR/libstapsdt.so" trace >"$T/out" 2>&1 &
PY_JOB=$!
wait_until 20 "the Python program to load" py_pid
bpftrace -p "$PY_PID" -e 'BEGIN { printf("bt-ready\n"); }
	usdt:*:pystap:hit { printf("hit %lu %d %s\n", arg0, arg1, str(arg2)); }' >"$T/bt" 2>&1 &
BT=$!
wait_until 30 "bpftrace to attach" bt_ready
wait_until 20 "probeIsEnabled() to turn 1 and 3 firings to reach bpftrace" bt_lines
stop_bg "$BT" INT
BT=""
rc=0
wait "$PY_JOB" || rc=$?
PY_JOB=""
[ $rc -eq 0 ] || { cat "$T/out" >&2; fail "stapsdt_ctypes.py trace exited $rc"; }
expect_eq "$(tail -1 "$T/out")" "python ok" "stapsdt_ctypes.py trace"
rounds=$(sed -n 's/^rounds=//p' "$T/out")
[ -n "$rounds" ] && [ "$rounds" -ge 3 ] || fail "the program fired '$rounds' rounds"
for ((i = 0; i < rounds; i++)); do
	echo "hit $((1000 + i)) $((-7 - i)) hello-$i"
done >"$T/want"
grep '^hit ' "$T/bt" >"$T/got"
if grep -vxFf "$T/want" "$T/got" >"$T/bad"; then
	cat "$T/bad" >&2
	fail "bpftrace read values the program did not fire (above)"
fi
touch "$T/ok"
echo "python: $(wc -l <"$T/got") firings in $rounds rounds read exactly, the string included"
