#!/bin/bash
# coverage-parser.sh CORPUS...: line/branch coverage of the D front end by a
# fuzz corpus (e.g. the WORKDIR/corpus run-parser.sh leaves behind), with
# clang's source-based coverage (a -Dfuzz_coverage=true build: targets.sh's
# fuzz_binary). Prints llvm-cov's report for the front end.
set -eu
[ $# -ge 1 ] || { echo "usage: coverage-parser.sh CORPUS_DIR..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/targets.sh"
fuzz_coverage parser "$@"
