#!/bin/bash
# Fault: no uprobe support (a tmpfs where tracefs should be), in a private
# mount namespace around the daemon. What is checked: tracefs-fault.sh.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/fault/daemon/tracefs-fault.sh"
tracefs_fault nouprobes
HD_OK=1
exit 0
