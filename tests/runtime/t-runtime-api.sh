#!/bin/bash
# The C API's contract without a tracer (needs no root): every misuse fails
# with its errno and a message that names the provider, the probe and what
# to do (rtprog errors); load, unload and destroy cycles; 64 providers of 20
# probes and one of 1,000 in one process, each mapped as a memfd and nothing
# written to any file system.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
RTPROG="$USDTKIT_BUILDDIR/tests/runtime/rtprog"
export RTPROG_NAME="rtapi$$"

"$RTPROG" errors >"$T/errors.out" 2>"$T/errors.err" || { cat "$T/errors.out" "$T/errors.err" >&2; fail "rtprog errors"; }
# The messages, exactly: what users read.
expect_grep "^usdtkit: provider 'electric-moray': has no probes to load: add one first\$" "$T/errors.out" "no probes"
expect_grep "^usdtkit: provider 'electric-moray': probe 'thirteen': 13 arguments; a probe has 0 to 12\$" "$T/errors.out" "too many arguments"
expect_grep "^usdtkit: provider 'electric-moray': probe name 'bad.name' has a character other than letters, digits, '_' and '-'\$" "$T/errors.out" "bad name"
expect_grep "^usdtkit: provider 'electric-moray': probe 'client__error' is already declared \(as 'client-error': '-' is '__'\)\$" "$T/errors.out" "duplicate after spelling"
expect_grep "^usdtkit: provider 'electric-moray': is loaded already\$" "$T/errors.out" "load twice"
expect_grep "^usdtkit: provider 'electric-moray': cannot add probe 'late' while loaded: unload it first\$" "$T/errors.out" "add while loaded"
expect_grep '^errors ok$' "$T/errors.out" "rtprog errors ran to its end"

"$RTPROG" cycle 50 >"$T/cycle.out" 2>&1 || { cat "$T/cycle.out" >&2; fail "rtprog cycle 50"; }
expect_grep '^cycles 50$' "$T/cycle.out" "50 cycles"

# Many providers and 1,000 probes: all mapped, none as a file.
mkfifo "$T/many.in"
"$RTPROG" many <"$T/many.in" >"$T/many.out" 2>"$T/many.err" &
pid=$!
exec {many_in}>"$T/many.in"
wait_until 30 "rtprog many ready" grep -q '^ready$' "$T/many.out"
nobj=$(grep '/memfd:usdtkit:' "/proc/$pid/maps" | awk '{print $6}' | sort -u | wc -l)
expect_eq "$(grep '/memfd:usdtkit:' "/proc/$pid/maps" | grep -cv ' ---p ')" "$((nobj * 2))" \
	"two mappings (code, data) per object"
# On aarch64 the data segment is 64 KiB from the code (the largest page the
# loader may use): under smaller pages the loader keeps the gap between them
# mapped from the file, PROT_NONE, a third mapping of each object.
gaps=0
[ "$(uname -m)" = aarch64 ] && [ "$(getconf PAGESIZE)" -lt 65536 ] && gaps=$nobj
expect_eq "$(grep '/memfd:usdtkit:' "/proc/$pid/maps" | grep -c ' ---p ')" "$gaps" \
	"the PROT_NONE gap between code and data mapped once per object on aarch64 with pages under 64 KiB"
expect_eq "$(grep '/memfd:usdtkit:' "/proc/$pid/maps" | awk '{print $6}' | sort -u | wc -l)" 65 \
	"objects mapped"
exec {many_in}>&-
wait "$pid" || { cat "$T/many.err" >&2; fail "rtprog many"; }
expect_grep '^providers 65 probes 2280$' "$T/many.out" "many's count"
exit 0
