#!/bin/bash
# run-parser.sh SECONDS [WORKDIR]: runs the usdt_parse() fuzz target (built
# by meson with -Dfuzz=enabled: clang -fsanitize=fuzzer,address,undefined;
# targets.sh's fuzz_binary) for SECONDS on a copy of the seed corpus: the
# provider test cases (tests/provider/cases/*.d) and corpus-parser/ (inputs
# found by fuzzing); neither is ever modified.
# Exit 0 when no crash, leak or timeout was found; crash inputs are left in
# WORKDIR (a temporary directory, removed on success, unless given).
set -eu
secs=${1:?usage: run-parser.sh SECONDS [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
fuzz_run parser "$secs" "${2:-}" -max_len=16384 -dict="$here/parser.dict"
