#!/bin/bash
# run-target.sh NAME: runs fuzz target NAME's run script (run-NAME.sh) for
# $USDTKIT_FUZZ_SECONDS seconds (default 20): the test `fuzz-NAME` of the
# fuzz build. scripts/test.sh sets the seconds (CI: 10, tests/README.md).
set -eu
name=${1:?usage: run-target.sh NAME}
secs=${USDTKIT_FUZZ_SECONDS:-20}
case $secs in '' | *[!0-9]*) echo "USDTKIT_FUZZ_SECONDS: not a number: $secs" >&2; exit 2 ;; esac
exec bash "$(dirname "$0")/run-$name.sh" "$secs"
