#!/bin/bash
# Fault: tracefs mounted read-only, in a private
# mount namespace around the daemon. What is checked: tracefs-fault.sh.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/fault/daemon/tracefs-fault.sh"
tracefs_fault readonly
HD_OK=1
exit 0
