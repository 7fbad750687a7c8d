#!/bin/bash
# repro/run.sh: replays the reproducers of bugs found by fuzzing in files the
# fuzz work does not own (see README.md here), without the harness's
# workarounds. Exit 0 when every one of them is fixed (runs clean).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/targets.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-repro.XXXXXX")
trap 'rm -rf "$work"' EXIT
fuzz_build protocol "$work/fuzz-protocol" -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined
bad=0
for r in drti:drti-reply-status-int-min list:list-reply-status-int-min; do
	if FUZZ_STRICT=1 FUZZ_ONLY=${r%%:*} "$work/fuzz-protocol" "$here/repro/${r#*:}" \
		>"$work/log" 2>&1; then
		echo "fixed: ${r#*:}"
	else
		echo "STILL FAILS: ${r#*:}: $(grep -m1 'runtime error\|ERROR' "$work/log")"
		bad=1
	fi
done
exit $bad
