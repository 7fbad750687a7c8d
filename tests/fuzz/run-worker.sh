#!/bin/bash
# run-worker.sh SECONDS [WORKDIR]: the fuzz target of the daemon's decoder of
# its sandboxed worker's answer (fuzz-worker.c: worker.c's decode(), then
# usdt_uprobe_def and the line parsed back), built by meson with
# -Dfuzz=enabled (clang -fsanitize=fuzzer,address,undefined; targets.sh's
# fuzz_binary), run for SECONDS on a copy of corpus-worker/ (never modified).
# Exit 0 when no crash, leak or timeout was found; crash inputs are left in
# WORKDIR (a temporary directory, removed on success, unless given).
set -eu
secs=${1:?usage: run-worker.sh SECONDS [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
fuzz_run worker "$secs" "${2:-}" -max_len=16384 -dict="$here/worker.dict"
