#!/bin/bash
# bpftrace -p reads exactly what a Python program fires through usdtkit
# (tracee.py's "trace" mode): every integer type at its extremes, negative
# values, values beyond the declared width (converted as C converts them),
# pointers (None, an address, all ones), strings from str (UTF-8), bytes
# and None (NULL), and a probe named with '-' (request__start for
# bpftrace). Probe.enabled is False before bpftrace attaches, True while it
# is attached and False after it exits; the end of the `with` block
# unmaps the object.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/runtime-python/lib.sh"
need_bpftrace

py_start "$T/py" "$USDTKIT_SRCDIR/tests/runtime-python/tracee.py" "$PROV" trace "$T/go"
py_wait "$T/py" "enabled-before"
F='False False False False False False False False'
expect_grep "^enabled-before $F\$" "$T/py" "enabled before bpftrace"

u="usdt:*:$PROV"
BT_ARGS="-p $PYPID" bt_start "$T/bt" "
$u:ints8 { printf(\"ints8 %d %d %d %u %u\\n\", arg0, arg1, arg2, arg3, arg4); }
$u:ints16 { printf(\"ints16 %d %d %u %u\\n\", arg0, arg1, arg2, arg3); }
$u:ints32 { printf(\"ints32 %d %d %u %d\\n\", arg0, arg1, arg2, arg3); }
$u:ints64 { printf(\"ints64 %ld %ld %lu %ld\\n\", arg0, arg1, arg2, arg3); }
$u:masked { printf(\"masked %u %d %u %d\\n\", arg0, arg1, arg2, arg3); }
$u:pointers { printf(\"pointers %lx %lx %lx\\n\", arg0, arg1, arg2); }
$u:strings { printf(\"strings %s|%s|%s|%s|%ld\\n\", str(arg0), str(arg1), str(arg2), str(arg3), arg4); }
$u:request__start { printf(\"request-start %s %ld\\n\", str(arg0), arg1); }
"
# bpftrace has attached every probe (bt_start saw its BEGIN): fire.
touch "$T/go"
py_wait "$T/py" "fired"
bt_stop '^(ints|masked|pointers|strings|request)' 8
py_wait "$T/py" "unmapped"
py_reap "$T/py"

T8='True True True True True True True True'
expect_eq "$(sed -n 's/^\(enabled\|fired\|disabled\) /&/p' "$T/py")" "enabled $T8
fired $T8
disabled $F" "Probe.enabled with bpftrace attached, fire()'s results, enabled after it left"
expect_eq "$(grep -aE '^(ints[0-9]+|masked|pointers|strings|request-start) ' "$T/bt" | sort)" "$(sort <<EXPECTED
ints8 -128 127 -1 0 255
ints16 -32768 32767 0 65535
ints32 -2147483648 2147483647 4294967295 -7
ints64 -9223372036854775808 9223372036854775807 18446744073709551615 -5
masked 44 -56 4294967295 5
pointers 0 deadbeefcafe ffffffffffffffff
strings hello|by$(printf '\377')tes|$(printf '\303\274nic\303\270de')||0
request-start /index.html 42
EXPECTED
)" "the values bpftrace read"
