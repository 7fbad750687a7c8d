#!/bin/bash
# The probe test program built with one compiler ($1) at -O0 and -O2, as PIE, non-PIE, static
# and a shared library: readelf shows the notes (sizes, signs, base, semaphore, operand forms),
# gdb reads every argument, bpftrace 0.17 reads arg0..arg5 and strings and enables the
# semaphore-guarded probe.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

cc=${1:?compiler}
command -v "$cc" >/dev/null || fail "$cc is not installed"
need_bpftrace

for opt in -O0 -O2; do
	for kind in pie nopie static shared; do
		dir="$T/$cc$opt-$kind"
		echo "== $cc $opt $kind"
		build_probes "$cc" "$kind" "$dir" "$opt" -g -Wall -Wextra
		check_notes "$(uname -m)" "$dir"
		check_gdb "$dir"
		check_bpftrace "$dir"
	done
done
echo "ok: $cc, 8 builds, readelf + gdb + bpftrace"
