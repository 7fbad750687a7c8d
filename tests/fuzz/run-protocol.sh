#!/bin/bash
# run-protocol.sh SECONDS [WORKDIR]: the socket-protocol fuzz target
# (fuzz-protocol.c: hd_msg_decode, drti's reading of the daemon's answers,
# dtrace -l's LIST client), built by meson with -Dfuzz=enabled (clang
# -fsanitize=fuzzer,address,undefined; targets.sh's fuzz_binary), run for
# SECONDS on a copy of corpus-protocol/ (never modified). Exit 0 when no
# crash, leak or timeout was found; crash inputs are left in WORKDIR (a
# temporary directory, removed on success, unless given).
set -eu
secs=${1:?usage: run-protocol.sh SECONDS [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
fuzz_run protocol "$secs" "${2:-}" -max_len=16384 -dict="$here/protocol.dict"
