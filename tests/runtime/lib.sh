# Helpers for the runtime-provider tests (suite runtime). Source after
# tests/lib/common.sh: they run rtprog (rtprog.c) under tests/helperd/lib.sh's
# program and daemon helpers, with a provider named per run ($RP, so that
# concurrent tests never share a tracefs group sdt_$RP) and bpftrace through
# tests/install/lib.sh's bt_start and bt_stop.
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
RTPROG="$USDTKIT_BUILDDIR/tests/runtime/rtprog"
RTIMAGE="$USDTKIT_BUILDDIR/tests/runtime/rtimage"
RP="${P}rt"
export RTPROG_NAME="$RP"

# What rtprog's fire mode sends through probe all-types at firing N (rtprog.c, fire_all).
all_types_tracefs() { # N
	echo "arg1=-128 arg2=255 arg3=-32768 arg4=65535 arg5=-2147483648 arg6=4294967295" \
		"arg7=-9223372036854775808 arg8=18446744073709551615 arg9=305441741" \
		"arg10=\"all-types string\" arg11=$1 arg12=$(($1 * 1000000000000))"
}
